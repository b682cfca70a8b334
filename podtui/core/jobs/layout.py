"""Where a job lives on the pod, how its id is made, and how its log is cut (docs/jobs.md#layout-on-the-pod)."""

from __future__ import annotations

import re
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from podtui.core.jobs.job import JOB_ID, JobError


def jobs_dir_sh(var: str = "J") -> str:
    """A line of sh setting `var` to the jobs' folder on the pod: /workspace/.podtui/jobs; on a demo pod that is not
    isolated from this machine, under its workspace folder here (docs/architecture.md#simulated-pods)."""
    return f"{var}=${{PODTUI_DEMO_SANDBOX:+$PODTUI_DEMO_SANDBOX/workspace}}; {var}=${{{var}:-/workspace}}/.podtui/jobs"


RUNNER = Path(__file__).with_name("job_runner.sh")
TOOLS = Path(__file__).with_name("job_tools.sh")

DEFAULT_LOG_MAX_MB = 256.0
CHUNKS = 32  # the cap is cut into this many chunks (docs/jobs.md#the-log-and-its-cap)
MIN_CHUNK = 32 << 10
MAX_LOG_BYTES = 1 << 40
_ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"


@dataclass(frozen=True)
class LogGeometry:
    """The log's chunks: `chunk` bytes each, the first `head` kept for good, the last `tail` kept as they come."""

    chunk: int
    head: int
    tail: int

    @property
    def max_bytes(self) -> int:
        return self.chunk * (self.head + self.tail)

    def line(self) -> str:
        return f"{self.chunk} {self.head} {self.tail}"


def log_geometry(max_bytes: int) -> LogGeometry:
    """The chunks for a cap of `max_bytes` (at least CHUNKS chunks of MIN_CHUNK: 1 MiB)."""
    if max_bytes < CHUNKS * MIN_CHUNK or max_bytes > MAX_LOG_BYTES:
        raise JobError(f"the log's cap must be from 1 MiB to 1 TiB, not {max_bytes:,} bytes")
    chunk = max(MIN_CHUNK, max_bytes // CHUNKS)
    head = max(1, CHUNKS // 8)
    return LogGeometry(chunk, head, CHUNKS - head)


def log_max_bytes(max_mb: float | None) -> int:
    return int((DEFAULT_LOG_MAX_MB if max_mb is None else max_mb) * (1 << 20))


def new_job_id(now: float) -> str:
    """`20261202-155301-k3f9`: podtui's clock (UTC) and four random characters, sortable by time."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(now))
    job_id = f"{stamp}-{''.join(secrets.choice(_ID_ALPHABET) for _ in range(4))}"
    assert JOB_ID.fullmatch(job_id)
    return job_id


def check_job_id(job_id: str) -> str:
    """`job_id` when it can be one podtui made; JobError otherwise, before any shell sees it."""
    if not JOB_ID.fullmatch(job_id):
        from podtui.core.visible import visible

        raise JobError(
            f"'{visible(job_id)}' is not a job id (they look like 20261202-155301-k3f9: lower-case letters, digits "
            "and hyphens)"
        )
    return job_id


_ID_START = re.compile(r"[a-z0-9][a-z0-9-]{0,39}")  # the start of a job id, as a user may type it


def check_job_prefix(text: str) -> str:
    """`text` when it can be a job id or the start of one (`podtui job POD 20261202-1553 log`); JobError otherwise,
    before any shell sees it."""
    if not _ID_START.fullmatch(text):
        check_job_id(text)  # says what an id looks like
    return text


def runner_script() -> str:
    return RUNNER.read_text(encoding="utf-8")


def tools_script() -> str:
    """The helpers podtui sends with each command on the pod (job_tools.sh), after the line that sets J."""
    lines = TOOLS.read_text(encoding="utf-8").splitlines()
    # sent with every command, over a gateway's terminal too: its comments stay here
    return "\n".join([jobs_dir_sh(), *(ln for ln in lines if ln.strip() and not ln.lstrip().startswith("#"))])
