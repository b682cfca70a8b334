"""`podtui watch`: as a real process against the simulated API (lines as pods stop and fail without anyone asking,
the runway; the webhook hears them; ctrl+c and SIGTERM end it with 0), and its polls in this process on simulated
time (an idle pod, the daily budget, RunPod not answering and back)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import pytest

from podtui.cli.watch_cmd import ONCE_FLUSH_S, TransferEnds, Watch, _LineSink, cmd_watch
from podtui.core.alert_rules import parse_alert_rules
from podtui.core.alerts import Alert, AlertRouter
from podtui.core.api import V2Api
from podtui.core.config import Config
from podtui.core.services import Services
from podtui.sim.server import SimApiServer
from podtui.transfer.job import TransferJob
from tests.alerts.conftest import Receiver
from tests.helpers.jobs import wait_until
from tests.helpers.sim import DEMO_IDS


class Lines:
    """A stream of a process read in a thread, line by line, so a test can wait for one."""

    def __init__(self, stream: IO[str]) -> None:
        self.q: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=lambda: [self.q.put(line) for line in stream], daemon=True).start()

    def wait_for(self, text: str, timeout: float = 20.0) -> str:
        for line in self.seen:
            if text in line:
                return line
        while True:
            try:
                line = self.q.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"never saw {text!r} in {self.seen}") from None
            self.seen.append(line)
            if text in line:
                return line


def ended(proc: subprocess.Popen[str], err: Lines, timeout_s: float = 20.0) -> int:
    """The watch's exit status once it ends; one that does not within timeout_s is aborted and fails the test with
    what it wrote on stderr, where each of its threads was included."""
    try:
        return proc.wait(timeout_s)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)
        proc.wait(10)
        with contextlib.suppress(AssertionError):
            err.wait_for("never said", timeout=3)
        raise AssertionError("the watch did not end:\n" + "".join(err.seen)) from None


@contextmanager
def watching(sim: SimApiServer, *args: str, config: str = "") -> Iterator[tuple[subprocess.Popen[str], Lines, Lines]]:
    cfg = Path(os.environ["XDG_CONFIG_HOME"]) / "podtui" / "config.toml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text(config)
    empty = Path(os.environ["HOME"]) / "no-programs"  # no notify-send: no test pops a real desktop notification
    empty.mkdir(exist_ok=True)
    env = {**os.environ, "RUNPOD_API_KEY": sim.api_key, "RUNPOD_API_BASE_URL": sim.url, "PATH": str(empty)}
    env["PYTHONFAULTHANDLER"] = "1"  # a watch that never ends is made to show where each thread is (ended())
    env.pop("TMUX", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "podtui", "watch", "--interval", "0.5", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        yield proc, Lines(proc.stdout), Lines(proc.stderr)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)


def test_watch_says_exits_and_the_runway_reaches_the_webhook_and_ends_on_ctrl_c(
    sim: SimApiServer, receiver: Receiver
) -> None:
    config = f'[alerts]\nwebhook = "{receiver.url}"\n'
    with watching(sim, config=config) as (proc, out, err):
        err.wait_for("watching 5 pods")
        started = err.seen[0]
        port = receiver.url.split(":")[2].split("/")[0]
        assert f"127.0.0.1:{port}/…" in started and receiver.url.rsplit("/", 1)[1] not in started  # the URL masked
        assert "notify-send" not in started  # not on its PATH: not announced
        out.wait_for("runway under 24 h")  # already under at the start: a watch says where things stand
        out.wait_for("sweep-h100x2 has been starting for")  # created two simulated days before this clock
        sim.world.stop(DEMO_IDS["train"])  # stopped, but not by anyone who asked podtui
        sim.world.fail(DEMO_IDS["idle"])
        line = out.wait_for("llama-lora-3090 stopped (EXITED) without this podtui asking")
        assert " error " in line
        out.wait_for("eval-a100 failed (ERROR)")
        proc.send_signal(signal.SIGINT)
        assert ended(proc, err) == 0
        err.wait_for("stopped")
    got = receiver.wait_for(4)
    kinds = sorted(r.json()["kind"] for r in got)
    assert kinds == ["exited", "exited", "runway", "stuck"]  # each once
    everything = "\n".join(r.body.decode() + json.dumps(r.headers) for r in got)
    credentials = [v for p in sim.world.pods.values() for k, v in p.env.items() if "TOKEN" in k or "KEY" in k]
    assert credentials  # the demo's pods carry tokens in their environment
    secrets = [sim.api_key, *credentials, *sim.world.secrets.values(), receiver.url]
    secrets += [p.api_key for p in sim.world.pods.values() if getattr(p, "api_key", None)]
    assert not [s for s in secrets if s and len(s) >= 6 and s in everything]


def test_ctrl_c_while_runpod_sits_on_a_request_ends_the_watch_at_once(sim: SimApiServer) -> None:
    """A poll waiting on an answer that takes a minute: ctrl+c ends the watch now, exit 0, nothing thrown into the
    request (docs/alerts.md#podtui-watch); what the poll left behind says nothing after "stopped"."""
    with watching(sim) as (proc, _, err):
        err.wait_for("watching 5 pods")
        fault = sim.faults.add("hang", 60, times=1, only="GET /v2/pods")
        wait_until(lambda: fault.times == 0, 20)  # taken: a poll's request is being sat on
        proc.send_signal(signal.SIGINT)
        assert ended(proc, err) == 0
        err.wait_for("stopped")
        assert err.seen[-1].rstrip().endswith("podtui watch: stopped")


def test_ctrl_c_while_the_watch_waits_for_the_webhook_ends_it_at_once(sim: SimApiServer) -> None:
    """--once waits up to 90 s for the webhook to take its alerts; ctrl+c then ends it at once (exit 130), as a
    second ctrl+c does while a watch ends."""
    hole = socket.socket()  # takes connections, never answers
    hole.bind(("127.0.0.1", 0))
    hole.listen(50)
    config = f'[alerts]\nwebhook = "http://127.0.0.1:{hole.getsockname()[1]}/hook"\n'
    try:
        with watching(sim, "--once", config=config) as (proc, _, err):
            err.wait_for("waiting up to 1m 30s")
            proc.send_signal(signal.SIGINT)
            assert ended(proc, err) == 130
            err.wait_for("podtui: interrupted")
    finally:
        hole.close()


def test_a_signal_landing_while_the_watch_holds_a_lock_never_hangs_it() -> None:
    """The handler runs in the watch's thread between any two bytecodes, maybe inside the lock of the Event the
    watch waits on: it takes no lock, so it returns, and a second signal ends the watch at once."""
    from podtui.cli.watch_cmd import _Ending, _ends_on_signals

    assert threading.current_thread() is threading.main_thread()  # where signal handlers run
    ending = _Ending(threading.Event())
    with _ends_on_signals(ending):
        with ending.until._cond:  # type: ignore[attr-defined]  # as inside until.wait()
            signal.raise_signal(signal.SIGINT)
        assert ending.signalled and ending.asked()
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGTERM)  # asked again: at once
    assert ending.hurried


