"""The ledger of pod runs: a run opened at first sight (back-dated by the uptime), extended, closed when the pod
stops, restarts unseen or is terminated; written only on a change, 0600, capped; a corrupt file refused in words and
left as it is; the demo's kept apart."""

from __future__ import annotations

import errno
import json
import logging
import stat
from pathlib import Path

import pytest

from podtui.core import ledger as ledger_mod
from podtui.core.ledger import Ledger, Run
from podtui.core.paths import Paths
from podtui.core.pod import Account, Pod, PodStatus, Runtime, Snapshot
from podtui.core.services import Services

T0 = 1_780_000_000.0


def pod(pod_id: str = "p1", status: PodStatus = PodStatus.RUNNING, uptime: int | None = 600, **kw: object) -> Pod:
    fields: dict[str, object] = {
        "name": f"name-{pod_id}",
        "gpu_count": 1,
        "gpu_name": "NVIDIA A40",
        "cost_per_hr": 0.36,
        **kw,
    }
    return Pod(
        pod_id,
        status=status,
        runtime=Runtime(uptime) if uptime is not None and status is PodStatus.RUNNING else None,
        **fields,
    )  # type: ignore[arg-type]


def snap(at: float, *pods: Pod, skipped: int = 0) -> Snapshot:
    fixed = tuple(
        Pod(
            **{
                **p.__dict__,
                "run_started": at - p.runtime.uptime_s if p.runtime and p.runtime.uptime_s is not None else None,
            }
        )
        for p in pods
    )
    return Snapshot(Account(), fixed, at, tuple("x; skipped" for _ in range(skipped)))


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "ledger.json"


def test_a_pod_seen_running_starts_its_run_at_its_uptime_and_costs_its_rate(path: Path) -> None:
    book = Ledger(path)
    assert book.observe(snap(T0, pod(uptime=3600)))
    (run,) = book.runs()
    assert (run.start, run.last_seen, run.stop, run.gpu, run.gpu_count) == (T0 - 3600, T0, None, "NVIDIA A40", 1)
    assert run.cost == pytest.approx(0.36)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    # seen again a minute later: in memory, not written (nothing changed but the time)
    before = path.read_text()
    assert not book.observe(snap(T0 + 60, pod(uptime=3660)))
    assert path.read_text() == before and book.runs()[0].last_seen == T0 + 60
    # after RESAVE_AFTER_S the time seen is written
    later = T0 + ledger_mod.RESAVE_AFTER_S + 1
    assert book.observe(snap(later, pod(uptime=int(3600 + later - T0))))
    assert json.loads(path.read_text())["runs"][0]["last_seen"] == later


def test_a_stop_a_restart_unseen_and_a_termination_close_runs(path: Path) -> None:
    book = Ledger(path)
    book.observe(snap(T0, pod("a"), pod("b"), pod("c")))
    book.observe(snap(T0 + 100, pod("a", PodStatus.EXITED), pod("b", uptime=700), pod("c", uptime=700)))
    # b restarted between two looks (its uptime is short again); c is gone from a whole answer
    book.observe(snap(T0 + 5000, pod("a", PodStatus.EXITED), pod("b", uptime=30)))
    runs = {(r.pod_id, r.start): r for r in book.runs()}
    assert runs[("a", T0 - 600)].stop == T0  # last seen running
    assert runs[("b", T0 - 600)].stop == T0 + 100
    assert runs[("b", T0 + 4970)].open
    assert runs[("c", T0 - 600)].stop == T0 + 100
    # a partial answer (a record skipped) closes nothing: the missing pod may still be there
    book.observe(snap(T0 + 5100, skipped=1))
    assert next(r for r in book.runs() if r.pod_id == "b" and r.open)


def test_a_new_rate_splits_the_run_and_an_unknown_rate_costs_nothing(path: Path) -> None:
    book = Ledger(path)
    book.observe(snap(T0, pod(uptime=0)))
    book.observe(snap(T0 + 3600, pod(uptime=3600, cost_per_hr=1.0)))
    book.observe(snap(T0 + 7200, pod(uptime=7200, cost_per_hr=1.0)))
    first, second = book.runs()
    assert (first.cost, second.cost) == (pytest.approx(0.36), pytest.approx(1.0))
    book2 = Ledger(path.parent / "other.json")
    book2.observe(snap(T0, pod(uptime=60, cost_per_hr=None)))
    assert book2.runs()[0].per_hr is None and book2.runs()[0].cost == 0


def test_the_file_is_read_back_and_shared(path: Path, tmp_path: Path) -> None:
    Ledger(path).observe(snap(T0, pod()))
    again = Ledger(path).runs()
    assert len(again) == 1 and again[0].name == "name-p1"
    paths = Paths(tmp_path / "c", tmp_path / "l", path.parent)
    assert Ledger.for_paths(paths) is Ledger.for_paths(paths)


@pytest.mark.parametrize(
    "text", ["{not json", "[]", '{"runs": 3}', "\udcff".encode("utf-8", "surrogatepass").decode("latin-1")]
)
def test_a_corrupt_file_is_refused_in_words_and_left_alone(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True)
    path.write_text(text)
    before = path.read_bytes()
    book = Ledger(path)
    said = book.observe_quietly(snap(T0, pod()))
    assert said is not None and "not used" in said and "move it away" in said
    assert book.observe_quietly(snap(T0 + 10, pod())) is None  # said once
    assert path.read_bytes() == before
    assert len(book.runs()) == 1  # this session's runs, in memory


