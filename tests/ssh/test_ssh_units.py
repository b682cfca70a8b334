"""Pure parts of the SSH layer: output cleaning, marker hold-back, gateway addresses, key candidates, config."""

from __future__ import annotations

from pathlib import Path

import pytest

from podtui.core.config import ConfigError, load_config
from podtui.core.paths import Paths
from podtui.core.ssh.connect import parse_gateway
from podtui.core.ssh.errors import SshError
from podtui.core.ssh.keys import candidate_paths, valid_public_line
from podtui.core.ssh.remote import RemoteShell, clean


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        (b"plain\r\n", "plain\n"),
        (b"\x1b[1;32mgreen\x1b[0m", "green"),
        (b"\x1b]0;title\x07after", "after"),
        (b"\x1b[?2004hbracketed\x1b[?2004l", "bracketed"),
        (b"progress 10%\rprogress 100%\r\n", "progress 10%progress 100%\n"),
        (b"\xff\xfebinary", "\ufffd\ufffdbinary"),
        (b"\x1b(Bcharset", "charset"),
    ],
)
def test_clean(raw: bytes, text: str) -> None:
    assert clean(raw) == text


def test_hold_back_only_what_may_be_a_marker() -> None:
    shell = RemoteShell(lambda: None, "pty")  # type: ignore[arg-type,return-value]
    n = shell.nonce
    assert shell._safe_cut(bytearray(b"abc")) == 3
    assert shell._safe_cut(bytearray(b"line1\nline2\n")) == 11  # the last newline may be the marker's
    assert shell._safe_cut(bytearray(b"line1\r\n")) == 5
    assert shell._safe_cut(bytearray(b"x\n<<PT:")) == 1
    assert shell._safe_cut(bytearray(f"x\n<<PT:{n}:E".encode())) == 1
    assert shell._safe_cut(bytearray(b"x\n<<PT:ffffffffffffffff:E")) == len(b"x\n<<PT:ffffffffffffffff:E")
    assert shell._safe_cut(bytearray(b"x\nnot a marker")) == len(b"x\nnot a marker")


@pytest.mark.parametrize(
    ("text", "addr"), [("ssh.runpod.io", ("ssh.runpod.io", 22)), ("127.0.0.1:2222", ("127.0.0.1", 2222))]
)
def test_parse_gateway(text: str, addr: tuple[str, int]) -> None:
    assert parse_gateway(text) == addr


@pytest.mark.parametrize("bad", ["host:port", ":22", "host:0", "host:70000"])
def test_parse_gateway_refuses(bad: str) -> None:
    with pytest.raises(SshError):
        parse_gateway(bad)


def test_candidate_key_order(isolated_home: Path) -> None:
    ssh = isolated_home / ".ssh"
    paths = candidate_paths(Path("~/.ssh/id_ed25519"))
    assert paths == [ssh / "id_ed25519", ssh / "id_ed25519_runpod", ssh / "id_ecdsa", ssh / "id_rsa"]
    assert candidate_paths(Path("/demo/key"), search_home=False) == [Path("/demo/key")]


@pytest.mark.parametrize(
    ("line", "ok"),
    [
        ("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBkQ me@laptop", True),
        ("ssh-rsa AAAAB3NzaC1yc2E=", True),
        ('ssh-ed25519 AAAA " } comments are escaped when sent', True),
        ("ssh-ed25519 AAAA\nssh-rsa BBBB", False),
        ("not-a-key AAAA", False),
    ],
)
def test_valid_public_line(line: str, ok: bool) -> None:
    assert valid_public_line(line) is ok


def test_ssh_config_fields(paths: Paths) -> None:
    paths.config_dir.mkdir(parents=True)
    paths.config_file.write_text('ssh_gateway = "127.0.0.1:2200"\nssh_key = "~/.ssh/k"\n')
    cfg = load_config(paths)
    assert cfg.ssh_gateway == "127.0.0.1:2200" and cfg.ssh_key == Path("~/.ssh/k").expanduser()
    paths.config_file.write_text("ssh_key = 3\n")
    with pytest.raises(ConfigError):
        load_config(paths)


def test_host_key_pin_belongs_to_one_run_of_the_pod(tmp_path: Path) -> None:
    import paramiko

    from podtui.core.ssh.errors import HostKeyChanged
    from podtui.core.ssh.hostkeys import HostKeyStore

    store = HostKeyStore(tmp_path / "known_hosts")
    k1, k2 = paramiko.RSAKey.generate(1024), paramiko.RSAKey.generate(1024)
    assert store.check("pod:abc", k1, "abc", run_started=1000.0) is False
    assert store.check("pod:abc", k1, "abc", run_started=1030.0) is True  # same run, poll jitter
    with pytest.raises(HostKeyChanged):
        store.check("pod:abc", k2, "abc", run_started=1060.0)  # same run, another key: refused
    assert store.check("pod:abc", k2, "abc", run_started=90000.0) is False  # restarted: new key trusted
    with pytest.raises(HostKeyChanged):
        store.check("pod:abc", k1, "abc", run_started=90010.0)


def test_ipv6_gateway() -> None:
    assert parse_gateway("[::1]:2222") == ("::1", 2222)
    assert parse_gateway("[::1]") == ("::1", 22)
    assert parse_gateway("::1") == ("::1", 22)
