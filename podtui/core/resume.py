"""A resume that finds no free GPU on the pod's machine, and what can be done then.

A stopped pod holds no GPU: its machine may have rented them to someone else meanwhile, and RunPod then refuses
to start it (docs/runpod-facts.md#pricing-and-the-balance). Two ways out: try again later (GPUs come free as other
pods stop), or, when the pod's data is on a network volume, create a pod like it on another machine with that
volume (`podtui recreate`). A pod without a network volume keeps its data on that machine alone.
"""

from __future__ import annotations

import shlex
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from podtui.core.api.client import RunPodApi
from podtui.core.api.errors import ApiError, ApiUnavailable
from podtui.core.pod import Pod, PodStatus

RETRY_EVERY_S = 30.0
RETRY_LIMIT = 20  # ten minutes of tries at 30 s, then it is said and left to the user

# RunPod's answer, matched on its words (the simulator's RESUME_NO_GPUS quotes it): "There are not enough free
# GPUs on the host machine to start this pod."
_WORDS = ("not enough free gpus", "no free gpus", "not enough gpus available on the host")


def no_free_gpu(error: BaseException | str) -> bool:
    """Whether a refused resume was refused because the pod's machine has no free GPU now."""
    text = str(error).lower()
    return any(w in text for w in _WORDS)


def what_to_do(pod: Pod, ref: str | None = None) -> list[str]:
    """The ways out, as commands to type. ref: how the user named the pod (its id by default), quoted for a shell
    (a name with a space is one argument)."""
    name = shlex.quote(ref or pod.id)
    out = [f"wait and try again later: `podtui resume {name}` (GPUs come free as other pods stop)"]
    if pod.network_volume:
        out.append(
            f"or start a pod like it on another machine with its network volume {pod.network_volume}: "
            f"`podtui recreate {name} --gpu TYPE` (`podtui gpus` lists the types in stock)"
        )
    else:
        out.append("it has no network volume: its data stays on that machine, so waiting is the way to keep it")
    return out


Outcome = Literal["resumed", "cancelled", "gave up", "failed"]


# what RunPod says of a pod the start reached: it is on its way up
_UP = (PodStatus.PROVISIONING, PodStatus.STARTING, PodStatus.RUNNING)


@dataclass
class RetryingResume:
    """Tries to resume a pod every `every_s` seconds, up to `limit` tries, until it is started, RunPod refuses for
    another reason, or `cancel()` is called (from any thread). No free GPU, no answer (a dropped connection, a
    5xx) and a rate limit mean "try again" (after the Retry-After RunPod asks for, when it is longer); any other
    refusal ends it. `run` blocks: call it in a thread worker."""

    pod: Pod
    every_s: float = RETRY_EVERY_S
    limit: int = RETRY_LIMIT
    tries: int = 0
    error: str | None = None  # RunPod's last words, when it failed or gave up
    unanswered: bool = False  # the last try had no answer from RunPod (rather than no free GPU)
    _cancelled: threading.Event = field(default_factory=threading.Event, repr=False)

    def cancel(self) -> None:
        self._cancelled.set()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def run(
        self,
        api: RunPodApi,
        on_try: Callable[[int, float], None] | None = None,
        abandoned: Callable[[], bool] = lambda: False,
    ) -> Outcome:
        """on_try(n, wait_s): called (in this thread) before each wait, with the tries so far and the wait; `error`
        and `unanswered` say why. abandoned: checked every half second while waiting, so a thread whose app is
        closing ends soon (its worker cancelled)."""
        lost = False  # a start whose answer was lost may have gone through
        while not self.cancelled and not abandoned():
            self.tries += 1
            wait_s = self.every_s
            try:
                api.start_pod(self.pod.id)
            except ApiUnavailable as e:
                self.error, self.unanswered = str(e), True
                lost = lost or not e.not_sent
                wait_s = max(wait_s, e.retry_after_s or 0.0)
            except ApiError as e:
                self.error, self.unanswered = str(e), False
                if not no_free_gpu(e):
                    if lost and self._started(api):
                        self.error = None
                        return "resumed"
                    return "failed"
            else:
                self.error = None
                return "resumed"
            if self.tries >= self.limit:
                return "gave up"
            if on_try is not None:
                on_try(self.tries, wait_s)
            self._wait(wait_s, abandoned)
        return "cancelled"

    def _started(self, api: RunPodApi) -> bool:
        """After a start whose answer was lost, a refusal may only mean that start went through: RunPod says."""
        try:
            return api.fetch_pod(self.pod.id).status in _UP
        except ApiError:
            return False

    def _wait(self, wait_s: float, abandoned: Callable[[], bool]) -> None:
        end = time.monotonic() + wait_s
        while not abandoned() and (left := end - time.monotonic()) > 0:
            if self._cancelled.wait(min(0.5, left)):
                return
