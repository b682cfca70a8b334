"""The app's launch memory is fed off the poll's path: a remember that is slow (a hung data folder) holds up no
poll, and the answers that came meanwhile are not queued up: the newest is handed on when it is done, the older
ones dropped. The app keeps one memory for its whole run, so the file is read once, not on every poll."""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterable

import pytest

from podtui.core.launch_memory import FILE_NAME, LaunchMemory
from podtui.core.pod import Pod
from podtui.sim.server import SimApiServer
from podtui.ui.app import PodtuiApp
from tests.helpers.pilot import loaded, polled, wait_until
from tests.helpers.sim import DEMO_IDS


def _handing_on(app: PodtuiApp) -> bool:
    return any(w.group == "poll-hand-on" and not w.is_finished for w in app.workers)


async def test_a_remember_that_blocks_holds_up_no_poll_and_the_newest_answer_wins(
    sim: SimApiServer, make_app: Callable[..., PodtuiApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()
    handed: list[tuple[Pod, ...]] = []
    remember = LaunchMemory.remember

    def blocking(self: LaunchMemory, pods: Iterable[Pod], seen_at: float) -> bool:
        handed.append(tuple(pods))
        if len(handed) == 1:
            release.wait(60)  # the data folder hangs
        return remember(self, handed[-1], seen_at)

    monkeypatch.setattr(LaunchMemory, "remember", blocking)
    train = DEMO_IDS["train"]
    app = make_app()
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_until(pilot, lambda: app.poller.done >= 1 and len(handed) == 1, 20)
            for name in ("renamed-once", "renamed-twice"):
                with sim.world.lock:
                    sim.world.pods[train].name = name
                await polled(pilot, app)  # lands while the first answer's remember is stuck
            assert len(handed) == 1 and app.feed.snapshot is not None
            assert {p.name for p in app.feed.snapshot.pods if p.id == train} == {"renamed-twice"}
            release.set()
            await wait_until(pilot, lambda: len(handed) == 2 and not _handing_on(app), 20)
            assert len(handed) == 2  # the answer in between was dropped
            assert {p.name for p in handed[1] if p.id == train} == {"renamed-twice"}
            memory = LaunchMemory.for_services(app.services)
            assert memory.find(train).name == "renamed-twice"
    finally:
        release.set()


async def test_the_app_reads_its_launch_memory_once(
    sim: SimApiServer, make_app: Callable[..., PodtuiApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_app(demo=False)
    path = app.services.paths.data_dir / FILE_NAME
    with sim.world.lock:
        seen = next(iter(sim.world.pods))
    reads: list[object] = []
    read = LaunchMemory._read

    def counted(self: LaunchMemory) -> object:
        reads.append(self.path)
        return read(self)

    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, app)
        await wait_until(pilot, lambda: path.exists() and not _handing_on(app))
        monkeypatch.setattr(LaunchMemory, "_read", counted)
        for _ in range(3):
            await polled(pilot, app)
            await wait_until(pilot, lambda: not _handing_on(app))
            gc.collect()  # a memory nobody holds would go, and the next poll would read the file again
        assert reads == []
        assert LaunchMemory(path).find(seen).pod_id == seen
