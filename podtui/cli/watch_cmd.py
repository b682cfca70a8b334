"""`podtui watch`: the polls, idleness, the runway, the daily budget and the alerts, headless, for a tmux pane or a
service (docs/alerts.md#podtui-watch).

One line per alert on stdout (timestamped, made safe to show; --json: one JSON object per line), flushed at once so
`| tee` and a pane see it as it happens; the watch's own state (started, RunPod not answering and back, alerts the
webhook did not take) on stderr. The same CostTicker, detector and router as the app, with the app's toast replaced
by the line; the ledger is fed as the app feeds it, and gives today's spend before the watch started. Transfers run
by the app or `podtui push|pull` elsewhere are heard through the transfer history file. Detached jobs are followed
as the app follows them (docs/jobs.md#after-a-job): a job's end is an alert, then its pulls are downloaded and
verified, then its pod stopped or terminated as `podtui run --then` asked (that is the terminate's confirmation);
each step on a line of stderr. ctrl+c or SIGTERM end it: exit 0; again, or while it closes: at once, exit 130.
RunPod refusing the key ends it: exit 1, after one alert saying so.
"""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, TextIO

from podtui.cli.session import UsageError, open_session
from podtui.core import secret, units
from podtui.core.actions import Verb
from podtui.core.alert_rules import Sink
from podtui.core.alerts import Alert, AlertDetector, AlertRouter, budget_steps, transfer_ended, went_idle
from podtui.core.api.errors import ApiAuthError, ApiConflict, ApiError, ApiUnavailable
from podtui.core.feed import PodFeed
from podtui.core.paths import Paths
from podtui.core.pod import PodStatus, Snapshot
from podtui.core.services import Services
from podtui.core.ticker import CostTicker, spent_today_before
from podtui.core.visible import visible

if TYPE_CHECKING:
    from podtui.core.alerts import Severity
    from podtui.core.jobs.follow import FollowUp
    from podtui.core.jobs.job import Job
    from podtui.core.ledger import Ledger
    from podtui.core.notify.webhook import WebhookSink
    from podtui.transfer.job import TransferJob
    from podtui.transfer.queue import TransferQueue

log = logging.getLogger(__name__)
MIN_INTERVAL_S = 0.5
MAX_BACKOFF_S = 300.0  # RunPod not answering: polls back off to one every five minutes
FLUSH_S = 3.0  # at ctrl+c, alerts still on their way to the webhook get this long
ONCE_FLUSH_S = 90.0  # --once waits for them up to this long: five tries with their backoff, each timing out


def fill_parser(p: argparse.ArgumentParser, common: argparse.ArgumentParser) -> None:
    """`podtui watch`'s parser (its line in `podtui --help` is in podtui.cli.main.READY)."""
    p.description = (
        "Watch the account without the app: a pod turned idle, a pod stopped, failed or terminated without your "
        "asking, the runway under runway_warn_h or runway_critical_h, today's spend (the UTC day) at 80%% and 100%% "
        "of daily_budget, a transfer verified or failed, a pod stuck starting. One line per alert on stdout, and "
        "each alert where config.toml's [alerts] sends it (the terminal's notification, notify-send, a webhook). "
        "Detached jobs (podtui run) are followed: their end is an alert, then their --pull paths are downloaded and "
        "verified, then their pod stopped or terminated as --then asked. "
        "ctrl+c ends it; RunPod refusing the key ends it with exit status 1."
    )
    p.add_argument("--json", action="store_true", help="one JSON object per alert, one per line")
    p.add_argument(
        "--interval",
        type=float,
        default=None,
        metavar="S",
        help="seconds between polls (default: config.toml's poll_interval_s, 5)",
    )
    p.add_argument("--once", action="store_true", help="poll once, say what stands now, and exit")


def main(args: argparse.Namespace, paths: Paths, demo: bool, read_only: bool) -> int:
    # not a mutation: watching changes nothing, so --read-only allows it
    if args.interval is not None and not MIN_INTERVAL_S <= args.interval <= 3600:
        raise UsageError(f"--interval must be from {MIN_INTERVAL_S:g} to 3600 seconds")
    with open_session(demo, paths) as session:
        interval = args.interval if args.interval is not None else session.config.poll_interval_s
        return cmd_watch(session, args.json, interval, args.once, read_only=read_only or session.config.read_only)


