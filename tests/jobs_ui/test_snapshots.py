"""SVG snapshots of a pod's jobs (the pane's Jobs tab at 120x32 and 200x50, the jobs screen at 80x24) and of a job's
log screen at the three sizes, against the simulator on a frozen clock with job records written in the pod's
/workspace by hand (tests/jobs_ui/records.py).

Update after reviewing the report: pytest tests/jobs_ui/test_snapshots.py --snapshot-update
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from textual.pilot import Pilot

from podtui.core.api import V2Api
from podtui.sim.simulator import Simulator
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.job_log import JobLogScreen
from tests.helpers.job_records import four_jobs
from tests.helpers.jobs_tab import POD, jobs_panel
from tests.helpers.pilot import steady, wait_until
from tests.helpers.sim import pod_workspace

SIZES = [(80, 24), (120, 32), (200, 50)]


@pytest.fixture
def app_with_jobs(make_full_app: Callable[..., PodtuiApp], full_sim: Simulator, sim_api: V2Api) -> PodtuiApp:
    four_jobs(pod_workspace(full_sim, sim_api, "eval-a100"))
    return make_full_app()


async def _listed(pilot: Pilot[None], app: PodtuiApp) -> None:
    panel = await jobs_panel(pilot, app)
    await wait_until(pilot, lambda: len(panel.jobs) == 4 and not app.jobs.listing(POD).loading, 60)
    await steady(pilot, app)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_jobs(snap_compare: Any, app_with_jobs: PodtuiApp, size: tuple[int, int]) -> None:
    async def ready(pilot: Pilot[None]) -> None:
        await _listed(pilot, app_with_jobs)

    assert snap_compare(app_with_jobs, terminal_size=size, run_before=ready)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_job_log(snap_compare: Any, app_with_jobs: PodtuiApp, size: tuple[int, int]) -> None:
    app = app_with_jobs

    async def ready(pilot: Pilot[None]) -> None:
        await _listed(pilot, app)
        await pilot.press("down", "down", "down", "l")  # the oldest job: the fine-tune, its log whole
        await wait_until(pilot, lambda: isinstance(app.screen, JobLogScreen) and app.screen.ended, 60)
        await steady(pilot, app)

    assert snap_compare(app, terminal_size=size, run_before=ready)
