"""Who owns a transfer, and what the shared history does with jobs of a podtui that still runs (keeps them as
written) and of one that is gone (adopts them), with real processes standing in for the other podtui."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from podtui.transfer import leftovers, owner
from podtui.transfer.history import INTERRUPTED, NOT_RUN, TransferHistory
from podtui.transfer.job import TransferJob
from tests.helpers.repo import REPO


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


def test_load_keeps_a_live_podtuis_jobs_and_adopts_the_rest(
    other_podtui: subprocess.Popen[bytes], tmp_path: Path
) -> None:
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
    assert (path.stat().st_mode & 0o777, path.with_name("transfers.json.lock").stat().st_mode & 0o777) == (0o600, 0o600)


CHECK_AS_NOBODY = """
import json, os, sys
from podtui.transfer import leftovers  # loaded as root: the interpreter's folders may be closed to nobody
os.setgroups([]); os.setgid(65534); os.setuid(65534)
pid, started = int(sys.argv[1]), sys.argv[2]
print(json.dumps([leftovers.alive(pid, started), leftovers.alive(pid, "1"), leftovers.start_time(pid) == started]))
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="becomes another user to look at root's process")
def test_another_users_process_is_told_apart_by_its_start(other_podtui: subprocess.Popen[bytes]) -> None:
    """kill(pid, 0) on another user's process fails with EPERM: the start time, readable by every user, still says
    whether it is the process recorded or one that got its pid later."""
    started = leftovers.start_time(other_podtui.pid)
    assert started is not None
    out = subprocess.run(
        [sys.executable, "-c", CHECK_AS_NOBODY, str(other_podtui.pid), started],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [True, False, True]  # the same process; a reused pid; start read as nobody


def test_start_time_from_ps_where_there_is_no_proc(
    other_podtui: subprocess.Popen[bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """macOS has no /proc: the start comes from `ps -o lstart=`, so a reused pid is still told apart."""
    if shutil.which("ps") is None:
        pytest.skip("no ps here")
    monkeypatch.setattr(leftovers, "PROC", tmp_path / "no-proc")
    started = leftovers.start_time(other_podtui.pid)
    assert started is not None and not started.isdigit()  # a date, as ps prints it
    assert leftovers.alive(other_podtui.pid, started) and not leftovers.alive(other_podtui.pid, "Thu Jan  1 1970")
    other_podtui.kill()
    other_podtui.wait()
    assert leftovers.start_time(other_podtui.pid) is None and not leftovers.alive(other_podtui.pid, started)


@pytest.mark.parametrize(
    "where",
    [
        {"host": "build-box-7", "boot": "their-boot"},
        {"pidns": "pid:[4026530000]", "boot": "this boot"},  # a container here
        {"host": "build-box-7", "pidns": "pid:[4026530000]", "boot": "their-boot"},
    ],
)
@pytest.mark.parametrize("state", ["queued", "transferring", "waiting_for_code", "verifying"])
def test_an_owner_on_another_machine_or_namespace_is_never_adopted(
    where: dict[str, str], state: str, tmp_path: Path
) -> None:
    """Its pid means nothing here (a home shared between machines or containers): it is shown as written, and
    nobody takes it over, whatever its pid names here (nothing, or this very process)."""
    path = tmp_path / "transfers.json"
    dead = subprocess.Popen(["true"])
    dead.wait()
    where = {**where, "boot": owner.boot_id() if where["boot"] == "this boot" else where["boot"]}
    jobs = [job(state, {**where, "pid": pid, "started": "1", "token": "far"}) for pid in (dead.pid, os.getpid(), 1)]
    TransferHistory(path).save(jobs)
    me = owner.claim()
    try:
        loaded = TransferHistory(path).load(me)
    finally:
        owner.release(me)
    assert [(j.state, j.owner, j.log) for j in loaded] == [(state, j.owner, []) for j in jobs]
    assert all(owner.liveness(j.owner) == "unknown" for j in loaded)
    said = owner.describe(jobs[0].owner)
    assert "cannot look up" in said and "never takes its transfers over" in said and f"pid {dead.pid}" in said
    assert ("on host build-box-7" if "host" in where else "in another container") in said


def test_a_container_of_this_machine_that_restarted_since_is_gone(tmp_path: Path) -> None:
    """The same machine (host), another pid namespace, an earlier boot: whatever ran in that container ended with
    the boot, so its job is adopted like any other whose podtui is gone."""
    far = {
        "host": owner.host(),
        "pidns": "pid:[4026530000]",
        "boot": "an-earlier-boot",
        "pid": 2,
        "started": "1",
        "token": "far",
    }
    TransferHistory(tmp_path / "transfers.json").save([job("transferring", far)])
    assert owner.liveness(far) == "gone"
    (back,) = TransferHistory(tmp_path / "transfers.json").load()
    assert (back.state, back.error) == ("failed", INTERRUPTED)


def test_this_machine_is_recorded_in_the_owner() -> None:
    me = owner.claim()
    owner.release(me)
    assert me["host"] == socket.gethostname() and me["adopts"] is True
    assert me["pidns"] == (os.readlink("/proc/self/ns/pid") if os.path.exists("/proc/self/ns/pid") else None)
    assert owner.claim(adopts=False)["adopts"] is False


@pytest.mark.parametrize("state", ["queued", "waiting_for_code", "transferring", "verifying"])
@pytest.mark.parametrize("adopts", [True, False])
def test_a_gone_clis_unfinished_job_comes_back_failed_never_queued(state: str, adopts: bool, tmp_path: Path) -> None:
    """A `podtui push|pull` (adopts: False) killed while its job waited or ran: the user saw it fail, so it comes back
    failed and retryable, never run hours later by a TUI; a TUI's queued job (adopts: True) runs again."""
    path = tmp_path / "transfers.json"
    dead = subprocess.Popen(["true"])
    dead.wait()
    gone = {**owner.claim(adopts=adopts), "pid": dead.pid, "started": "1", "token": "gone"}
    TransferHistory(path).save([job(state, gone)])
    me = owner.claim()
    try:
        (back,) = TransferHistory(path).load(me)
    finally:
        owner.release(me)
    assert owner.same(back.owner, me)
    if state == "queued" and adopts:
        assert (back.state, back.error) == ("queued", None)
    else:
        assert back.state == "failed" and back.retryable
        assert back.error == (NOT_RUN if state == "queued" else INTERRUPTED)


IN_A_CONTAINER = """
import json, sys, time
from pathlib import Path
from podtui.transfer import owner
from podtui.transfer.history import TransferHistory
from podtui.transfer.job import TransferJob
me = owner.claim()
job = TransferJob("pod1", "pull", "outputs/a.bin", "/tmp/x", owner=me, state=sys.argv[2])
TransferHistory(Path(sys.argv[1])).save([job], me=me)
print(json.dumps(me), flush=True)
sys.stdin.readline()  # alive until the test is done looking
"""


@pytest.mark.skipif(shutil.which("unshare") is None or os.geteuid() != 0, reason="needs unshare and root")
@pytest.mark.parametrize("state", ["queued", "transferring"])
def test_a_podtui_in_another_pid_namespace_is_left_alone(state: str, tmp_path: Path) -> None:
    """A podtui in a container sharing this home: its pid (1 or 2 in there) names another process here, or none.
    Its job is shown as written and never adopted, while it runs and after."""
    path = tmp_path / "transfers.json"
    proc = subprocess.Popen(
        ["unshare", "--pid", "--fork", "--mount-proc", sys.executable, "-c", IN_A_CONTAINER, str(path), state],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    try:
        assert proc.stdout is not None
        theirs = json.loads(proc.stdout.readline())
        assert theirs["pid"] in (1, 2) and theirs["pidns"] != owner.pid_namespace()
        me = owner.claim()
        try:
            (seen,) = TransferHistory(path).load(me)
            assert (seen.state, seen.owner, seen.log) == (state, theirs, [])
            assert owner.liveness(seen.owner) == "unknown" and "in another container" in owner.describe(seen.owner)
        finally:
            owner.release(me)
    finally:
        proc.communicate("\n", timeout=30)
    (after,) = TransferHistory(path).load()  # gone now, but this podtui cannot know it: still left alone
    assert (after.state, after.owner) == (state, theirs)


@pytest.mark.parametrize("then", ["laptop.old-dhcp-name", None])
def test_a_host_name_changed_since_does_not_make_a_podtui_of_this_machine_unknown(
    then: str | None, tmp_path: Path
) -> None:
    """gethostname() changes under a running process (DHCP, macOS network changes): the boot id and the pid
    namespace say it was this machine, so its podtui, now gone, is gone, and its job is adopted."""
    dead = subprocess.Popen(["true"])
    dead.wait()
    was = {
        "host": then,
        "pidns": owner.pid_namespace(),
        "boot": owner.boot_id(),
        "pid": dead.pid,
        "started": "1",
        "token": "old",
    }
    if owner.boot_id() is None:
        pytest.skip("no boot id on this system: the host name is all there is")
    assert owner.liveness(was) == "gone" and not owner.alive(was)
    assert owner.describe(was) == f"another podtui (pid {dead.pid})"
    path = tmp_path / "transfers.json"
    TransferHistory(path).save([job("transferring", was)])
    (back,) = TransferHistory(path).load()
    assert (back.state, back.error) == ("failed", INTERRUPTED)


def test_the_host_name_decides_only_without_a_boot_id(other_podtui: subprocess.Popen[bytes]) -> None:
    alive = {**owned_by(other_podtui), "pidns": owner.pid_namespace()}
    renamed = {**alive, "host": "laptop.old-dhcp-name"}
    if owner.boot_id() is not None:
        assert owner.liveness(renamed) == "alive"  # the same boot: this machine, whatever it was called
    assert owner.liveness({**renamed, "boot": None}) == "unknown"  # nothing else to go by: another machine
    assert owner.liveness({**renamed, "boot": "another-boot"}) == "unknown"  # another name and boot: elsewhere
    assert owner.liveness({**alive, "host": owner.host(), "boot": "another-boot"}) == "gone"  # restarted since
    assert owner.short(renamed) == f"podtui pid {other_podtui.pid}"
    assert owner.short({**renamed, "boot": None}) == f"podtui pid {other_podtui.pid} on host laptop.old-dhcp-name"
