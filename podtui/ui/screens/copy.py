"""Copy what people paste elsewhere: the pod's SSH command (direct first), its id, a service URL. The text goes to
the clipboard through the terminal (OSC 52), and is shown in the confirmation too, to be selected by hand where the
terminal refuses OSC 52 (tmux without set-clipboard, many SSH sessions)."""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from podtui.core.pod import Pod
from podtui.core.pod_links import PROXY_URL, Copyable, copyables
from podtui.core.visible import is_clean, visible
from podtui.ui import keymap
from podtui.ui.screens.dialog import Dialog


class CopyScreen(Dialog[Copyable | None]):
    CSS_PATH = ["dialog.tcss", "copy.tcss"]  # the shared frame, then its own
    BINDINGS = keymap.bindings("copy")

    def __init__(self, pod: Pod, url_template: str = PROXY_URL) -> None:
        """url_template: where RunPod's proxy serves an HTTP port (the config's proxy_url; the demo's own)."""
        super().__init__()
        self.pod = pod
        self.choices = copyables(pod, url_template)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(f"Copy from {visible(self.pod.name)}", id="title", markup=False)
            yield OptionList(
                *(
                    Option(Text.assemble((f"{i}  {c.what}\n", "bold"), ("   " + visible(c.text), "")), id=str(i))
                    for i, c in enumerate(self.choices, 1)
                ),
                id="choices",
            )
            yield Static(keymap.fill(self.app, "enter or 1-9 copies · {copy.cancel} closes"), id="help", markup=False)

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self._copy(event.option_index)

    def on_key(self, event: events.Key) -> None:
        key = event.character
        if key is not None and key.isdigit() and 0 < int(key) <= len(self.choices):
            event.stop()
            self._copy(int(key) - 1)

    def _copy(self, index: int) -> None:
        chosen = self.choices[index]
        if not is_clean(chosen.text):  # pasted into a shell, a line break or escape in it would run or act
            self.notify(
                f"not copied: the {chosen.what} RunPod gave holds control characters ({visible(chosen.text)})",
                severity="error",
                markup=False,
            )
            return
        self.app.copy_to_clipboard(chosen.text)
        self.dismiss(chosen)

    def action_cancel(self) -> None:
        self.dismiss(None)