def test_a_watch_ending_starts_no_stop_and_queues_no_pull(sim: SimApiServer) -> None:
    """Once asked to end (a signal's flag, seen by the poll at once), a job's stop or terminate is not sent and
    no pull is queued: the follow-up is told Closing, and the next podtui takes the step up."""
    from podtui.core.jobs.follow import Closing
    from podtui.core.jobs.job import Job

    watch, _, _ = _watch(sim)
    asked = [False]
    watch.asked_to_end = lambda: asked[0]
    now = time.time()
    job = Job("j1", DEMO_IDS["idle"], "true", "eval", "/workspace", "done", 0, now - 5, now, "stop", (), 0, 0)
    asked[0] = True
    before = len(sim.rest_requests)
    for step in (lambda: watch.jobs.stop(job, "eval-a100"), lambda: watch.jobs.terminate(job, "eval-a100")):
        with pytest.raises(Closing):
            step()
    with pytest.raises(Closing):
        watch.jobs.queue()
    assert sim.rest_requests[before:] == []  # not even a look at the pod


def test_watch_json_ends_on_sigterm_and_says_nothing_from_a_pipe_as_escapes(sim: SimApiServer) -> None:
    with watching(sim, "--json", config='[alerts]\nosc = "both"\n') as (proc, out, err):
        err.wait_for("watching 5 pods")
        sim.world.stop(DEMO_IDS["train"])
        line = out.wait_for('"kind": "exited"')
        data = json.loads(line)
        assert data["pod"] == {"id": DEMO_IDS["train"], "name": "llama-lora-3090"} and data["severity"] == "error"
        proc.send_signal(signal.SIGTERM)
        assert ended(proc, err) == 0
    assert not any("\x1b" in line for line in out.seen)  # stdout is a pipe: no terminal notification in it