class KeyRefused(Exception):
    """RunPod refused the API key: asking again will not change that."""


def cmd_watch(
    session: Services,
    as_json: bool = False,
    interval_s: float = 5.0,
    once: bool = False,
    out: TextIO | None = None,
    err: TextIO | None = None,
    until: threading.Event | None = None,
    read_only: bool = False,
) -> int:
    """Watch until ctrl+c, SIGTERM or `until`; 0 then (a second signal: KeyboardInterrupt, the CLI's 130). --once:
    0 when the poll was answered, 1 when not. RunPod refusing the key: 1. read_only: a job's end is said, and
    nothing is pulled, stopped or terminated."""
    out = out or sys.stdout  # looked up now: the CLI wraps it (podtui.cli.output)
    err = err or sys.stderr
    until = until or threading.Event()
    watch = Watch(session, _LineSink(out, as_json), err, read_only)
    flush_s = FLUSH_S
    ending = _Ending(until)
    watch.asked_to_end = ending.asked
    with _ends_on_signals(ending):
        try:
            watch.started(interval_s)
            while True:
                try:
                    wait = _poll_until(watch, interval_s, once, ending)
                except KeyRefused:
                    flush_s = ONCE_FLUSH_S  # the one alert saying so is worth waiting for
                    return 1
                if wait is None:  # ended while polling
                    break
                if once:
                    flush_s = ONCE_FLUSH_S
                    return 0 if watch.feed.error is None else 1
                if ending.wait(wait):
                    break
        finally:
            ending.closing = True  # a signal now ends the watch at once
            if not ending.hurried:
                watch.leave()
                watch.close(flush_s)
                if watch.ledger is not None:  # an open run's last sight, written every few minutes, goes down now
                    watch.ledger.flush_quietly()
    return 0


POLL_THREAD = "podtui-watch-poll"


class _Ending:
    """Whether the watch is to end: `until` set (a test's thread), or a signal. The signal handler sets plain
    flags and takes no lock: it runs in the main thread between any two bytecodes, perhaps while that thread holds
    the very lock it would wait on (an Event's), which would hang the watch for good."""

    def __init__(self, until: threading.Event) -> None:
        self.until = until
        self.signalled = False
        self.closing = False  # the watch is closing: a signal ends it at once
        self.hurried = False  # ended at once: nothing more is waited for

    def asked(self) -> bool:
        return self.signalled or self.until.is_set()

    def wait(self, seconds: float) -> bool:
        """Up to `seconds`; True as soon as the watch is to end (a signal is seen within a tenth of a second)."""
        end = time.monotonic() + seconds
        while not self.asked():
            left = end - time.monotonic()
            if left <= 0:
                return False
            self.until.wait(min(0.1, left))
        return True


def _poll_until(watch: Watch, interval_s: float, once: bool, ending: _Ending) -> float | None:
    """One poll (its wait before the next), in a thread of its own: None when the watch was ended first.

    ctrl+c must end the watch at once, also while a request hangs; but an exception thrown into a request can
    leave a lock of the HTTP client's held for ever, and closing would then wait on it (docs/alerts.md#podtui-watch).
    So nothing is thrown into the poll: it is left behind, once the step it is taking is whole, and ends with the
    process."""
    if ending.asked():  # asked to end while saying it started, or between two polls: no poll more
        return None
    done = threading.Event()
    waits: list[float] = []
    failures: list[BaseException] = []

    def run() -> None:
        try:
            waits.append(watch.poll(interval_s, once))
        except BaseException as e:  # handed to the watch's thread, which raises it there
            failures.append(e)
        finally:
            done.set()

    threading.Thread(target=run, daemon=True, name=POLL_THREAD).start()
    while not done.wait(0.1):
        if ending.asked():
            watch.leave()  # after the step under way, if any
            if watch.refused:  # the key was refused (said and alerted) meanwhile: that ends it, exit 1
                raise KeyRefused()
            return None
    if failures:
        raise failures[0]
    return waits[0]


@contextmanager
def _ends_on_signals(ending: _Ending) -> Iterator[None]:
    """ctrl+c and SIGTERM end the watch: the watch's thread, which waits on a poll or for the next, sees the flag
    and ends it (never by an exception thrown into what it was doing). Asked again, or while closing (which can
    wait 90 s for a webhook): at once, by KeyboardInterrupt, with nothing more waited for (exit 130)."""
    if threading.current_thread() is not threading.main_thread():
        yield  # a test's thread: it ends the watch with `until`
        return

    def stop(signum: int, frame: FrameType | None) -> None:
        if ending.signalled or ending.closing:
            ending.hurried = True
            raise KeyboardInterrupt()
        ending.signalled = True

    before = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


