"""The transfer pane with another podtui's transfer in the shared history: listed read-only (cancel, retry and
remove say where to act on it), its outside text made visible and inert, and adopted once that podtui is gone."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from podtui.transfer import leftovers, owner
from podtui.transfer.history import INTERRUPTED, TransferHistory
from podtui.transfer.job import TransferJob
from podtui.transfer.runners import RUNNERS
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.transfers import TransfersScreen
from tests.helpers.pilot import loaded, wait_until
from tests.helpers.sim import DEMO_IDS

NASTY = "run\x1b[2J\u202egpj.exe"  # a file name that clears the screen and flips the text after it


async def test_another_podtuis_transfer_is_shown_read_only_then_adopted(
    make_app: Callable[..., PodtuiApp], other_podtui: subprocess.Popen[bytes], tmp_path: Path
) -> None:
    history = tmp_path / "data" / "transfers.json"
    theirs = TransferJob(
        DEMO_IDS["idle"],
        "pull",
        f"outputs/{NASTY}",
        str(tmp_path),
        pod_name="eval-a100",
        state="transferring",
        route="console",
        error="tar: \x1b]0;pwned\x07 cannot open",
        done_bytes=10,
        total_bytes=100,
        owner={
            "pid": other_podtui.pid,
            "started": leftovers.start_time(other_podtui.pid),
            "boot": owner.boot_id(),
            "token": "them",
        },
    )
    TransferHistory(history).save([theirs])
    app = make_app(transfer_history=history, transfer_work_dir=tmp_path / "work")
    async with app.run_test(size=(130, 34)) as pilot:
        await loaded(pilot, app)
        await pilot.press("t")
        await wait_until(pilot, lambda: isinstance(app.screen, TransfersScreen))
        screen = app.screen
        await wait_until(pilot, lambda: screen.query_one(DataTable).row_count == 1)
        detail = str(screen.query_one("#detail", Static).render())
        assert f"run by another podtui (pid {other_podtui.pid})" in detail
        assert "\x1b" not in detail and "\u202e" not in detail and "\x07" not in detail
        assert "\\x1b[2J<U+202E>gpj.exe" in detail and "\\x1b]0;pwned\\x07" in detail
        row = screen.query_one(DataTable).get_row_at(0)
        assert "\x1b" not in str(row[0]) and "transferring (elsewhere)" in str(row[7])
        for key in ("x", "r", "d"):
            await pilot.press(key)
            await pilot.pause()
        said = [n.message for n in app._notifications]
        assert sum("run by another podtui" in m and "there" in m for m in said) == 3, said
        assert TransferHistory(history).load()[0].state == "transferring"  # nobody wrote over it
        other_podtui.kill()
        other_podtui.wait()
        queue = app.transfers.queue()
        await wait_until(pilot, lambda: (queue.get(theirs.id) or theirs).state == "failed", 10)  # the watcher
        adopted = queue.get(theirs.id)
        assert adopted is not None and queue.mine(adopted) and adopted.error == INTERRUPTED and adopted.retryable
        await wait_until(pilot, lambda: "run by" not in str(screen.query_one("#detail", Static).render()))


def owned_by(proc: subprocess.Popen[bytes], **kw: object) -> dict[str, object]:
    return {"pid": proc.pid, "started": leftovers.start_time(proc.pid), "boot": owner.boot_id(), "token": "them", **kw}


async def test_a_transfer_its_podtui_removed_leaves_the_pane(
    make_app: Callable[..., PodtuiApp], other_podtui: subprocess.Popen[bytes], tmp_path: Path
) -> None:
    """Removed by the podtui that ran it: its row goes from the pane shown now, and from the pane opened later; the
    transfers still listed stay. The user's own `d` removes the row in the same way."""
    history = tmp_path / "data" / "transfers.json"
    who = owned_by(other_podtui)
    theirs = [
        TransferJob(DEMO_IDS["idle"], "pull", f"outputs/{name}", str(tmp_path), state=state, owner=who)
        for name, state in (("a.bin", "verified"), ("b.bin", "failed"), ("c.bin", "cancelled"), ("d.bin", "verified"))
    ]
    TransferHistory(history).save(theirs, me=who)
    app = make_app(transfer_history=history, transfer_work_dir=tmp_path / "work")
    async with app.run_test(size=(130, 34)) as pilot:
        await loaded(pilot, app)
        queue = app.transfers.queue()
        TransferHistory(history).save([], removed={theirs[0].id}, me=who)  # before the pane was ever opened
        queue.refresh()
        await pilot.press("t")
        await wait_until(pilot, lambda: isinstance(app.screen, TransfersScreen))
        screen = app.screen
        assert isinstance(screen, TransfersScreen)
        table = screen.query_one(DataTable)
        await wait_until(pilot, lambda: table.row_count == 3)
        for gone in theirs[1:3]:  # while it is shown: a failed one, a cancelled one
            TransferHistory(history).save([], removed={gone.id}, me=who)
            queue.refresh()  # what the watcher does every second
            await wait_until(pilot, lambda gone=gone: gone.id not in table.rows and gone.id not in screen.jobs)
        assert list(table.rows) == [theirs[3].id] and queue.get(theirs[3].id) is not None
        title = str(screen.query_one("#title", Static).render())
        assert "1 verified" in title and "failed" not in title and "cancelled" not in title
        own = queue.add(TransferJob(DEMO_IDS["idle"], "pull", "never.bin", str(tmp_path)))
        assert queue.cancel(own.id)
        # listed, and ended (cancelled, or failed first: the pod has no SSH): only a finished one can be removed
        await wait_until(pilot, lambda: own.id in table.rows and (queue.get(own.id) or own).finished)
        table.move_cursor(row=table.get_row_index(own.id))
        await pilot.press("d")
        await wait_until(pilot, lambda: own.id not in table.rows)
        assert list(table.rows) == [theirs[3].id] and queue.get(own.id) is None


