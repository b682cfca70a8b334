"""One transfer as the queue, the pane, the CLI and the history file see it: what moves where, how, and how far.

A job's state moves queued -> waiting for code (runpodctl only) -> transferring -> verifying -> verified, or
ends failed or cancelled. Nothing is called done before both ends' checksums match.

A "hub" job is a Hugging Face download that runs on the pod itself (Hub -> pod, hf_download.py): `source` is the
repo id, `target` the folder on the pod, and it is verified against the checksums the Hub publishes, file by file.

A file's route is how its bytes travel (routes/): the user picks one, or "auto" to let podtui choose for the pod;
the job records the route it took. transfers.json keeps the names it always had: "via" for the choice and "way"
for the route taken.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from podtui.transfer.checksum import ALGORITHMS, Algorithm
from podtui.transfer.runpodctl_output import CODE_RE

Direction = Literal["push", "pull", "hub"]  # push: laptop -> pod; pull: pod -> laptop; hub: Hugging Face -> pod
DIRECTIONS: tuple[Direction, ...] = ("push", "pull", "hub")
Route = Literal["runpodctl", "sftp", "openssh", "console", "hf"]  # hf: the pod's own hf CLI, for a hub job
RouteChoice = Literal["auto", "runpodctl", "sftp", "openssh", "console"]  # what the user picks (--via)
State = Literal["queued", "waiting_for_code", "transferring", "verifying", "verified", "failed", "cancelled"]
ROUTE_CHOICES: tuple[RouteChoice, ...] = ("auto", "runpodctl", "sftp", "openssh", "console")
STATES: tuple[State, ...] = (
    "queued",
    "waiting_for_code",
    "transferring",
    "verifying",
    "verified",
    "failed",
    "cancelled",
)
ACTIVE: frozenset[str] = frozenset({"waiting_for_code", "transferring", "verifying"})
FINISHED: frozenset[str] = frozenset({"verified", "failed", "cancelled"})
STATE_LABELS: dict[str, str] = {"waiting_for_code": "waiting for code"}
LOG_LINES = 300  # a job keeps its newest log lines; enough to see why it failed, bounded for the history file
_ON_DISK = {"route_choice": "via", "route": "way"}  # fields stored under another name in transfers.json
_FROM_DISK = {v: k for k, v in _ON_DISK.items()}


@dataclass
class TransferJob:
    pod_id: str
    direction: Direction
    source: str  # a local path for a push, a path on the pod for a pull
    target: str  # where it goes; a folder that exists means "into it"
    pod_name: str = ""
    route_choice: RouteChoice = "auto"
    algorithm: Algorithm = "sha256"
    overwrite: bool = False
    terminate_after: bool = False  # train, download the results, then terminate the pod: it stops billing
    terminate_confirmed: bool = False  # the user said yes up front: terminate without asking again
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:10])
    state: State = "queued"
    route: Route | None = None  # the route taken
    folder: bool = False
    name: str = ""
    done_bytes: int = 0
    total_bytes: int | None = None
    rate_bytes_per_s: float | None = None
    eta_s: float | None = None
    checksum: str | None = None  # the digest both ends agreed on
    code: str | None = None  # runpodctl's one-time code, while it matters
    error: str | None = None
    error_kind: str | None = None
    retryable: bool = False
    attempts: int = 0
    final_path: str | None = None
    created_at: float = field(default_factory=time.time)
    finished_at: float | None = None
    log: list[str] = field(default_factory=list)
    repo_type: str = "model"  # hub jobs: model or dataset
    revision: str | None = None  # hub jobs: the commit the check saw, so the files match its checksums
    hub_files: list[dict[str, Any]] = field(default_factory=list)  # hub jobs: RepoFile.to_json() of each file
    leftovers: list[dict[str, Any]] = field(default_factory=list)  # runpodctl processes running (leftovers.py)
    owner: dict[str, Any] | None = None  # the podtui running it (owner.py); another one only shows it
    # a verified download as it was put in place (pull.landed checks it is still so before a terminate)
    landed_as: dict[str, Any] | None = None

    @property
    def label(self) -> str:
        return self.name or self.source.rstrip("/").rsplit("/", 1)[-1] or self.source

    @property
    def state_label(self) -> str:
        return STATE_LABELS.get(self.state, self.state)

    @property
    def finished(self) -> bool:
        return self.state in FINISHED

    @property
    def percent(self) -> float | None:
        if self.state == "verified":
            return 100.0
        if not self.total_bytes:
            return None
        return min(100.0, 100.0 * self.done_bytes / self.total_bytes)

    def note(self, line: str) -> None:
        # a one-time code lets anyone take the file from the relay: logs keep only its first part
        line = CODE_RE.sub(lambda m: m.group(0)[:4] + "-…", line)
        self.log.append(f"{time.strftime('%H:%M:%S')} {line}")
        del self.log[:-LOG_LINES]

    def to_json(self) -> dict[str, Any]:
        """The job as plain data. Its lists are shared with the job, not copied (a history save writes hundreds of
        jobs): read it, do not change it."""
        data = {_ON_DISK.get(f.name, f.name): getattr(self, f.name) for f in fields(self)}
        data["code"] = None  # never on disk (see note)
        return data

    @classmethod
    def from_json(cls, data: Any) -> TransferJob:
        """Raises ValueError for anything that is not a job this version can run."""
        if not isinstance(data, dict):
            raise ValueError("not an object")
        known = {f.name for f in fields(cls)}
        named = {_FROM_DISK.get(k, k): v for k, v in data.items() if k not in _ON_DISK}
        job = cls(**{k: v for k, v in named.items() if k in known})
        if (
            job.direction not in DIRECTIONS
            or job.route_choice not in ROUTE_CHOICES
            or job.state not in STATES
            or job.algorithm not in ALGORITHMS
        ):
            raise ValueError("unknown direction, way, state or checksum")
        # an empty target is a push into the folder the pod's shell starts in
        required = (job.pod_id, job.source, job.id)
        if not all(isinstance(v, str) and v for v in required) or not isinstance(job.target, str):
            raise ValueError("pod, source, target or id missing")
        if not isinstance(job.log, list):
            job.log = []
        if not isinstance(job.hub_files, list):
            job.hub_files = []
        if not isinstance(job.leftovers, list):
            job.leftovers = []
        job.leftovers = [e for e in job.leftovers if isinstance(e, dict)]
        if not isinstance(job.owner, dict):
            job.owner = None
        if not isinstance(job.landed_as, dict):
            job.landed_as = None
        return job
