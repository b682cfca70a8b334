"""A paste of several lines into a console asks first: a shell may run each line as soon as it arrives. Shared by
the consoles' screen and the main screen's pane."""

from __future__ import annotations

from typing import TYPE_CHECKING

from podtui.core.visible import visible
from podtui.ui.needs import Opens
from podtui.ui.screens.confirm import ConfirmScreen

if TYPE_CHECKING:
    from podtui.console.widget import TerminalView


def ask_to_paste(opens: Opens, message: TerminalView.PasteNeedsConfirmation) -> None:
    view, text = message.view, message.text
    first = text.strip().splitlines()[0][:60]

    def answered(yes: bool | None) -> None:
        if yes:
            view.paste(text)
        view.focus()

    opens.open_screen(
        ConfirmScreen(
            f"Paste {message.lines} lines into the shell?",
            f"A shell may run each line as a command as soon as it arrives.\nFirst line: {visible(first)}",
            "Paste",
        ),
        ("paste",),
        answered,
    )
