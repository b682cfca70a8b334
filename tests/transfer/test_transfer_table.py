"""The transfer table (widgets/transfer_table.py) with real transfers through the simulator: its bar keeps its two
parts apart on the cursor row in the light and dark themes, its columns fit 80 columns so end and home move along
the rows and nothing scrolls sideways, a transfer added from the UI is selected, and a table set to one pod lists
that pod's transfers only, its keys working away from the transfers screen."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from rich.style import Style
from textual.app import ComposeResult
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import Input

from podtui.core.api import V2Api
from podtui.sim.simulator import Simulator
from podtui.transfer.job import TransferJob
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.add_transfer import AddTransferScreen
from podtui.ui.screens.transfers import TransfersScreen
from podtui.ui.transfer_view import ARROW, COLUMNS, FILE, POD, PROGRESS, STATE, detail, fit_columns
from podtui.ui.widgets.transfer_table import TransferGrid, TransferTable
from tests.helpers.pilot import loaded, wait_until
from tests.helpers.sim import DIRECT_POD, GATEWAY_POD, pod_id, pod_workspace


@pytest.fixture
def slow_relay(full_sim: Simulator) -> object:
    """runpodctl's bytes at 400 kB/s: a 4 MB download is under way for ten seconds or so."""
    full_sim.relay.rate_bytes_per_s = 400_000
    yield
    full_sim.relay.rate_bytes_per_s = None


def big_file(full_sim: Simulator, sim_api: V2Api, name: str = "adapter.safetensors") -> None:
    with (pod_workspace(full_sim, sim_api, GATEWAY_POD) / name).open("wb") as f:
        f.truncate(4_000_000)  # sparse: nothing to store


def small_files(full_sim: Simulator, sim_api: V2Api, *names: str) -> None:
    ws = pod_workspace(full_sim, sim_api, GATEWAY_POD)
    for name in names:
        (ws / name).write_text(f"{name}\n")


async def open_transfers(pilot: Pilot[None], app: PodtuiApp) -> TransfersScreen:
    await pilot.press("t")
    await wait_until(pilot, lambda: isinstance(app.screen, TransfersScreen))
    await pilot.pause()
    assert isinstance(app.screen, TransfersScreen)
    return app.screen


def bar_colours(grid: TransferGrid, y: int) -> list[Style]:
    """The styles the bar's line is drawn in on row `y` (0 is the first row under the heading)."""
    return [s.style for s in grid.render_line(1 + y) if "━" in s.text and s.style is not None]


@pytest.mark.parametrize("theme", ["textual-dark", "textual-light"])
async def test_the_bar_on_the_cursor_row_shows_how_far_it_got(
    runpodctl_app: Callable[[], PodtuiApp],
    full_sim: Simulator,
    sim_api: V2Api,
    tmp_path: Path,
    slow_relay: object,
    theme: str,
) -> None:
    """A download under way, on the cursor row: the bar's filled part in the cursor's text colour, the rest in
    another (it used to be all the cursor's colour: 40% looked like 100%); off the cursor, in the theme's colours."""
    big_file(full_sim, sim_api)
    small_files(full_sim, sim_api, "notes.txt")
    app = runpodctl_app()
    async with app.run_test(size=(100, 30)) as pilot:
        app.theme = theme
        await loaded(pilot, app)
        pid = pod_id(sim_api, GATEWAY_POD)
        queue = app.transfers.queue()
        done = queue.add(TransferJob(pid, "pull", "notes.txt", str(tmp_path), route_choice="console"))
        assert queue.wait([done.id], 60)
        big = queue.add(TransferJob(pid, "pull", "adapter.safetensors", str(tmp_path), route_choice="runpodctl"))
        screen = await open_transfers(pilot, app)
        grid = screen.query_one(TransferGrid)
        await wait_until(pilot, lambda: big.id in grid.rows, 30)
        grid.move_cursor(row=grid.get_row_index(big.id))

        def shown_percent() -> float:
            job = screen.table.jobs[big.id]
            return job.percent or 0.0 if job.state == "transferring" else 0.0

        await wait_until(pilot, lambda: 10 <= shown_percent() <= 80, 60)
        await pilot.pause()
        cursor = grid.get_component_rich_style("datatable--cursor")
        line = bar_colours(grid, grid.get_row_index(big.id))
        colours = {s.color for s in line}
        assert len(colours) == 2, line  # filled, and not yet
        assert line[0].color == cursor.color and line[-1].color != cursor.color
        assert all(s.bgcolor == cursor.bgcolor for s in line)
        verified = bar_colours(grid, grid.get_row_index(done.id))  # off the cursor: the theme's "good" colour
        assert len({s.color for s in verified}) == 1 and verified[0].color != cursor.color

        screen.set_focus(None)  # the table loses the focus: the cursor's blurred colours
        await pilot.pause()
        assert not grid.has_focus
        blurred = grid.get_component_rich_style("datatable--cursor")
        assert blurred.bgcolor != cursor.bgcolor
        line = bar_colours(grid, grid.get_row_index(big.id))
        assert len({s.color for s in line}) == 2 and line[0].color == blurred.color, line
        queue.cancel(big.id)


