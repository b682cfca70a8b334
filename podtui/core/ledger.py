"""Every pod run podtui has seen, with what it cost, kept after the pod is gone (docs/spend.md#the-ledger).

A run is one stretch of a pod RUNNING: its start, its stop (None while it runs), its GPU type and count, its $/hr,
and the last time podtui saw it running. A pod seen running for the first time with an uptime started its run
then (`Pod.run_started`, the answer's time less the uptime), so the day's figure counts what ran before podtui
looked. A run ends at the last time it was seen running: when the pod is seen stopped, seen running anew (a restart
podtui did not watch), or missing from a whole answer (terminated). What a run cost is its $/hr times that stretch.

`Ledger` keeps the runs in a JSON file in podtui's data folder, 0600 and replaced whole (`secret.write_private`),
written only when something changed (a run opened, closed or repriced, or its "last seen" moved on by
RESAVE_AFTER_S; `flush` writes it at once, as the app does when it quits), cut to MAX_RUNS and MAX_BYTES, the oldest
finished runs dropped first. A file that cannot be read is refused in words and never written over: the runs seen
meanwhile are kept in memory, and the file is looked at again once it changes (moved away, or mended). An entry that
cannot be read is kept in the file as it is. The demo's runs are kept in memory only (`for_services`). Within one
podtui every caller shares one ledger per file (`for_paths`).
"""

from __future__ import annotations

import json
import logging
import math
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from podtui.core.held_files import OnePerFile
from podtui.core.paths import Paths
from podtui.core.pod import MOST_PER_HR, Pod, PodStatus, Snapshot
from podtui.core.secret import write_private
from podtui.core.user_files import Unusable, read_json_member
from podtui.core.visible import visible

if TYPE_CHECKING:
    from podtui.core.services import Services

log = logging.getLogger(__name__)

FILE_NAME = "ledger.json"
MAX_RUNS = 5000  # a run a day for a dozen pods, for a year
MAX_BYTES = 4 << 20
RESAVE_AFTER_S = 300.0  # an open run's "last seen" is written at most this often: a crash loses at most this much
# A run seen starting this long after its pod was last seen running is a new run (a restart between two looks);
# within it, the uptime's rounding and a poll's own time.
NEW_RUN_AFTER_S = 60.0


@dataclass(frozen=True)
class Run:
    """One stretch of a pod running."""

    pod_id: str
    name: str
    gpu: str  # the GPU type id, "CPU" for a CPU pod, "" when RunPod did not say
    gpu_count: int
    per_hr: float | None  # RunPod's $/hr for the pod; None: not known (its cost is unknown)
    start: float  # epoch s
    last_seen: float  # the last time it was seen running
    stop: float | None = None  # None: still running when last seen

    @property
    def open(self) -> bool:
        return self.stop is None

    @property
    def end(self) -> float:
        """Where its cost stops counting: its stop, or the last time it was seen running."""
        return self.stop if self.stop is not None else self.last_seen

    def cost_between(self, start: float, end: float) -> float:
        """What it cost within [start, end); 0 when its rate is unknown."""
        overlap = min(end, self.end) - max(start, self.start)
        return (self.per_hr or 0.0) * overlap / 3600.0 if overlap > 0 else 0.0

    @property
    def cost(self) -> float:
        return self.cost_between(self.start, self.end)

    def as_json(self) -> dict[str, Any]:
        return {
            "pod_id": self.pod_id,
            "name": self.name,
            "gpu": self.gpu,
            "gpu_count": self.gpu_count,
            "per_hr": self.per_hr,
            "start": self.start,
            "stop": self.stop,
            "last_seen": self.last_seen,
        }


