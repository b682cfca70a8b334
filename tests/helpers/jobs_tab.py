"""Driving the app's Jobs tab with Pilot (docs/jobs.md): the demo's gateway pod selected, its jobs shown with the jobs
key, the new-job form opened and filled in."""

from __future__ import annotations

from textual.pilot import Pilot
from textual.widgets import Input, TextArea

from podtui.ui.app import PodtuiApp
from podtui.ui.screens.jobs import JobsScreen
from podtui.ui.screens.new_job import NewJobScreen
from podtui.ui.screens.pod_list import PodListScreen
from podtui.ui.widgets.jobs_panel import JobsPanel
from podtui.ui.widgets.pod_table import PodTable
from tests.helpers.pilot import loaded, wait_until
from tests.helpers.sim import DEMO_IDS

PANES = (120, 32)
SMALL = (90, 28)
POD = DEMO_IDS["idle"]  # eval-a100, through the gateway


async def jobs_panel(pilot: Pilot[None], app: PodtuiApp, pod_id: str = POD) -> JobsPanel:
    """The pod selected and its jobs shown with the jobs key (the pane's tab, or the jobs screen)."""
    await loaded(pilot, app)
    table = app.screen.query_one(PodTable)
    table.cursor_row = table.visible_ids.index(pod_id)
    screen = app.screen
    assert isinstance(screen, PodListScreen)
    await pilot.pause()
    await pilot.press("J")
    if screen.panes_on:
        await wait_until(pilot, lambda: screen.pane.active_tab == "jobs")
        panel = screen.pane.jobs_panel
    else:
        await wait_until(pilot, lambda: isinstance(app.screen, JobsScreen))
        panel = app.screen.query_one(JobsPanel)
    await wait_until(pilot, lambda: panel.pod is not None and panel.pod.id == pod_id and panel.in_sight)
    listed = app.jobs.listing(pod_id)
    await wait_until(pilot, lambda: app.jobs.listing(pod_id).at is not None, 60)
    assert listed is not None
    return panel


async def new_job(pilot: Pilot[None], app: PodtuiApp, command: str, pulls: str = "") -> NewJobScreen:
    await pilot.press("n")
    await wait_until(pilot, lambda: isinstance(app.screen, NewJobScreen))
    form = app.screen
    assert isinstance(form, NewJobScreen)
    await pilot.pause()
    form.query_one("#command", Input).value = command
    form.query_one("#pulls", TextArea).text = pulls
    await pilot.pause()
    return form
