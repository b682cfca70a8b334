"""`podtui ssh-config`: podtui's Host blocks (docs/ssh-out.md#the-config-file), the Include line only with consent
(docs/ssh-out.md#the-include-line), and OpenSSH's own ssh reaching a simulated pod through the written config."""

from __future__ import annotations

import io
import os
import re
import stat
import subprocess
from pathlib import Path

import paramiko
import pytest

from podtui.core.api import V2Api
from podtui.core.paths import Paths
from podtui.core.pod import Pod, PodStatus, Runtime, SshEndpoint
from podtui.core.ssh.connect import SshSettings, endpoints_for
from podtui.core.ssh.errors import SshError
from podtui.core.ssh.hostkeys import HostKeyStore, pod_name
from podtui.core.ssh.keys import KeyFile
from podtui.core.ssh.openssh import endpoint_argv
from podtui.core.ssh.ssh_config import aliases, config_file, include_line, includes, refresh_written, render
from podtui.sim.simulator import Simulator
from tests.helpers.hostile import HOSTILE, unsafe_chars
from tests.helpers.sim import DEMO_IDS, DIRECT_POD, GATEWAY_POD, find_pod, needs_sshd
from tests.ssh_out.conftest import Cli

# What a line of podtui's file may be: a comment, a blank, a Host line with one safe alias, or an option line
LINE = re.compile(r"(#[^\n]*|Host runpod-[a-z0-9._-]+|    [A-Za-z]+ [^\s\"][^\n]*|    [A-Za-z]+ \"[^\"\n]+\"|)")
USER_TEXT = (
    b"# mine\r\nHost github.com\r\n    User git\r\n    IdentityFile ~/.ssh/gh\r\nHost *\n  ServerAliveInterval 30"
)


def pod(
    pod_id: str,
    name: str,
    host: str = "203.0.113.7",
    user: str = "root",
    direct: bool = True,
    created_at: float | None = None,
) -> Pod:
    return Pod(
        pod_id,
        name,
        PodStatus.RUNNING,
        created_at=created_at,
        runtime=Runtime(uptime_s=60),
        ssh_direct=SshEndpoint(host, 40022, user) if direct else None,
        ssh_proxy=SshEndpoint("ssh.runpod.io", 22, f"{pod_id}-1a2b3c4d"),
    )


def ssh_g(config: Path, alias: str) -> dict[str, str]:
    """What OpenSSH makes of `alias` with `config` (ssh -G: the options resolved, no connection)."""
    out = subprocess.run(["ssh", "-G", "-F", str(config), alias], capture_output=True, text=True, check=True).stdout
    return {k: v for k, _, v in (line.partition(" ") for line in out.splitlines())}


