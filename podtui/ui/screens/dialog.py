"""The base of every podtui dialog: it answers once, and it fits any terminal podtui runs in.

Textual's `dismiss` pops whatever screen is on top. Two Enters in one read reach a dialog's input before it is
gone, and a second dismiss would then pop the screen under it (the pod list, or a console), leaving an empty
app. A dialog that has answered, or is no longer on top, ignores any further dismiss.

The frame every dialog composes (its own .tcss sets the width and the colours):

    Frame #dialog                no wider or taller than the screen; what does not fit scrolls inside it
        Static #title            docked at the top: never scrolled away
        ...                      the body: the fields and the text
        Vertical #foot           docked at the bottom: status lines, then Horizontal #buttons, always in view

Docked children of a scrolling container stay put while the rest scrolls, and a focused field is scrolled into
view clear of them (Textual's own scroll on focus takes a field under the bar for one in view, so the dialog
scrolls it itself), so at 80x24 every button stays on screen and every field can be reached. Tab goes through the
body first and the buttons last, as they read.
"""

from __future__ import annotations

from typing import Generic, TypeVar

from textual import events
from textual.await_complete import AwaitComplete
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widget import Widget

from podtui.ui import key_fence
from podtui.ui.worker_errors import pass_errors_to_app

T = TypeVar("T")


class Frame(VerticalScroll):
    """A dialog's frame: it takes the focus (so the keys scroll it) only while something in it is out of view."""

    def allow_focus(self) -> bool:
        return self.max_scroll_y > 0

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        self.scroll_to_widget(event.widget, animate=False)  # the least scroll that clears the docked bars


class Dialog(ModalScreen[T], Generic[T]):
    _answered = False
    on_worker_state_changed = pass_errors_to_app

    @property
    def focus_chain(self) -> list[Widget]:
        # Textual orders the focus by place on screen, and the docked bar sits above the body's hidden part
        chain = super().focus_chain
        foot = set(self.query("#foot *"))
        return [w for w in chain if w not in foot] + [w for w in chain if w in foot]

    def dismiss(self, result: T | None = None) -> AwaitComplete:
        if self._answered or self.app.screen is not self:
            # not answered: a dialog covered for now can still answer once it is on top again
            return AwaitComplete.nothing()  # type: ignore[no-untyped-call,no-any-return]
        self._answered = True
        key_fence.close_behind(self.app)
        return super().dismiss(result)
