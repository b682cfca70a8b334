"""The Jobs tab in the real app on the whole simulator (docs/jobs.md): a job started from the new-job form runs, is
listed, its log streams in the log screen, and it is cancelled; below 100x30 the jobs come on a screen of their own,
and the palette opens them too."""

from __future__ import annotations

from collections.abc import Callable

from textual.widgets import Input, Log, Static

from podtui.core.jobs.job import Job
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.confirm import ConfirmScreen
from podtui.ui.screens.job_log import JobLogScreen
from podtui.ui.screens.jobs import JobsScreen
from podtui.ui.screens.new_job import NewJobScreen
from podtui.ui.screens.pod_list import PodListScreen
from podtui.ui.widgets.jobs_panel import JobsPanel
from tests.helpers.jobs_tab import PANES, POD, jobs_panel, new_job
from tests.helpers.pilot import wait_until


def _row_of(panel: JobsPanel, job_id: str) -> Job | None:
    return next((j for j in panel.jobs if j.id == job_id), None)


def _notes(app: PodtuiApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def test_start_list_read_the_log_and_cancel(make_full_app: Callable[..., PodtuiApp]) -> None:
    app = make_full_app()
    async with app.run_test(size=PANES, notifications=True) as pilot:
        panel = await jobs_panel(pilot, app)
        form = await new_job(pilot, app, "for i in 1 2 3; do echo line $i; done; sleep 600")
        form.query_one("#name", Input).value = "counter"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: not isinstance(app.screen, NewJobScreen), 90)
        await wait_until(pilot, lambda: any(j.name == "counter" for j in panel.jobs), 60)
        job = next(j for j in panel.jobs if j.name == "counter")
        assert job.state == "running"
        assert any(f"job counter started on eval-a100 ({job.id})" in n for n in _notes(app))
        panel.table.focus()
        panel.table.move_cursor(row=[j.id for j in panel.jobs].index(job.id))
        await pilot.press("l")
        await wait_until(pilot, lambda: isinstance(app.screen, JobLogScreen))
        log_screen = app.screen
        assert isinstance(log_screen, JobLogScreen)
        await wait_until(pilot, lambda: "line 3" in "\n".join(log_screen.query_one(Log).lines), 60)
        assert "following: running" in str(log_screen.query_one("#status", Static).render())
        await pilot.press("x")  # cancel, from the log: asked first
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await wait_until(pilot, lambda: log_screen.ended, 90)
        assert "the job ended: cancelled" in str(log_screen.query_one("#status", Static).render())
        await pilot.press("escape")
        await wait_until(pilot, lambda: (row := _row_of(panel, job.id)) is not None and row.state == "cancelled", 60)
        assert any("job counter on eval-a100: cancelled" in n for n in _notes(app))


async def test_below_100x30_a_screen_of_their_own_and_the_palette(make_full_app: Callable[..., PodtuiApp]) -> None:
    app = make_full_app()
    async with app.run_test(size=(90, 28), notifications=True) as pilot:
        panel = await jobs_panel(pilot, app)
        screen = app.screen
        assert isinstance(screen, JobsScreen) and panel.table.has_focus
        assert "No jobs on this pod yet" in str(panel.query_one("#jobs-notes", Static).render())
        await pilot.press("J")  # pressed again: no second screen
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, PodListScreen))
        assert app.jobs.looking_at is None  # nothing read while the jobs are not on show
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Jobs of eval")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, JobsScreen))
        assert app.screen_stack.count(app.screen) == 1 and app.jobs.looking_at == POD
