"""Marking pods in the list and acting on them all: space, a and escape, the line that counts the marks, the bulk
dialog (one line a pod: its cost and what becomes of its volume; the transfers a terminate cuts off; what cannot be
done and why; the marked pods the filter hides, left out; Cancel focused, the count typed to terminate), the sends
one by one with each failure named, marks that follow the pods, and keys pressed twice."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual.widgets import Button

from podtui.sim.server import SimApiServer
from podtui.transfer.history import TransferHistory
from podtui.transfer.job import TransferJob
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.bulk_action import BulkActionScreen
from podtui.ui.screens.confirm import ConfirmScreen
from podtui.ui.screens.pod_list import PodListScreen
from podtui.ui.widgets.pod_table import PodTable
from tests.helpers.pilot import loaded, polled, wait_until
from tests.helpers.sim import DEMO_IDS

SIZE = (120, 32)


def table(app: PodtuiApp) -> PodTable:
    return app.screen.query_one(PodTable)


def text(app: PodtuiApp, selector: str) -> str:
    return str(app.screen.query_one(selector).render())


async def test_space_a_and_escape(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await pilot.press("space")  # data-prep-a5000, and the cursor moves on
        assert table(app).picked == {DEMO_IDS["bursty"]} and table(app).selected_pod.name == "eval-a100"
        await pilot.press("space", "k", "k", "space")  # eval-a100 marked, data-prep unmarked again
        assert table(app).picked == {DEMO_IDS["idle"]}
        await pilot.press("a")
        assert table(app).picked == set(DEMO_IDS.values())
        await pilot.press("a")  # all marked: a unmarks them all
        assert not table(app).picked
        await pilot.press("slash", *"running", "enter", "a")  # under the filter: the pods it shows
        assert table(app).picked == {DEMO_IDS[k] for k in ("train", "idle", "bursty")}
        await pilot.press("escape")  # the marks go first
        assert not table(app).picked and table(app).filter_text == "running"
        await pilot.press("escape")  # then the filter
        assert table(app).filter_text == ""


async def test_stop_the_marked_pods(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        await pilot.press("a", "s")
        screen = app.screen
        assert isinstance(screen, BulkActionScreen)
        assert app.focused is not None and app.focused.id == "cancel"
        pods, refused = text(app, "#pods"), text(app, "#refused")
        assert "llama-lora-3090  q7x2m9fk4r8t1a  $0.220/hr  50 GB volume kept" in pods.splitlines()
        assert "net volume models-vol kept" in pods
        assert "notebook-4090: notebook-4090 is EXITED; nothing to stop" in refused
        assert "sweep-h100x2 is locked" in refused
        assert "Stop 3 pods" in text(app, "#summary")
        await pilot.press("enter")  # Cancel
        assert isinstance(app.screen, PodListScreen) and table(app).picked  # nothing sent, the marks kept
        assert sim.world.pods[DEMO_IDS["train"]].status == "RUNNING"
        await pilot.press("s", "tab", "enter")  # Stop 3
        await wait_until(pilot, lambda: sim.world.pods[DEMO_IDS["bursty"]].status == "EXITED")
        for key in ("train", "idle", "bursty"):
            assert sim.world.pods[DEMO_IDS[key]].status == "EXITED"
        assert sim.world.pods[DEMO_IDS["starting"]].status == "CREATED"  # locked: not touched
        assert not table(app).picked  # sent: the marks are cleared
        await wait_until(pilot, lambda: any("stopping 3 pods" in n.message for n in app._notifications))


async def test_terminate_the_marked_pods_asks_for_the_count(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await pilot.press("j", "space", "space")  # eval-a100 and llama-lora-3090
        await pilot.press("T")
        assert isinstance(app.screen, BulkActionScreen)
        assert "TERMINATE 2 pods?" in text(app, "#title")
        pods = text(app, "#pods")
        assert "net volume models-vol kept" in pods and "50 GB volume deleted" in pods
        confirm = app.screen.query_one("#confirm", Button)
        assert confirm.disabled
        await pilot.click("#count")
        await pilot.press("3", "enter")  # not the count
        assert isinstance(app.screen, BulkActionScreen) and confirm.disabled
        await pilot.press("backspace", "2")
        assert not confirm.disabled
        await pilot.press("enter")
        await wait_until(pilot, lambda: sim.world.pods[DEMO_IDS["train"]].status == "TERMINATED")
        assert sim.world.pods[DEMO_IDS["idle"]].status == "TERMINATED"
        assert sim.world.pods[DEMO_IDS["bursty"]].status == "RUNNING"


async def test_each_failure_is_named_and_the_others_go_on(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        sim.faults.add("conflict", "the pod is busy", times=1, only=f"POST /v2/pods/{DEMO_IDS['idle']}")
        await pilot.press("space", "space", "space", "s")  # data-prep, eval, llama
        await pilot.press("tab", "enter")
        await wait_until(pilot, lambda: sim.world.pods[DEMO_IDS["train"]].status == "EXITED")
        await wait_until(pilot, lambda: any("stop eval-a100 failed" in n.message for n in app._notifications))
        assert any("the pod is busy" in n.message for n in app._notifications)
        assert sim.world.pods[DEMO_IDS["idle"]].status == "RUNNING"
        assert sim.world.pods[DEMO_IDS["bursty"]].status == "EXITED"


async def test_a_key_pressed_twice_sends_once(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await pilot.press("space", "s", "s")  # the second s reaches the dialog, which has no such key
        assert isinstance(app.screen, BulkActionScreen)
        assert len([s for s in app.screen_stack if isinstance(s, BulkActionScreen)]) == 1
        sends = []
        app.pod_actions.start_bulk = lambda verb, pods: sends.append((verb, [p.id for p in pods]))  # type: ignore[method-assign]
        await pilot.press("tab", "enter", "enter")  # Stop 1, and enter again on what is under it
        assert sends == [("stop", [DEMO_IDS["bursty"]])]


async def test_marks_follow_the_pods(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await pilot.press("a")
        sim.world.terminate(DEMO_IDS["idle"])  # gone from the account, terminated elsewhere
        sim.world.clock.advance(5)
        await polled(pilot, app)
        await wait_until(pilot, lambda: DEMO_IDS["idle"] not in table(app).visible_ids)
        assert DEMO_IDS["idle"] not in table(app).picked and len(table(app).picked) == 4
        await pilot.press("s")
        assert "eval-a100" not in text(app, "#pods") + text(app, "#refused")


async def test_read_only_refuses_the_marked_pods(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app(read_only=True)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        await pilot.press("a", "s")
        assert isinstance(app.screen, PodListScreen) and not isinstance(app.screen, ConfirmScreen)
        assert any("read-only mode" in n.message for n in app._notifications)


async def test_marked_pods_the_filter_hides_are_left_out_and_said(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer
) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, app)
        await pilot.press("a")  # all five marked
        assert "5 marked" in text(app, "#marked") and "hidden" not in text(app, "#marked")
        await pilot.press("slash", *"running", "enter")  # notebook-4090 and sweep-h100x2 out of view
        assert "5 marked (2 hidden by the filter, left out)" in text(app, "#marked")
        await pilot.press("s")
        assert isinstance(app.screen, BulkActionScreen)
        listed = text(app, "#pods")
        assert "notebook-4090" not in listed and "sweep-h100x2" not in listed and not app.screen.query("#refused")
        assert "2 marked pods hidden by the filter are left out" in text(app, "#hidden")
        assert "Stop 3 pods" in text(app, "#summary")
        await pilot.press("tab", "enter")
        await wait_until(pilot, lambda: sim.world.pods[DEMO_IDS["bursty"]].status == "EXITED")
        assert sim.world.pods[DEMO_IDS["stopped"]].status == "EXITED"  # was stopped already: untouched
        assert table(app).picked == {DEMO_IDS["stopped"], DEMO_IDS["starting"]}  # the hidden ones keep their marks
        assert "2 marked (2 hidden" in text(app, "#marked")
        await pilot.press("T")  # every marked pod is hidden: nothing to ask about
        assert isinstance(app.screen, PodListScreen)
        await pilot.press("escape")  # the marks first
        assert not table(app).picked and not app.screen.query_one("#marked").display


async def test_each_pod_is_one_line_at_80_columns(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    sim.world.pods[DEMO_IDS["train"]].name = "a-pod-name-far-too-long-to-fit-beside-the-rest"
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, app)
        await pilot.press("a", "T")
        assert isinstance(app.screen, BulkActionScreen)
        pods = app.screen.query_one("#pods")
        assert pods.size.height == 5  # five pods, five lines: nothing wrapped
        assert "a-pod-name-far-too-lo…" in text(app, "#pods")
        assert app.screen.query_one("#summary").region.bottom <= 24  # the total is above the fold


async def test_digits_typed_with_cancel_focused_go_to_the_count(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer
) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, app)
        await pilot.press("j", "space", "space", "T")  # eval-a100 and llama-lora-3090
        assert isinstance(app.screen, BulkActionScreen) and app.focused is not None and app.focused.id == "cancel"
        await pilot.press("2")
        assert app.screen.query_one("#count").value == "2"  # type: ignore[attr-defined]
        assert not app.screen.query_one("#confirm", Button).disabled
        await pilot.press("enter")
        await wait_until(pilot, lambda: sim.world.pods[DEMO_IDS["train"]].status == "TERMINATED")
        assert sim.world.pods[DEMO_IDS["idle"]].status == "TERMINATED"


async def test_terminating_lists_each_pods_transfers_not_yet_verified(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer, tmp_path: Path
) -> None:
    history = tmp_path / "transfers.json"
    job = TransferJob(DEMO_IDS["bursty"], "pull", "/workspace/ckpt.pt", str(tmp_path), pod_name="data-prep-a5000")
    job.state, job.error = "failed", "the connection dropped"
    TransferHistory(history).save([job])
    app = make_app(transfer_history=history)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        app.transfers.queue()  # the desk reads the history
        await pilot.press("space", "space", "T")  # data-prep-a5000 and eval-a100
        assert isinstance(app.screen, BulkActionScreen)
        pending = text(app, "#pending")
        assert "not yet verified" in pending and "data-prep-a5000: " in pending and "ckpt.pt" in pending
        assert "eval-a100" not in pending
        await pilot.press("escape")
        await pilot.press("s")  # a stop ends no transfer: not listed
        assert isinstance(app.screen, BulkActionScreen) and not app.screen.query("#pending")
