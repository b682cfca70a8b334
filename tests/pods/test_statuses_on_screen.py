"""RunPod's v2 statuses on screen: the pod list and a pod's details write each as RunPod names it, in its colour
role (pod_view.STATUS_STYLE, styled in the theme's palette), and a status RunPod adds later reads "? NAME"."""

from __future__ import annotations

from collections.abc import Callable

from rich.style import Style
from textual.pilot import Pilot
from textual.widgets import Static

from podtui.sim.server import SimApiServer
from podtui.ui import colours
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.pod_detail import PodDetailScreen
from podtui.ui.widgets.pod_table import PodTable
from tests.helpers.pilot import loaded, polled, wait_until
from tests.helpers.sim import DEMO_IDS

SIZE = (130, 29)  # the one-screen flow: Enter opens the details screen (docs/architecture.md#panes)


def drawn(widget: PodTable | Static, label: str) -> Style:
    """The style of the first run of `label` the widget draws."""
    for y in range(widget.size.height):
        for segment in widget.render_line(y):
            if segment.text.strip() == label and segment.style is not None:
                return segment.style
    raise AssertionError(f"{label!r} not drawn")


def in_role(app: PodtuiApp, style: Style, role: str) -> bool:
    """`style` is the palette's for `role` ("bold warn"): its colour and its weight."""
    want = colours.palette(app).style(role)
    return style.color == want.color and bool(style.bold) == bool(want.bold)


async def details_of(pilot: Pilot[None], app: PodtuiApp, name: str) -> Static:
    """Open the details of the pod called `name` from the list (the cursor goes back to the top afterwards)."""
    table = app.screen.query_one(PodTable)
    table.cursor_row = [table._pods[i].name for i in table.visible_ids].index(name)
    await pilot.press("enter")
    await wait_until(pilot, lambda: isinstance(app.screen, PodDetailScreen))
    await pilot.pause()
    return app.screen.query_one("#detail", Static)


async def test_each_status_in_its_colour_on_the_list_and_in_the_details(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer
) -> None:
    sim.world.fail(DEMO_IDS["idle"])  # eval-a100's container died: ERROR, still on its machine
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        table = app.screen.query_one(PodTable)  # the cursor stays on data-prep-a5000 (RUNNING), drawn in its own
        states = {pod.name: pod.state for pod in table._pods.values()}
        assert states == {
            "data-prep-a5000": "RUNNING",
            "eval-a100": "ERROR",
            "llama-lora-3090": "RUNNING",
            "notebook-4090": "EXITED",
            "sweep-h100x2": "PROVISIONING",  # looking for its machine: the first half of its boot
        }
        for label, role in (("PROVISIONING", "bold warn"), ("EXITED", "muted"), ("ERROR", "bold bad")):
            assert in_role(app, drawn(table, label), role), label
        for name, label, role in (
            ("sweep-h100x2", "PROVISIONING", "bold warn"),
            ("notebook-4090", "EXITED", "muted"),
            ("eval-a100", "ERROR", "bold bad"),
        ):
            body = await details_of(pilot, app, name)
            assert in_role(app, drawn(body, label), role), name
            await pilot.press("escape", "g")

        sim.world.clock.advance(sim.world.boot_s / 2 + 1)  # its machine found, its container starting
        await polled(pilot, app)
        assert [p.state for p in table._pods.values() if p.name == "sweep-h100x2"] == ["STARTING"]
        assert in_role(app, drawn(table, "STARTING"), "bold warn")
        body = await details_of(pilot, app, "sweep-h100x2")
        assert in_role(app, drawn(body, "STARTING"), "bold warn")
        # the two steps of a boot read alike, and apart from running, stopped and failed
        palette = colours.palette(app)
        warn, good, muted, bad = (palette.style(r).color for r in ("warn", "good", "muted", "bad"))
        assert len({warn, good, muted, bad}) == 4


async def test_a_status_runpod_adds_later_reads_as_its_name(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer
) -> None:
    sim.faults.add("unknown_status")  # the first pod RunPod lists comes back HIBERNATING, a status podtui never met
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        table = app.screen.query_one(PodTable)
        odd = [p for p in table._pods.values() if p.state == "? HIBERNATING"]
        assert [p.id for p in odd] == [DEMO_IDS["train"]]  # llama-lora-3090, the first in the answer
        assert in_role(app, drawn(table, "? HIBERNATING"), "bold odd")
        assert any("unknown status 'HIBERNATING'" in note for note in app.feed.snapshot.problems)  # type: ignore
        body = await details_of(pilot, app, "llama-lora-3090")
        assert in_role(app, drawn(body, "? HIBERNATING"), "bold odd")