def run_from_json(raw: object) -> Run | None:
    """One run as written, or None when it is not one (a hand-edited or damaged entry)."""
    if not isinstance(raw, dict):
        return None
    pod_id, name, gpu = raw.get("pod_id"), raw.get("name"), raw.get("gpu")
    count, per_hr = raw.get("gpu_count"), raw.get("per_hr")
    start, stop, seen = _time(raw.get("start")), raw.get("stop"), _time(raw.get("last_seen"))
    if not (isinstance(pod_id, str) and pod_id and isinstance(name, str) and isinstance(gpu, str)):
        return None
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        return None
    if per_hr is not None and (_number(per_hr) is None or not 0 <= per_hr <= MOST_PER_HR):
        return None
    if start is None or seen is None or seen < start:
        return None
    stop_s = _time(stop)
    if stop is not None and (stop_s is None or stop_s < start):
        return None
    return Run(pod_id, name, gpu, count, _number(per_hr), start, seen, stop_s)


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _time(value: object) -> float | None:
    t = _number(value)
    return t if t is not None and t >= 0 else None


def _gpu_of(pod: Pod) -> str:
    if pod.gpu_count == 0:
        return "CPU"
    return pod.gpu_name or ""


def _started(pod: Pod, seen_at: float) -> float:
    """When the pod's current run began: `run_started` (fetched less uptime), else now (not up yet)."""
    started = pod.run_started
    if started is None or not math.isfinite(started) or started > seen_at:
        return seen_at
    return started


