"""The queue's history in the user data dir, so unfinished and failed transfers are still listed after a restart.

Written whole to a temporary file and renamed over the old one, so a crash mid-write never loses the history.
A damaged file is set aside (renamed, never deleted) and the queue starts empty, with a message saying so.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
import threading
from pathlib import Path

from podtui.transfer import leftovers
from podtui.transfer.job import ACTIVE, TransferJob

log = logging.getLogger(__name__)
KEEP_FINISHED = 200  # verified and cancelled jobs beyond this many are dropped, oldest first
INTERRUPTED = "podtui stopped during this transfer; nothing was renamed into place. Retry to start it again."
REATTACH = "podtui stopped while the pod downloaded from the Hub; the download went on there: re-attaching"


def _kill_leftovers_here(job: TransferJob) -> None:
    """Stop the runpodctl processes a killed podtui left on this machine; those on the pod wait for the job's next
    attempt (engine._clean_pod)."""
    kept = []
    for entry in job.leftovers:
        if entry.get("where") == "pod":
            kept.append(entry)
        elif leftovers.kill_here(entry):
            job.note(f"stopped runpodctl {entry.get('pid')}, left running here by the podtui that was stopped")
    job.leftovers = kept


class TransferHistory:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.problem: str | None = None  # what went wrong reading it, for the pane to show
        self._lock = threading.Lock()  # workers save from their own threads; one write at a time

    def load(self) -> list[TransferJob]:
        """Jobs as they were; the ones that were running when podtui stopped come back failed and retryable."""
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
            items = raw["jobs"] if isinstance(raw, dict) else None
            if not isinstance(items, list):
                raise ValueError("no list of jobs")
        except FileNotFoundError:
            return []
        except (OSError, ValueError, KeyError, UnicodeDecodeError) as e:
            aside = self.path.with_name(self.path.name + ".damaged")
            try:
                self.path.replace(aside)
            except OSError:
                aside = self.path
            self.problem = f"the transfer history could not be read ({e}); it was kept as {aside}"
            log.warning(self.problem)
            return []
        jobs = []
        for item in items:
            try:
                job = TransferJob.from_json(item)
            except (TypeError, ValueError) as e:
                log.warning("skipped a transfer in the history: %s", e)
                continue
            _kill_leftovers_here(job)
            if job.state in ACTIVE and job.direction == "hub":
                job.state = "queued"  # it runs on the pod by itself: the queue finds it there by its pidfile
                job.note(REATTACH)
            elif job.state in ACTIVE:
                job.state, job.error, job.retryable = "failed", INTERRUPTED, True
                job.code = None
                job.note(INTERRUPTED)
            jobs.append(job)
        return jobs

    def save(self, jobs: list[TransferJob]) -> None:
        finished = [j for j in jobs if j.state in ("verified", "cancelled")]
        drop = {j.id for j in finished[:-KEEP_FINISHED]} if len(finished) > KEEP_FINISHED else set()
        data = {"version": 1, "jobs": [j.to_json() for j in jobs if j.id not in drop]}
        text = json.dumps(data, indent=1)
        with self._lock:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                # paths and pod names are the user's business: 0600, like every file podtui keeps
                fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
            except OSError as e:
                log.warning("could not save the transfer history to %s: %s", self.path, e)
                return
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    f.write(text)
                os.replace(tmp, self.path)
            except OSError as e:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                log.warning("could not save the transfer history to %s: %s", self.path, e)
