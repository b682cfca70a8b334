"""The queue's history in the user data dir, so unfinished and failed transfers are still listed after a restart.

Written whole to a temporary file and renamed over the old one, so a crash mid-write never loses the history.
A damaged file is set aside (renamed, never deleted) and the queue starts empty, with a message saying so.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from pathlib import Path

from podtui.transfer.job import ACTIVE, TransferJob

log = logging.getLogger(__name__)
KEEP_FINISHED = 200  # verified and cancelled jobs beyond this many are dropped, oldest first
INTERRUPTED = "podtui stopped during this transfer; nothing was renamed into place. Retry to start it again."


class TransferHistory:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.problem: str | None = None  # what went wrong reading it, for the pane to show

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
            if job.state in ACTIVE:
                job.state, job.error, job.retryable = "failed", INTERRUPTED, True
                job.code = None
                job.note(INTERRUPTED)
            jobs.append(job)
        return jobs

    def save(self, jobs: list[TransferJob]) -> None:
        finished = [j for j in jobs if j.state in ("verified", "cancelled")]
        drop = {j.id for j in finished[:-KEEP_FINISHED]} if len(finished) > KEEP_FINISHED else set()
        data = {"version": 1, "jobs": [j.to_json() for j in jobs if j.id not in drop]}
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
            tmp.replace(self.path)
        except OSError as e:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
            log.warning("could not save the transfer history to %s: %s", self.path, e)