async def test_end_and_home_move_along_the_rows_at_80_columns(
    runpodctl_app: Callable[[], PodtuiApp], full_sim: Simulator, sim_api: V2Api, tmp_path: Path
) -> None:
    """At 80x24 the columns fit the width (none to scroll to), and end and home go to the last and first transfer
    instead of scrolling sideways."""
    names = [f"checkpoint-step-{n:04d}-with-a-long-name.safetensors" for n in range(6)]
    small_files(full_sim, sim_api, *names)
    app = runpodctl_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, app)
        pid = pod_id(sim_api, GATEWAY_POD)
        queue = app.transfers.queue()
        jobs = [queue.add(TransferJob(pid, "pull", n, str(tmp_path), pod_name=GATEWAY_POD)) for n in names]
        assert queue.wait([j.id for j in jobs], 60)
        screen = await open_transfers(pilot, app)
        grid = screen.query_one(TransferGrid)
        await wait_until(pilot, lambda: grid.row_count == len(jobs))
        assert grid.has_focus and grid.cursor_row == 0
        assert grid.virtual_size.width <= grid.scrollable_content_region.width and grid.max_scroll_x == 0
        await pilot.press("end")
        assert grid.cursor_row == len(jobs) - 1 and grid.scroll_x == 0
        assert screen.table.current is not None and screen.table.current.id == jobs[-1].id
        await pilot.press("home")
        assert grid.cursor_row == 0 and grid.scroll_x == 0


async def test_a_transfer_added_from_the_ui_is_selected(
    runpodctl_app: Callable[[], PodtuiApp], full_sim: Simulator, sim_api: V2Api, tmp_path: Path
) -> None:
    small_files(full_sim, sim_api, "a.txt", "b.txt", "c.txt", "new.txt")
    app = runpodctl_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await loaded(pilot, app)
        for _ in range(10):  # the dialog opens on the pod selected in the list
            pod = app.navigator.selected_pod()
            if pod is not None and pod.name == GATEWAY_POD:
                break
            await pilot.press("j")
        pid = pod_id(sim_api, GATEWAY_POD)
        queue = app.transfers.queue()
        before = [queue.add(TransferJob(pid, "pull", n, str(tmp_path), pod_name=GATEWAY_POD)) for n in "abc"]
        screen = await open_transfers(pilot, app)
        grid = screen.query_one(TransferGrid)
        await wait_until(pilot, lambda: grid.row_count == len(before))
        assert grid.cursor_row == 0
        await pilot.press("a")
        await wait_until(pilot, lambda: isinstance(app.screen, AddTransferScreen))
        for selector, text in (("#remote", "new.txt"), ("#local", str(tmp_path / "new"))):
            box = app.screen.query_one(selector, Input)
            box.value = text
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: app.screen is screen)
        added = [j for j in queue.jobs() if j.label == "new.txt"]
        assert len(added) == 1
        await wait_until(pilot, lambda: grid.current_key == added[0].id)
        assert grid.cursor_row == grid.row_count - 1 == len(before)