class _LineSink:
    """The app's toast, for a terminal or a log: one line per alert, flushed."""

    def __init__(self, out: TextIO, as_json: bool) -> None:
        self.out, self.as_json = out, as_json

    def __call__(self, alert: Alert) -> None:
        text = visible(secret.redact(alert.text))  # as the webhook's body: secrets masked, controls inert
        if self.as_json:
            data = alert.as_json()
            data["text"] = text
            if data["pod"] is not None:
                data["pod"] = {k: visible(secret.redact(v or "")) for k, v in data["pod"].items()}
            line = json.dumps(data, ensure_ascii=True)  # every non-ASCII character escaped: inert
        else:
            stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(alert.at))
            line = f"{stamp} {alert.severity:<11} {alert.kind:<17} {text}"
        self.out.write(line + "\n")
        self.out.flush()


class Watch:
    def __init__(self, session: Services, line: Callable[[Alert], None], err: TextIO, read_only: bool = False) -> None:
        self.session, self.err = session, err
        config = session.config
        self.feed = PodFeed()
        self.costs = CostTicker(config, session.clock)
        self.detector = AlertDetector(config, session.clock)
        self.ledger: Ledger | None = None  # fed at every poll, as the app's (docs/spend.md#the-ledger)
        self.webhook: WebhookSink | None = None
        sinks: dict[Sink, Callable[[Alert], None]] = {"app": line}
        rules = config.alerts
        if not session.demo:  # the demo's pods are not the user's: their alerts stay in the lines
            from podtui.core.notify.desktop import NotifySend
            from podtui.core.notify.terminal import TerminalNotifier

            terminal = _terminal()
            if terminal is not None:
                sinks["desktop"] = TerminalNotifier(terminal, rules.osc)
            notify_send = NotifySend()
            if notify_send.available:  # not installed: not announced, not tried
                sinks["notify-send"] = notify_send
            if rules.webhook is not None:
                from podtui.core.notify.webhook import WebhookSink

                self.webhook = WebhookSink(rules.webhook, rules.webhook_format)
                sinks["webhook"] = self.webhook
        self.places = [s for s in sinks if s != "app"]
        self.router = AlertRouter(rules, sinks, session.profile)
        history = session.transfer_history
        self.transfers = TransferEnds(history) if history is not None else None
        self._down_since: float | None = None
        self._undelivered_said = 0  # alerts the webhook gave up on, said on stderr so far
        self._steps = threading.RLock()  # held by a step taken whole (acting()) and by leave(), which waits for it
        self._leaving = False  # ending: no request is started (set before the steps' lock is waited for)
        self.asked_to_end: Callable[[], bool] = lambda: False  # a signal's flag, seen by the poll at once
        self.left = False  # ended: a poll still under way takes no more steps and says nothing more
        self.refused = False  # RunPod refused the key: the watch ends with exit 1
        self.jobs = JobsAfter(self, read_only)  # detached jobs, followed as the app follows them

    def leave(self) -> None:
        """The watch ends: once the step under way (if any) is taken whole, a poll left behind takes no more steps
        and says nothing (docs/alerts.md#podtui-watch)."""
        self._leaving = True
        with self._steps:
            self.left = True

    @property
    def leaving(self) -> bool:
        """Ending, or asked to: no request is started, no pull queued (the next podtui takes them up)."""
        return self._leaving or self.asked_to_end()

    @contextmanager
    def acting(self) -> Iterator[bool]:
        """A step taken whole or not at all: a poll's alerts going out (a line printed has its webhook queued), a
        job's follow-up (its end marked said and then said; a stop sent and recorded), the ledger fed. False: the
        watch has ended, and the step is not taken."""
        with self._steps:
            yield not self.left

    def say(self, text: str) -> None:
        with self._steps:
            if self.left and threading.current_thread().name == POLL_THREAD:
                return  # a poll left behind: the watch has said "stopped"
            stamp = time.strftime("%Y-%m-%d %H:%M:%S")
            self.err.write(f"{stamp} podtui watch: {visible(secret.redact(text))}\n")
            self.err.flush()

    def started(self, interval_s: float) -> None:
        places = ", ".join(p for p in self.places if p != "webhook")
        if self.webhook is not None:
            places = ", ".join(filter(None, [places, self.webhook.where]))
        profile = self.session.profile
        self.say(
            (f"profile {profile}: " if profile else "")
            + f"polling every {units.duration(interval_s)}; alerts here"
            + (f" and to {places}" if places else "")
            + "; ctrl+c ends it"
        )

    def poll(self, interval_s: float, once: bool = False) -> float:
        """One poll and its alerts; how long to wait before the next. KeyRefused when RunPod refused the key (said,
        and alerted)."""
        now = self.session.clock()
        try:
            snap = self.session.api.fetch_snapshot()
        except ApiAuthError as e:
            self.feed.failed(str(e), now, None, key_refused=True)
            with self.acting() as going:  # said and alerted together, or neither
                if going:
                    self.refused = True
                    self.say(f"RunPod refused the key ({e}); stopped (set a valid one: podtui config set-key)")
                    self._route([_key_refused(now)])
            raise KeyRefused() from e
        except ApiError as e:
            retry_after = e.retry_after_s if isinstance(e, ApiUnavailable) else None
            self.feed.failed(str(e), now, retry_after)
            wait = max(retry_after or 0.0, min(MAX_BACKOFF_S, interval_s * 2.0 ** min(self.feed.failures, 10)))
            if self._down_since is None:
                self._down_since = now
            again = "" if once else f"; trying again in {units.duration(wait)}"
            self.say(f"RunPod did not answer ({e}){again}")
            return wait
        if self._down_since is not None:
            self.say(f"RunPod answers again (down {units.duration(max(0.0, now - self._down_since))})")
            self._down_since = None
        first = self.feed.snapshot is None
        self.feed.succeeded(snap)
        self._keep_ledger(snap, first)
        busy, ended = self.transfers.look() if self.transfers is not None else (set(), [])
        idle = self.costs.after_poll(snap, busy)
        now = self.session.clock()
        alerts = self.detector.after_poll(snap, self.feed.stuck(now))
        alerts += [went_idle(e, now) for e in idle]
        alerts += budget_steps(self.costs.tick(snap), now)
        alerts += [a for job in ended if (a := transfer_ended(job, now)) is not None]
        if first:
            self.say(f"watching {len(snap.pods)} pod{'s' if len(snap.pods) != 1 else ''}")
        self._route(alerts)
        self.jobs.after_poll(snap)
        return interval_s

    def _route(self, alerts: list[Alert]) -> None:
        with self.acting() as going:
            if going:
                self.router.route_all(alerts)
                self._say_undelivered()

    def _keep_ledger(self, snap: Snapshot, first: bool) -> None:
        """The runs the watch sees kept, as the app keeps them (a run only the watch saw is in the Spend view); at
        the first poll, what today cost before it, for the budget. A ledger that cannot be written is said once."""
        from podtui.core.ledger import Ledger

        with self.acting() as going:
            if not going:  # ended: the last sight was flushed already
                return
            if self.ledger is None:
                self.ledger = Ledger.for_services(self.session)
            trouble = self.ledger.observe_quietly(snap)
            if trouble:
                self.say(trouble)
            if first:  # not quiet: a watch says where things stand at its first poll
                self.costs.spent_before(*spent_today_before(self.ledger, snap.fetched_at), quiet=False)

    def _say_undelivered(self) -> None:
        if self.webhook is None:
            return
        given_up = len(self.webhook.given_up)
        if given_up > self._undelivered_said:
            n = given_up - self._undelivered_said
            self._undelivered_said = given_up
            self.say(f"{n} alert{'s' if n != 1 else ''} not delivered to {self.webhook.where} (the log says why)")

    def close(self, flush_s: float = FLUSH_S) -> None:
        """Alerts on their way to the webhook get `flush_s` to go; those that did not are said."""
        self.jobs.close()
        if self.webhook is not None:
            waiting = self.webhook.waiting
            if waiting and flush_s > FLUSH_S:
                self.say(f"waiting up to {units.duration(flush_s)} for {self.webhook.where} to take {waiting} alert(s)")
            self.webhook.close(flush_s=flush_s)
            self._say_undelivered()
            left = self.webhook.waiting
            if left:
                self.say(f"{left} alert{'s' if left != 1 else ''} not sent to {self.webhook.where}: stopped first")
        self.say("stopped")


