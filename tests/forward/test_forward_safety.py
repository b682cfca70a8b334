"""What keeps a long-lived forward safe and honest (docs/forwarding.md#reconnects): a reconnect never trusts a new host
key on an old look at the pod, a pod terminated or gone ends the forwards, no error leaves them waiting for a
reconnect that never comes, listeners hear each forward in order, and the pod's sshd forwards to the pod only."""

from __future__ import annotations

import dataclasses
import io
import itertools
import json
import socket
import sys
import threading
import time
import types
import urllib.parse
from collections.abc import Callable

import pytest

import podtui.core.forward as forward_mod
import podtui.core.ssh.connect as connect_mod
from podtui.core.api import V2Api
from podtui.core.forward import Forward, check_forwardable
from podtui.core.forward_memory import PortSpec
from podtui.core.pod import Pod, PodStatus
from podtui.core.services import Services
from podtui.core.ssh.connect import SshSettings
from podtui.sim.simulator import Simulator
from podtui.sim.sshd import free_port
from tests.forward.conftest import BODY, Fetch, MakeForwarder
from tests.helpers.sim import DEMO_IDS, GATEWAY_POD, find_pod, needs_sshd

TRAIN = DEMO_IDS["train"]


def wait_for(check: Callable[[], bool], timeout_s: float = 15.0) -> None:
    end = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.02)


def new_host_key(full_sim: Simulator) -> None:
    """The pod's sshd comes back with another host key (an impostor's, or a new container's)."""
    sshd = full_sim.sshds[TRAIN]
    sshd.stop()
    (sshd.dir / "ssh_host_ed25519_key").unlink()  # a new one is made as it starts again
    sshd.start()


# --- host keys --------------------------------------------------------------------------------------------


@needs_sshd
@pytest.mark.parametrize("refreshed", [False, True], ids=["no refresh", "refresh gives the same old pod"])
def test_eleven_minutes_on_a_reconnect_still_refuses_a_new_host_key(
    full_sim: Simulator,
    direct_pod: Pod,
    make_forwarder: MakeForwarder,
    service: int,
    monkeypatch: pytest.MonkeyPatch,
    refreshed: bool,
) -> None:
    """The pod's run start comes from when it was fetched: a forward running longer than the host keys' tolerance
    (600 s) does not take its old Pod for a restarted pod when it reconnects, and refuses the new key."""
    fw = make_forwarder(direct_pod, refresh=(lambda: direct_pod) if refreshed else None)
    fw.add(service, 0)
    fw.start()
    real = time.time
    # only the connection code's clock moves on 11 minutes: the forward has run that long
    monkeypatch.setattr(
        connect_mod,
        "time",
        types.SimpleNamespace(time=lambda: real() + 660, monotonic=time.monotonic, sleep=time.sleep),
    )
    new_host_key(full_sim)
    wait_for(lambda: fw.forwards()[0].state == "failed", 20)
    assert "REFUSED: the SSH host key" in (fw.forwards()[0].reason or "")


def test_a_pods_run_start_is_dated_by_its_fetch(full_sim: Simulator, sim_api: V2Api) -> None:
    first = find_pod(sim_api, TRAIN)
    assert first.uptime_s is not None and first.run_started is not None
    full_sim.world.clock.advance(900)
    later = find_pod(sim_api, TRAIN)
    assert later.uptime_s == first.uptime_s + 900
    assert later.run_started == pytest.approx(first.run_started, abs=2)  # the same run, seen twice
    assert first.run_started == pytest.approx(full_sim.world.pods[TRAIN].started_at, abs=2)
    assert sim_api.fetch_pod(TRAIN).run_started == pytest.approx(first.run_started, abs=2)
    assert find_pod(sim_api, "notebook-4090").run_started is None  # not running: no run


# --- a pod terminated, gone, or a refresh that fails ------------------------------------------------------


