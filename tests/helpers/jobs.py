"""For the jobs' tests: waiting on a condition, a job's folder on this machine, and reading a job until it ends."""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable
from pathlib import Path

from podtui.core.jobs.job import Job
from podtui.core.jobs.layout import jobs_dir_sh
from podtui.core.jobs.remote_jobs import find_job, read_log
from podtui.core.ssh.remote import RemoteShell
from podtui.sim.simulator import Simulator
from tests.helpers.sim import DEMO_IDS


def wait_until(condition: Callable[[], bool], timeout_s: float = 60.0, every_s: float = 0.2) -> None:
    """Until `condition` holds; generous by default (a slow 2-core machine), and it fails the test past that."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not so after {timeout_s:g} s")
        time.sleep(every_s)


def jobs_dir(sim: Simulator, key: str) -> Path:
    """The pod's /workspace/.podtui/jobs, as this machine keeps it (it outlives the pod's container)."""
    return sim.gateway.machine(sim.world.pods[DEMO_IDS[key]]).workspace / ".podtui" / "jobs"


def ended(shell: RemoteShell, pod_id: str, job_id: str, timeout_s: float = 60.0) -> Job:
    """The job once it has ended."""
    seen: list[Job] = []

    def over() -> bool:
        seen.append(find_job(shell, pod_id, job_id))
        return seen[-1].ended_yet

    wait_until(over, timeout_s, every_s=0.3)
    return seen[-1]


def whole_log(shell: RemoteShell, job_id: str) -> tuple[str, int]:
    """The job's log from its start to now, and the bytes the cap dropped on the way."""
    text, offset, dropped = "", 0, 0
    while True:
        chunk = read_log(shell, job_id, offset)
        text += chunk.text
        dropped += chunk.dropped
        if chunk.next_offset == offset and not chunk.dropped:
            return text, dropped
        offset = chunk.next_offset


VALID_SPEC = b'{"command": "python train.py", "name": null, "workdir": null, "then": null, "pulls": []}\n'
# hand-written records in a pod's jobs' folder: (folder, spec.json's bytes or None, other files)
GARBAGE: list[tuple[str, bytes | None, dict[str, bytes]]] = [
    ("20260101-000000-badj", b"{not json at all", {}),
    ("20260101-000001-trun", b'{"command": "python train.py", "name": "tr', {}),
    ("20260101-000002-list", b'["python", "train.py"]', {}),
    ("20260101-000003-then", b'{"command": "true", "then": "explode"}', {}),
    ("20260101-000004-utf8", b"\xff\xfe{binary\x00", {}),
    ("20260101-000005-none", None, {}),
    ("not a job", VALID_SPEC, {}),
    ("evil\x1b[31mname", VALID_SPEC, {}),
    # these two are read as jobs: control characters in a name read as they are; an unreadable end is a problem
    (
        "20260101-000006-ctrl",
        b'{"command": "echo \x1b]52;c;aGk=\x07", "name": "evil\x1b[2J\x1b]0;title\x07\r\nforged", "workdir": null}',
        {"end": b"0 1796227000\n", "started": b"1796226000\n"},
    ),
    ("20260101-000007-endx", VALID_SPEC, {"end": b"garbage\x01\x1b[31m\n", "started": b"1796226000\n"}),
]
GARBAGE_JOBS = {"20260101-000006-ctrl", "20260101-000007-endx"}


def write_garbage(root: Path) -> None:
    """GARBAGE's records under `root` (a pod's jobs' folder, as this machine keeps it)."""
    for folder, spec, files in GARBAGE:
        where = root / folder
        where.mkdir(parents=True)
        if spec is not None:
            (where / "spec.json").write_bytes(spec)
        for name, data in files.items():
            (where / name).write_bytes(data)


def shim(shell: RemoteShell, name: str, body: str) -> None:
    """Put a stand-in for the pod's command `name` first on the PATH of `shell` (and of all it starts from now on):
    `body` (sh, with J set to the jobs' folder and REAL to the real command) runs, then the real command does. A
    way to make the pod do a thing at the very moment a test needs it (a race's loser, a full disk)."""
    real = shell.run(f"command -v {name}").output.strip()
    assert real.startswith("/"), real
    script = f'#!/bin/sh\nREAL={shlex.quote(real)}\n{jobs_dir_sh()}\n{body}\nexec "$REAL" "$@"\n'
    made = shell.run(
        f'mkdir -p "$HOME/shims" && printf %s {shlex.quote(script)} >"$HOME/shims/{name}" && '
        f'chmod 755 "$HOME/shims/{name}" && export PATH="$HOME/shims:$PATH" && command -v {name}'
    )
    assert made.output.strip().endswith(f"/shims/{name}"), made.output


def volume(sim: Simulator, key: str) -> Path:
    """The pod's /workspace, as this machine keeps it."""
    return jobs_dir(sim, key).parent.parent
