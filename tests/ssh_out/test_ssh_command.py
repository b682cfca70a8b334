"""`podtui ssh POD`: the argv for OpenSSH's ssh (docs/ssh-out.md#the-ssh-command-line), run with the real ssh
against the simulator's pods: a direct pod's own sshd, and the gateway's PTY shell."""

from __future__ import annotations

import os
import select
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import paramiko
import pytest

from podtui.core import secret
from podtui.core.api import V2Api
from podtui.core.ssh.connect import SshSettings
from podtui.core.ssh.errors import SshError, SshKeyError
from podtui.core.ssh.hostkeys import HostKeyStore, gateway_name, pod_name
from podtui.core.ssh.keys import KeyFile
from podtui.core.ssh.openssh import endpoint_argv, ssh_argv, ssh_env
from podtui.sim.simulator import Simulator
from tests.helpers.sim import DIRECT_POD, GATEWAY_POD, find_pod, needs_sshd
from tests.ssh_out.conftest import Cli

if shutil.which("ssh") is None:  # CI installs it; never skip silently
    pytest.fail("OpenSSH client missing: run scripts/setup-test-env.sh", pytrace=False)


def options(argv: list[str]) -> dict[str, str]:
    return dict(argv[i + 1].split("=", 1) for i, word in enumerate(argv) if word == "-o")


def run_ssh(argv: list[str], *command: str) -> subprocess.CompletedProcess[str]:
    """The argv with BatchMode (never a prompt) and a command after the destination."""
    return subprocess.run(
        [*argv[:-1], "-o", "BatchMode=yes", argv[-1], *command],
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )


def in_a_terminal(
    argv: list[str], typed: bytes, expect: bytes, env: dict[str, str] | None = None, timeout_s: float = 30.0
) -> tuple[int, bytes]:
    """Run argv on a pseudo-terminal of its own, type `typed` once the shell answers, then `exit` once `expect`
    appeared: (exit status, everything the terminal showed)."""
    master, slave = os.openpty()
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, start_new_session=True, env=env)
    os.close(slave)
    seen, sent, ended = b"", False, False
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline and not ended:
            if select.select([master], [], [], 0.1)[0]:
                try:
                    chunk = os.read(master, 4096)
                except OSError:  # the terminal's other end closed: ssh is gone
                    break
                seen += chunk
            if not sent and b"# " in seen:  # the pod's prompt
                os.write(master, typed)
                sent = True
            if sent and expect in seen.replace(typed.strip(), b""):
                os.write(master, b"exit\n")
                ended = True
        return proc.wait(timeout=10), seen
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)


@needs_sshd
def test_print_gives_an_argv_that_pins_and_reaches_the_direct_pod(
    cli: Cli, full_sim: Simulator, sim_api: V2Api, user_key: KeyFile, isolated_home: Path
) -> None:
    pod = find_pod(sim_api, DIRECT_POD)
    r = cli("ssh", DIRECT_POD, "--print")
    assert r.code == 0, r.err
    argv = shlex.split(r.out)
    known_hosts = isolated_home / "data" / "podtui" / "known_hosts"
    assert argv[0] == "ssh" and "-t" not in argv
    assert argv[argv.index("-i") + 1] == str(user_key.path)
    assert argv[-3:] == ["-p", str(full_sim.sshds[pod.id].port), "root@127.0.0.1"]
    assert options(argv) == {
        "IdentitiesOnly": "yes",
        "UserKnownHostsFile": str(known_hosts),
        "HostKeyAlias": pod_name(pod.id),
        "StrictHostKeyChecking": "yes",
        "GlobalKnownHostsFile": "/dev/null",
        "UpdateHostKeys": "no",
        "CheckHostIP": "no",
        "ConnectTimeout": "10",
        "ServerAliveInterval": "15",
    }
    assert "StrictHostKeyChecking=no" not in r.out and full_sim.api.api_key not in r.out
    # podtui connected once first: the key ssh insists on is pinned, under the pod's name
    assert pod_name(pod.id) in known_hosts.read_text()
    done = run_ssh(argv, "echo", "hello", "$RUNPOD_POD_ID")
    assert (done.returncode, done.stdout) == (0, f"hello {pod.id}\n"), done.stderr


