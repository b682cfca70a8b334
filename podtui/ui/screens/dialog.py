"""The base of every podtui dialog: it answers once.

Textual's `dismiss` pops whatever screen is on top. Two Enters in one read reach a dialog's input before it is
gone, and a second dismiss would then pop the screen under it (the pod list, or a console), leaving an empty
app. A dialog that has answered, or is no longer on top, ignores any further dismiss.
"""

from __future__ import annotations

from typing import Generic, TypeVar

from textual.await_complete import AwaitComplete
from textual.screen import ModalScreen

from podtui.ui.worker_errors import pass_errors_to_app

T = TypeVar("T")


class Dialog(ModalScreen[T], Generic[T]):
    _answered = False
    on_worker_state_changed = pass_errors_to_app

    def dismiss(self, result: T | None = None) -> AwaitComplete:
        if self._answered or self.app.screen is not self:
            # not answered: a dialog covered for now can still answer once it is on top again
            return AwaitComplete.nothing()  # type: ignore[no-untyped-call,no-any-return]
        self._answered = True
        return super().dismiss(result)
