"""Who owns a transfer, and what the shared history does with jobs of a podtui that still runs (keeps them as
written) and of one that is gone (adopts them), with real processes standing in for the other podtui."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from podtui.transfer import leftovers, owner
from podtui.transfer.history import INTERRUPTED, TransferHistory
from podtui.transfer.job import TransferJob


@pytest.fixture
def other_podtui() -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(["sleep", "60"])
    yield proc
    proc.kill()
    proc.wait()


def owned_by(proc: subprocess.Popen[bytes]) -> dict[str, Any]:
    return {"pid": proc.pid, "started": leftovers.start_time(proc.pid), "boot": owner.boot_id(), "token": "t1"}


def job(state: str, who: dict[str, Any] | None, **kw: Any) -> TransferJob:
    j = TransferJob("pod1", "pull", "outputs/a.bin", "/tmp/x", owner=who, **kw)
    j.state = state  # type: ignore[assignment]
    return j


def test_alive_follows_the_process_and_its_start(other_podtui: subprocess.Popen[bytes]) -> None:
    who = owned_by(other_podtui)
    assert owner.alive(who)
    assert not owner.alive({**who, "started": "1"})  # the pid now names another process
    assert not owner.alive({**who, "boot": "another-boot"})
    assert not owner.alive(None) and not owner.alive("garbage")
    other_podtui.kill()
    other_podtui.wait()
    assert not owner.alive(who)


def test_a_queue_in_this_process_is_alive_until_released() -> None:
    me = owner.claim()
    assert owner.alive(me) and owner.same(me, dict(me)) and not owner.same(me, owner.claim())
    owner.release(me)
    assert not owner.alive(me)


def test_load_keeps_a_live_podtuis_jobs_and_adopts_the_rest(other_podtui: subprocess.Popen[bytes],
                                                           tmp_path: Path) -> None:
    path = tmp_path / "transfers.json"
    theirs = [job("transferring", owned_by(other_podtui)), job("queued", owned_by(other_podtui))]
    orphans = [job("transferring", None), job("queued", {**owned_by(other_podtui), "started": "1"})]
    TransferHistory(path).save(theirs + orphans)
    me = owner.claim()
    try:
        loaded = {j.id: j for j in TransferHistory(path).load(me)}
        for j in theirs:  # as written: not failed, not given to anyone
            assert (loaded[j.id].state, loaded[j.id].owner, loaded[j.id].log) == (j.state, j.owner, [])
        assert (loaded[orphans[0].id].state, loaded[orphans[0].id].error) == ("failed", INTERRUPTED)
        assert loaded[orphans[1].id].state == "queued"
        assert all(owner.same(loaded[j.id].owner, me) for j in orphans)
        again = {j.id: j for j in TransferHistory(path).load(owner.claim())}  # another podtui, right after
        assert all(owner.same(again[j.id].owner, me) for j in orphans)  # adopted once, by the first
    finally:
        owner.release(me)


def test_saves_merge_by_id_and_remove_only_their_own(other_podtui: subprocess.Popen[bytes], tmp_path: Path) -> None:
    path = tmp_path / "transfers.json"
    a, b = TransferHistory(path), TransferHistory(path)  # two podtuis, each with its own jobs
    mine = [job("queued", {"pid": os.getpid(), "token": "me"}) for _ in range(3)]
    theirs = [job("transferring", owned_by(other_podtui)) for _ in range(3)]
    a.save(mine)
    b.save(theirs)
    mine[0].state = "verified"
    a.save([mine[1], mine[0]], removed={mine[2].id, theirs[0].id})  # a's view never had b's jobs
    back = {j.id: j for j in TransferHistory(path).load()}
    assert set(back) == {mine[0].id, mine[1].id, *(t.id for t in theirs)}
    assert back[mine[0].id].state == "verified" and back[theirs[0].id].state == "transferring"
    assert b.changed()  # a wrote since b did
    assert (path.stat().st_mode & 0o777, path.with_name("transfers.json.lock").stat().st_mode & 0o777) == \
        (0o600, 0o600)
