"""Where a pod cannot get a view of its own (no mount namespaces: macOS, a locked-down kernel; forced here with
the simulator's switch or PODTUI_SIM_ISOLATION=off), its shell works on this machine's files as before. The
console says so, the API shows the pod's folder in its env, and transfers refuse every path outside that folder."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import paramiko
import pytest

from podtui.core.api import V2Api
from podtui.core.demo_sandbox import SANDBOX_ENV, transfer_path_refusal
from podtui.core.pod import Pod
from podtui.core.ssh.connect import SshSettings
from podtui.core.ssh.keys import KeyFile
from podtui.core.ssh.remote import open_remote
from podtui.sim.clock import SimClock
from podtui.sim.demo import demo_world
from podtui.sim.pod_view import NOT_ISOLATED, namespaces_work
from podtui.sim.simulator import Simulator
from podtui.transfer.job import TransferJob
from podtui.transfer.queue import TransferQueue
from podtui.transfer.runner import TransferContext
from tests.helpers.sim import DEMO_IDS, needs_sshd


@pytest.fixture
def plain_sim(clock: SimClock, tmp_path: Path, user_key: KeyFile) -> Iterator[Simulator]:
    world = demo_world(clock, boot_s=30.0)
    world.pub_key = user_key.public_line + " tester"
    sim = Simulator(world, root=tmp_path / "sim", isolated=False).start()
    yield sim
    sim.stop()


@pytest.fixture
def plain_api(plain_sim: Simulator) -> V2Api:
    return V2Api(plain_sim.api.api_key, plain_sim.api.url, timeout_s=5.0, clock=plain_sim.world.clock.now)


@pytest.fixture
def plain_settings(plain_sim: Simulator, tmp_path: Path, user_key: KeyFile) -> SshSettings:
    return SshSettings(
        known_hosts=tmp_path / "known_hosts",
        gateway=plain_sim.gateway.address,
        key_path=user_key.path,
        use_agent=False,
        connect_timeout_s=5.0,
    )


def find(api: V2Api, key: str) -> Pod:
    pod = api.fetch_snapshot().find(DEMO_IDS[key])
    assert pod is not None
    return pod


def interactive(host: str, port: int, user: str, key: KeyFile, until: str) -> str:
    """What an interactive shell (a PTY, no command) prints up to `until`."""
    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    client.connect(host, port, username=user, key_filename=str(key.path), allow_agent=False, look_for_keys=False)
    try:
        chan = client.invoke_shell()
        chan.settimeout(15)
        seen = b""
        while until.encode() not in seen:
            seen += chan.recv(65536)
        return seen.decode(errors="replace")
    finally:
        client.close()


def test_the_switch_turns_namespaces_off() -> None:
    check = "from podtui.sim.pod_view import namespaces_work; print(namespaces_work())"
    off = subprocess.run(
        [sys.executable, "-c", check],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, "PODTUI_SIM_ISOLATION": "off"},
    )
    assert off.stdout == "False\n", off.stderr
    on = subprocess.run(
        [sys.executable, "-c", check],
        capture_output=True,
        text=True,
        timeout=30,
        env={k: v for k, v in os.environ.items() if k != "PODTUI_SIM_ISOLATION"},
    )
    assert on.stdout == f"{namespaces_work()}\n"


def test_the_gateway_console_says_so(plain_sim: Simulator, user_key: KeyFile) -> None:
    pod = plain_sim.world.pods[DEMO_IDS["idle"]]
    host, port = plain_sim.gateway.address
    seen = interactive(host, port, pod.pod_host_id, user_key, f"root@{pod.id}:/workspace# ")
    banner = seen[: seen.index("root@")]
    assert "Enjoy your Pod" in banner and NOT_ISOLATED in banner


@needs_sshd
def test_a_direct_ssh_console_says_so_and_exec_does_not(
    plain_sim: Simulator, plain_api: V2Api, plain_settings: SshSettings, user_key: KeyFile
) -> None:
    pod = plain_sim.world.pods[DEMO_IDS["train"]]
    seen = interactive("127.0.0.1", plain_sim.sshds[pod.id].port, "root", user_key, f"root@{pod.id}:/workspace# ")
    assert NOT_ISOLATED in seen
    with open_remote(find(plain_api, "train"), plain_settings, via="exec") as sh:
        assert sh.run("echo hi").output == "hi\n"


def test_its_shell_works_on_this_machines_files(
    plain_sim: Simulator, plain_api: V2Api, plain_settings: SshSettings
) -> None:
    workspace = plain_sim.gateway.machine(plain_sim.world.pods[DEMO_IDS["idle"]]).workspace
    with open_remote(find(plain_api, "idle"), plain_settings) as sh:
        assert sh.run("pwd").output == f"{workspace}\n"
        assert sh.run(f"ls {plain_sim.root}").exit_code == 0  # the simulator's folder: nothing hides it


def test_the_api_shows_the_pods_folder(plain_sim: Simulator, plain_api: V2Api) -> None:
    for pod in plain_api.fetch_snapshot().pods:
        assert dict(pod.env)[SANDBOX_ENV] == str(plain_sim.root / "pods" / pod.id)


REFUSED = [
    "/workspace/x",
    "/workspace",
    "/etc/passwd",
    "/",
    "/tmp/x",
    "/root/.ssh/authorized_keys",
    "../x",
    "../../../../etc/x",
    "x/../../y",
    "~/../../x",
    "~/../..",
    "{folder}/../x",
    "{folder}X/x",
    "{folder}/..",
    "/var/tmp/../../{folder}/../x",
    "{folder}",
    "{folder}/view.json",
    "../sshd/ssh_host_ed25519_key",
    "~/../bin/nvidia-smi",
    "{folder}/workspaceX",
    "../workspace-other/x",
]
ALLOWED = [
    "x",
    "sub/dir/x",
    "",
    ".",
    "./x",
    "~/x",
    "~",
    "{folder}/workspace/x",
    "{folder}/root/.cache/x",
    "{folder}/tmp/x",
    "{folder}/workspace",
    "sub/../x",
    "/var/../{folder}/workspace/x",
    "../tmp/x",
    "~/../workspace/x",
]


def test_which_paths_a_transfer_may_use(plain_api: V2Api) -> None:
    pod = find(plain_api, "idle")
    folder = dict(pod.env)[SANDBOX_ENV]
    for path in REFUSED:
        path = path.format(folder=folder)
        refusal = transfer_path_refusal(pod, path)
        assert refusal is not None and "not isolated" in refusal and folder in refusal, path
    for path in ALLOWED:
        assert transfer_path_refusal(pod, path.format(folder=folder)) is None, path
    # a hub download's relative folder is under the pod's volume path: this machine's /workspace here
    assert transfer_path_refusal(pod, "models/x", "/workspace") is not None
    assert transfer_path_refusal(pod, f"{folder}/workspace/models", "/workspace") is None
    isolated = dataclasses.replace(pod, env=())  # a pod with its own view (or any real pod): nothing is refused
    assert all(transfer_path_refusal(isolated, p.format(folder=folder)) is None for p in REFUSED + ALLOWED)


def test_transfers_keep_to_the_pods_folder(
    plain_sim: Simulator, plain_api: V2Api, plain_settings: SshSettings, tmp_path: Path
) -> None:
    pod = find(plain_api, "idle")  # gateway only: the console way
    workspace = plain_sim.gateway.machine(plain_sim.world.pods[pod.id]).workspace
    local = tmp_path / "up.txt"
    local.write_text("data\n")
    down = tmp_path / "down"
    down.mkdir()
    ctx = TransferContext(lambda ref: find(plain_api, "idle"), lambda: plain_settings, tmp_path / "work")
    queue = TransferQueue(ctx, None, backoff_s=(0.2, 0.2, 0.2))
    jobs = [
        TransferJob(pod.id, "push", str(local), "/workspace/up.txt", route_choice="console"),
        TransferJob(pod.id, "push", str(local), "../../outside.txt", route_choice="console"),
        TransferJob(pod.id, "pull", "/etc/hostname", str(down), route_choice="console"),
        TransferJob(pod.id, "hub", "podtui-sim/tiny", "../../models", route_choice="auto"),
        TransferJob(pod.id, "push", str(local), "inside.txt", route_choice="console"),
    ]
    try:
        for job in jobs:
            queue.add(job)
        queue.start()
        assert queue.wait([j.id for j in jobs], 60)
        done = [queue.get(j.id) for j in jobs]
    finally:
        queue.close()
    assert [(j.state, j.error_kind) for j in done[:4] if j is not None] == [("failed", "not_isolated")] * 4
    assert done[4] is not None and done[4].state == "verified", done[4] and done[4].log
    assert (workspace / "inside.txt").read_text() == "data\n"
    assert not Path("/workspace/up.txt").exists() and list(down.iterdir()) == []
    assert not (plain_sim.root / "outside.txt").exists() and not (workspace.parent.parent / "outside.txt").exists()


def test_the_cli_refuses_too(tmp_path: Path) -> None:
    temp = tmp_path / "temp"
    temp.mkdir()
    local = tmp_path / "up.txt"
    local.write_text("data\n")
    env = {**os.environ, "TMPDIR": str(temp), "PODTUI_SIM_ISOLATION": "off"}

    def podtui(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "podtui", "--demo", *args], capture_output=True, text=True, timeout=60, env=env
        )

    r = podtui("exec", "eval-a100", "--", "pwd")
    assert r.returncode == 0 and r.stdout.startswith(str(temp)) and r.stdout.endswith("/workspace\n"), r
    r = podtui("push", "eval-a100", str(local), "/workspace/up.txt")
    assert r.returncode != 0 and "not isolated" in r.stderr, r
    assert not Path("/workspace/up.txt").exists()