@needs_sshd
@pytest.mark.parametrize("how", ["terminated", "gone"])
def test_podtui_forward_ends_when_its_pod_is_terminated_or_gone(
    full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings, service: int, fetch: Fetch, pod_host: str, how: str
) -> None:
    """`podtui forward` looks the pod up before each reconnect: a pod no longer listed (REST v2 lists no terminated
    pod) fails its forwards with the reason, and the command ends (exit 1), rather than retrying for ever."""
    from podtui.cli.forward_cmd import cmd_forward

    session = Services(sim_api, ssh_settings=lambda: ssh_settings)
    out = io.StringIO()
    code: list[int] = []
    run = threading.Thread(
        target=lambda: code.append(cmd_forward(session, TRAIN, [PortSpec(service, 0)], pod_host, True, None, out)),
        daemon=True,
    )
    run.start()
    wait_for(lambda: "\n" in out.getvalue() or not run.is_alive())
    started = json.loads(out.getvalue().splitlines()[0])
    assert fetch(started["local_port"]) == (200, BODY)
    if how == "terminated":
        full_sim.world.terminate(TRAIN)
    else:
        with full_sim.world.lock:
            del full_sim.world.pods[TRAIN]
    assert full_sim.sshds[TRAIN].drop_connections() >= 1
    run.join(20)
    assert code == [1]
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    failed = next(r for r in rows if r["state"] == "failed")
    assert "llama-lora-3090 (q7x2m9fk4r8t1a) is no longer on the account" in failed["reason"]


@needs_sshd
def test_a_refreshed_pod_that_is_terminated_fails_its_forwards(
    full_sim: Simulator, direct_pod: Pod, make_forwarder: MakeForwarder, service: int
) -> None:
    """As the TUI's last poll gives it: TERMINATED for good, not a pod to wait for."""
    pods = [direct_pod, dataclasses.replace(direct_pod, status=PodStatus.TERMINATED)]
    fw = make_forwarder(direct_pod, refresh=lambda: pods.pop(0) if len(pods) > 1 else pods[0])
    f = fw.add(service, 0)
    fw.start()
    assert full_sim.sshds[TRAIN].drop_connections() >= 1
    wait_for(lambda: fw.forwards()[0].state == "failed")
    assert fw.forwards()[0].reason == "llama-lora-3090 was terminated: its forwards end"
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", f.local_port), timeout=2).close()


@needs_sshd
def test_a_refresh_that_raises_anything_keeps_the_last_known_pod(
    full_sim: Simulator, direct_pod: Pod, make_forwarder: MakeForwarder, service: int, fetch: Fetch
) -> None:
    calls: list[int] = []

    def refresh() -> Pod:
        calls.append(1)
        if len(calls) > 1:
            raise LookupError(f"no pod with id or name {TRAIN!r}")  # what Snapshot.find raises
        return direct_pod

    fw = make_forwarder(direct_pod, refresh=refresh)
    f = fw.add(service, 0)
    fw.start()
    assert full_sim.sshds[TRAIN].drop_connections() >= 1
    wait_for(lambda: len(calls) > 1 and fw.forwards()[0].state == "listening" and fw.connected)
    assert fetch(f.local_port) == (200, BODY)


