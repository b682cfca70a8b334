"""Everything about one pod, on a screen of its own: the one-screen-at-a-time flow of a terminal too small for
the main screen's panes (docs/architecture.md#panes)."""

from __future__ import annotations

from typing import Protocol

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from podtui.core import actions
from podtui.core.pod import Pod
from podtui.ui import colours, keymap
from podtui.ui.colours import CLASSIC, Palette
from podtui.ui.needs import (
    HasNavigator,
    HasPodActions,
    HasSshOut,
    Needs,
    OpensScreens,
    PodBroadcasts,
    PodData,
    in_sight,
    subscribe,
)
from podtui.ui.pod_view import AT_ZERO_MARK, LOCKED_MARK
from podtui.ui.widgets.account_bar import AccountBar
from podtui.ui.widgets.fitted_footer import FittedFooter
from podtui.ui.widgets.pod_details import PodDetails


class EditsPods(OpensScreens, Protocol):
    def open_edit(self, pod: Pod) -> None: ...  # the pod's edit form


class PodDetailNeeds(PodBroadcasts, HasPodActions, HasNavigator, HasSshOut, Protocol):
    """The pod data as it changes, and the pod's actions."""

    @property
    def navigator(self) -> EditsPods: ...


def notes_text(pod: Pod | None, edit_key: str = "e", palette: Palette = CLASSIC) -> Text:
    """Above the details: what the lock blocks, and whether the pod's data survives a $0 balance."""
    t = Text()
    if pod is None:
        return t
    st = palette.style
    if pod.locked:
        t.append(f"{LOCKED_MARK} locked: ", style=st("bold bad"))
        t.append(f"{actions.LOCKED_WORDS}; {edit_key} edits the pod, to unlock it.\n", style=st("bad"))
    if actions.loses_data_at_zero(pod):
        t.append(f"{AT_ZERO_MARK} {actions.DATA_AT_ZERO}: ", style=st("bold warn"))
        t.append(
            "it has no network volume, and RunPod terminates such pods when the balance reaches $0.",
            style=st("warn"),
        )
    elif pod.network_volume:
        t.append(f"Its data on the network volume {pod.network_volume} survives a $0 balance.", style=st("muted"))
    return t


class PodDetailScreen(Screen[None]):
    CSS_PATH = "pod_detail.tcss"
    BINDINGS = keymap.bindings("details")

    def __init__(self, pod_id: str) -> None:
        super().__init__()
        self.pod_id = pod_id

    needs = Needs[PodDetailNeeds]()

    def compose(self) -> ComposeResult:
        yield AccountBar()
        with VerticalScroll():
            yield Static("", id="notes")
            yield PodDetails(back_key=keymap.key_for(self.app, "details.back"), id="detail")
        yield FittedFooter()

    def on_mount(self) -> None:
        self.show_feed(self.needs.pod_data())
        subscribe(self, self.needs.pods_polled, self.show_feed)
        subscribe(self, self.needs.ticked, self.tick)

    def show_feed(self, data: PodData) -> None:
        feed = data.feed
        self.query_one(AccountBar).show(feed, data.now, data.demo, data.ticker, paused=data.paused)
        if feed.snapshot is None:
            return
        self.query_one(PodDetails).show(self.pod_id, feed, data.now)
        notes = notes_text(self.pod, keymap.key_for(self.app, "pods.edit"), colours.palette(self.app))
        self.query_one("#notes", Static).update(notes)
        self.query_one("#notes", Static).display = bool(notes.plain)
        self.refresh_bindings()

    @property
    def pod(self) -> Pod | None:
        """None once the pod is no longer in RunPod's answer."""
        found = self.query(PodDetails)  # check_action asks before the body is mounted too
        return found.first().pod if found else None

    def tick(self, data: PodData) -> None:
        if in_sight(self) and self.query(AccountBar):  # under a question too: the money goes on
            self.query_one(AccountBar).show(data.feed, data.now, data.demo, data.ticker, paused=data.paused)

    def on_screen_suspend(self) -> None:
        """A question opened over it: the ticker says paused at once, not at the next second's tick."""
        self.tick(self.needs.pod_data())

    def on_screen_resume(self) -> None:
        self.tick(self.needs.pod_data())

    @property
    def selected_pod(self) -> Pod | None:
        return self.pod

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        pod = self.pod
        if action == "pod" and parameters and pod is not None and not actions.offered(str(parameters[0]), pod):
            return None  # RunPod does not offer it for this pod now (its `actions`): greyed out
        return True

    def action_back(self) -> None:
        self.app.pop_screen()

    def _gone(self) -> bool:
        if self.pod is None:
            self.notify(
                f"{self._pod_name} is no longer on the account: nothing to do", severity="warning", markup=False
            )
        return self.pod is None

    @property
    def _pod_name(self) -> str:
        found = self.query(PodDetails)
        seen = found.first().last_seen if found else None
        return seen.name if seen is not None else self.pod_id

    def action_pod(self, verb: str) -> None:
        if not self._gone() and self.pod is not None:
            self.needs.pod_actions.request(verb, self.pod)

    async def action_console(self) -> None:
        if not self._gone() and self.pod is not None:
            await self.needs.navigator.open_console(self.pod)

    def action_copy(self) -> None:
        if not self._gone() and self.pod is not None:
            self.needs.navigator.open_copy(self.pod)

    def action_logs(self) -> None:
        if not self._gone() and self.pod is not None:
            self.needs.navigator.open_logs(self.pod)

    def action_services(self) -> None:
        if not self._gone() and self.pod is not None:
            self.needs.navigator.open_services(self.pod)

    def action_edit(self) -> None:
        if not self._gone() and self.pod is not None:
            self.needs.navigator.open_edit(self.pod)

    def action_ssh(self) -> None:
        if not self._gone() and self.pod is not None:
            self.needs.ssh_out.ssh(self.pod)

    def action_editor(self) -> None:
        if not self._gone() and self.pod is not None:
            self.needs.ssh_out.editor(self.pod)