def test_unreadable_entries_are_kept_as_they_are(path: Path) -> None:
    path.parent.mkdir(parents=True)
    odd = {"pod_id": "x", "start": "yesterday"}
    path.write_text(json.dumps({"version": 1, "runs": [odd, 7]}))
    book = Ledger(path)
    book.observe(snap(T0, pod()))
    runs = json.loads(path.read_text())["runs"]
    assert runs[:2] == [odd, 7] and runs[2]["pod_id"] == "p1"


def test_a_file_that_cannot_be_written_is_said_not_raised(path: Path) -> None:
    path.parent.mkdir(parents=True)
    path.mkdir()  # a directory where the file goes: refused as not a file
    said = Ledger(path).observe_quietly(snap(T0, pod()))
    assert said is not None and "not used" in said


def test_the_ledger_is_capped_oldest_finished_first(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ledger_mod, "MAX_RUNS", 3)
    book = Ledger(path)
    for i in range(5):  # five stretches of one pod, the last still running
        book.observe(snap(T0 + i * 1000, pod(uptime=10)))
        if i < 4:
            book.observe(snap(T0 + i * 1000 + 500, pod(status=PodStatus.EXITED)))
    runs = book.runs()
    assert len(runs) == 3 and runs[-1].open and runs[0].start == T0 + 2000 - 10
    monkeypatch.setattr(ledger_mod, "MAX_BYTES", 900)
    book.observe(snap(T0 + 9000, pod("q"), pod("r"), pod("s")))
    assert len(path.read_text()) <= 900 and all(r.open for r in Ledger(path).runs())


def test_the_demo_keeps_its_ledger_apart(tmp_path: Path) -> None:
    from podtui.core.api.deferred import DeferredApi

    paths = Paths(tmp_path / "c", tmp_path / "l", tmp_path / "d")
    demo = Services(DeferredApi(lambda: None), paths=paths, demo=True)  # type: ignore[arg-type,return-value]
    book = Ledger.for_services(demo)
    assert book is Ledger.for_services(demo) and book.path is None
    book.observe(snap(T0, pod()))
    assert len(book.runs()) == 1 and not (tmp_path / "d").exists()
    real = Services(DeferredApi(lambda: None), paths=paths)  # type: ignore[arg-type,return-value]
    assert Ledger.for_services(real).path == tmp_path / "d" / "ledger.json"


def test_runs_count_only_what_falls_in_a_window() -> None:
    run = Run("p", "n", "A40", 1, 3.6, start=1000.0, last_seen=4600.0)
    assert run.cost_between(0, 1000) == 0 and run.cost_between(2800, 10_000) == pytest.approx(1.8)


def test_a_failed_write_is_said_logged_and_retried(
    path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    book = Ledger(path)
    book.observe(snap(T0, pod()))
    written: list[str] = []

    def full(target: Path, text: str) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(ledger_mod, "write_private", full)
    later = T0 + ledger_mod.RESAVE_AFTER_S + 1
    with caplog.at_level(logging.WARNING, logger="podtui.core.ledger"):
        said = book.observe_quietly(snap(later, pod(uptime=int(600 + later - T0))))
    assert said is not None and "could not write the ledger" in said and "No space left" in said
    assert any("could not write the ledger" in r.getMessage() for r in caplog.records)
    # nothing changed since, but the file is still behind: the next look writes it
    monkeypatch.setattr(ledger_mod, "write_private", lambda target, text: written.append(text))
    assert book.observe(snap(later + 1, pod(uptime=int(601 + later - T0))))
    assert written and json.loads(written[-1])["runs"][0]["last_seen"] == later + 1


def test_flush_writes_what_the_file_lacks(path: Path) -> None:
    book = Ledger(path)
    book.observe(snap(T0, pod()))
    assert not book.flush()  # nothing to write
    book.observe(snap(T0 + 60, pod(uptime=660)))  # in memory only
    assert json.loads(path.read_text())["runs"][0]["last_seen"] == T0
    assert book.flush_quietly() is None
    assert json.loads(path.read_text())["runs"][0]["last_seen"] == T0 + 60


def test_a_refused_file_is_looked_at_again_once_it_changes(path: Path) -> None:
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    book = Ledger(path)
    assert book.observe_quietly(snap(T0, pod())) is not None and book.refused
    path.write_text("{still not json, and longer}")  # changed but still unreadable: still refused, nothing lost
    book.observe(snap(T0 + 10, pod("p2")))
    assert book.refused and path.read_text() == "{still not json, and longer}" and len(book.runs()) == 2
    # mended: what it holds and this session's runs, written together
    kept = Run("old", "old-pod", "NVIDIA A40", 1, 1.0, T0 - 9000, T0 - 8000, T0 - 8000)
    path.write_text(json.dumps({"version": 1, "runs": [kept.as_json()]}))
    assert book.observe_quietly(snap(T0 + 20, pod(), pod("p2"))) is None and not book.refused
    assert {r.pod_id for r in Ledger(path).runs()} == {"old", "p1", "p2"}
    # moved away: a new ledger starts with this session's runs
    path.write_text("garbage")
    book.observe(snap(T0 + 30, pod(), pod("p2")))
    assert book.refused
    path.unlink()
    book.observe(snap(T0 + 40, pod(), pod("p2")))
    assert not book.refused and {r.pod_id for r in Ledger(path).runs()} >= {"p1", "p2"}