@needs_sshd
def test_ssh_refuses_a_key_podtui_did_not_pin(
    full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings, tmp_path: Path
) -> None:
    pod = find_pod(sim_api, DIRECT_POD)
    argv = ssh_argv(pod, ssh_settings)
    assert run_ssh(argv, "true").returncode == 0
    store = HostKeyStore(ssh_settings.known_hosts)
    store.forget(pod_name(pod.id))
    store.check(pod_name(pod.id), paramiko.Ed25519Key.from_private_key_file(_new_key(tmp_path)), "impostor")
    refused = run_ssh(argv, "echo", "never")
    assert refused.returncode == 255 and "never" not in refused.stdout
    assert "Host key verification failed" in refused.stderr
    store.forget(pod_name(pod.id))  # nothing pinned: strict checking refuses too, it never adds
    refused = run_ssh(argv, "echo", "never")
    assert refused.returncode == 255 and "Host key verification failed" in refused.stderr
    assert pod_name(pod.id) not in ssh_settings.known_hosts.read_text()


def _new_key(folder: Path) -> str:
    path = folder / "other_host_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)
    return str(path)


def test_the_gateway_route_is_an_interactive_shell(
    cli: Cli, full_sim: Simulator, sim_api: V2Api, isolated_home: Path
) -> None:
    pod = find_pod(sim_api, GATEWAY_POD)
    r = cli("ssh", GATEWAY_POD, "--print")
    assert r.code == 0, r.err
    argv = shlex.split(r.out)
    host, port = full_sim.gateway.address
    assert argv[:2] == ["ssh", "-t"]  # the gateway gives a PTY and nothing else
    assert argv[-3:] == ["-p", str(port), f"{pod.pod_host_id}@{host}"]
    assert options(argv)["HostKeyAlias"] == gateway_name(host, port)
    assert options(argv)["StrictHostKeyChecking"] == "yes" and "IdentitiesOnly" in options(argv)
    code, seen = in_a_terminal(argv, b"echo from-$((6*7))\n", b"from-42")
    assert code == 0 and b"from-42" in seen and b"Enjoy your Pod" in seen, seen[-500:]


@needs_sshd
def test_podtui_ssh_becomes_ssh(full_cli_env: dict[str, str], sim_api: V2Api) -> None:
    """As a user types it: podtui connects once, then OpenSSH's ssh takes over the terminal."""
    pod = find_pod(sim_api, DIRECT_POD)
    argv = [sys.executable, "-m", "podtui", "ssh", DIRECT_POD]
    code, seen = in_a_terminal(argv, b"echo on-$RUNPOD_POD_ID-$((2+3))\n", f"on-{pod.id}-5".encode(), full_cli_env)
    assert code == 0 and f"on-{pod.id}-5".encode() in seen, seen[-500:]


def test_podtui_ssh_in_the_demo_runs_ssh_as_its_child(isolated_home: Path) -> None:
    argv = [sys.executable, "-m", "podtui", "ssh", "--demo", GATEWAY_POD]
    code, seen = in_a_terminal(argv, b"echo demo-$((2*21))\n", b"demo-42", dict(os.environ))
    assert code == 0 and b"demo-42" in seen and b"Enjoy your Pod" in seen, seen[-500:]


@needs_sshd
def test_via_chooses_the_route(cli: Cli, full_sim: Simulator, sim_api: V2Api) -> None:
    pod = find_pod(sim_api, DIRECT_POD)
    r = cli("ssh", DIRECT_POD, "--via", "gateway", "--print")
    assert r.code == 0 and shlex.split(r.out)[-1] == f"{pod.pod_host_id}@127.0.0.1"
    r = cli("ssh", GATEWAY_POD, "--via", "direct", "--print")
    assert r.code == 255 and "has no direct SSH" in r.err and not r.out


