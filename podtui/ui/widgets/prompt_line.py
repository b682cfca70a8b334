"""A line that asks for words (a filter, a search) and hands the focus on at Enter, before the next key is read.

Textual hands each key to the widget focused when the app reads it, and Input's Enter binding runs only once the
key has come back up to the app: in `a100<Enter>s` typed in one go, `s` is handed to the line before Enter has
moved the focus, and is typed into it instead of acting on the list. Here Enter, and the key that leaves the line
the other way (escape), are answered as the line reads them, the focus moves at once, and a key that reaches the
line after the focus left is handed to the widget focused now (docs/architecture.md#opening-a-screen-once)."""

from __future__ import annotations

from collections.abc import Callable

from textual import events
from textual.widget import Widget
from textual.widgets import Input

from podtui.ui import key_fence, keymap


class PromptLine(Input):
    def __init__(
        self,
        leave_to: Callable[[], Widget | None],
        value: str = "",
        *,
        back: tuple[str, Callable[[], object]] | None = None,
        id: str | None = None,
        placeholder: str = "",
    ) -> None:
        super().__init__(value, id=id, placeholder=placeholder)
        self._leave_to = leave_to  # where Enter sends the focus; None: it stays (the words are to be mended)
        # the key (by keymap id, as remapped) that leaves the line the other way, and what it does: answered here
        # too, as Enter is, so the key after it is not typed into the line; the action moves the focus at once
        self._back = back

    async def _on_key(self, event: events.Key) -> None:
        if key_fence.holds(self.app, event):  # read with a dialog's answer: it was meant for the dialog
            self._drop(event)
            return
        if key_fence.type_ahead(self.app).astray(self.app, event, self):
            self._drop(event)  # Input's own handler would type it here
            return
        if any(b.action == "submit" for b in self._bindings.key_to_bindings.get(event.key, ())):
            self._drop(event)
            await self.action_submit()
            target = self._leave_to()
            if target is not None:
                self.screen.set_focus(target)
            return
        if self._back is not None and self._leaves_back(event):
            self._drop(event)
            self._back[1]()

    def _leaves_back(self, event: events.Key) -> bool:
        """The back key, as remapped; one the line itself uses (a letter typed, backspace) stays the line's, as it
        was before: the screen's binding never saw it while the line had the focus."""
        assert self._back is not None
        if event.is_printable or event.key in self._bindings.key_to_bindings:
            return False
        return event.key in _keys(keymap.keys_of(self.app, self._back[0]))

    @staticmethod
    def _drop(event: events.Key) -> None:
        event.stop()
        event.prevent_default()


def _keys(keys: str) -> set[str]:
    return {k.strip() for k in keys.split(",")}
