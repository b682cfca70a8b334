"""The pod list's columns fit the table's own width: narrower forms first, then the columns of least priority left
out, so nothing scrolls sideways; GPU names as RunPod's console shows them; sorting by GPU; the marks for a pod
with a console open or autostop on."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from rich.cells import cell_len

from podtui.core.api import V2Api
from podtui.core.pod import GpuSample, Pod, PodStatus, Runtime
from podtui.sim.gpu_market import market
from podtui.sim.server import SimApiServer
from podtui.ui.app import PodtuiApp
from podtui.ui.pod_view import (
    AT_ZERO_MARK,
    AUTOSTOP_MARK,
    COLUMNS,
    CONSOLE_MARK,
    LOCKED_MARK,
    NAME_KEPT,
    Layout,
    arrange,
    fit,
    gpu_model,
    gpu_names,
    headings,
    measure,
    row_cells,
)
from podtui.ui.widgets.pod_table import PAD, PodTable
from tests.helpers.pilot import loaded, wait_until
from tests.helpers.sim import DEMO_IDS

ESSENTIAL = {"name", "status", "rate", "cost"}  # what the list shows at 80 columns whatever else goes


@pytest.fixture(autouse=True)
def runpods_gateway(sim: SimApiServer) -> None:
    sim.world.gateway_address = ("ssh.runpod.io", 22)  # the pods' ssh.proxy as RunPod's: SSH reads "proxy+direct"


def keys(layout: Layout) -> list[str]:
    return [COLUMNS[i].key for i, _ in layout]


def used(layout: Layout) -> int:
    return sum(w + 2 * PAD for _, w in layout)


# --- fitting, without a screen ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("room", "shown"),
    [
        (60, ["name", "status", "util", "rate", "cost"]),
        (80, ["name", "status", "gpu", "util", "rate", "uptime", "cost"]),
        (100, ["name", "status", "gpu", "util", "rate", "uptime", "cost", "reach"]),
        (120, [c.key for c in COLUMNS]),
        (200, [c.key for c in COLUMNS]),
    ],
)
def test_the_demos_columns_fit_each_width(api: V2Api, room: int, shown: list[str]) -> None:
    rows = [row_cells(p) for p in api.fetch_snapshot().pods]
    spans = measure(rows, headings("name", False))
    layout = fit(spans, room, PAD)
    assert keys(layout) == shown  # today's order, less what was left out, from the least important up
    assert used(layout) <= room  # nothing to scroll sideways to
    if room == 200:  # room to spare: every column as wide as it wants, headings whole
        assert all(w == spans[i].full for i, w in layout)
    if room <= 100:  # narrower GPU names, shorter headings
        gpu = dict(layout).get(3)
        assert gpu is None or gpu < spans[3].full


def test_columns_narrow_before_any_is_left_out(api: V2Api) -> None:
    """Width by width from 200 down to 40: a column goes only when every column left is at its narrowest, the
    columns go from the least important up, and the name, status, $/hr and cost stay down to 60."""
    rows = [row_cells(p) for p in api.fetch_snapshot().pods]
    spans = measure(rows, headings("name", False))
    by_priority = sorted(range(len(COLUMNS)), key=lambda i: COLUMNS[i].priority)
    for room in range(200, 39, -1):
        layout = fit(spans, room, PAD)
        shown = keys(layout)
        assert used(layout) <= room
        assert set(shown) == {COLUMNS[i].key for i in by_priority[: len(shown)]}  # the least important went
        if len(shown) < len(COLUMNS):  # the next one could not have stayed, every column at its least (the name
            # whole up to NAME_KEPT cells: it is cut only once the columns under the core four are gone)
            wants = [
                min(sp.values, max(sp.least, NAME_KEPT)) if COLUMNS[i].key == "name" else sp.least
                for i, sp in enumerate(spans)
            ]
            assert sum(wants[i] + 2 * PAD for i in by_priority[: len(shown) + 1]) > room
        if room >= 60:
            assert set(shown) >= ESSENTIAL


def test_a_long_name_is_cut_before_the_figures_go() -> None:
    pods = [
        Pod(
            id="abcdefghij0123",
            name="a-very-long-pod-name-from-a-script-that-names-things-verbosely",
            status=PodStatus.RUNNING,
            gpu_count=1,
            gpu_name="NVIDIA A100 80GB PCIe",
            cost_per_hr=1.64,
            runtime=Runtime(uptime_s=100, gpus=(GpuSample("g", 50.0, 10),)),
        )
    ]
    spans = measure([row_cells(p) for p in pods], headings("name", False))
    layout = fit(spans, 80, PAD)
    assert set(keys(layout)) >= ESSENTIAL and used(layout) <= 80
    assert 12 <= dict(layout)[0] < len(pods[0].name)  # cut with "…", never under 12 cells while others remain


def test_without_a_width_every_column_is_whole(api: V2Api) -> None:
    rows = [row_cells(p) for p in api.fetch_snapshot().pods]
    spans = measure(rows, headings("cost", True))
    assert fit(spans, None, PAD) == tuple((i, s.full) for i, s in enumerate(spans))
    assert spans[7].full == cell_len("Cost so far ▼")  # the sorted heading carries its arrow


def test_the_gpu_util_bar_narrows_to_the_percentage() -> None:
    sample = Runtime(uptime_s=0, gpus=(GpuSample("g", 82, 1),))
    util = row_cells(Pod(id="x", name="x", status=PodStatus.RUNNING, runtime=sample))[4]
    assert util.width == 15 and util.plain.endswith(" 82%")
    rooms = range(15, 3, -1)
    widths = [util.fit(room).width for room in rooms]
    assert widths == sorted(widths, reverse=True) and all(w <= room for w, room in zip(widths, rooms, strict=True))
    assert util.fit(4).plain == " 82%" and util.fit(4).right  # the percentage alone, under the others'
    assert util.fit(9).plain == "███▎  82%"  # a bar of 4 cells: 82% of it is 3 and a quarter


# --- GPU names ----------------------------------------------------------------------------------------------

REAL_NAMES = [  # v2's GPU type ids as RunPod lists them, and what the list shows wide and narrow
    ("NVIDIA GeForce RTX 3090", "RTX 3090", "RTX 3090"),
    ("NVIDIA GeForce RTX 4090", "RTX 4090", "RTX 4090"),
    ("NVIDIA GeForce RTX 5090", "RTX 5090", "RTX 5090"),
    ("NVIDIA GeForce RTX 3080 Ti", "RTX 3080 Ti", "RTX 3080 Ti"),
    ("NVIDIA RTX A4000", "RTX A4000", "RTX A4000"),
    ("NVIDIA RTX A5000", "RTX A5000", "RTX A5000"),
    ("NVIDIA RTX A6000", "RTX A6000", "RTX A6000"),
    ("NVIDIA RTX 4000 Ada Generation", "RTX 4000 Ada", "RTX 4000 Ada"),
    ("NVIDIA RTX 6000 Ada Generation", "RTX 6000 Ada", "RTX 6000 Ada"),
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "RTX PRO 6000", "RTX PRO 6000"),
    ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "RTX PRO 6000 WK", "RTX PRO 6000 WK"),
    ("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", "RTX PRO 6000 Max-Q WK", "RTX PRO 6000 Max-Q WK"),
    ("NVIDIA L4", "L4", "L4"),
    ("NVIDIA L40S", "L40S", "L40S"),
    ("NVIDIA A40", "A40", "A40"),
    ("NVIDIA A100 80GB PCIe", "A100 80GB PCIe", "A100 PCIe"),
    ("NVIDIA A100-SXM4-80GB", "A100 SXM 80GB", "A100 SXM"),
    ("NVIDIA A100-PCIE-40GB", "A100 PCIe 40GB", "A100 PCIe"),
    ("NVIDIA H100 PCIe", "H100 PCIe", "H100 PCIe"),
    ("NVIDIA H100 80GB HBM3", "H100 SXM", "H100 SXM"),
    ("NVIDIA H100 NVL", "H100 NVL", "H100 NVL"),
    ("NVIDIA H200", "H200", "H200"),
    ("NVIDIA B200", "B200", "B200"),
    ("NVIDIA GH200 480GB", "GH200 480GB", "GH200"),
    ("Tesla V100-SXM2-16GB", "V100 SXM 16GB", "V100 SXM"),
    ("Tesla V100-PCIE-16GB", "V100 PCIe 16GB", "V100 PCIe"),
    ("AMD Instinct MI300X OAM", "MI300X", "MI300X"),
    ("Some Future Accelerator", "Some Future Accelerator", "Some Future Accelerator"),  # unknown: kept
    ("NVIDIA", "NVIDIA", "NVIDIA"),  # a maker's word alone is all there is
    ("RTX \\x1b[31m 4090", "RTX \\x1b[31m 4090", "RTX \\x1b[31m 4090"),  # made visible before it gets here
]


@pytest.mark.parametrize(("type_id", "wide", "narrow"), REAL_NAMES)
def test_gpu_names_read_as_runpods_console_names_them(type_id: str, wide: str, narrow: str) -> None:
    assert gpu_model(type_id) == (wide, narrow)


def test_gpu_names_match_the_simulated_catalogues_display_names() -> None:
    for gpu in market():
        assert gpu_model(gpu.id)[0] == gpu.display_name


def test_a_gpu_count_shows_only_when_there_are_several() -> None:
    def on(name: str | None, count: int | None) -> Pod:
        return Pod(id="x", name="x", status=PodStatus.RUNNING, gpu_count=count, gpu_name=name)

    assert gpu_names(on("NVIDIA A100 80GB PCIe", 1)) == ("A100 80GB PCIe", "A100 PCIe")
    assert gpu_names(on("NVIDIA A100 80GB PCIe", 4)) == ("4\u00d7 A100 80GB PCIe", "4\u00d7 A100 PCIe")
    assert gpu_names(on(None, 2)) == ("2\u00d7 ?", "2\u00d7 ?")
    assert gpu_names(on("cpu3c", 0)) == ("CPU", "CPU")
    gpu = row_cells(on("NVIDIA A100 80GB PCIe", 4))[3]
    assert gpu.fit(20).plain == "4\u00d7 A100 80GB PCIe" and gpu.fit(16).plain == "4\u00d7 A100 PCIe"


def test_sorting_by_gpu_sorts_by_the_model_then_the_count() -> None:
    def on(pid: str, name: str | None, count: int | None) -> Pod:
        return Pod(id=pid, name=pid, status=PodStatus.RUNNING, gpu_count=count, gpu_name=name)

    pods = [
        on("a", "NVIDIA GeForce RTX 4090", 1),
        on("b", "NVIDIA GeForce RTX 3090", 8),
        on("c", "NVIDIA GeForce RTX 3090", 2),
        on("d", "NVIDIA A100 80GB PCIe", 1),
        on("e", None, None),  # nothing known: last, either way
        on("f", "NVIDIA GeForce RTX 3090", 1),
        on("g", "cpu3c", 0),
        on("h", "NVIDIA H100 80GB HBM3", 1),
    ]
    # "1 x NVIDIA GeForce RTX 4090" and "8 x ..." sort by count first; the model reads first here
    assert [p.id for p in arrange(pods, "", "gpu", False)] == ["d", "g", "h", "f", "c", "b", "a", "e"]
    assert [p.id for p in arrange(pods, "", "gpu", True)] == ["a", "b", "c", "f", "h", "g", "d", "e"]
    assert [p.id for p in arrange(pods, "h100 sxm", "gpu", False)] == ["h"]  # the filter knows the shown name


# --- the table on screen ------------------------------------------------------------------------------------


def fits_in(table: PodTable, width: int) -> Callable[[], bool]:
    """The table has been laid out in a terminal `width` columns wide."""
    return lambda: 0 < table.region.right <= width


def no_sideways_scroll(table: PodTable) -> None:
    assert not table.show_horizontal_scrollbar
    assert table.virtual_size.width <= table.scrollable_content_region.width


async def test_at_80x24_the_money_columns_are_on_screen(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, app)
        table = app.screen.query_one(PodTable)
        assert set(table.shown_columns) >= ESSENTIAL and "id" not in table.shown_columns
        no_sideways_scroll(table)
        head = table.render_line(0).text
        assert "$/hr" in head and "Cost" in head
        screen = "\n".join(strip.text for strip in app.screen._compositor.render_strips())
        assert "$5.980" in screen and "$8.29" in screen  # sweep-h100x2's rate, eval-a100's cost so far
        assert "2\u00d7 H100 SXM" in screen and "A100 PCIe" in screen


async def test_the_columns_fit_again_when_the_table_is_resized(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(200, 24)) as pilot:
        await loaded(pilot, app)
        table = app.screen.query_one(PodTable)
        for width, height in [(200, 24), (80, 24), (60, 24), (100, 30), (120, 32), (200, 50), (80, 24)]:
            await pilot.resize_terminal(width, height)
            await wait_until(pilot, fits_in(table, width))
            await pilot.pause()
            no_sideways_scroll(table)
            assert "name" in table.shown_columns
            if table.size.width >= 80:
                assert set(table.shown_columns) >= ESSENTIAL
            if table.size.width >= 130:
                assert table.shown_columns == tuple(c.key for c in COLUMNS)
        await pilot.resize_terminal(200, 24)
        await wait_until(pilot, lambda: table.shown_columns == tuple(c.key for c in COLUMNS))


async def test_a_click_on_a_heading_sorts_by_the_column_under_it(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, app)
        table = app.screen.query_one(PodTable)
        table.set_marks({DEMO_IDS["train"]}, set())  # a marks column in front moves every heading
        await pilot.pause()
        for key in ("rate", "cost", "status", "name"):
            x = 1 + len(table._slots)  # the marks column: a pad and a glyph for each mark some pod has
            for i, width in table._layout:
                if COLUMNS[i].key == key:
                    break
                x += width + 2 * PAD
            await pilot.click(PodTable, offset=(x + 1, 0))
            await pilot.pause()
            assert table.sort_key == key, (key, x)


async def test_marks_for_a_console_and_autostop(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, app)
        table = app.screen.query_one(PodTable)

        def row(pod_key: str) -> str:
            return table.render_line(1 + table.visible_ids.index(DEMO_IDS[pod_key])).text

        plain = row("train")
        assert CONSOLE_MARK not in plain and AUTOSTOP_MARK not in plain  # drawn and cached before any mark
        table.set_marks(frozenset({DEMO_IDS["train"]}), frozenset({DEMO_IDS["idle"], DEMO_IDS["train"]}))
        await pilot.pause()
        # the pods' own marks too: sweep-h100x2 is locked, and every pod but eval-a100 loses its data at $0
        assert row("train").startswith(f" {CONSOLE_MARK}{AUTOSTOP_MARK} {AT_ZERO_MARK} llama-lora-3090")
        assert row("idle").startswith(f"  {AUTOSTOP_MARK}   eval-a100")  # each mark in its own cell: they line up
        assert row("stopped").startswith(f"    {AT_ZERO_MARK} notebook-4090")
        assert row("starting").startswith(f"   {LOCKED_MARK}{AT_ZERO_MARK} sweep-h100x2")
        assert table.render_line(0).text.startswith("      Name")
        no_sideways_scroll(table)
        assert set(table.shown_columns) >= ESSENTIAL
        table.set_marks(frozenset(), frozenset({DEMO_IDS["idle"]}))
        await pilot.pause()
        assert row("idle").startswith(f" {AUTOSTOP_MARK}   eval-a100")
        assert row("train").startswith(f"   {AT_ZERO_MARK} llama")
        table.set_marks(frozenset({"not-on-this-account"}), frozenset())
        await pilot.pause()
        assert row("train") == plain  # no column for a pod the list does not have
