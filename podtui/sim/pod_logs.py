"""What a simulated pod logs, as RunPod keeps it for `GET /v2/pods/{id}/logs` (docs/runpod-facts.md#rest-v2).

Two sources. The system log is the host's account of the pod's life: the image pulled, the container created and
started, stopped, failed; it is written from the start of a pod's provisioning, so it says why a pod never comes up.
The container log is what the pod's main process prints: its services starting, then its work, following its
pattern (a training loop's steps and loss, a bursty service's requests, nothing from an idle one).

Each line's id is its time, as RunPod's are (docs/runpod-facts.md#rest-v2), to the microsecond and unique along a
pod's log, which a stream resumes from (Last-Event-ID). Lines are made as time passes, when a reader asks: a pod
left alone costs nothing.
"""

from __future__ import annotations

import math
import threading
import zlib
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from podtui.sim.sim_pod import SimPod

KEPT = 20_000  # lines kept per pod; older ones are gone, as on RunPod
TRAINING_EVERY_S = 5.0
BURSTY_EVERY_S = 7.0
STEPS = 20_000


@dataclass(frozen=True)
class LogEntry:
    seq: int
    t: float  # sim clock: when it is written (a start in progress has lines due later)
    us: int  # its time as shown, in whole microseconds: unique and increasing along a pod's log
    source: str  # container or system
    line: str

    @property
    def ts(self) -> str:
        """RFC 3339 with microseconds; it is the event's id too (docs/runpod-facts.md#rest-v2)."""
        return stamp(self.us)


def stamp(us: int) -> str:
    seconds, fraction = divmod(us, 1_000_000)
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S") + f".{fraction:06d}Z"


def micros(moment: datetime) -> int:
    """An aware datetime as whole microseconds since the epoch, exactly."""
    return (moment - EPOCH) // timedelta(microseconds=1)


EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


class PodLog:
    """One pod's lines, in order."""

    def __init__(self) -> None:
        self.entries: list[LogEntry] = []
        self.seq = 0
        self.made_until: float | None = None  # container lines are made up to here (while running)
        self.run_started: float | None = None  # the current run's start: the training loop's step 0

    def cut_after(self, t: float) -> None:
        """Lines planned for after `t` (a start in progress) are not written: the pod's life turned at `t`."""
        self.entries = [e for e in self.entries if e.t <= t]

    def run_over(self) -> None:
        """The container stopped: its process prints nothing more until it starts again."""
        self.made_until = None
        self.run_started = None

    def add(self, t: float, source: str, line: str) -> None:
        """A line at `t`, or a microsecond after the last one: a line's time is its id, so no two share one."""
        self.seq += 1
        us = round(t * 1_000_000)
        if self.entries and us <= self.entries[-1].us:
            us = self.entries[-1].us + 1
        self.entries.append(LogEntry(self.seq, t, us, source, line))
        if len(self.entries) > KEPT:
            del self.entries[: len(self.entries) - KEPT]


