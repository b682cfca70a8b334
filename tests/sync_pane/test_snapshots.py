"""SVG snapshots of the Sync tab (before any sync, and after a sync with failures listed) and of the sync form, at
80x24 (the sync is then a screen of its own), 120x32 and 200x50, on a frozen clock, in UTC.

The finished sync is a showcase: its events are fed to the pod's state in the desk as a sync's thread reports them
(the routes' own output is tested in tests/sync_pane/test_sync_tab.py), so that every figure is the same on every
machine.

Update after reviewing the report: pytest tests/sync_pane/test_snapshots.py --snapshot-update
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Checkbox, TextArea

from podtui.transfer.sync.plan import Copy, Plan
from podtui.transfer.sync.state import SyncResult, SyncSpec
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.sync_form import SyncFormScreen
from tests.helpers.pilot import steady, wait_until
from tests.helpers.sim import DEMO_IDS
from tests.sync_pane.conftest import fill, open_form, shown_result, sync_panel

SIZES = [(80, 24), (120, 32), (200, 50)]
POD = DEMO_IDS["idle"]
ENDED = 1_767_225_600.0 + 14 * 3600 + 3 * 60 + 12  # 2026-01-01 14:03:12 UTC


@pytest.fixture(autouse=True)
def in_utc() -> Iterator[None]:
    """The result's time is shown in local time: UTC here."""
    was = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    yield
    if was is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = was
    time.tzset()


def showcase(home: Path) -> SyncResult:
    """A push to eval-a100 with --delete: five files verified, one deleted, two failed, a symlink skipped."""
    spec = SyncSpec(POD, home / "proj", "proj", delete=True, excludes=("*.ckpt",))
    new = [Copy(p, s, 0, False, "new") for p, s in (("src/data.py", 4_210), ("src/eval.py", 2_980))]
    changed = [
        Copy(p, s, 0, False, "changed")
        for p, s in (
            ("src/train.py", 12_400),
            ("configs/lora.yaml", 640),
            ("README.md", 3_100),
            ("weights/adapter.safetensors", 84_000_000),
        )
    ]
    plan = Plan(
        False,
        True,
        copies=new + changed,
        deletes=["src/old_train.py"],
        unchanged=118,
        ignored=6,
        skipped=[("data/raw", "a symlink to /mnt/raw, out of the folder: the pod's would point elsewhere")],
    )
    verified = [("src/data.py", "a" * 64), ("src/eval.py", "b" * 64), ("src/train.py", "c" * 64)]
    verified += [("configs/lora.yaml", "d" * 64), ("README.md", "e" * 64)]
    failed = [
        ("weights/adapter.safetensors", "it changed while it was copied; sync again to copy it as it is now"),
        ("logs/run-07.txt", "cannot read it: Permission denied"),
    ]
    return SyncResult(
        spec,
        pod_name="eval-a100",
        remote_root="/workspace/proj",
        route="console",
        plan=plan,
        verified=verified,
        deleted=["src/old_train.py"],
        failed=failed,
        attempts=1,
        started=ENDED - 83.4,
        ended=ENDED,
    )


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_before_any_sync(snap_compare: Any, make_app: Callable[..., PodtuiApp], size: tuple[int, int]) -> None:
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        await sync_panel(pilot, app, POD)
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=ready)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_after_a_sync_with_failures(
    snap_compare: Any, make_app: Callable[..., PodtuiApp], isolated_home: Path, size: tuple[int, int]
) -> None:
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        await sync_panel(pilot, app, POD)
        await shown_result(pilot, app, showcase(isolated_home))

    assert snap_compare(app, terminal_size=size, run_before=ready)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_form(snap_compare: Any, make_app: Callable[..., PodtuiApp], proj: Path, size: tuple[int, int]) -> None:
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        await sync_panel(pilot, app, POD)
        form = await open_form(pilot, app)
        await fill(pilot, form, local="~/proj", remote="proj")
        form.query_one("#delete", Checkbox).value = True
        form.query_one("#excludes", TextArea).text = "*.ckpt\nwandb/"
        await pilot.pause()
        await wait_until(pilot, lambda: all(w.is_finished for w in form.workers))  # the folders checked
        assert isinstance(app.screen, SyncFormScreen)
        await steady(pilot, app)

    assert snap_compare(app, terminal_size=size, run_before=ready)