@needs_sshd
def test_an_unexpected_error_while_reconnecting_is_said_and_retried(
    full_sim: Simulator,
    direct_pod: Pod,
    make_forwarder: MakeForwarder,
    service: int,
    fetch: Fetch,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No error ends the thread that reconnects: the forwards would say "reconnecting" for ever."""
    fw = make_forwarder(direct_pod)
    heard: list[Forward] = []
    fw.listeners.append(heard.append)
    f = fw.add(service, 0)
    fw.start()
    real = connect_mod.connect_pod
    failures = [ValueError("a bug somewhere")]

    def connect_once_broken(*args: object, **kw: object) -> object:
        if failures:
            raise failures.pop()
        return real(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr("podtui.core.forward.connect_pod", connect_once_broken)
    assert full_sim.sshds[TRAIN].drop_connections() >= 1
    wait_for(lambda: any("ValueError: a bug somewhere" in (h.reason or "") for h in heard))
    wait_for(lambda: fw.forwards()[0].state == "listening" and fw.connected)
    assert fetch(f.local_port) == (200, BODY)


# --- listeners --------------------------------------------------------------------------------------------


@needs_sshd
def test_listeners_hear_a_forwards_snapshots_in_order(direct_pod: Pod, make_forwarder: MakeForwarder) -> None:
    """Two clients refused at once: each note is told, and the last told is the forward as it is now, even when a
    listener is slow with the first."""
    tick = itertools.count(1)
    fw = make_forwarder(direct_pod, clock=lambda: float(next(tick)))
    heard: list[Forward] = []
    first = threading.Event()

    def slow_on_the_first_note(snap: Forward) -> None:
        if snap.note is not None and not first.is_set():
            first.set()
            end = time.monotonic() + 2
            while time.monotonic() < end and not any((h.note_at or 0) > (snap.note_at or 0) for h in heard):
                time.sleep(0.01)
        heard.append(snap)

    fw.listeners.append(slow_on_the_first_note)
    bad = fw.add(free_port(), 0)  # nothing listens there on the pod
    fw.start()
    clients = [socket.create_connection(("127.0.0.1", bad.local_port), timeout=10) for _ in range(2)]
    for client in clients:
        assert client.recv(100) == b""
        client.close()
    wait_for(lambda: fw.forwards()[0].note_at is not None and heard[-1].note_at == fw.forwards()[0].note_at)
    time.sleep(2.5)  # the slow listener is done: nothing older comes after
    now = fw.forwards()[0]
    assert heard[-1].note_at == now.note_at
    assert [h.seq for h in heard] == sorted(h.seq for h in heard)


# --- listening here ---------------------------------------------------------------------------------------


@needs_sshd
@pytest.mark.parametrize(("platform", "reused"), [("linux", True), ("darwin", False), ("freebsd14", False)])
def test_reuseaddr_on_linux_only(
    direct_pod: Pod, make_forwarder: MakeForwarder, monkeypatch: pytest.MonkeyPatch, platform: str, reused: bool
) -> None:
    """On BSD and macOS, SO_REUSEADDR lets 127.0.0.1:P be bound while another program listens on *:P."""
    fw = make_forwarder(direct_pod)
    monkeypatch.setattr(sys, "platform", platform)
    fw.add(free_port(), 0)
    monkeypatch.undo()
    sock = fw._entries[0].sock
    assert bool(sock.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR)) is reused


def test_a_gateway_only_pods_refusal_says_where_the_url_is(api: V2Api) -> None:
    with pytest.raises(forward_mod.DirectSshNeeded) as e:
        check_forwardable(find_pod(api, GATEWAY_POD), 6006)
    assert "the Services tab (S) or `podtui pods --json` shows the URL" in str(e.value)
    assert "pod_links" not in str(e.value)


# --- the pod's sshd forwards to the pod only --------------------------------------------------------------


@needs_sshd
def test_a_forward_to_the_rest_of_this_machine_is_refused(
    full_sim: Simulator, direct_pod: Pod, make_forwarder: MakeForwarder, service: int, fetch: Fetch
) -> None:
    """On RunPod, 127.0.0.1 through a pod's sshd is the pod: the simulator's API on this machine's 127.0.0.1 is no
    more reachable through it than any other pod's address."""
    api_port = urllib.parse.urlsplit(full_sim.api.url).port
    assert api_port is not None
    fw = make_forwarder(direct_pod, remote_host="127.0.0.1")
    heard: list[Forward] = []
    fw.listeners.append(heard.append)
    to_api = fw.add(api_port, 0)
    fw.start()
    with socket.create_connection(("127.0.0.1", to_api.local_port), timeout=10) as client:
        client.sendall(b"GET /v2/pods HTTP/1.0\r\n\r\n")
        assert client.recv(100) == b""  # closed unanswered
    said = f"the pod's sshd refused to forward to 127.0.0.1:{api_port} (administratively prohibited"
    wait_for(lambda: any(said in (h.note or "") for h in heard))
    other = full_sim.world.pod_address(DEMO_IDS["bursty"])  # another pod's address
    fw2 = make_forwarder(direct_pod, remote_host=other)
    to_other = fw2.add(8888, 0)
    fw2.start()
    with socket.create_connection(("127.0.0.1", to_other.local_port), timeout=10) as client:
        client.sendall(b"GET / HTTP/1.0\r\n\r\n")
        assert client.recv(100) == b""
    wait_for(lambda: "administratively prohibited" in (fw2.forwards()[0].note or ""))
    # the pod's own address is the pod: allowed
    own = make_forwarder(direct_pod, remote_host=full_sim.world.pod_address(TRAIN))
    mine = own.add(service, 0)
    own.start()
    assert fetch(mine.local_port) == (200, BODY)
    assert fw.forwards()[0].state == "listening"  # the forward goes on
