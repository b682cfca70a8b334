"""The poll loop: one fetch at a time in a thread worker, re-armed when it lands, paused while a question is open,
never sooner than RunPod asked (429 Retry-After), backing off after failures. The answer reaches the app as a
PollFinished message; the app hands it back here, tells the screens, then lets the loop go on
(docs/architecture.md#from-a-poll-to-the-screen). What must see RunPod's answer as it was sent, not the copy made
safe to show (the launch memory: docs/storage.md#recreate), is handed it (`on_fetched`) in a thread worker of its
own, off the poll's path: a slow or hung data folder never holds up the pod list. The newest answer wins: while one
is being handed on, the next waits, and any older one still waiting is dropped."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from textual.app import App
from textual.screen import ModalScreen
from textual.timer import Timer

from podtui.core.api import ApiAuthError, ApiError, ApiUnavailable, RunPodApi
from podtui.core.feed import PodFeed
from podtui.core.pod import Snapshot
from podtui.core.visible import visible, visible_fields
from podtui.ui.messages import PollFinished
from podtui.ui.pod_view import row_cells

log = logging.getLogger(__name__)


class Poller:
    def __init__(
        self,
        app: App[Any],
        api: RunPodApi,
        feed: PodFeed,
        interval_s: float,
        clock: Callable[[], float],
        on_fetched: Callable[[Snapshot], None] | None = None,
    ) -> None:
        """app: where the timer and the workers run, and where PollFinished goes. on_fetched: called in a thread
        worker of its own with good answers as RunPod sent them (the newest one each time; never two at once)."""
        self.app, self.api, self.feed, self.interval_s, self.clock = app, api, feed, interval_s, clock
        self.on_fetched = on_fetched
        self._fetched_lock = threading.Lock()
        self._fetched: Snapshot | None = None  # the newest answer as sent, not handed on yet
        self._handing_on = False  # a worker is handing answers to on_fetched
        self.polling = False
        self.again = False  # asked for while a fetch was in flight: one more as soon as it lands
        self.done = 0  # completed polls, good or bad: lets tests and benchmarks wait without sleeping
        self.next_in_s: float | None = None  # the delay the timer was last armed with
        self._timer: Timer | None = None
        self._hold_until = 0.0  # time.monotonic() before which no poll is sent (429 Retry-After)
        self._delay = interval_s

    def poll_now(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        held = self._hold_until - time.monotonic()
        if held > 0:
            # RunPod said when to ask again (429 Retry-After): asking sooner only earns another refusal
            self._arm(held)
            return
        if self.polling:
            self.again = True  # never two fetches in flight
            return
        self.polling = True
        self.app.run_worker(
            self._fetch, thread=True, group="poll", exit_on_error=False, description="refreshing the pods"
        )

    def _fetch(self) -> None:
        """In the worker thread."""
        try:
            snap = self.api.fetch_snapshot()
        except ApiError as e:
            self.app.post_message(
                PollFinished(
                    None,
                    str(e),
                    key_refused=isinstance(e, ApiAuthError),
                    retry_after_s=e.retry_after_s if isinstance(e, ApiUnavailable) else None,
                )
            )
            return
        except Exception as e:  # a bug: said as any failed poll is, so that the loop goes on
            log.exception("poll failed")
            self.app.post_message(PollFinished(None, f"unexpected error: {type(e).__name__}: {e}"))
            return
        if self.on_fetched is not None:
            with self._fetched_lock:
                self._fetched = snap  # handed on once this poll has landed (`_hand_on`); an older one waiting goes
        # what the screens get: every text RunPod sent made safe to show (docs/architecture.md#text-from-outside)
        snap = visible_fields(snap)
        starting = self.feed.starting_after(snap)  # the feed changes only on the event loop, never while this runs
        rows = {
            p.id: row_cells(p, starting_s=None if (since := starting.get(p.id)) is None else snap.fetched_at - since)
            for p in snap.pods
        }  # here, not on the event loop
        self.app.post_message(PollFinished(snap, None, rows))

    def landed(self, message: PollFinished) -> None:
        """On the event loop: the feed takes the answer, and the next poll's delay is set."""
        self.polling = False
        self.done += 1
        if message.snapshot is not None:
            self.feed.succeeded(message.snapshot)
            self._delay = self.interval_s
            self._hand_on()
            return
        retry_after = message.retry_after_s
        self.feed.failed(visible(message.error or "unknown error"), self.clock(), retry_after, message.key_refused)
        log.warning("poll failed: %s", message.error)
        self._delay = self.backoff()
        if retry_after is not None:
            self._delay = max(self._delay, retry_after)
            self._hold_until = time.monotonic() + retry_after

    def _hand_on(self) -> None:
        """On the event loop: a worker hands the newest answer on, unless one is at it already (it takes the newest
        when it is done)."""
        with self._fetched_lock:
            if self._handing_on or self._fetched is None:
                return
            self._handing_on = True
        self.app.run_worker(
            self._handing, thread=True, group="poll-hand-on", exit_on_error=False, description="keeping the pods' specs"
        )

    def _handing(self) -> None:
        """In its own worker thread: the newest answer each time, until none waits."""
        on_fetched = self.on_fetched
        assert on_fetched is not None
        while True:
            with self._fetched_lock:
                snap, self._fetched = self._fetched, None
                if snap is None:
                    self._handing_on = False
                    return
            try:
                on_fetched(snap)
            except Exception:  # a bug there must not stop what comes next
                log.exception("handing the poll's answer on failed")

    def go_on(self) -> None:
        """Once the screens have the answer: the poll asked for meanwhile, else the timer."""
        if self.again:
            self.again = False
            self.poll_now()
        else:
            self._arm(self._delay)

    def backoff(self) -> float:
        """After failed polls: the interval, doubled per failure in a row, at most a minute (or the interval)."""
        doubled = self.interval_s * float(2 ** min(max(self.feed.failures - 1, 0), 4))
        return min(doubled, max(60.0, self.interval_s))

    def _arm(self, delay: float) -> None:
        self.next_in_s = delay
        self._timer = self.app.set_timer(delay, self._due)

    @property
    def paused(self) -> bool:
        """Polls wait while a question is open (the data under it must not move); the money still ticks."""
        stack = self.app.screen_stack  # empty while the app shuts down, a tick due meanwhile
        return bool(stack) and isinstance(stack[-1], ModalScreen)

    def _due(self) -> None:
        self._timer = None
        if self.paused:
            self._arm(0.5)  # a question is open: do not move the ground under it
            return
        self._hold_until = 0.0  # this timer was armed to run out with any wait RunPod asked for
        self.poll_now()