class JobsAfter:
    """The detached jobs the watch follows (docs/jobs.md#after-a-job): after each poll, the pods due a look are asked
    about the jobs remembered running there (core/jobs/checks.py), and every job that ended is followed up
    (core/jobs/follow.py) with the watch's hooks: its alert on stdout and wherever the config sends it, its pulls in a
    transfer queue of the watch's own (made when first needed), its pod stopped or terminated without a question:
    `podtui run --then terminate` was the confirmation."""

    def __init__(self, watch: Watch, read_only: bool) -> None:
        from podtui.core.jobs.checks import JobChecks

        self.watch, self.read_only = watch, read_only
        self.checks = JobChecks(watch.session.config.job_poll_s)
        self._follow: FollowUp | None = None
        self._queue: TransferQueue | None = None
        self._said: dict[str, str] = {}  # pod id: the last trouble said about looking at its jobs

    def follow(self) -> FollowUp:
        if self._follow is None:
            from podtui.core.jobs.follow import FollowUp
            from podtui.core.jobs.job_memory import JobMemory

            self._follow = FollowUp(JobMemory.for_services(self.watch.session), self, self.watch.session.clock)
            if self._follow.memory.refused:
                self.watch.say(self._follow.memory.refused)
        return self._follow

    def after_poll(self, snap: Snapshot) -> None:
        from podtui.core.jobs.checks import look
        from podtui.core.jobs.job import JobError
        from podtui.core.ssh.errors import SshError

        # each follow-up step is taken whole under acting(), so the watch ends before or after it, never amid (an
        # end marked said and not said); ended, the steps left are the next podtui's. The looks go on outside it,
        # as a pod can be slow to answer and ctrl+c must not wait for that.
        with self.watch.acting() as going:
            if not going:
                return
            follow = self.follow()
            follow.pods_seen(snap.pods, whole=not snap.skipped_records)
            due = self.checks.due(snap.pods, follow.running(), waiting=follow.waiting())
        for pod, job_ids in due:
            try:
                seen, gone = look(pod, self.watch.session.ssh_settings(), job_ids)
            except (SshError, JobError, OSError) as e:
                text = f"cannot look at the jobs on {pod.name}: {e}"
                if self._said.get(pod.id) != text:
                    self._said[pod.id] = text
                    self.watch.say(text)
                continue
            with self.watch.acting() as going:
                if not going:
                    return
                self._said.pop(pod.id, None)
                follow.seen(pod.id, pod.name, seen, gone=gone)

    def close(self) -> None:
        if self._follow is not None:
            self._follow.close()
        if self._queue is not None:
            self._queue.close()

    # --- the follow-up's hooks (core/jobs/follow.py FollowHooks) ------------------------------------------

    def alert(self, alert: Alert) -> None:
        self.watch._route([alert])

    def queue(self) -> TransferQueue:
        if self.watch.leaving:  # no pull queued once the watch is ending (it would be cut off at once)
            from podtui.core.jobs.follow import Closing

            raise Closing()
        if self._queue is None:
            from podtui.transfer.history import TransferHistory
            from podtui.transfer.queue import TransferQueue

            path = self.watch.session.transfer_history
            history = TransferHistory(path) if path is not None else None
            self._queue = TransferQueue(self.watch.session.transfer_context(), history).start()
        return self._queue

    def busy(self, pod_id: str) -> bool:
        mine = self._queue.busy_pods() if self._queue is not None else set()
        others = self.watch.transfers.busy if self.watch.transfers is not None else set()
        return pod_id in mine | others

    def stop(self, job: Job, pod_name: str) -> str:
        return self._act("stop", job, pod_name)

    def terminate(self, job: Job, pod_name: str) -> str:
        return self._act("terminate", job, pod_name)

    def _act(self, verb: Verb, job: Job, pod_name: str) -> str:
        from podtui.core import actions
        from podtui.core.jobs.follow import Closing

        session = self.watch.session
        if self.watch.leaving:  # no request started once the watch is ending: the next podtui sends it
            raise Closing()
        try:
            pod = session.api.fetch_pod(job.pod_id)
            if self.watch.leaving:
                raise Closing()
            if verb == "stop" and pod.status is PodStatus.EXITED:  # a stop whose answer was lost got there after all
                return f"stop not needed: {pod_name} is stopped already"
            actions.check(verb, pod)
            self.watch.detector.asked(pod.id, verb)  # its exit is what the job asked for: no "exited" alert
            try:
                actions.perform(session.api, verb, pod)
            except ApiConflict:  # stopped already (another job's stop got there first): what it was for
                if verb != "stop" or not actions.stopped_already(session.api, pod.id):
                    raise
                return f"stop not needed: {pod_name} is stopped already"
        except ApiUnavailable as e:  # no answer: tried again after the next poll (docs/jobs.md#after-a-job)
            self.watch.detector.unasked(job.pod_id, verb)
            self.say(f"job {job.label} on {pod_name}: {verb} not sent yet ({e}); trying again", "warning")
            raise
        except (ApiError, actions.ActionRefused) as e:
            self.watch.detector.unasked(job.pod_id, verb)
            self.say(f"job {job.label} on {pod_name}: {verb} not sent: {e}", "error")
            return f"{verb} not sent: {e}"
        pulled = "every pull verified: " if job.pulls else ""
        self.say(f"job {job.label} on {pod_name} ended; {pulled}{verb} sent, as --then asked", "information")
        return f"{verb} sent"

    def say(self, text: str, severity: Severity) -> None:
        self.watch.say(text if severity == "information" else f"{severity}: {text}")


