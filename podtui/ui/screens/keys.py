"""SSH key setup inside the app: the dedicated key, whether the account has it, and one button to fix both."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Static

from podtui.core.api import ApiError, RunPodApi
from podtui.core.pod import Pod
from podtui.core.ssh.errors import SshKeyError
from podtui.core.ssh.setup import key_status, restart_note, setup_key
from podtui.core.visible import visible
from podtui.ui import keymap
from podtui.ui.screens.dialog import Dialog, Frame
from podtui.ui.worker_errors import failures_shown, in_thread


class KeysScreen(Dialog[None]):
    CSS_PATH = ["dialog.tcss", "keys.tcss"]  # the shared frame, then its own
    BINDINGS = keymap.bindings("ssh-key")
    on_worker_state_changed = failures_shown

    def __init__(
        self,
        api: RunPodApi,
        key_path: Callable[[], Path],
        pods: Callable[[], Sequence[Pod]] = tuple,
        read_only: bool = False,
    ) -> None:
        """pods: the account's pods as last polled, to say which of them need a restart for a new key.
        read_only: registering a key changes the account, so read-only mode refuses it."""
        super().__init__()
        self.api = api
        self.key_path = key_path
        self.pods = pods
        self.read_only = read_only

    def compose(self) -> ComposeResult:
        with Frame(id="dialog"):
            yield Static("SSH key for RunPod", id="title")
            yield Static("checking…", id="status", markup=False)
            yield Static(
                keymap.fill(
                    self.app,
                    "podtui uses a dedicated ed25519 key (not your GitHub key) and registers it at the account "
                    "level, so every new pod gets it. Keys already on the account are kept. A pod receives the "
                    "account's keys when it starts: pods running when a key is registered need a restart "
                    "({pods.restart} on the pod) before they accept it.",
                ),
                classes="help",
                markup=False,
            )
            with Vertical(id="foot"), Horizontal(id="buttons"):
                yield Button("Close", id="close")
                yield Button("Set up key", id="setup", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#setup", Button).focus()
        self._check()

    def show_failure(self, line: str) -> None:
        self._show(f"✖ {line}")

    def _show(self, text: str) -> None:
        self.query_one("#status", Static).update(visible(text, lines=True))  # paths, RunPod's words

    @in_thread(group="ssh-key", description="checking the SSH key", exclusive=True)
    def _check(self) -> None:
        try:
            path = self.key_path()
            key, registered = key_status(self.api, path)
        except (ApiError, SshKeyError) as e:
            self.app.call_from_thread(self._show, f"✖ {e}")
            return
        if key is None:
            text = f"Key:        {path} (not created yet)\nAccount:    not registered"
        else:
            text = (
                f"Key:        {key.path}\nFingerprint: {key.key.get_name()} {key.fingerprint}\n"
                f"Account:    {'✔ registered' if registered else '✖ NOT registered'}"
            )
        self.app.call_from_thread(self._show, text)

    @in_thread(group="ssh-key", description="setting up the SSH key", exclusive=True)
    def _setup(self) -> None:
        self.app.call_from_thread(self._show, "setting up…")
        try:
            r = setup_key(self.api, self.key_path())
        except (ApiError, SshKeyError) as e:
            self.app.call_from_thread(self._show, f"✖ {e}")
            return
        lines = [
            f"Key:        {r.key.path}{' (created now)' if r.created else ''}",
            f"Fingerprint: {r.key.key.get_name()} {r.key.fingerprint}",
            "Account:    ✔ "
            + (
                f"registered now ({r.account_keys} keys, none removed)"
                if r.registered
                else f"already registered ({r.account_keys} keys)"
            ),
        ]
        if r.registered:
            lines.append("Pods:       " + restart_note(self.pods()))
        self.app.call_from_thread(self._show, "\n".join(lines))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "setup":
            self.action_setup()
        else:
            self.action_close()

    def action_setup(self) -> None:
        if self.read_only:
            self._show("Read-only mode: registering a key on the account is switched off.")
            return
        self._setup()

    def action_close(self) -> None:
        self.dismiss(None)
