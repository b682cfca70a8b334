"""The Sync tab's tests: the app on the whole simulator, a project folder in the test's home (shown as ~/proj, the
same in every run), and the keys that open the tab and the form."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console
from textual.pilot import Pilot
from textual.widgets import Input, Static

from podtui.transfer.sync.state import SyncResult
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.pod_list import PodListScreen
from podtui.ui.screens.sync import SyncScreen
from podtui.ui.screens.sync_form import SyncFormScreen
from podtui.ui.sync_view import PodSync
from podtui.ui.widgets.pod_table import PodTable
from podtui.ui.widgets.sync_panel import SyncPanel
from tests.helpers.pilot import loaded, wait_until

PANES = (120, 32)
SYNC_S = 90  # a sync over the simulated gateway on a loaded 2-core machine


@pytest.fixture
def proj(isolated_home: Path) -> Path:
    """~/proj: a small project with a .gitignore."""
    root = isolated_home / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "train.py").write_text("print('training')\n")
    (root / "README.md").write_text("# proj\n")
    (root / ".gitignore").write_text("*.log\n")
    (root / "run.log").write_text("not synced\n")
    return root


async def sync_panel(pilot: Pilot[None], app: PodtuiApp, pod_id: str) -> SyncPanel:
    """The pod selected and its sync shown with the sync key (the pane's tab, or the sync screen)."""
    await loaded(pilot, app)
    screen = app.screen
    assert isinstance(screen, PodListScreen)
    table = screen.query_one(PodTable)
    table.cursor_row = table.visible_ids.index(pod_id)
    await pilot.pause()
    await pilot.press("Y")
    if screen.panes_on:
        await wait_until(pilot, lambda: screen.pane.active_tab == "sync")
        panel = screen.pane.sync_panel
    else:
        await wait_until(pilot, lambda: isinstance(app.screen, SyncScreen))
        panel = app.screen.query_one(SyncPanel)
    await wait_until(pilot, lambda: panel.pod is not None and panel.pod.id == pod_id and panel.has_focus)
    return panel


async def open_form(pilot: Pilot[None], app: PodtuiApp, key: str = "n") -> SyncFormScreen:
    await pilot.press(key)
    await wait_until(pilot, lambda: isinstance(app.screen, SyncFormScreen))
    form = app.screen
    assert isinstance(form, SyncFormScreen)
    await pilot.pause()
    return form


async def fill(pilot: Pilot[None], form: SyncFormScreen, local: str | None = None, remote: str | None = None) -> None:
    if local is not None:
        form.query_one("#local", Input).value = local
    if remote is not None:
        form.query_one("#remote", Input).value = remote
    await pilot.pause()


async def shown_result(pilot: Pilot[None], app: PodtuiApp, result: SyncResult, toast: bool = False) -> None:
    """The result's events, fed to the pod's state as a sync's thread reports them, then drawn (toast: with the
    alert its end made)."""
    entry = app.syncs._entry(result.spec.pod_id)
    entry.spec = result.spec
    state = entry.state
    state.started(result.spec)
    assert result.plan is not None
    state.plan_ready(result.plan)
    for path, digest in result.verified:
        state.file_verified(path, digest)
    for path, why in result.failed:
        state.file_failed(path, why)
    state.done(result)
    await wait_until(pilot, lambda: view(app, result.spec.pod_id).snap.last is result)
    if not toast:
        app.clear_notifications()  # the end's toast goes after a few seconds: not in the picture
    await pilot.pause()


def view(app: PodtuiApp, pod_id: str) -> PodSync:
    return app.syncs.view(pod_id)


async def synced(pilot: Pilot[None], app: PodtuiApp, pod_id: str, runs: int = 1) -> PodSync:
    """Once the pod's `runs`-th sync has ended and its worker is done: the view then."""
    await wait_until(pilot, lambda: view(app, pod_id).snap.runs >= runs and not view(app, pod_id).busy, SYNC_S)
    await pilot.pause()
    return view(app, pod_id)


def shown(panel: SyncPanel) -> str:
    """What the panel draws, as plain text (at its width)."""
    console = Console(width=max(panel.content_size.width, 40), file=io.StringIO(), record=True)
    for static in panel.query(Static):
        console.print(static.content)
    return console.export_text()
