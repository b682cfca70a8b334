"""Pinned host keys: names from the API cannot forge known-hosts entries, the files are the owner's only, and a
changed key says what is true for that kind of host (a pod's may change when it is recreated, the gateway's never
does)."""

from __future__ import annotations

import dataclasses
import os
import stat
from pathlib import Path

import paramiko
import pytest

from podtui.cli.main import main
from podtui.core.api import V2Api
from podtui.core.paths import Paths
from podtui.core.ssh.connect import SshSettings, connect_pod
from podtui.core.ssh.errors import HostKeyChanged
from podtui.core.ssh.hostkeys import HostKeyStore, gateway_name, pod_name
from podtui.sim.simulator import Simulator
from tests.helpers.sim import DEMO_IDS, DIRECT_POD, find_pod, needs_sshd

ODD_IDS = [
    "abc,evil.example",
    "abc\nevil.example ssh-ed25519 AAAA",
    "abc evil",
    "abc#x",
    "*",
    "!abc",
    "[abc]:22",
    "abc\r",
    "pöd-ü",
    "",
    "|1|hashed",
]


def _keyfile() -> str:
    import tempfile

    from podtui.core.ssh.keys import generate_dedicated_key

    return str(generate_dedicated_key(Path(tempfile.mkdtemp()) / "k").path)


def test_odd_pod_ids_pin_one_name_each(tmp_path: Path) -> None:
    store = HostKeyStore(tmp_path / "known_hosts")
    keys = {pod_id: paramiko.RSAKey.generate(1024) for pod_id in ODD_IDS}
    for pod_id, key in keys.items():
        assert store.check(pod_name(pod_id), key, pod_id, run_started=1000.0) is False
    lines = (tmp_path / "known_hosts").read_text().splitlines()
    assert len(lines) == len(ODD_IDS)
    for line in lines:
        names = line.split()[0]
        assert "," not in names and names.startswith("pod:")
    # read back by a fresh store (and paramiko's parser): each id finds its own key and no other name exists
    fresh = HostKeyStore(tmp_path / "known_hosts")
    for pod_id, key in keys.items():
        assert fresh.check(pod_name(pod_id), key, pod_id, run_started=1000.0) is True
    assert set(paramiko.HostKeys(str(tmp_path / "known_hosts")).keys()) == {pod_name(i) for i in ODD_IDS}
    assert gateway_name("ssh.runpod.io,evil", 22) != "ssh.runpod.io,evil"


