"""The console's answers to terminal queries, sent in order from one thread and never as a flood.

A program asks a handful of questions (device attributes, cursor position) and waits. Random bytes on the screen
(a binary `cat`ed by mistake) ask hundreds: xterm answers them all and the shell then reads the answers as typed
input, pages of `62;22c`. podtui answers a burst the size a real program needs and drops the rest until the
bucket refills, so that mistake leaves a line of junk at most.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

BURST = 32  # vim's start-up asks about ten questions; a shell prompt library one or two per prompt
PER_SECOND = 8.0


class ReplyPump:
    def __init__(
        self,
        send: Callable[[bytes], None],
        *,
        burst: int = BURST,
        per_second: float = PER_SECOND,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._send = send
        self._burst = burst
        self._rate = per_second
        self._clock = clock
        self._tokens = float(burst)
        self._at = clock()
        self._lock = threading.Lock()
        self._queue: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self.sent = 0
        self.dropped = 0

    def reply(self, data: bytes) -> None:
        """Called from the feeding thread: must never block it on the network."""
        with self._lock:
            now = self._clock()
            self._tokens = min(self._burst, self._tokens + (now - self._at) * self._rate)
            self._at = now
            if self._tokens < 1:
                if self.dropped == 0:
                    log.info("the console is asked more questions than a program asks; dropping answers")
                self.dropped += 1
                return
            self._tokens -= 1
            self.sent += 1
            if self._thread is None:
                self._queue = queue.SimpleQueue()  # a thread of its own after a close: answers stay in order
                self._thread = threading.Thread(
                    target=self._run, args=(self._queue,), daemon=True, name="console-replies"
                )
                self._thread.start()
            self._queue.put(data)

    def _run(self, answers: queue.SimpleQueue[bytes | None]) -> None:
        while (data := answers.get()) is not None:
            try:
                self._send(data)
            except Exception:  # a closed shell: the answer has nobody to go to
                log.debug("an answer to a terminal query was not sent", exc_info=True)

    def close(self) -> None:
        with self._lock:
            if self._thread is not None:
                self._queue.put(None)
                self._thread = None