def _services(sim: SimApiServer, history: Path | None = None, profile: str | None = None, **config: object) -> Services:
    api = V2Api(sim.api_key, sim.url, timeout_s=10.0, clock=sim.world.clock.now)
    return Services(
        api,
        config=Config(**config),  # type: ignore[arg-type]
        clock=sim.world.clock.now,
        transfer_history=history,
        profile=profile,
    )


def _watch(
    sim: SimApiServer, history: Path | None = None, profile: str | None = None, **config: object
) -> tuple[Watch, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    return Watch(_services(sim, history, profile, **config), _LineSink(out, as_json=False), err), out, err


def test_idle_and_the_daily_budget_on_simulated_time(sim: SimApiServer) -> None:
    watch, out, _ = _watch(sim, daily_budget=1.0, alerts=parse_alert_rules({"events": {"runway": [], "stuck": []}}))
    watch.costs.spent_before = lambda day, spent, quiet: None  # type: ignore[method-assign]  # today from the start
    watch.poll(5)
    for _ in range(4):  # eval-a100 sits at 0% GPU: idle after 15 simulated minutes
        sim.world.clock.advance(300)
        watch.poll(5)
    for _ in range(6):
        sim.world.clock.advance(300)
        watch.poll(5)
    lines = out.getvalue().splitlines()
    idle = [line for line in lines if " idle " in line]
    assert len(idle) == 1 and "eval-a100 is idle" in idle[0]
    budget = [line for line in lines if " budget " in line]
    assert [b.split()[2] for b in budget] == ["warning", "error"]  # 80%, then 100%: each once
    assert "100% of today's budget" in budget[1]


def test_runpod_not_answering_is_said_then_its_return(sim: SimApiServer) -> None:
    watch, _, err = _watch(sim)
    watch.poll(5)
    sim.faults.add("status", 502, times=2)
    assert watch.poll(5) == 10.0 and watch.poll(5) == 20.0  # backing off
    assert watch.poll(5) == 5.0
    said = err.getvalue()
    assert said.count("RunPod did not answer") == 2 and "RunPod answers again" in said


def test_transfers_ended_elsewhere_are_heard_through_the_history(sim: SimApiServer, tmp_path: Path) -> None:
    history = tmp_path / "transfers.json"
    old = TransferJob("p1", "pull", "/w/old.bin", "/tmp/old", pod_name="trainer", state="verified", finished_at=1.0)
    history.write_text(json.dumps({"version": 1, "jobs": [old.to_json()]}))
    ends = TransferEnds(history)
    assert ends.look() == (set(), [])  # ended before the watch: not news
    running = TransferJob("p2", "push", "/tmp/a", "/w/a", state="transferring")
    new = TransferJob("p1", "pull", "/w/model.bin", "/tmp/m", state="failed", error="checksums differ", finished_at=2.0)
    history.write_text(json.dumps({"version": 1, "jobs": [old.to_json(), running.to_json(), new.to_json()]}))
    busy, ended = ends.look()
    assert busy == {"p2"} and [j.id for j in ended] == [new.id]
    history.write_text("{ damaged")
    assert ends.look() == ({"p2"}, [])  # said in the log, the file left as it is
    assert history.read_text() == "{ damaged"


def test_the_first_poll_feeds_the_ledger_and_says_the_budget_the_day_passed_before(sim: SimApiServer) -> None:
    watch, out, _ = _watch(sim, daily_budget=1.0, alerts=parse_alert_rules({"events": {"runway": [], "stuck": []}}))
    watch.poll(5)
    assert watch.ledger is not None and {r.pod_id for r in watch.ledger.runs()} >= {DEMO_IDS["train"]}
    assert (Path(os.environ["XDG_DATA_HOME"]) / "podtui" / "ledger.json").exists()  # kept for the Spend view
    assert watch.costs.today_total > 1.0  # the pods ran since midnight (UTC), dated back by their uptime
    budget = [line for line in out.getvalue().splitlines() if " budget " in line]
    assert len(budget) == 1 and "100% of today's budget" in budget[0]  # a watch says where things stand


def test_a_refused_key_ends_the_watch_with_one_alert(sim: SimApiServer) -> None:
    sim.faults.add("unauthorized")
    out, err = io.StringIO(), io.StringIO()
    assert cmd_watch(_services(sim), interval_s=5, out=out, err=err) == 1  # not once: still ends
    said = err.getvalue()
    assert "RunPod refused the key" in said and "did not answer" not in said and "trying again" not in said
    assert " key_refused " in out.getvalue()


def test_once_never_says_trying_again(sim: SimApiServer) -> None:
    sim.faults.add("status", 502)
    err = io.StringIO()
    assert cmd_watch(_services(sim), interval_s=5, once=True, out=io.StringIO(), err=err) == 1
    assert "RunPod did not answer" in err.getvalue() and "trying again" not in err.getvalue()


def test_notify_send_only_where_it_is(sim: SimApiServer) -> None:
    watch, _, err = _watch(sim)  # none on this PATH (tests/alerts/conftest.py)
    assert "notify-send" not in watch.places and "notify-send" not in watch.router.sinks
    watch.started(5)
    assert "notify-send" not in err.getvalue()


def test_alerts_not_delivered_are_said_and_once_waits_the_backoff(sim: SimApiServer, receiver: Receiver) -> None:
    receiver.plan = [500] * 20
    watch, _, err = _watch(sim, alerts=parse_alert_rules({"webhook": receiver.url, "events": {"stuck": []}}))
    webhook = watch.webhook
    assert webhook is not None and webhook.patience_s <= ONCE_FLUSH_S  # five tries with their backoff fit
    webhook.backoff_s, webhook.tries = 0.01, 2
    watch.poll(5, once=True)  # the runway, low from the start
    watch.close(ONCE_FLUSH_S)
    assert len(receiver.got) == 2
    assert "1 alert not delivered to the webhook http://127.0.0.1:" in err.getvalue()


def test_lines_mask_secrets_and_name_the_profile(sim: SimApiServer) -> None:
    token = "podtuiwatchline-token-5e1"
    rules = parse_alert_rules({"webhook": f"https://ntfy.example.com/{token}"})  # registered, as config.toml's is
    hostile = Alert("idle", f"posted to {token}\x1b[2J", "warning", 1.8e9, "o", "q", "p1", f"pod-{token}")
    for as_json in (False, True):
        out = io.StringIO()
        AlertRouter(rules, {"app": _LineSink(out, as_json)}, profile="work").route(hostile)
        line = out.getvalue()
        assert token not in line and "\x1b" not in line
        if as_json:
            data = json.loads(line)
            assert data["profile"] == "work" and token not in data["pod"]["name"] and "\x1b" not in data["text"]
    watch, _, err = _watch(sim, profile="work")
    watch.started(5)
    assert "profile work: polling" in err.getvalue()
