"""What podtui asks, and does, before acting on a console, the same on the consoles' screen and in the main screen's
pane: a paste of several lines asks first (a shell may run each line as it arrives), closing a live shell asks
first (what runs in it without nohup or tmux stops with it), and a shell is opened in a thread worker, a refusal
said in words."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from podtui.core.visible import visible
from podtui.ui.needs import Opens
from podtui.ui.screens.confirm import ConfirmScreen

if TYPE_CHECKING:
    from textual.app import App

    from podtui.console.link import ConsoleLink
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


def close_asking(
    opens: Opens, link: ConsoleLink, close: Callable[[], Awaitable[None]], later: Callable[..., Any]
) -> None:
    """Close the console: at once when its shell is gone, after a yes while it is there or coming back.
    later: the caller's call_later, to close on the event loop after this key's handling."""

    async def answered(yes: bool | None) -> None:
        if yes:
            await close()

    if link.state in ("connected", "reconnecting", "connecting"):
        opens.open_screen(
            ConfirmScreen(
                f"Close the console on {visible(link.label)}?",
                "The shell ends; programs started in it without nohup or tmux stop with it.\nThe pod keeps running.",
                "Close",
            ),
            ("close-console", link.label),
            answered,
        )
    else:
        later(close)


def open_shell(app: App[Any], link: ConsoleLink) -> None:
    """In a thread worker: connect the console; a refusal (no key, a gateway that says no) is said in words."""
    from podtui.core.ssh.errors import SshError

    try:
        link.open()
    except SshError as e:
        app.call_from_thread(app.notify, f"{link.label}: {e}", severity="error", timeout=10, markup=False)