def _key_refused(now: float) -> Alert:
    text = "RunPod refused the API key: podtui watch stopped (set a valid key: podtui config set-key)"
    return Alert("key_refused", text, "error", now, f"key_refused:{now:.3f}", "key_refused")


def _terminal() -> Callable[[str], None] | None:
    """Where the terminal's notification is written: stdout when it is the terminal (raw: the CLI's wrapper would
    show the sequence instead of sending it); None when it is a pipe or a file, which must not get escapes."""
    raw = getattr(sys.stdout, "inner", sys.stdout)
    try:
        if not raw.isatty():
            return None
    except (AttributeError, ValueError):
        return None

    def write(sequence: str) -> None:
        raw.write(sequence)
        raw.flush()

    return write


class TransferEnds:
    """The transfers of every podtui on this machine, through their history file (read only, never adopted or
    changed here): which pods are transferring (use, for idleness), and which transfers ended since the last look.
    What had ended before the watch started is where things stand, not news."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._stamp: tuple[int, int] | None = None
        self._busy: set[str] = set()
        self._seen: set[tuple[str, str, float | None]] | None = None  # (id, state, finished_at) of ended ones
        self._told = False

    @property
    def busy(self) -> set[str]:
        """The pods being transferred from or to, as of the last look."""
        return set(self._busy)

    def look(self) -> tuple[set[str], list[TransferJob]]:
        from podtui.transfer.job import ACTIVE

        try:
            st = self.path.stat()
        except OSError:
            self._seen = self._seen if self._seen is not None else set()
            return set(), []
        stamp = (st.st_mtime_ns, st.st_size)
        if stamp == self._stamp:
            return self._busy, []
        jobs = self._read()
        if jobs is None:
            return self._busy, []
        self._stamp = stamp
        self._busy = {j.pod_id for j in jobs if j.state in ACTIVE}
        ended = {(j.id, j.state, j.finished_at): j for j in jobs if j.state in ("verified", "failed")}
        if self._seen is None:  # the first look: what ended before the watch is not news
            self._seen = set(ended)
            return self._busy, []
        new = [j for key, j in ended.items() if key not in self._seen]
        self._seen |= set(ended)
        return self._busy, new

    def _read(self) -> list[TransferJob] | None:
        from podtui.core.user_files import NotAFile, read_user_file
        from podtui.transfer.history import MAX_BYTES
        from podtui.transfer.job import TransferJob

        try:
            raw = json.loads(read_user_file(self.path, MAX_BYTES).decode("utf-8"))
            items = raw["jobs"] if isinstance(raw, dict) else None
            if not isinstance(items, list):
                raise ValueError("no list of jobs")
        except (OSError, NotAFile, ValueError, KeyError, UnicodeDecodeError) as e:
            if not self._told:  # said once; the file is the app's to set aside, never touched here
                self._told = True
                log.warning("podtui watch cannot read the transfer history %s: %s", self.path, e)
            return None
        jobs = []
        for item in items:
            try:
                jobs.append(TransferJob.from_json(item))
            except (TypeError, ValueError):
                continue
        return jobs