@needs_sshd
def test_a_command_after_the_direct_argv_runs_with_its_exit_status(sim_api: V2Api, ssh_settings: SshSettings) -> None:
    argv = ssh_argv(find_pod(sim_api, DIRECT_POD), ssh_settings)
    done = run_ssh(argv, "cd /workspace && pwd && exit 7")
    assert done.returncode == 7 and done.stdout == "/workspace\n", done.stderr


@needs_sshd
def test_a_key_in_a_folder_with_a_space_and_a_percent(
    sim_api: V2Api, ssh_settings: SshSettings, user_key: KeyFile, tmp_path: Path
) -> None:
    """ssh reads %-tokens in key and known-hosts file names and splits option values at spaces."""
    odd = tmp_path / "my keys 100%"
    odd.mkdir()
    key = odd / "id_ed25519_runpod"
    shutil.copy(user_key.path, key)
    key.chmod(0o600)
    ssh_settings.key_path = key
    ssh_settings.known_hosts = odd / "known hosts"
    argv = ssh_argv(find_pod(sim_api, DIRECT_POD), ssh_settings)
    escaped = str(odd).replace("%", "%%")
    assert "-i" not in argv and options(argv)["IdentityFile"] == f'"{escaped}/id_ed25519_runpod"'
    assert options(argv)["UserKnownHostsFile"] == f'"{escaped}/known hosts"'
    done = run_ssh(argv, "echo", "ok")
    assert (done.returncode, done.stdout) == (0, "ok\n"), done.stderr


def test_a_key_others_can_read_is_refused_before_ssh_ignores_it(
    sim_api: V2Api, ssh_settings: SshSettings, user_key: KeyFile
) -> None:
    user_key.path.chmod(0o644)
    pod = find_pod(sim_api, GATEWAY_POD)
    with pytest.raises(SshKeyError, match=r"others can read it.*chmod 600"):
        ssh_argv(pod, ssh_settings)


def test_hostile_addresses_from_the_api_never_reach_the_argv(sim_api: V2Api, ssh_settings: SshSettings) -> None:
    from dataclasses import replace

    from podtui.core.ssh.connect import endpoints_for

    [gateway] = endpoints_for(find_pod(sim_api, GATEWAY_POD), ssh_settings)
    for bad in (
        replace(gateway, host="-oProxyCommand=touch /tmp/x"),
        replace(gateway, host="127.0.0.1 -oProxyCommand=x"),
        replace(gateway, username="-oProxyCommand=x"),
        replace(gateway, username="root\nHost *"),
        replace(gateway, pin="pod:%68"),
    ):
        with pytest.raises(SshError):
            endpoint_argv(bad, ssh_settings, [])


def test_unknown_pod_and_misplaced_words(cli: Cli) -> None:
    r = cli("ssh", "no-such-pod", "--print")
    assert r.code == 1 and "no pod with id or name 'no-such-pod'" in r.err
    r = cli("ssh", GATEWAY_POD, "extra", "--print")
    assert r.code == 2 and "takes one pod" in r.err
    r = cli("ssh", GATEWAY_POD, "--gateway", "--print")
    assert r.code == 2 and "--via gateway" in r.err
    r = cli("ssh", "forget")
    assert r.code == 2 and "either a pod or --gateway" in r.err


def test_forget_still_parses_as_before(cli: Cli, sim_api: V2Api) -> None:
    pod = find_pod(sim_api, GATEWAY_POD)
    r = cli("ssh", "forget", GATEWAY_POD)
    assert r.code == 0 and f"no pinned direct-SSH host key of {GATEWAY_POD} ({pod.id})" in r.out
    r = cli("ssh", "forget", "--gateway")
    assert r.code == 0 and "no pinned host key of RunPod's SSH gateway" in r.out


def test_the_environment_ssh_gets_holds_no_secret() -> None:
    secret.register("hf_SECRETSECRETSECRET123")
    env = ssh_env({"RUNPOD_API_KEY": "rpa_X", "TOKEN": "x hf_SECRETSECRETSECRET123", "LANG": "C.UTF-8"})
    assert env == {"LANG": "C.UTF-8"}
