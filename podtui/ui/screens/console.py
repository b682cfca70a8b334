"""Consoles: one tab per shell, on one pod or several. Each keeps its screen and scrollback while hidden.

Each tab holds a ConsoleBox, whose bar says who gets the keys: the pod (the console has focus) or podtui. The footer
shows only the keys that work in that mode: the release key alone while typing, this screen's keys otherwise."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

from textual import events
from textual.app import ComposeResult
from textual.content import Content
from textual.screen import ModalScreen, Screen
from textual.widgets import Static, TabbedContent, TabPane

from podtui.console.link import ConsoleLink
from podtui.console.registry import ConsoleRegistry
from podtui.console.widget import TerminalView
from podtui.ui import keymap
from podtui.ui.console_questions import ask_to_paste, close_asking, open_shell
from podtui.ui.needs import Needs, Opens
from podtui.ui.screens.save_as import SaveAsScreen
from podtui.ui.widgets.console_box import ConsoleBox, console_focused
from podtui.ui.widgets.fitted_footer import FittedFooter
from podtui.ui.worker_errors import in_thread, pass_errors_to_app

# this screen's actions that act on the console in the current tab
_ON_A_CONSOLE = frozenset({"focus_console", "close_console", "reconnect", "save"})
_OWN = _ON_A_CONSOLE | {"leave", "switch"}


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
        self._making_tabs = asyncio.Lock()

    def compose(self) -> ComposeResult:
        yield TabbedContent(id="consoles")
        yield Static(
            keymap.fill(self.app, "no console open: press {pods.console} on a running pod"), id="empty", markup=False
        )
        yield FittedFooter()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Only what works now: nothing while a console has the keys (they go to the pod); a console's keys when
        there is one, tab keys when there are two."""
        if action not in _OWN:
            return True
        if console_focused(self):
            return False
        count = len(self.views())
        if action == "switch":
            return count > 1
        return count > 0 or action not in _ON_A_CONSOLE

    # --- who gets the keys when the screen comes back ---------------------------------------------------

    def on_screen_suspend(self, event: events.ScreenSuspend) -> None:
        # A screen that covers this one (an autostop countdown, another screen opened on top) takes the console's
        # keys away: when this screen comes back (C), podtui's keys work and the bar says so, rather than keys
        # going to the pod unannounced. A dialog on top (the paste question) gives them back when it closes.
        if console_focused(self) and not isinstance(self.app.screen, ModalScreen):
            self.release()

    def release(self) -> None:
        """podtui's keys work again: the focus goes to the tabs."""
        self.set_focus(self.tabs.query_one("Tabs"))

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

    def boxes(self) -> list[ConsoleBox]:
        return list(self.query(ConsoleBox))

    async def add(self, link: ConsoleLink) -> TerminalView:
        """A new console: its tab (made already if the screen came up with it), shown, given the keys, connected."""
        view = await self._tab_for(link)
        pane = next(p for p in self.tabs.query(TabPane) if view in p.query(TerminalView))
        if pane.id is not None:
            self.tabs.active = pane.id
        view.focus()
        self._connect(link)
        return view

    def _view_of(self, link: ConsoleLink) -> TerminalView | None:
        return next((v for v in self.views() if v.link is link), None)

    async def _tab_for(self, link: ConsoleLink) -> TerminalView:
        """The link's tab, made if there is none; one at a time (the screen coming up makes tabs while `c` does)."""
        async with self._making_tabs:
            return self._view_of(link) or await self._add_tab(link)

    async def _add_tab(self, link: ConsoleLink) -> TerminalView:
        self._count += 1
        pane_id = f"console-{self._count}"
        box = ConsoleBox(link, id=f"{pane_id}-box")
        await self.tabs.add_pane(TabPane(Content(link.title), box, id=pane_id))
        self._titles[pane_id] = link.title
        self.tabs.active = pane_id
        self._show_empty()
        return box.view

    async def on_screen_resume(self) -> None:
        """Every console podtui has open has its tab here, those opened in the main screen's pane too (that of a
        pod no longer on the account among them, to read or save): tabs are added for them, tabs whose console
        was closed elsewhere go, and each view draws its console again (docs/architecture.md#panes)."""
        live = self.consoles.links
        for view in self.views():
            if view.link not in live:
                pane = next((p for p in self.tabs.query(TabPane) if view in p.query(TerminalView)), None)
                if pane is not None and pane.id is not None:
                    self._titles.pop(pane.id, None)
                    await self.tabs.remove_pane(pane.id)
        shown = {view.link for view in self.views()}
        for link in live:
            if link not in shown:
                await self._tab_for(link)
        for view in self.views():
            view.attach()
        self._show_empty()
        self.refresh_bindings()

    @in_thread(group="console-connect", description="connecting the console")
    def _connect(self, link: ConsoleLink) -> None:
        open_shell(self.app, link)

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
        self.release()

    def on_terminal_view_paste_needs_confirmation(self, message: TerminalView.PasteNeedsConfirmation) -> None:
        ask_to_paste(self.needs, message)

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
        close_asking(self.needs, view.link, lambda: self._close(view), self.call_later)

    async def _close(self, view: TerminalView) -> None:
        pane = next((p for p in self.tabs.query(TabPane) if view in p.query(TerminalView)), None)
        self.consoles.forget(view.link)
        self._close_link(view.link)
        if pane is not None and pane.id is not None:
            self._titles.pop(pane.id, None)
            await self.tabs.remove_pane(pane.id)
        self._show_empty()
        self.refresh_bindings()  # fewer consoles: fewer keys work

    @in_thread(group="console-close", description="closing the console")
    def _close_link(self, link: ConsoleLink) -> None:
        link.close()

    def action_reconnect(self) -> None:
        """A fresh shell for a console that dropped or closed; a live one is never torn down for it."""
        view = self.current
        if view is None:
            return
        link = view.link
        if link.state == "connected":
            said = "already connected; {console.close} closes it, then {pods.console} on the pod opens a new one"
        elif link.state in ("connecting", "reconnecting"):
            said = f"{link.state} already; {{console.close}} closes it"
        else:
            link.reconnect_now()
            return
        # the label is the pod's name, made visible by the link; only the sentence's {ids} are filled
        self.notify(f"{link.label}: {keymap.fill(self.app, said)}", markup=False)

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
