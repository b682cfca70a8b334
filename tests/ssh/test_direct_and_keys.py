"""Direct SSH against a real OpenSSH sshd, reconnects, host keys, wrong keys, and account key setup."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import paramiko
import pytest

from podtui.core.api import V2Api
from podtui.core.ssh.connect import SshSettings, connect, connect_pod, endpoints_for
from podtui.core.ssh.errors import AuthFailed, HostKeyChanged, ShellClosed, SshError, SshKeyError
from podtui.core.ssh.hostkeys import HostKeyStore, pod_name
from podtui.core.ssh.keys import KeyFile, generate_dedicated_key, merge_account_keys
from podtui.core.ssh.remote import open_remote
from podtui.core.ssh.session import ShellSession
from podtui.core.ssh.setup import key_status, setup_key
from podtui.sim.simulator import Simulator
from tests.helpers.sim import DEMO_IDS, needs_sshd

if shutil.which("sshd") is None and not Path("/usr/sbin/sshd").exists():  # CI installs it; never skip silently
    pytest.fail("OpenSSH server missing: run scripts/setup-test-env.sh", pytrace=False)


@needs_sshd
def test_direct_ssh_uses_exec_and_a_real_sshd(full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings) -> None:
    pod = sim_api.fetch_snapshot().find(DEMO_IDS["train"])
    assert pod.direct_ssh == ("127.0.0.1", full_sim.sshds[pod.id].port)
    with open_remote(pod, ssh_settings) as sh:
        assert sh.kind == "exec" and sh.session.connection is not None
        assert sh.session.connection.endpoint.mode == "direct"
        start = "/workspace" if full_sim.isolated else str(full_sim.root / "pods" / pod.id / "workspace")
        assert sh.run("echo $RUNPOD_POD_ID; pwd").output.split() == [pod.id, start]
        assert sh.run("cd /tmp").exit_code == 0
        assert sh.run("pwd").output == "/tmp\n"
        assert sh.run("exit 5").exit_code == 5


@needs_sshd
def test_via_pty_on_a_direct_pod(sim_api: V2Api, ssh_settings: SshSettings) -> None:
    pod = sim_api.fetch_snapshot().find(DEMO_IDS["train"])
    with open_remote(pod, ssh_settings, via="pty") as sh:
        assert sh.kind == "pty"
        assert sh.run("tty >/dev/null </dev/tty && echo has-a-tty").output == "has-a-tty\n"


@needs_sshd
def test_sftp_works_on_direct_but_not_on_the_gateway(sim_api: V2Api, ssh_settings: SshSettings, tmp_path: Path) -> None:
    pod = sim_api.fetch_snapshot().find(DEMO_IDS["train"])
    conn = connect_pod(pod, ssh_settings, "direct")
    try:
        sftp = paramiko.SFTPClient.from_transport(conn.transport)
        assert sftp is not None
        assert "workspace" in sftp.listdir("..")
    finally:
        conn.close()
    gw = connect_pod(pod, ssh_settings, "gateway")
    try:
        with pytest.raises(paramiko.SSHException):
            paramiko.SFTPClient.from_transport(gw.transport)
    finally:
        gw.close()


@needs_sshd
def test_direct_host_keys_are_pinned_per_pod(full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings) -> None:
    """RunPod reuses IP:port across pods: a known pod presenting another key is refused."""
    snap = sim_api.fetch_snapshot()
    train, bursty = snap.find(DEMO_IDS["train"]), snap.find(DEMO_IDS["bursty"])
    connect_pod(train, ssh_settings, "direct").close()  # trust on first use
    connect_pod(train, ssh_settings, "direct").close()  # same key: fine
    # the bursty pod's sshd (another host key) now answers where train's pin applies
    ep = endpoints_for(bursty, ssh_settings, "direct")[0]
    impostor = type(ep)(ep.mode, ep.host, ep.port, ep.username, pod_name(train.id), "llama-lora-3090 (direct)")
    with pytest.raises(HostKeyChanged, match=r"REFUSED.*podtui ssh forget"):
        connect(impostor, ssh_settings)
    assert HostKeyStore(ssh_settings.known_hosts).forget(pod_name(train.id))
    connect(impostor, ssh_settings).close()  # after forgetting, trusted anew


def test_gateway_host_key_change_refused(full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings) -> None:
    pod = sim_api.fetch_snapshot().find(DEMO_IDS["idle"])
    connect_pod(pod, ssh_settings).close()
    full_sim.gateway.host_key = paramiko.RSAKey.generate(2048)
    with pytest.raises(HostKeyChanged):
        connect_pod(pod, ssh_settings)


def test_wrong_key_names_the_keys_tried(sim_api: V2Api, ssh_settings: SshSettings, tmp_path: Path) -> None:
    other = generate_dedicated_key(tmp_path / "other_key")
    ssh_settings.key_path = other.path
    pod = sim_api.fetch_snapshot().find(DEMO_IDS["idle"])
    with pytest.raises(AuthFailed) as e:
        connect_pod(pod, ssh_settings)
    assert str(other.path) in str(e.value) and "podtui keys setup" in str(e.value)


def test_starting_pod_is_explained(sim_api: V2Api, ssh_settings: SshSettings) -> None:
    pod = sim_api.fetch_snapshot().find(DEMO_IDS["starting"])  # sweep-h100x2: still looking for its machine
    with pytest.raises(SshError, match="sweep-h100x2 is PROVISIONING: SSH works once it is RUNNING"):
        connect_pod(pod, ssh_settings)


def test_the_gateway_is_where_the_api_says(
    full_sim: Simulator, sim_api: V2Api, user_key: KeyFile, tmp_path: Path
) -> None:
    settings = SshSettings(known_hosts=tmp_path / "kh", key_path=user_key.path, use_agent=False)
    assert settings.gateway is None  # no override: the pod's `ssh.proxy` says where
    pod = sim_api.fetch_snapshot().find(DEMO_IDS["idle"])
    assert pod.ssh_proxy is not None and pod.pod_host_id == f"{pod.id}-0d9e7b14"
    [gateway] = endpoints_for(pod, settings)
    assert (gateway.mode, gateway.host, gateway.port) == ("gateway", *full_sim.gateway.address)
    assert gateway.username == pod.pod_host_id
    with open_remote(pod, settings) as sh:
        assert sh.run("echo $RUNPOD_POD_ID").output == pod.id + "\n"
    # a gateway of the user's own (config ssh_gateway) stands in for the API's, with the pod's user name
    settings.gateway = ("127.0.0.1", 1)
    [relayed] = endpoints_for(pod, settings)
    assert (relayed.host, relayed.port, relayed.username) == ("127.0.0.1", 1, pod.pod_host_id)


def test_reconnect_after_the_server_drops_the_connection(
    full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings
) -> None:
    pod = sim_api.fetch_snapshot().find(DEMO_IDS["idle"])
    states: list[tuple[str, str]] = []
    output = bytearray()
    dropped = threading.Event()

    def on_state(state: str, detail: str) -> None:
        states.append((state, detail))
        if state == "closed":
            dropped.set()

    session = ShellSession(lambda: connect_pod(pod, ssh_settings), on_output=output.extend, on_state=on_state)
    session.open()
    session.send(b"echo first\n")
    time.sleep(0.3)
    full_sim.gateway.drop_connections()
    assert dropped.wait(5)
    assert states[-1] == ("closed", "the connection dropped")
    with pytest.raises(ShellClosed):
        session.send(b"echo lost\n")
    session.reconnect(first_delay_s=0.05)
    assert ("reconnecting", "1") in states and session.state == "connected"
    output.clear()
    session.send(b"echo second-life\n")
    deadline = time.monotonic() + 5
    while b"second-life\r\n" not in output and time.monotonic() < deadline:
        time.sleep(0.05)
    assert b"second-life" in output
    session.close()


def test_reconnect_gives_up_with_a_clear_error(full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings) -> None:
    pod = sim_api.fetch_snapshot().find(DEMO_IDS["idle"])
    session = ShellSession(lambda: connect_pod(pod, ssh_settings)).open()
    full_sim.gateway.stop()
    with pytest.raises(ShellClosed, match="could not reconnect after 2 tries"):
        session.reconnect(attempts=2, first_delay_s=0.01)


def test_gateway_that_hangs_after_its_banner(full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings) -> None:
    pod = sim_api.fetch_snapshot().find(DEMO_IDS["idle"])
    full_sim.gateway.hang_after_banner = True
    ssh_settings.connect_timeout_s = 1.0
    t = time.monotonic()
    with pytest.raises(SshError):
        connect_pod(pod, ssh_settings)
    assert time.monotonic() - t < 6


def test_key_setup_keeps_existing_account_keys(full_sim: Simulator, sim_api: V2Api, tmp_path: Path) -> None:
    old = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7 laptop\nssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBkQ work"
    full_sim.world.set_pub_key(old)
    path = tmp_path / "dedicated"
    r = setup_key(sim_api, path)
    assert r.created and r.registered and r.account_keys == 3
    keys = full_sim.world.pub_key.split("\n")
    assert keys[:2] == old.split("\n") and keys[2].split()[1] == r.key.key.get_base64()
    assert (path.stat().st_mode & 0o777) == 0o600
    assert key_status(sim_api, path)[1] is True
    again = setup_key(sim_api, path)
    assert not again.created and not again.registered and full_sim.world.pub_key.split("\n") == keys
    # and the key opens the gateway once the pod has restarted: a running pod has the keys it started with
    settings = SshSettings(known_hosts=tmp_path / "kh", key_path=path, use_agent=False)  # the API's gateway
    pod = sim_api.fetch_snapshot().find(DEMO_IDS["idle"])
    with pytest.raises(AuthFailed), open_remote(pod, settings):
        pass
    full_sim.world.restart(pod.id)
    with open_remote(pod, settings) as sh:
        assert sh.run("echo in").output == "in\n"


def test_key_setup_refuses_to_resend_a_broken_key_list(full_sim: Simulator, sim_api: V2Api, tmp_path: Path) -> None:
    full_sim.world.set_pub_key('ssh-ed25519 AAAAC3Nza work\nnot a key" } injected')
    with pytest.raises(SshKeyError, match="cannot safely resend"):
        setup_key(sim_api, tmp_path / "k")
    assert full_sim.world.pub_key.endswith("injected")  # untouched


def test_merge_account_keys() -> None:
    new = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINEW me"
    assert merge_account_keys(None, new) == new
    assert merge_account_keys("", new) == new
    assert merge_account_keys("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINEW other-comment", new) is None
    assert merge_account_keys("ssh-rsa AAAAold a\r\n\r\n", new) == f"ssh-rsa AAAAold a\n{new}"
    with pytest.raises(SshKeyError):
        merge_account_keys(None, "ssh-ed25519 AAAA x\nssh-rsa BBBB smuggled")


@needs_sshd
def test_forcing_the_gateway_on_a_pod_with_direct_ssh(sim_api: V2Api, ssh_settings: SshSettings) -> None:
    pod = sim_api.fetch_snapshot().find(DEMO_IDS["train"])
    with open_remote(pod, ssh_settings, via="gateway") as sh:
        assert sh.kind == "pty" and sh.session.connection is not None
        assert sh.session.connection.endpoint.mode == "gateway"
        assert sh.run("echo $RUNPOD_POD_ID").output == pod.id + "\n"
    with open_remote(pod, ssh_settings, via="pty") as sh:
        assert sh.session.connection is not None and sh.session.connection.endpoint.mode == "direct"


@needs_sshd
def test_run_remote_over_direct_ssh(sim_api: V2Api, ssh_settings: SshSettings) -> None:
    from podtui import run_remote

    output, code = run_remote(
        DEMO_IDS["train"],
        ssh_settings.key_path,
        ["cd /tmp", "pwd", "nvidia-smi -L || true"],
        api=sim_api,
        settings=ssh_settings,
    )
    assert code == 0 and output.startswith("/tmp\n")


def test_reconnect_gives_up_at_once_on_a_refused_key(
    full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings
) -> None:
    pod = sim_api.fetch_snapshot().find(DEMO_IDS["idle"])
    session = ShellSession(lambda: connect_pod(pod, ssh_settings)).open()
    full_sim.world.set_pub_key("")  # the key was removed from the account
    full_sim.world.restart(pod.id)  # and the pod restarted without it
    t = time.monotonic()
    with pytest.raises(AuthFailed):
        session.reconnect(attempts=5, first_delay_s=1.0)
    assert time.monotonic() - t < 3