class PodLogs:
    """Every pod's log in a world; a stream waits on `changed` for more."""

    def __init__(self, seed: int = 7) -> None:
        self.seed = seed
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)
        self._logs: dict[str, PodLog] = {}

    def _log(self, pod_id: str) -> PodLog:
        return self._logs.setdefault(pod_id, PodLog())

    # --- the pod's life, told by the world's listeners -------------------------------------------------------

    def provisioning(self, pod: SimPod, t: float, boot_s: float) -> None:
        """A pod created or resumed: the host pulls its image and starts its container (over boot_s)."""
        with self.changed:
            log = self._log(pod.id)
            image = pod.image
            repo = image.split(":")[0]
            log.add(t, "system", f"create pod network for {pod.id}")
            log.add(t, "system", f"pulling image {image}")
            log.add(t + boot_s * 0.25, "system", f"{repo}: layers 1-12 of 12 pulled")
            log.add(t + boot_s * 0.5, "system", f"Status: Downloaded newer image for {image}")
            log.add(t + boot_s * 0.75, "system", f"create container {image}")
            log.add(t + boot_s, "system", "start container")
            log.run_started = t + boot_s
            log.made_until = None
            self._started(pod, log, t + boot_s)
            self.changed.notify_all()

    def _turn(self, pod: SimPod, t: float) -> PodLog:
        """The pod's life turns at `t`: its process's lines up to then are made, those planned after are dropped.
        Call with the lock held."""
        log = self._log(pod.id)
        self._make(pod, log, t)
        log.cut_after(t)
        return log

    def restarted(self, pod: SimPod, t: float, boot_s: float = 0.0, pulling: str | None = None) -> None:
        """Its container made again on the same machine, started boot_s later; pulling: an edit's new image,
        pulled first (docs/runpod-facts.md#editing-a-pod)."""
        with self.changed:
            log = self._turn(pod, t)
            log.add(t, "system", "restart container")
            if pulling is not None:
                log.add(t, "system", f"pulling image {pulling}")
                log.add(t + boot_s * 0.5, "system", f"Status: Downloaded newer image for {pulling}")
                log.add(t + boot_s * 0.75, "system", f"create container {pulling}")
            log.add(t + boot_s, "system", "start container")
            log.run_started = t + boot_s
            log.made_until = None
            self._started(pod, log, t + boot_s)
            self.changed.notify_all()

    def stopped(self, pod: SimPod, t: float, why: str) -> None:
        with self.changed:
            log = self._turn(pod, t)
            log.add(t, "system", f"stop container ({why})")
            log.run_over()
            self.changed.notify_all()

    def failed(self, pod: SimPod, t: float, why: str) -> None:
        """The container's process died: its last words on the container log, the exit on the system log."""
        with self.changed:
            log = self._turn(pod, t)
            for line in (
                "Traceback (most recent call last):",
                '  File "/workspace/train.py", line 214, in <module>',
                "    loss.backward()",
                "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
            ):
                log.add(t, "container", line)
            log.add(t, "system", f"container exited with code 1 ({why})")
            log.run_over()
            self.changed.notify_all()

    def already_running(self, pod: SimPod, started: float) -> None:
        """A pod the world began with, running since `started`: its log from then on."""
        with self.changed:
            log = self._log(pod.id)
            if log.entries:
                return
            log.add(started, "system", f"create container {pod.image}")
            log.add(started, "system", "start container")
            log.run_started = started
            self._started(pod, log, started)

    def _started(self, pod: SimPod, log: PodLog, t: float) -> None:
        log.add(t, "container", "Starting SSH service...")
        if "8888/http" in pod.port_list():
            log.add(t + 1, "container", "Starting Jupyter Lab on port 8888...")
        log.add(t + 2, "container", "Container ready")
        if pod.pattern == "training":
            log.add(t + 3, "container", f"python /workspace/train.py --steps {STEPS}")
        log.made_until = t + 3

    def served(self, pod: SimPod, t: float, line: str) -> None:
        """A request the pod's HTTP service answered (pod_services.py), as its server prints it."""
        with self.changed:
            log = self._log(pod.id)
            if log.run_started is None:
                return  # its container has stopped: nothing prints any more
            self._make(pod, log, t)
            log.add(t, "container", line)
            self.changed.notify_all()

    # --- reading ----------------------------------------------------------------------------------------------

    def entries(self, pod: SimPod, now: float) -> list[LogEntry]:
        """The pod's lines up to `now` (the container's made as far as now). Call with the lock held."""
        log = self._log(pod.id)
        self._make(pod, log, now)
        return [e for e in log.entries if e.t <= now]

    def _make(self, pod: SimPod, log: PodLog, now: float) -> None:
        """The container lines a running pod's process has printed since they were last made."""
        if pod.status not in ("RUNNING", "CREATED") or log.made_until is None or log.run_started is None:
            return
        every = TRAINING_EVERY_S if pod.pattern == "training" else BURSTY_EVERY_S
        if pod.pattern == "idle":
            log.made_until = now
            return
        k = math.floor((log.made_until - log.run_started) / every) + 1
        while log.run_started + k * every <= now:
            t = log.run_started + k * every
            log.add(t, "container", self._work_line(pod, k))
            k += 1
        log.made_until = max(log.made_until, now)

    def _work_line(self, pod: SimPod, k: int) -> str:
        r = zlib.crc32(f"{self.seed}:{pod.id}:{k}".encode()) / 2**32
        if pod.pattern == "training":
            done = k * 10  # steps since this run began; the loop goes round epoch after epoch
            epoch, step = done // STEPS + 1, done % STEPS
            loss = (2.4 * math.exp(-step / 6000) + 0.35) / epoch + 0.05 * r
            return f"epoch {epoch} | step {step}/{STEPS} | loss {loss:.4f} | lr 2.0e-04 | {2.8 + r:.2f} it/s"
        status = 200 if r > 0.05 else 503
        return f'127.0.0.1 - "POST /v1/generate HTTP/1.1" {status} {int(80 + 400 * r)}ms'
