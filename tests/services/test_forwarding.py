"""Forwarding through a pod's direct sshd (docs/services.md#loopback-addresses-and-localhost): a paramiko
direct-tcpip channel to ("localhost", 8888), as podtui's forwarding opens one, reaches that pod's own service, as
it would inside a RunPod pod, and inside the pod `localhost` is the pod too."""

from __future__ import annotations

import paramiko
import pytest

from podtui.core.api import V2Api
from podtui.core.ssh.connect import SshSettings, connect_pod
from podtui.core.ssh.remote import open_remote
from podtui.sim.simulator import Simulator
from tests.helpers.sandbox import out
from tests.helpers.sim import DEMO_IDS, needs_sshd

TRAIN, BURSTY = DEMO_IDS["train"], DEMO_IDS["bursty"]  # both with direct SSH

pytestmark = needs_sshd


def forwarded_get(transport: paramiko.Transport, host: str, port: int, path: str = "/") -> bytes:
    """An HTTP GET over a direct-tcpip channel: what `ssh -L` carries for a browser."""
    channel = transport.open_channel("direct-tcpip", (host, port), ("127.0.0.1", 0), timeout=10)
    try:
        channel.settimeout(10)
        channel.sendall(f"GET {path} HTTP/1.1\r\nHost: localhost:{port}\r\nConnection: close\r\n\r\n".encode())
        answer = b""
        while chunk := channel.recv(65536):
            answer += chunk
        return answer
    finally:
        channel.close()


def test_localhost_through_a_pods_sshd_is_that_pods_own_service(
    full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings
) -> None:
    if not full_sim.isolated:
        pytest.skip("without namespaces, localhost through sshd is this machine's (docs/services.md)")
    snap = sim_api.fetch_snapshot()
    pages = {}
    for pod_id in (TRAIN, BURSTY):
        pod = snap.find(pod_id)
        assert pod is not None
        conn = connect_pod(pod, ssh_settings, "direct")
        try:
            answer = forwarded_get(conn.transport, "localhost", 8888, "/lab")
        finally:
            conn.close()
        assert answer.startswith(b"HTTP/1.1 200 OK\r\n"), answer[:200]
        assert b"<title>Jupyter Server</title>" in answer
        pages[pod_id] = answer
    assert f"JupyterLab on pod {TRAIN}".encode() in pages[TRAIN]
    assert f"JupyterLab on pod {BURSTY}".encode() in pages[BURSTY]  # two pods' 8888: two services
    # the pod's requests show in its container log, as forwarded ones do on RunPod
    with full_sim.world.logs.lock:
        lines = [e.line for e in full_sim.world.logs.entries(full_sim.world.pods[TRAIN], full_sim.world.clock.now())]
    assert any("ServerApp] 200 GET /lab" in line for line in lines), lines


def test_a_port_nothing_listens_on_is_refused_and_remote_forwarding_is_off(
    full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings
) -> None:
    pod = sim_api.fetch_snapshot().find(TRAIN)
    assert pod is not None
    conn = connect_pod(pod, ssh_settings, "direct")
    try:
        with pytest.raises(paramiko.ChannelException):
            conn.transport.open_channel("direct-tcpip", ("localhost", 6006), ("127.0.0.1", 0), timeout=10)
        with pytest.raises(paramiko.SSHException):  # `ssh -R`: a pod's sshd here forwards one way only
            conn.transport.request_port_forward("127.0.0.1", 0)
        # and sessions still go into the pod (ForceCommand), on the same connection
        channel = conn.transport.open_session(timeout=10)
        channel.exec_command("echo $RUNPOD_POD_ID")
        assert channel.makefile().read().decode().strip() == TRAIN
    finally:
        conn.close()


def test_inside_the_pod_localhost_is_the_pod(full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings) -> None:
    if not full_sim.isolated:
        pytest.skip("without namespaces a pod has this machine's /etc/hosts")
    address = full_sim.service_address(TRAIN, 8888)
    assert address is not None
    pod = sim_api.fetch_snapshot().find(TRAIN)
    assert pod is not None
    with open_remote(pod, ssh_settings) as sh:
        assert out(sh, "getent ahostsv4 localhost").split()[0] == address[0]
        assert out(sh, f"getent hosts {TRAIN}").split()[0] == address[0]
        page = out(
            sh,
            "python3 -c 'import urllib.request as u; print(u.urlopen(\"http://localhost:8888/\").read().decode())'",
        )
        assert f"JupyterLab on pod {TRAIN}" in page
        assert sh.run("echo x > /etc/hosts").exit_code != 0  # read-only, as the rest of /etc