def test_known_hosts_files_are_private(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        store = HostKeyStore(tmp_path / "data" / "known_hosts")
        store.check(pod_name("abc"), paramiko.RSAKey.generate(1024), "abc", run_started=5.0)
        store.check(gateway_name("ssh.runpod.io", 22), paramiko.RSAKey.generate(1024), "gateway")
        store.forget(pod_name("abc"))
    finally:
        os.umask(old)
    for f in (tmp_path / "data").iterdir():
        assert stat.S_IMODE(f.stat().st_mode) == 0o600, f.name
    assert {f.name for f in (tmp_path / "data").iterdir()} == {"known_hosts", "known_hosts.runs.json"}


def test_a_changed_key_says_what_is_true_for_its_host(tmp_path: Path) -> None:
    store = HostKeyStore(tmp_path / "known_hosts")
    gw = gateway_name("ssh.runpod.io", 22)
    store.check(gw, paramiko.RSAKey.generate(1024), "ssh.runpod.io")
    with pytest.raises(HostKeyChanged) as e:
        store.check(gw, paramiko.RSAKey.generate(1024), "ssh.runpod.io")
    text = str(e.value)
    assert "never changes it" in text and "intercepting" in text and "podtui ssh forget --gateway" in text
    assert "expected" not in text and "forget ssh.runpod.io" not in text
    store.check(pod_name("abc"), paramiko.RSAKey.generate(1024), "abc")
    with pytest.raises(HostKeyChanged, match=r"recreated.*podtui ssh forget abc"):
        store.check(pod_name("abc"), paramiko.Ed25519Key(filename=_keyfile()), "abc")  # another type: a change too


def test_forget_the_gateway_from_the_cli(
    paths: Paths, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PODTUI_SSH_GATEWAY", "127.0.0.1:2222")
    monkeypatch.setenv("RUNPOD_API_KEY", "rpa_NOTUSEDNOTUSEDNOTUSED000")
    store = HostKeyStore(paths.data_dir / "known_hosts")
    key = paramiko.RSAKey.generate(1024)
    store.check(gateway_name("127.0.0.1", 2222), key, "gateway")
    assert main(["ssh", "forget", "--gateway"]) == 0
    out = capsys.readouterr().out
    assert "gateway 127.0.0.1:2222" in out and key.fingerprint in out
    assert store.forget(gateway_name("127.0.0.1", 2222)) == []
    assert main(["ssh", "forget"]) == 2
    assert "either a pod or --gateway" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["fifo", "dir", "device"])
def test_a_known_hosts_that_is_not_a_file_is_refused_not_waited_on(tmp_path: Path, kind: str) -> None:
    from podtui.core.ssh.errors import SshError

    for name in ("known_hosts", "known_hosts.runs.json"):
        folder = tmp_path / f"{kind}-{name}"
        folder.mkdir()
        path = folder / name
        if kind == "fifo":
            os.mkfifo(path)
        elif kind == "dir":
            path.mkdir()
        else:
            path.symlink_to("/dev/zero")
        store = HostKeyStore(folder / "known_hosts")
        with pytest.raises(SshError, match="not a regular file"):
            store.check(pod_name("abc"), paramiko.RSAKey.generate(1024), "abc", run_started=1.0)


def test_comments_and_damaged_lines_in_known_hosts_are_skipped(tmp_path: Path) -> None:
    """As OpenSSH does: a comment, a blank line or a damaged key line never stops every connection."""
    path = tmp_path / "known_hosts"
    store = HostKeyStore(path)
    key = paramiko.RSAKey.generate(1024)
    store.check(pod_name("abc"), key, "abc")
    path.write_text(
        "# my comment here ok\n\nhost ssh-ed25519 AAAA\ngarbage\n"
        + path.read_text()
        + "other ssh-rsa !!!notbase64!!!\n"
    )
    assert HostKeyStore(path).check(pod_name("abc"), key, "abc") is True


@needs_sshd
def test_an_older_look_at_a_pod_never_trusts_a_new_host_key(
    full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings
) -> None:
    """A new key is trusted for a run later than the pinned key's (the pod restarted: a new container, new keys),
    never for an earlier one: a Pod fetched before that restart (a stale list) is no restart of its own."""
    sshd = full_sim.sshds[DEMO_IDS["train"]]
    old = find_pod(sim_api, DIRECT_POD)
    assert old.run_started is not None
    connect_pod(old, ssh_settings, "direct").close()  # pinned, with this run's start

    def new_key() -> None:
        sshd.stop()
        (sshd.dir / "ssh_host_ed25519_key").unlink()
        sshd.start()

    new_key()
    restarted = dataclasses.replace(old, run_started=old.run_started + 3600)  # as the API says after a restart
    connect_pod(restarted, ssh_settings, "direct").close()  # trusted: a later run
    new_key()  # someone else answers now
    with pytest.raises(HostKeyChanged, match="REFUSED"):
        connect_pod(old, ssh_settings, "direct")  # the old Pod's start is earlier: no restart, the key is refused
    with pytest.raises(HostKeyChanged, match="REFUSED"):
        connect_pod(dataclasses.replace(old, run_started=None), ssh_settings, "direct")


def test_an_earlier_run_start_never_trusts_a_new_key(tmp_path: Path) -> None:
    store = HostKeyStore(tmp_path / "known_hosts")
    k1, k2, k3 = (paramiko.RSAKey.generate(1024) for _ in range(3))
    assert store.check("pod:abc", k1, "abc", run_started=1000.0) is False
    assert store.check("pod:abc", k2, "abc", run_started=90000.0) is False  # restarted: its new key trusted
    with pytest.raises(HostKeyChanged):
        store.check("pod:abc", k3, "abc", run_started=1000.0)  # an old look at the pod is no restart
    with pytest.raises(HostKeyChanged):
        store.check("pod:abc", k3, "abc", run_started=None)
    assert store.check("pod:abc", k2, "abc", run_started=1000.0) is True  # the pinned key still is
    assert store.check("pod:abc", k3, "abc", run_started=200000.0) is False  # a later run again
