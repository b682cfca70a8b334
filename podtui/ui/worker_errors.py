"""Worker errors are handled once: an exception a worker's own code did not expect ends in the app's handler for
`Worker.StateChanged`, which logs it (secrets masked by the log's filter) and says it in one notification.

Textual tells only the node that started a worker how it went, so a screen that starts workers passes their
errors on to the app: `on_worker_state_changed = pass_errors_to_app` in its class
(docs/architecture.md#worker-errors)."""

from __future__ import annotations

from textual.message_pump import MessagePump
from textual.worker import Worker, WorkerState


def pass_errors_to_app(node: MessagePump, event: Worker.StateChanged) -> None:
    if event.state is WorkerState.ERROR:
        node.app.post_message(Worker.StateChanged(event.worker, event.state))
