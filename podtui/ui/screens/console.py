"""Consoles: one tab per shell, on one pod or several. Each keeps its screen and scrollback while hidden."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from textual.app import ComposeResult
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Static, TabbedContent, TabPane

from podtui.console.keys import RELEASE_KEY_LABEL
from podtui.console.link import ConsoleLink
from podtui.console.registry import ConsoleRegistry
from podtui.console.widget import TerminalView
from podtui.core.ssh.errors import SshError
from podtui.core.visible import visible
from podtui.ui import keymap
from podtui.ui.needs import Needs, Opens
from podtui.ui.screens.confirm import ConfirmScreen
from podtui.ui.screens.save_as import SaveAsScreen
from podtui.ui.worker_errors import in_thread, pass_errors_to_app

# {id}: that binding's key, remapped or not (keymap.fill)
HINT = (
    f"{RELEASE_KEY_LABEL} leaves the console, so podtui's keys work · {{console.type}} types into it again · "
    "shift+PgUp scrolls back"
)


class ConsoleScreen(Screen[None]):
    CSS_PATH = "console.tcss"
    BINDINGS = keymap.bindings("console")

    needs = Needs[Opens]()
    on_worker_state_changed = pass_errors_to_app

    def __init__(self, consoles: ConsoleRegistry, clock: Callable[[], float] = time.time) -> None:
        super().__init__()
        self.consoles = consoles
        self.clock = clock  # names the saved output's file
        self._count = 0
        self._titles: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        yield TabbedContent(id="consoles")
        yield Static(
            keymap.fill(self.app, "no console open: press {pods.console} on a running pod"), id="empty", markup=False
        )
        yield Static(keymap.fill(self.app, HINT), id="hint", markup=False)
        yield Footer()

    # --- tabs ---------------------------------------------------------------------------------------

    @property
    def tabs(self) -> TabbedContent:
        return self.query_one(TabbedContent)

    def views(self) -> list[TerminalView]:
        return list(self.query(TerminalView))

    @property
    def current(self) -> TerminalView | None:
        pane = self.tabs.active_pane
        if pane is None:
            return None
        found = pane.query(TerminalView)
        return found.first() if found else None

    async def add(self, link: ConsoleLink) -> TerminalView:
        self._count += 1
        pane_id = f"console-{self._count}"
        view = TerminalView(link, id=f"{pane_id}-view")
        await self.tabs.add_pane(TabPane(Content(link.title), view, id=pane_id))
        self._titles[pane_id] = link.title
        self.tabs.active = pane_id
        self._show_empty()
        view.focus()
        self._connect(link)
        return view

    @in_thread(group="console-connect", description="connecting the console")
    def _connect(self, link: ConsoleLink) -> None:
        try:
            link.open()
        except SshError as e:
            self.app.call_from_thread(self.notify, f"{link.label}: {e}", severity="error", timeout=10, markup=False)

    def on_terminal_view_title_changed(self, message: TerminalView.TitleChanged) -> None:
        self.update_titles()

    def update_titles(self) -> None:
        for pane in self.tabs.query(TabPane):
            views = pane.query(TerminalView)
            if not views or pane.id is None:
                continue
            title = views.first().link.title
            if self._titles.get(pane.id) != title:
                self._titles[pane.id] = title
                self.tabs.get_tab(pane.id).label = Content(title)

    def _show_empty(self) -> None:
        self.query_one("#empty").display = not self.views()

    def on_terminal_view_released(self, message: TerminalView.Released) -> None:
        self.query_one("Tabs").focus()

    def on_terminal_view_paste_needs_confirmation(self, message: TerminalView.PasteNeedsConfirmation) -> None:
        view, text = message.view, message.text
        first = text.strip().splitlines()[0][:60]

        def answered(yes: bool | None) -> None:
            if yes:
                view.paste(text)
            view.focus()

        self.needs.open_screen(
            ConfirmScreen(
                f"Paste {message.lines} lines into the shell?",
                f"A shell may run each line as a command as soon as it arrives.\nFirst line: {visible(first)}",
                "Paste",
            ),
            ("paste",),
            answered,
        )

    # --- actions ------------------------------------------------------------------------------------

    def action_leave(self) -> None:
        self.app.pop_screen()

    def action_focus_console(self) -> None:
        view = self.current
        if view is not None:
            view.focus()

    def action_switch(self, step: int) -> None:
        panes = [p.id for p in self.tabs.query(TabPane) if p.id]
        if not panes:
            return
        at = panes.index(self.tabs.active) if self.tabs.active in panes else 0
        self.tabs.active = panes[(at + step) % len(panes)]

    def action_close_console(self) -> None:
        view = self.current
        if view is None:
            return
        link = view.link

        async def close(yes: bool | None) -> None:
            if yes:
                await self._close(view)

        if link.state in ("connected", "reconnecting", "connecting"):
            self.needs.open_screen(
                ConfirmScreen(
                    f"Close the console on {visible(link.label)}?",
                    "The shell ends; programs started in it without nohup or tmux stop with it.\n"
                    "The pod keeps running.",
                    "Close",
                ),
                ("close-console", link.label),
                close,
            )
        else:
            self.call_later(self._close, view)

    async def _close(self, view: TerminalView) -> None:
        pane = next((p for p in self.tabs.query(TabPane) if view in p.query(TerminalView)), None)
        self.consoles.forget(view.link)
        self._close_link(view.link)
        if pane is not None and pane.id is not None:
            self._titles.pop(pane.id, None)
            await self.tabs.remove_pane(pane.id)
        self._show_empty()

    @in_thread(group="console-close", description="closing the console")
    def _close_link(self, link: ConsoleLink) -> None:
        link.close()

    def action_reconnect(self) -> None:
        view = self.current
        if view is not None:
            view.link.reconnect_now()

    def action_save(self) -> None:
        view = self.current
        if view is None:
            self.notify("no console to save", severity="warning")
            return
        link = view.link
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(self.clock()))
        safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in link.label)
        default = Path.cwd() / f"podtui-{safe}-{stamp}.txt"

        def chosen(path: str | None) -> None:
            if path:
                self._save(link, Path(path))

        self.needs.open_screen(
            SaveAsScreen("Save console output (plain text)", str(default)), ("save-console",), chosen
        )

    def _save(self, link: ConsoleLink, path: Path) -> None:
        try:
            written = link.save(path)
        except OSError as e:
            self.notify(f"could not save: {e.strerror or e}", severity="error", markup=False)
        else:
            self.notify(f"saved {written}", markup=False)