class Holder(Screen[None]):
    """A screen holding one transfer table set to a pod, as the pod's pane holds it."""

    def __init__(self, pod: str) -> None:
        super().__init__()
        self.pod = pod

    def compose(self) -> ComposeResult:
        yield TransferTable(self.pod)


async def test_a_table_set_to_a_pod_lists_its_transfers_only(
    runpodctl_app: Callable[[], PodtuiApp], full_sim: Simulator, sim_api: V2Api, tmp_path: Path
) -> None:
    small_files(full_sim, sim_api, "mine.txt", "later.txt")
    app = runpodctl_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, app)
        here, there = pod_id(sim_api, GATEWAY_POD), pod_id(sim_api, DIRECT_POD)
        queue = app.transfers.queue()
        mine = queue.add(TransferJob(here, "pull", "mine.txt", str(tmp_path), pod_name=GATEWAY_POD))
        theirs = queue.add(TransferJob(there, "pull", "missing.bin", str(tmp_path), pod_name=DIRECT_POD))
        assert queue.wait([mine.id, theirs.id], 60)
        await app.push_screen(Holder(here))
        table = app.screen.query_one(TransferTable)
        grid = table.query_one(TransferGrid)
        await wait_until(pilot, lambda: [k.value for k in grid.rows] == [mine.id])
        assert [c.label.plain for c in grid.columns.values()][:2] == ["File", ""]  # no Pod column: one pod's
        assert grid.virtual_size.width <= grid.scrollable_content_region.width

        later = queue.add(TransferJob(here, "pull", "later.txt", str(tmp_path), pod_name=GATEWAY_POD))
        other = queue.add(TransferJob(there, "pull", "gone.bin", str(tmp_path), pod_name=DIRECT_POD))
        assert queue.wait([later.id, other.id], 60)
        await wait_until(pilot, lambda: [k.value for k in grid.rows] == [mine.id, later.id])
        assert all(j.pod_id == here for j in table.jobs.values())

        grid.focus()  # the table's keys work away from the transfers screen: d removes the finished one
        grid.move_cursor(row=grid.get_row_index(later.id))
        await pilot.press("d")
        await wait_until(pilot, lambda: later.id not in grid.rows and queue.get(later.id) is None)

        table.set_pod(there)
        await pilot.pause()
        assert [k.value for k in grid.rows] == [theirs.id, other.id]
        table.set_pod(None)
        await pilot.pause()
        assert {k.value for k in grid.rows} == {mine.id, theirs.id, other.id}
        assert "Pod" in [c.label.plain for c in grid.columns.values()]


@pytest.mark.parametrize("width", [60, 79, 99, 119, 129, 199])
@pytest.mark.parametrize("pod", [True, False])
def test_the_columns_fit_the_width(width: int, pod: bool) -> None:
    """Every size podtui must work at, the pod's pane beside the list (about 60 columns) included: what is shown fits
    (each column padded by one either side), the names, the bar and the state always; the rest as room allows."""
    fitted = dict(fit_columns(width, pod))
    assert sum(w + 2 for w in fitted.values()) <= width
    assert {FILE, ARROW, PROGRESS, STATE} <= set(fitted) and (POD in fitted) == pod
    assert fitted[PROGRESS] >= 10 + 5 and fitted[FILE] >= 12
    if width >= 129:
        assert set(fitted) == set(range(len(COLUMNS))) - ({POD} if not pod else set())


def test_a_line_under_the_table_says_what_the_columns_have_no_room_for() -> None:
    job = TransferJob("p1", "pull", "outputs/a.bin", ".", state="transferring", total_bytes=400_000_000)
    job.done_bytes, job.rate_bytes_per_s, job.eta_s = 132_000_000, 25_000_000, 10
    assert "25 MB/s" not in detail(job, shown=range(len(COLUMNS)))
    narrow = detail(job, shown={i for i, _ in fit_columns(79)})
    assert "· 25 MB/s" in narrow and "· 10s left" in narrow and "132 MB/400 MB" not in narrow  # Size fits at 80
    job.state, job.checksum = "verified", "ab" * 32
    assert f"· sha256 {'ab' * 8}…" in detail(job, shown={i for i, _ in fit_columns(79)})
