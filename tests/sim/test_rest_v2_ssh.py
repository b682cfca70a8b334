"""A simulated pod's `ssh` block in REST v2 names where the whole simulator really listens: its SSH gateway
(docs/runpod-facts.md#ssh-gateway) while the pod runs, and the pod's own sshd (docs/runpod-facts.md#ssh-direct)
while it runs with 22/tcp published; so a client reaches simulated pods as it reaches RunPod's. And from inside a
pod, its own key stops it over REST v2 and touches no other pod."""

from __future__ import annotations

import shlex
from typing import Any

import httpx
import paramiko
import pytest

from podtui.core.ssh.keys import KeyFile
from podtui.sim.simulator import Simulator
from tests.helpers.sim import DEMO_IDS, machine, needs_sshd

TRAIN, IDLE, STOPPED, STARTING = (DEMO_IDS[k] for k in ("train", "idle", "stopped", "starting"))


def v2_pod(sim: Simulator, pod_id: str) -> dict[str, Any]:
    r = httpx.get(f"{sim.api.url}/v2/pods/{pod_id}", headers={"Authorization": f"Bearer {sim.api.api_key}"})
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


def test_running_pods_name_the_gateway(full_sim: Simulator, user_key: KeyFile) -> None:
    host, port = full_sim.gateway.address
    proxy = v2_pod(full_sim, IDLE)["ssh"]["proxy"]
    user = full_sim.world.pods[IDLE].pod_host_id
    assert proxy == {"host": host, "port": port, "username": user, "command": proxy["command"]}
    assert proxy["command"].startswith(f"ssh {user}@{host} -p {port}")
    with paramiko.Transport((proxy["host"], proxy["port"])) as t:
        t.connect()
        t.auth_publickey(proxy["username"], user_key.key)
        assert t.is_authenticated()  # the gateway takes the pod's user name and the account's key
    for pod_id in (STOPPED, STARTING):
        assert v2_pod(full_sim, pod_id)["ssh"] == {"proxy": None, "direct": None}


@needs_sshd
def test_a_pod_with_22_tcp_names_its_own_sshd(full_sim: Simulator, user_key: KeyFile) -> None:
    pod = v2_pod(full_sim, TRAIN)
    direct = pod["ssh"]["direct"]
    assert direct is not None and direct["host"] == "127.0.0.1" and direct["username"] == "root"
    assert direct["port"] == full_sim.sshds[TRAIN].port
    assert {"private": 22, "public": direct["port"], "type": "tcp", "ip": "127.0.0.1"} in pod["runtime"]["ports"]
    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    try:
        client.connect(direct["host"], direct["port"], direct["username"], pkey=user_key.key, look_for_keys=False)
        _, out, _ = client.exec_command("echo $RUNPOD_POD_ID")
        assert out.read().decode().strip() == TRAIN
    finally:
        client.close()
    assert v2_pod(full_sim, IDLE)["ssh"]["direct"] is None  # 22/tcp listed, but no sshd of its own
    full_sim.world.pods[TRAIN].ports = "8888/http"
    assert v2_pod(full_sim, TRAIN)["ssh"]["direct"] is None  # no longer published


STOP_SCRIPT = """
import json, os, urllib.error, urllib.request
def act(pod_id):
    req = urllib.request.Request(
        os.environ["RUNPOD_API_BASE_URL"] + "/v2/pods/" + pod_id + "/action",
        json.dumps({"action": "stop"}).encode(),
        {"Authorization": "Bearer " + os.environ["RUNPOD_API_KEY"], "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
print(act(os.environ["OTHER"]), act(os.environ["RUNPOD_POD_ID"]))
"""


@pytest.mark.timeout(60)
def test_a_pod_stops_itself_with_its_own_key(full_sim: Simulator) -> None:
    m = machine(full_sim, "idle")
    command = f"OTHER={TRAIN} {m.view.python.command} -c {shlex.quote(STOP_SCRIPT)}"
    out, err = m.spawn_exec(command).communicate(timeout=30)
    assert out.decode().split() == ["403", "200"], err.decode()[-500:]
    assert full_sim.world.pods[IDLE].status == "EXITED" and full_sim.world.pods[TRAIN].status == "RUNNING"
