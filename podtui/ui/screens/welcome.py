"""First run: no API key yet. Enter one (checked with RunPod, then stored 0600), set up the SSH key, check the
Hugging Face token, or look around in the demo."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Input, Static

from podtui.core import secret
from podtui.core.api import ApiError, V2Api
from podtui.core.config import ConfigError
from podtui.core.visible import visible
from podtui.ui import colours, keymap
from podtui.ui.needs import HasNavigator, Needs, subscribe
from podtui.ui.screens.dialog import Dialog, Frame
from podtui.ui.worker_errors import in_thread

log = logging.getLogger(__name__)

INTRO = (
    "podtui needs a RunPod API key to see your pods: RunPod console → Settings → API Keys (a read-only key is "
    "enough to look; stop, resume and terminate need a read/write key). It is checked with RunPod, then stored "
    "in {where} with mode 0600, and it is never shown or logged."
)


def intro(profile: str | None, stored_in: Path | None) -> str:
    """The screen's first words: whose key this is (the profile, docs/profiles.md#key-sources) and where it goes."""
    where = str(stored_in) if stored_in is not None else "podtui's config file"
    if profile is None:
        return INTRO.format(where=where)
    return f"Profile {visible(profile)}: " + INTRO.format(where=where).replace(
        "podtui needs a RunPod API key", "podtui needs this account's RunPod API key", 1
    )


class WelcomeNeeds(HasNavigator, Protocol):
    """The SSH key and Hugging Face screens, the demo, and a refresh once a key is stored."""

    def restart_in_demo(self) -> None: ...
    def poll_now(self) -> None: ...


class WelcomeScreen(Dialog[None]):
    CSS_PATH = ["dialog.tcss", "welcome.tcss"]  # the shared frame, then its own
    BINDINGS = keymap.bindings("welcome")

    def __init__(
        self,
        save_key: Callable[[str], Path],
        timeout_s: float = 15.0,
        profile: str | None = None,
        stored_in: Path | None = None,
    ) -> None:
        """profile: the profile whose key this is (None: no profile); stored_in: where save_key writes it."""
        super().__init__()
        self.save_key = save_key
        self.profile = profile
        self.stored_in = stored_in
        self.timeout_s = timeout_s
        self.key_saved = False
        self._status_said = ("", "")  # the status line and its colour role, drawn again in a new theme

    needs = Needs[WelcomeNeeds]()

    def compose(self) -> ComposeResult:
        with Frame(id="dialog"):
            title = "Welcome to podtui" + (f" · profile {visible(self.profile)}" if self.profile else "")
            yield Static(title, id="title", markup=False)
            yield Static(intro(self.profile, self.stored_in), markup=False, id="intro")
            with Horizontal(id="key-row"):
                yield Input(placeholder="paste your RunPod API key", password=True, id="key")
                yield Button("Check and save", id="save", variant="primary")
            with Vertical(id="foot"):
                yield Static("", id="status", markup=False)
                with Horizontal(id="buttons"):
                    yield Button("SSH key setup", id="ssh", disabled=True)
                    yield Button("Hugging Face token", id="hf")
                    yield Button("Try the demo", id="demo")
                    yield Button("Later", id="later")

    def on_mount(self) -> None:
        subscribe(self, self.app.theme_changed_signal, lambda _theme: self._status(*self._status_said))
        self.query_one("#key", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._check_key()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        match event.button.id:
            case "save":
                self._check_key()
            case "ssh":
                self.needs.navigator.open_ssh_key()
            case "hf":
                self.needs.navigator.open_hf_check()
            case "demo":
                self.needs.restart_in_demo()
            case "later":
                self.action_later()

    def action_later(self) -> None:
        if not self.key_saved:
            self.notify(
                keymap.fill(
                    self.app,
                    "no API key yet: `podtui config set-key` stores one; {app.ssh-key} or the palette sets up SSH",
                ),
                timeout=8,
                markup=False,
            )
        self.dismiss(None)
        self.needs.poll_now()  # the list behind says where things stand (a key stored elsewhere is found)

    def _status(self, text: str, role: str = "") -> None:
        """role: the colour (podtui/ui/colours.py), "bad" or "good"."""
        self._status_said = (text, role)
        # may quote RunPod's answer: visible, and never markup
        self.query_one("#status", Static).update(Text(visible(text), style=colours.palette(self.app).style(role)))

    def _check_key(self) -> None:
        value = self.query_one("#key", Input).value.strip()
        if not value or any(c.isspace() for c in value):
            self._status("an API key is one word with no spaces", "bad")
            return
        secret.register(value)  # from now on it is masked in every log line and message
        self.query_one("#save", Button).disabled = True
        self._status("asking RunPod whether the key works…")
        self._verify(value)

    # exit_on_error=False: a crash report prints the worker's locals, and one of them is the key
    @in_thread(group="welcome-key", description="checking the API key", exclusive=True)
    def _verify(self, value: str) -> None:
        try:
            snapshot = V2Api(value, timeout_s=self.timeout_s).fetch_snapshot()
            path = self.save_key(value)
        except (ApiError, ConfigError, OSError) as e:
            self.app.call_from_thread(self._refused, secret.redact(str(e)))
            return
        except Exception as e:  # a bug or a broken install: said in words, the key never in a traceback
            log.error("checking the API key failed: %s", type(e).__name__)
            self.app.call_from_thread(self._refused, f"unexpected error ({type(e).__name__}); see the log")
            return
        self.app.call_from_thread(self._saved, path, len(snapshot.pods))

    def _refused(self, why: str) -> None:
        self.query_one("#save", Button).disabled = False
        self._status(f"not saved: {why}", "bad")
        self.query_one("#key", Input).focus()

    def _saved(self, path: Path, pods: int) -> None:
        self.key_saved = True
        key = self.query_one("#key", Input)
        key.value = ""  # the screen keeps no copy
        key.disabled = True
        self._status(
            f"RunPod accepted the key ({pods} pod{'s' if pods != 1 else ''} on the account); stored in "
            f"{path} with mode 0600. Next: SSH key setup, so consoles and transfers work.",
            "good",
        )
        self.query_one("#ssh", Button).disabled = False
        self.query_one("#ssh", Button).focus()
        self.needs.poll_now()