class Ledger:
    """The runs podtui has seen, in `path` (None: in memory only, the demo's)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.refused: str | None = None  # why the file is not used (and left alone), in words
        self._lock = threading.Lock()
        self._runs: list[Run] | None = None  # by start; None: not read yet
        self._unread: list[object] = []  # entries the file holds that could not be read: written back as they were
        self._stamp: tuple[int, int] | None = None  # the file's (mtime_ns, size) when read (or refused)
        self._written_seen: dict[tuple[str, float], float] = {}  # an open run's last_seen as last written
        self._said: str | None = None  # the last trouble observe_quietly returned

    @classmethod
    def for_paths(cls, paths: Paths) -> Ledger:
        """The ledger of this data folder, one per file in this process (one lock, one picture of the runs)."""
        return _HELD.for_paths(paths)

    @classmethod
    def for_services(cls, services: Services) -> Ledger:
        """podtui's own file; for the demo, one ledger per run that the app and its screens share, never written:
        the demo's pods cost nothing."""
        return _HELD.for_services(services)

    # --- reading ------------------------------------------------------------------------------------------

    def runs(self) -> tuple[Run, ...]:
        """Every run kept, the earliest first."""
        with self._lock:
            return tuple(self._load())

    def between(self, start: float, end: float) -> tuple[Run, ...]:
        """The runs that overlap [start, end)."""
        return tuple(r for r in self.runs() if r.start < end and r.end > start)

    # --- what a poll saw ------------------------------------------------------------------------------

    def observe(self, snap: Snapshot) -> bool:
        """Open, extend and close runs from one answer; whether the file was written."""
        with self._lock:
            runs = self._load()
            changed = _apply(runs, snap)
            if not changed and not self._seen_long_ago(runs):
                return False
            return self._save(runs)

    def observe_quietly(self, snap: Snapshot) -> str | None:
        """observe(), for callers that go on whatever happens (the app's poll, `podtui spend`): what went wrong, in
        words (and logged), once (None after that until something else goes wrong). Never raises."""
        return self._quietly(lambda: self.observe(snap))

    def flush(self) -> bool:
        """Write the open runs' "last seen" now if the file is behind (RESAVE_AFTER_S would wait): on quitting.
        Whether the file was written."""
        with self._lock:
            runs = self._load()
            behind = any(r.open and self._written_seen.get((r.pod_id, r.start)) != r.last_seen for r in runs)
            return self._save(runs) if behind else False

    def flush_quietly(self) -> str | None:
        """flush(), never raising: what went wrong, in words (and logged), as observe_quietly says it."""
        return self._quietly(self.flush)

    def _quietly(self, act: Callable[[], object]) -> str | None:
        try:
            act()
            trouble = self.refused
        except OSError as e:
            trouble = f"could not write the ledger {visible(str(self.path))}: {visible(e.strerror or str(e))}"
            log.warning("%s", trouble)
        except Exception as e:  # a bug here must not stop the poll
            log.exception("the ledger failed")
            trouble = f"the ledger failed: {type(e).__name__}"
        if trouble == self._said:
            return None
        self._said = trouble
        return trouble

    def _seen_long_ago(self, runs: list[Run]) -> bool:
        """Under the lock: an open run's last_seen has moved on RESAVE_AFTER_S past what the file holds."""
        for run in runs:
            if run.open:
                written = self._written_seen.get((run.pod_id, run.start))
                if written is None or run.last_seen - written >= RESAVE_AFTER_S:
                    return True
        return False

    # --- the file -----------------------------------------------------------------------------------------

    def _load(self) -> list[Run]:
        """Under the lock: the runs as the file holds them now, read again only when another podtui changed it. A
        refused file is looked at again once it changes: this session's runs (kept in memory) join what it holds."""
        if self.path is None:
            if self._runs is None:
                self._runs = []
            return self._runs
        try:
            st = self.path.stat()
        except FileNotFoundError:
            st = None
            if self.refused is not None:  # moved away: a new ledger starts with this session's runs
                self.refused, self._unread, self._stamp = None, [], None
                self._written_seen = {}
            elif self._runs is None or self._stamp is not None:
                self._runs, self._unread, self._stamp = [], [], None
            if self._runs is None:
                self._runs = []
            return self._runs
        except OSError:
            st = None
        stamp = (st.st_mtime_ns, st.st_size) if st is not None else None
        if self._runs is not None and stamp is not None and stamp == self._stamp:
            return self._runs
        if self.refused is not None:
            if stamp is None:  # cannot tell whether it changed: still refused
                assert self._runs is not None
                return self._runs
            held = self._runs or []
            self.refused, self._unread = None, []
            read, self._stamp = self._read(), stamp
            if self.refused is not None:  # still unreadable: the session's runs stay in memory
                self._runs = held
            else:
                self._runs = _joined(read, held)
                self._written_seen = {(r.pod_id, r.start): r.last_seen for r in read if r.open}
            return self._runs
        self._runs, self._stamp = self._read(), stamp
        self._written_seen = {(r.pod_id, r.start): r.last_seen for r in self._runs if r.open}
        return self._runs

    def _read(self) -> list[Run]:
        assert self.path is not None
        try:
            entries = read_json_member(self.path, "runs", list, MAX_BYTES)
        except Unusable as e:
            self.refused = (
                f"the ledger {visible(str(self.path))} is not used: {visible(str(e))}. podtui leaves it as it is and "
                "keeps this session's runs in memory; move it away to start a new ledger"
            )
            log.warning("%s", self.refused)
            return []
        runs: list[Run] = []
        self._unread = []
        for raw in entries or []:
            run = run_from_json(raw)
            if run is None:
                self._unread.append(raw)
            else:
                runs.append(run)
        if self._unread:
            n = len(self._unread)
            log.warning(
                "the ledger %s: %d entr%s could not be read; kept in the file as they are",
                visible(str(self.path)),
                n,
                "y" if n == 1 else "ies",
            )
        runs.sort(key=lambda r: r.start)
        return runs

    def _save(self, runs: list[Run]) -> bool:
        """Under the lock: the runs (cut to what may be kept) to the file; whether it was written."""
        kept = _capped(runs, self._unread)
        if len(kept) < len(runs):
            log.info("the ledger: %d runs kept of %d, the oldest finished ones dropped", len(kept), len(runs))
            runs[:] = kept
        if self.path is None or self.refused is not None:
            self._written_seen = {(r.pod_id, r.start): r.last_seen for r in runs if r.open}
            return False
        write_private(self.path, _file_text(runs, self._unread))
        self._written_seen = {(r.pod_id, r.start): r.last_seen for r in runs if r.open}  # after: a failure is retried
        try:
            st = self.path.stat()
            self._stamp = (st.st_mtime_ns, st.st_size)
        except OSError:
            self._stamp = None
        return True


