"""Worker errors are handled once: an exception a worker's own code did not expect ends in the app's handler for
`Worker.StateChanged` (`report`), which logs it (secrets masked by the log's filter) and says it in one notification.

Textual tells only the node that started a worker how it went, so a screen that starts workers passes their
errors on to the app: `on_worker_state_changed = pass_errors_to_app` in its class. A screen whose status line a
worker fills ("loading…") also says there that the work failed, so it never stays on "loading…": it names the
handler `failures_shown` instead, and says where and how in its `show_failure` (docs/architecture.md#worker-errors).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any, ParamSpec, Protocol, TypeVar

from textual import work
from textual.app import App
from textual.message_pump import MessagePump
from textual.worker import Worker, WorkerState, get_current_worker

from podtui.core import secret
from podtui.core.visible import visible

log = logging.getLogger(__name__)
P = ParamSpec("P")
R = TypeVar("R")


def in_thread(*, group: str, description: str, exclusive: bool = False) -> Callable[[Callable[P, R]], Any]:
    """A screen's thread worker, its errors handled once (`exit_on_error=False`: they reach `report`). One that
    fails after its screen closed was cancelled with it, and Textual reports nothing then: it is logged here."""

    def decorate(method: Callable[P, R]) -> Any:
        @functools.wraps(method)
        def logged(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return method(*args, **kwargs)
            except Exception:
                if get_current_worker().is_cancelled:  # no one is left to hear of it
                    log.exception("%s failed after its screen closed", description)
                raise

        return work(thread=True, exclusive=exclusive, group=group, exit_on_error=False, description=description)(logged)

    return decorate


def what_failed(error: BaseException) -> str:
    """The error in one line the user may see: its type and its text, secrets masked, every character visible."""
    return visible(f"{type(error).__name__}: {secret.redact(str(error))}")


def report(app: App[Any], event: Worker.StateChanged) -> None:
    """The app's handler: a worker that ended on an exception (the app's or a screen's) is logged with its
    traceback and said once."""
    error = event.worker.error
    if event.state is WorkerState.ERROR and error is not None:
        what = event.worker.description or event.worker.name
        log.error("%s failed", what, exc_info=error)
        app.notify(f"{what} failed: unexpected error: {what_failed(error)}", severity="error", timeout=10, markup=False)


def pass_errors_to_app(node: MessagePump, event: Worker.StateChanged) -> None:
    if event.state is WorkerState.ERROR:
        node.app.post_message(Worker.StateChanged(event.worker, event.state))
        event.prevent_default()  # passed on once: a base class's handler (Dialog's) must not pass it again


class ShowsFailures(Protocol):
    @property
    def app(self) -> App[Any]: ...
    def show_failure(self, line: str) -> None: ...  # the status line says the work failed, in the screen's words


def failures_shown(node: ShowsFailures, event: Worker.StateChanged) -> None:
    """Passes a worker's error on to the app, and has the screen say in its status line that the work failed."""
    error = event.worker.error
    if event.state is WorkerState.ERROR and error is not None:
        node.show_failure(f"unexpected error: {what_failed(error)} (details in the log)")
        node.app.post_message(Worker.StateChanged(event.worker, event.state))
        event.prevent_default()