async def test_a_transfer_of_a_podtui_on_another_machine_is_shown_never_adopted(
    make_app: Callable[..., PodtuiApp], tmp_path: Path
) -> None:
    """A home shared with another machine: whether that podtui runs cannot be told from here (its pid is not this
    machine's), so its transfer is listed, said to be so, and never taken over, even with no such pid here."""
    gone = subprocess.Popen(["true"])
    gone.wait()
    history = tmp_path / "data" / "transfers.json"
    far = {"host": "build\x1b[2J-box", "pid": gone.pid, "started": "1", "boot": "their-boot", "token": "far"}
    theirs = TransferJob(DEMO_IDS["idle"], "pull", "outputs/x.bin", str(tmp_path), state="transferring", owner=far)
    TransferHistory(history).save([theirs], me=far)
    app = make_app(transfer_history=history, transfer_work_dir=tmp_path / "work")
    async with app.run_test(size=(130, 34)) as pilot:
        await loaded(pilot, app)
        await pilot.press("t")
        await wait_until(pilot, lambda: isinstance(app.screen, TransfersScreen))
        screen = app.screen
        await wait_until(pilot, lambda: screen.query_one(DataTable).row_count == 1)
        queue = app.transfers.queue()
        queue.refresh()
        listed = queue.get(theirs.id)
        assert listed is not None and not queue.mine(listed) and listed.state == "transferring"
        detail = str(screen.query_one("#detail", Static).render())
        assert "run by a podtui on host build\\x1b[2J-box" in detail and "never takes its transfers over" in detail
        assert "\x1b" not in detail
        assert "transferring (elsewhere)" in str(screen.query_one(DataTable).get_row_at(0)[7])
    assert TransferHistory(history).load()[0].owner == far  # nobody wrote over it


async def test_a_held_terminate_is_said_and_another_machines_transfer_can_be_forgotten(
    make_app: Callable[..., PodtuiApp], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A "then terminate" held by another machine's podtui (whose end this one can never see): a notification and
    the marked job's detail line say what holds it and how to let go; `d` on that transfer asks, then forgets it
    (from the list and the shared history only), and the terminate is decided again."""

    def execute(job: TransferJob, reporter: object, ctx: object) -> None:  # every transfer verifies at once
        job.final_path, job.checksum = str(tmp_path / job.label), "ab" * 32

    for runner in RUNNERS.values():
        monkeypatch.setattr(runner, "run", execute)
        monkeypatch.setattr(runner, "landed", lambda job: True)
    history = tmp_path / "data" / "transfers.json"
    far = {"host": "build\x1b[2J-box", "pid": 4242, "started": "1", "boot": "their-boot", "token": "far"}
    theirs = TransferJob(
        DEMO_IDS["idle"], "pull", "outputs/x.bin", str(tmp_path), pod_name="eval-a100", state="transferring", owner=far
    )
    TransferHistory(history).save([theirs], me=far)
    app = make_app(transfer_history=history, transfer_work_dir=tmp_path / "work")
    async with app.run_test(size=(130, 34)) as pilot:
        await loaded(pilot, app)
        await pilot.press("t")
        await wait_until(pilot, lambda: isinstance(app.screen, TransfersScreen))
        screen = app.screen
        assert isinstance(screen, TransfersScreen)
        queue = app.transfers.queue()
        mine = queue.add(
            TransferJob(
                DEMO_IDS["idle"], "pull", "small.txt", str(tmp_path), pod_name="eval-a100", terminate_after=True
            )
        )
        await wait_until(pilot, lambda: (queue.get(mine.id) or mine).state == "verified")
        table = screen.query_one(DataTable)
        await wait_until(pilot, lambda: table.row_count == 2)
        held = "then terminate held: podtui pid 4242 on host build\\x1b[2J-box is still pulling x.bin from eval-a100"
        await wait_until(pilot, lambda: any(held in n.message for n in app._notifications))
        said = [n.message for n in app._notifications if "then terminate held" in n.message]
        assert len(said) == 1 and "press d" in said[0] and "\x1b" not in said[0], said
        table.move_cursor(row=table.get_row_index(mine.id))
        await pilot.pause()
        line = str(screen.query_one("#detail", Static).render())
        assert "then terminate the pod: waits, as podtui pid 4242 on host build\\x1b[2J-box is still pulling" in line
        assert "cannot be told from here" in line and "\x1b" not in line
        table.move_cursor(row=table.get_row_index(theirs.id))
        await pilot.pause()
        assert "(if it has stopped, d forgets it here)" in str(screen.query_one("#detail", Static).render())
        for answer in ("n", "y"):  # asked first; no leaves it listed
            await pilot.press("d")
            await wait_until(pilot, lambda: type(app.screen).__name__ == "ConfirmScreen")
            body = str(app.screen.query_one("#body", Static).render())
            assert "goes on with the transfer" in body and "nothing is stopped" in body and "\x1b" not in body
            await pilot.press(answer)
            await wait_until(pilot, lambda: type(app.screen).__name__ != "ConfirmScreen")
            if answer == "n":
                assert app.screen is screen and theirs.id in table.rows and queue.get(theirs.id) is not None
        await wait_until(pilot, lambda: theirs.id not in table.rows and queue.get(theirs.id) is None)
        await wait_until(
            pilot,
            lambda: any(
                'every download marked "then terminate" from eval-a100 is verified' in n.message
                for n in app._notifications
            ),
        )
        await wait_until(pilot, lambda: type(app.screen).__name__ == "TerminateScreen")  # asked, as marked
        queue.flush()
    assert [j.id for j in TransferHistory(history).load()] == [mine.id]
