"""Messages that carry results from thread workers back to the event loop."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from textual.message import Message

from podtui.core.pod import Snapshot
from podtui.ui.pod_view import Cells

if TYPE_CHECKING:  # the transfer and forwarding code load when first used, not for the first frame
    from podtui.core.forward import Forward
    from podtui.transfer.job import TransferJob


class PollFinished(Message):
    """A poll's answer: the snapshot and the pod list's cells (built in the worker), or what went wrong."""

    def __init__(
        self,
        snapshot: Snapshot | None,
        error: str | None,
        rows: Mapping[str, Cells] | None = None,
        *,
        retry_after_s: float | None = None,
        key_refused: bool = False,
    ) -> None:
        super().__init__()
        self.snapshot = snapshot
        self.error = error
        self.rows = rows
        self.retry_after_s = retry_after_s  # RunPod said when to ask again (429 Retry-After)
        self.key_refused = key_refused  # a 401: RunPod refused the API key


class ActionFinished(Message):
    def __init__(self, verb: str, pod_name: str, error: str | None) -> None:
        super().__init__()
        self.verb = verb
        self.pod_name = pod_name
        self.error = error


class TransferChanged(Message):
    """A transfer moved on (sent from the queue's worker threads; the job is a copy)."""

    def __init__(self, job: TransferJob) -> None:
        super().__init__()
        self.job = job


class TransferRemoved(Message):
    """A transfer is no longer listed: removed here, or by the podtui that ran it (sent from the queue's threads)."""

    def __init__(self, job_id: str) -> None:
        super().__init__()
        self.job_id = job_id


class TerminateReady(Message):
    """Every download marked "then terminate" for this pod is verified."""

    def __init__(self, pod_id: str, pod_name: str, confirmed: bool) -> None:
        super().__init__()
        self.pod_id, self.pod_name, self.confirmed = pod_id, pod_name, confirmed


class TerminateHeld(Message):
    """A "then terminate" of this pod waits for another podtui's transfer from it (said once per holding transfer;
    `why` names it, outside text)."""

    def __init__(self, pod_id: str, pod_name: str, why: str) -> None:
        super().__init__()
        self.pod_id, self.pod_name, self.why = pod_id, pod_name, why


class ForwardChanged(Message):
    """A forward's state, note or counters changed (from the forwarder's threads)."""

    def __init__(self, forward: Forward) -> None:
        super().__init__()
        self.forward = forward