def _apply(runs: list[Run], snap: Snapshot) -> bool:
    """Change `runs` (in place, kept by start) for what `snap` says; whether anything changed."""
    now = snap.fetched_at
    changed = False
    open_runs = {r.pod_id: i for i, r in enumerate(runs) if r.open}
    listed = {p.id for p in snap.pods}
    for pod in snap.pods:
        at = open_runs.get(pod.id)
        run = runs[at] if at is not None else None
        if pod.status is not PodStatus.RUNNING:
            if run is not None and at is not None:  # stopped since it was last seen running
                runs[at] = replace(run, stop=run.last_seen)
                changed = True
            continue
        started = _started(pod, now)
        rate = pod.cost_per_hr if pod.cost_per_hr is None or 0 <= pod.cost_per_hr <= MOST_PER_HR else None
        if run is not None and at is not None:
            anew = started > run.last_seen + NEW_RUN_AFTER_S  # restarted between two looks
            repriced = rate != run.per_hr or _gpu_of(pod) != run.gpu or (pod.gpu_count or 0) != run.gpu_count
            if not anew and not repriced:
                if pod.name != run.name:
                    changed = True
                runs[at] = replace(run, name=pod.name, last_seen=max(run.last_seen, now))
                continue
            runs[at] = replace(run, stop=run.last_seen if anew else now, last_seen=run.last_seen if anew else now)
            started = started if anew else now
            changed = True
        # a new run never overlaps the pod's last one (a pod missing from one answer, then back)
        last_stop = max((r.end for r in runs if r.pod_id == pod.id), default=None)
        if last_stop is not None and started < last_stop:
            started = last_stop
        runs.append(Run(pod.id, pod.name, _gpu_of(pod), pod.gpu_count or 0, rate, started, max(now, started)))
        changed = True
    if snap.skipped_records == 0:  # a pod missing from a whole answer is gone; from a partial one, maybe not
        for pod_id, at in open_runs.items():
            if pod_id not in listed:
                run = runs[at]
                runs[at] = replace(run, stop=run.last_seen)
                changed = True
    if changed:
        runs.sort(key=lambda r: r.start)
    return changed


def _capped(runs: list[Run], unread: list[object]) -> list[Run]:
    """At most MAX_RUNS runs in at most MAX_BYTES, the oldest finished ones dropped first (open runs are kept)."""
    kept = list(runs)
    while len(kept) > MAX_RUNS and _drop_oldest_finished(kept):
        pass
    text = _file_text(kept, unread)
    if len(text) > MAX_BYTES:
        sizes = [len(json.dumps(r.as_json(), ensure_ascii=True)) + 3 for r in kept]
        total = len(text)
        i = 0
        while total > MAX_BYTES and i < len(kept):
            if not kept[i].open:
                total -= sizes.pop(i)
                del kept[i]
            else:
                i += 1
    return kept


def _drop_oldest_finished(runs: list[Run]) -> bool:
    at = next((i for i, r in enumerate(runs) if not r.open), None)
    if at is None:
        return False
    del runs[at]
    return True


def _file_text(runs: Iterable[Run], unread: Iterable[object]) -> str:
    """The file's text (ASCII: its length is its size); unreadable entries go back as they came."""
    data = {"version": 1, "runs": [*unread, *(r.as_json() for r in runs)]}
    return json.dumps(data, indent=1, ensure_ascii=True) + "\n"


def _joined(kept: list[Run], held: list[Run]) -> list[Run]:
    """The runs a file holds, with this session's (`held`, kept in memory while it was refused) that it lacks."""
    known = {(r.pod_id, r.start) for r in kept}
    return sorted([*kept, *(r for r in held if (r.pod_id, r.start) not in known)], key=lambda r: r.start)


_HELD = OnePerFile(Ledger, FILE_NAME)