def ssh_with(config: Path, alias: str, *command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["ssh", "-F", str(config), "-o", "BatchMode=yes", alias, *command],
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture
def settings(tmp_path: Path, user_key: KeyFile) -> SshSettings:
    return SshSettings(known_hosts=tmp_path / "known_hosts", key_path=user_key.path, search_home=False)


# --- the blocks -----------------------------------------------------------------------------------------


def test_hostile_pod_names_make_safe_aliases_and_no_injected_lines(settings: SshSettings, tmp_path: Path) -> None:
    names = [
        *HOSTILE,
        "evil\nHost *\n    ProxyCommand touch /tmp/pwned",
        "x\r\n  ProxyCommand sh -c 'id'",
        "Host *",
        "*",
        "!negated,other",
        "",
        "   ",
        "a b\tc",
        "ünïcödé 名前",
        "../../etc/passwd",
        "same",
        "same",
        "SAME",
        "x" * 300,
    ]
    pods = [pod(f"p{i:02d}x", name) for i, name in enumerate(names)]
    pods.append(pod("badhost", "h", host="127.0.0.1\n    ProxyCommand x"))
    pods.append(pod("baduser", "u", user="-oProxyCommand=x"))
    pods.append(pod("bad id\nHost *", "i"))
    text = render(pods, settings).text
    for line in text.splitlines():
        assert LINE.fullmatch(line), line
        assert line.startswith("#") or "ProxyCommand" not in line
    assert not unsafe_chars(text, newlines=True)
    hosts = re.findall(r"^Host (\S+)$", text, flags=re.MULTILINE)
    assert len(hosts) == len(set(hosts)) == len(names)  # the three hostile addresses and ids get no block
    same = [f"p{i:02d}x" for i, name in enumerate(names) if name.lower() == "same"]
    assert len(same) == 3  # the first (no createdAt: by id) keeps the plain alias, the others get their ids
    assert {"runpod-same", f"runpod-same-{same[1]}", f"runpod-same-{same[2]}"} <= set(hosts)
    assert "runpod-unicode" in hosts and all(len(h) <= len("runpod-") + 40 for h in hosts)
    config = tmp_path / "cfg"
    config.write_text(text)
    for i, alias in enumerate(hosts[:5]):  # OpenSSH reads the file as podtui means it
        seen = ssh_g(config, alias)
        assert (seen["port"], seen["user"], seen["stricthostkeychecking"]) == ("40022", "root", "true"), i
        assert seen.get("proxycommand", "none") == "none"
    assert ssh_g(config, "elsewhere.example").get("proxycommand", "none") == "none"
    assert ssh_g(config, "elsewhere.example")["port"] == "22"  # no `Host *` came out of a name


def test_aliases_are_stable_and_unique() -> None:
    pods = [pod("aaa", "Train Run"), pod("bbb", "train-run"), pod("ccc", "eval")]
    assert aliases(pods) == {"aaa": "runpod-train-run", "bbb": "runpod-train-run-bbb", "ccc": "runpod-eval"}
    assert aliases(reversed(pods)) == aliases(pods)
    # a name made to look like another pod's id-suffixed alias keeps its plain one; the suffixed one gives way
    made = aliases([pod("a", "x"), pod("b", "x-b"), pod("b-2", "x")])
    assert made == {"a": "runpod-x", "b": "runpod-x-b", "b-2": "runpod-x-b-2"}


def test_a_second_pod_of_the_same_name_leaves_the_first_ones_alias_alone(settings: SshSettings) -> None:
    first = pod("zzz", "train", created_at=1_700_000_000.0)
    assert aliases([first]) == {"zzz": "runpod-train"}
    second = pod("aaa", "train", host="203.0.113.8", created_at=1_700_000_500.0)  # made later; its id sorts first
    assert aliases([first, second]) == {"zzz": "runpod-train", "aaa": "runpod-train-aaa"}
    text = render([second, first], settings).text
    assert "Host runpod-train\n    HostName 203.0.113.7\n" in text
    assert "Host runpod-train-aaa\n    HostName 203.0.113.8\n" in text
    # the first one gone: the second takes the plain alias
    assert aliases([second]) == {"aaa": "runpod-train"}


def test_gateway_only_pods_get_a_shell_block_and_unpinned_ones_say_so(settings: SshSettings) -> None:
    text = render([pod("gwonly", "eval", direct=False)], settings).text
    block = text[text.index("# eval (gwonly)") :]
    assert "RunPod's gateway only" in block and "no host key pinned yet" in block
    assert (
        "Host runpod-eval\n    HostName ssh.runpod.io\n    Port 22\n    User gwonly-1a2b3c4d\n    RequestTTY yes"
        in block
    )
    assert "HostKeyAlias ssh.runpod.io" in block and "editors cannot use it" in text


def test_stopped_pods_are_a_comment() -> None:
    stopped = Pod("k5d", "notebook", PodStatus.EXITED)
    settings = SshSettings(known_hosts=Path("/nonexistent/kh"), search_home=False)
    rendered = render([stopped], settings)
    assert "# notebook (k5d): EXITED, no SSH now (no block)" in rendered.text and not rendered.hosts
    assert "no key file found" not in rendered.text  # no block, no key note


def test_refresh_only_rewrites_a_file_the_user_wrote(settings: SshSettings, tmp_path: Path) -> None:
    path = tmp_path / "podtui" / "ssh_config"
    pods = [pod("aaa", "train")]
    assert not refresh_written(pods, settings, path) and not path.exists()
    path.parent.mkdir()
    path.write_text("old")
    assert refresh_written(pods, settings, path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and "Port 40022" in path.read_text()
    assert not refresh_written(pods, settings, path)
    moved = [pod("aaa", "train", host="203.0.113.9")]
    assert refresh_written(moved, settings, path) and "HostName 203.0.113.9" in path.read_text()


# --- paths as ssh reads them ----------------------------------------------------------------------------

ODD_FOLDERS = ["it's", "a b", "x'y z", "a#b", "back\\slash"]


def ssh_g_lines(*args: str) -> list[str]:
    """`ssh -G ARGS`: every resolved option line (repeated ones, such as identityfile, each kept)."""
    done = subprocess.run(["ssh", "-G", *args], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


@pytest.mark.parametrize("folder", ODD_FOLDERS)
def test_podtuis_paths_reach_ssh_as_they_are(tmp_path: Path, user_key: KeyFile, folder: str) -> None:
    """ssh splits an option's value into words, with ' and " as quotes and a backslash as an escape: the file's
    lines and the -o values name podtui's files exactly, as ssh -G reads them."""
    where = tmp_path / folder
    where.mkdir()
    key = where / "id_ed25519"
    key.write_bytes(user_key.path.read_bytes())
    key.chmod(0o600)
    settings = SshSettings(known_hosts=where / "known_hosts", key_path=key, search_home=False)
    config = tmp_path / "config"
    config.write_text(render([pod("aaa", "train")], settings).text)
    wanted = {f"userknownhostsfile {where / 'known_hosts'}", f"identityfile {key}", "port 40022"}
    assert wanted <= set(ssh_g_lines("-F", str(config), "runpod-train"))
    endpoint = endpoints_for(pod("aaa", "train"), settings, "direct")[0]
    argv = endpoint_argv(endpoint, settings, [key])
    assert wanted <= set(ssh_g_lines("-F", "/dev/null", *argv[1:]))


@pytest.mark.parametrize("folder", ["it's", "a b", "x'y z", "a#b"])
def test_the_include_line_names_podtuis_file_as_it_is(tmp_path: Path, settings: SshSettings, folder: str) -> None:
    ours = tmp_path / folder / "ssh_config"
    ours.parent.mkdir()
    ours.write_text(render([pod("aaa", "train")], settings).text)
    user = tmp_path / "user_config"
    user.write_text(include_line(ours) + "\n")
    assert includes(user, ours)
    assert "port 40022" in ssh_g_lines("-F", str(user), "runpod-train")


def test_a_hash_inside_a_word_is_no_comment(tmp_path: Path, settings: SshSettings) -> None:
    """As ssh reads a line: `#` begins a comment only at the start of a word."""
    ours = tmp_path / "a#b" / "ssh_config"
    ours.parent.mkdir()
    ours.write_text(render([pod("aaa", "train")], settings).text)
    user = tmp_path / "user_config"
    user.write_text(f"Include {ours} # podtui's\n")
    assert includes(user, ours)
    assert "port 40022" in ssh_g_lines("-F", str(user), "runpod-train")


@pytest.mark.parametrize("folder", ["50%", "50%%", "${HOME}", "back\\slash", "glob*"])
def test_an_include_path_ssh_could_read_otherwise_is_refused(tmp_path: Path, folder: str) -> None:
    """Include is a glob (a backslash escapes there), and recent OpenSSH expands %-tokens and ${VAR} in it while
    older releases do not: no one spelling means podtui's file to both."""
    with pytest.raises(SshError, match="cannot be written in an Include line safely"):
        include_line(tmp_path / folder / "ssh_config")


def test_a_glob_star_does_not_cross_a_slash(tmp_path: Path, settings: SshSettings) -> None:
    """As ssh's glob(3): `Include DIR/*` takes the files in DIR, not those in its folders; `DIR/*/ssh_config` does."""
    ours = tmp_path / "config" / "podtui" / "ssh_config"
    ours.parent.mkdir(parents=True)
    ours.write_text(render([pod("aaa", "train")], settings).text)
    user = tmp_path / "user_config"
    user.write_text(f"Include {tmp_path}/config/*\n")
    assert not includes(user, ours)
    assert "port 22" in ssh_g_lines("-F", str(user), "runpod-train")  # ssh agrees: not read
    user.write_text(f"Include {tmp_path}/config/*/ssh_config\n")
    assert includes(user, ours)
    assert "port 40022" in ssh_g_lines("-F", str(user), "runpod-train")
    user.write_text(f"Include {tmp_path}/config/podtui/.*\n")  # nor does * match a leading dot, nor . a name
    assert not includes(user, ours)


# --- the Include line -----------------------------------------------------------------------------------


def test_without_consent_the_users_config_is_untouched(cli: Cli, user_ssh_config: Path, paths: Paths) -> None:
    user_ssh_config.parent.mkdir(mode=0o700)
    user_ssh_config.write_bytes(USER_TEXT)
    user_ssh_config.chmod(0o640)
    r = cli("ssh-config", "--write")  # no terminal here: no one to ask, so no consent
    assert r.code == 0, r.err
    ours = config_file(paths)
    assert f"wrote {ours}" in r.out and "left as it is" in r.out and f"    Include {ours}\n" in r.out
    assert "--yes" in r.out
    assert user_ssh_config.read_bytes() == USER_TEXT and stat.S_IMODE(user_ssh_config.stat().st_mode) == 0o640
    assert stat.S_IMODE(ours.stat().st_mode) == 0o600 and "Host runpod-" in ours.read_text()


def test_consent_puts_one_include_line_at_the_top_once(cli: Cli, user_ssh_config: Path, paths: Paths) -> None:
    user_ssh_config.parent.mkdir(mode=0o700)
    user_ssh_config.write_bytes(USER_TEXT)
    user_ssh_config.chmod(0o640)
    r = cli("ssh-config", "--write", "--yes")
    assert r.code == 0 and "added `Include" in r.out, r.err
    include = f"Include {config_file(paths)}\n".encode()
    assert user_ssh_config.read_bytes() == include + USER_TEXT
    assert stat.S_IMODE(user_ssh_config.stat().st_mode) == 0o640
    r = cli("ssh-config", "--write", "--yes")
    assert r.code == 0 and "unchanged:" in r.out and "includes it" in r.out
    assert user_ssh_config.read_bytes() == include + USER_TEXT


def test_asked_at_a_terminal(
    cli: Cli, user_ssh_config: Path, paths: Paths, monkeypatch: pytest.MonkeyPatch, isolated_home: Path
) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr("sys.stdin", Terminal("n\n"))
    r = cli("ssh-config", "--write")
    assert f"Add `Include {config_file(paths)}` to {user_ssh_config}? [y/N]" in r.out
    assert not user_ssh_config.exists() and not user_ssh_config.parent.exists()
    monkeypatch.setattr("sys.stdin", Terminal("y\n"))
    r = cli("ssh-config", "--write")
    assert r.code == 0 and "added" in r.out
    # there was no ~/.ssh: made owner-only, the file too
    assert stat.S_IMODE(user_ssh_config.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(user_ssh_config.stat().st_mode) == 0o600
    assert user_ssh_config.read_text() == f"Include {config_file(paths)}\n"


def test_an_include_inside_a_host_block_does_not_count(
    cli: Cli, user_ssh_config: Path, paths: Paths, tmp_path: Path
) -> None:
    ours = config_file(paths)
    user_ssh_config.parent.mkdir(mode=0o700)
    inside = f"Host gpu\n    Include {ours}\n".encode()
    real = tmp_path / "dotfiles" / "ssh_config"  # a dotfiles repository's file, linked: edited where it lives
    real.parent.mkdir()
    real.write_bytes(inside)
    user_ssh_config.symlink_to(real)
    assert not includes(user_ssh_config, ours)
    assert cli("ssh-config", "--write", "--yes").code == 0
    assert user_ssh_config.is_symlink() and real.read_bytes() == f"Include {ours}\n".encode() + inside
    assert includes(user_ssh_config, ours)
    # a glob that matches podtui's file, relative to ~/.ssh as OpenSSH reads it, counts too
    user_ssh_config.unlink()
    user_ssh_config.write_text(f"Include {os.path.relpath(ours.parent, user_ssh_config.parent)}/ssh_*\nHost x\n")
    assert includes(user_ssh_config, ours)


def test_the_demo_never_writes(cli: Cli) -> None:
    r = cli("ssh-config", "--write", "--demo")
    assert r.code == 2 and "--write is for your own pods" in r.err


# --- OpenSSH with the written config --------------------------------------------------------------------


@needs_sshd
def test_ssh_reaches_the_direct_pod_with_the_written_config_and_only_with_its_pinned_key(
    cli: Cli, full_sim: Simulator, sim_api: V2Api, user_ssh_config: Path, paths: Paths, tmp_path: Path
) -> None:
    pod_id = find_pod(sim_api, DIRECT_POD).id
    assert cli("ssh-config", "--write", "--yes").code == 0
    ours = config_file(paths).read_text()
    direct = ours[ours.index(f"# {DIRECT_POD} ({pod_id})") :].split("\n\n")[0]
    assert f"Port {full_sim.sshds[pod_id].port}" in direct and "no host key pinned yet" in direct
    alias = f"runpod-{DIRECT_POD}"
    refused = ssh_with(user_ssh_config, alias, "echo", "never")  # nothing pinned: strict checking refuses
    assert refused.returncode == 255 and "Host key verification failed" in refused.stderr
    r = cli("ssh-config", "--write", "--pin")
    assert r.code == 0 and "wrote" in r.out, r.err
    assert "no host key pinned yet" not in config_file(paths).read_text().split(f"# {DIRECT_POD}")[1].split("\n\n")[0]
    done = ssh_with(user_ssh_config, alias, "echo", "hello")
    assert (done.returncode, done.stdout) == (0, "hello\n"), done.stderr
    # another key where the pod's pin is: refused
    known = HostKeyStore(paths.data_dir / "known_hosts")
    known.forget(pod_name(pod_id))
    known.check(pod_name(pod_id), paramiko.Ed25519Key.from_private_key_file(_other_key(tmp_path)), "impostor")
    refused = ssh_with(user_ssh_config, alias, "echo", "never")
    assert refused.returncode == 255 and "Host key verification failed" in refused.stderr
    assert "never" not in refused.stdout


def _other_key(folder: Path) -> str:
    path = folder / "other_host_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)
    return str(path)


@needs_sshd
def test_a_pods_new_port_rewrites_the_file(cli: Cli, full_sim: Simulator, sim_api: V2Api, paths: Paths) -> None:
    pod_id = DEMO_IDS["train"]
    assert cli("ssh-config", "--write").code == 0
    before = full_sim.sshds[pod_id].port
    assert f"Port {before}\n" in config_file(paths).read_text()
    with full_sim.world.lock:
        full_sim.world.pods[pod_id].direct_ssh_port = before + 1
    r = cli("ssh", GATEWAY_POD, "--print")  # any `podtui ssh` refreshes the file the user wrote
    assert r.code == 0, r.err
    assert f"Port {before + 1}\n" in config_file(paths).read_text()
    r = cli("ssh-config", "--write")
    assert r.code == 0 and f"unchanged: {config_file(paths)}" in r.out
