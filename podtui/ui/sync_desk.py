"""The app's side of `podtui sync` (docs/sync.md#the-api): each pod's sync or watch run in a thread worker, one at a
time per pod; what the core reports (its SyncState, on the sync's thread) carried to the event loop as SyncMoved
messages and published on `changed_signal` for the Sync tab; a sync's end said as a transfer's is (an alert);
cancelling on request and when the app ends; and the last sync asked for each pod, for this session, so that "sync
again" is one key.

The core loads with the first sync or the first look at the Sync tab, never for the first frame."""

from __future__ import annotations

import functools
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from textual.app import App
from textual.dom import DOMNode
from textual.message import Message
from textual.signal import Signal

from podtui.core.pod import Pod
from podtui.core.services import Services
from podtui.core.visible import visible
from podtui.ui import keymap
from podtui.ui.needs import Notifies, Opens, RunsWorkers

if TYPE_CHECKING:
    from textual.screen import Screen
    from textual.timer import Timer, TimerCallback

    from podtui.transfer.sync.run import SyncRun
    from podtui.transfer.sync.state import SyncResult, SyncSnapshot, SyncSpec
    from podtui.ui.alert_desk import AlertDesk
    from podtui.ui.needs import PodData
    from podtui.ui.sync_view import PodSync, TellingState

DRAW_EVERY_S = 0.1  # a flood of progress is drawn at most this often; a sync's start and end at once


class SyncMoved(Message):
    """A pod's sync moved (posted from its thread): its state is read again on the event loop. `result`: a sync
    ended so; `finished`: the worker ended (a sync, or a whole watch)."""

    def __init__(self, pod_id: str, result: SyncResult | None = None, finished: bool = False) -> None:
        super().__init__()
        self.pod_id, self.result, self.finished = pod_id, result, finished


class SyncHost(Opens, Notifies, RunsWorkers, Protocol):
    """What the desk needs of the app."""

    @property
    def services(self) -> Services: ...
    @property
    def read_only(self) -> bool: ...
    @property
    def screen(self) -> Screen[Any]: ...
    @property
    def alerts(self) -> AlertDesk: ...
    @property
    def pods_polled(self) -> Signal[PodData]: ...
    def pods(self) -> tuple[Pod, ...]: ...
    def post_message(self, message: Message) -> bool: ...  # thread-safe
    def set_timer(
        self, delay: float, callback: TimerCallback | None = None, *, name: str | None = None, pause: bool = False
    ) -> Timer: ...


class _Handle:
    """Cancels a sync or a watch from the event loop while its thread runs it: the watch's stop, and the sync under
    way (attached by the thread when it makes one)."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self._lock = threading.Lock()
        self._run: SyncRun | None = None

    def attach(self, run: SyncRun) -> None:
        with self._lock:
            self._run = run
        if self.stop.is_set():  # cancelled before it began
            run.cancel()

    def cancel(self) -> None:
        self.stop.set()
        with self._lock:
            run = self._run
        if run is not None:
            run.cancel()


@dataclass
class _Entry:
    """One pod's sync: its state, what was asked last, and what runs now."""

    state: TellingState
    snap: SyncSnapshot  # the state as last published
    spec: SyncSpec | None = None
    handle: _Handle | None = None  # a sync or a watch runs
    watching: bool = False
    cancelling: bool = False
    timer: Timer | None = None  # a draw due
    drawn_at: float = field(default=0.0)


class SyncDesk:
    def __init__(self, host: SyncHost, services: Services) -> None:
        self.host, self.services = host, services
        assert isinstance(host, DOMNode)  # the App: a signal is published from a node of the DOM
        self.changed_signal: Signal[str] = Signal(host, "sync-changed")  # a pod id, on the event loop
        self._entries: dict[str, _Entry] = {}
        self.closed = False
        self._following_polls = False

    # --- what the Sync tab reads ----------------------------------------------------------------------------

    def view(self, pod_id: str) -> PodSync:
        from podtui.ui.sync_view import PodSync

        entry = self._entries.get(pod_id)
        if entry is None:
            return PodSync(pod_id)
        busy = entry.handle is not None
        return PodSync(pod_id, entry.snap, entry.spec, busy, busy and entry.watching, busy and entry.cancelling)

    def last_spec(self, pod_id: str) -> SyncSpec | None:
        entry = self._entries.get(pod_id)
        return entry.spec if entry is not None else None

    def busy(self, pod_id: str) -> bool:
        entry = self._entries.get(pod_id)
        return entry is not None and entry.handle is not None

    def _entry(self, pod_id: str) -> _Entry:
        entry = self._entries.get(pod_id)
        if entry is None:
            from podtui.ui.sync_view import TellingState

            post = self.host.post_message

            def tell(result: SyncResult | None) -> None:  # on the sync's thread
                post(SyncMoved(pod_id, result))

            state = TellingState(tell)
            entry = self._entries[pod_id] = _Entry(state, state.snapshot())
        return entry

    # --- starting, again, watching, cancelling --------------------------------------------------------------

    def _current(self, pod: Pod) -> Pod:
        """The pod as last polled (its state may have moved since the key was pressed)."""
        return next((p for p in self.host.pods() if p.id == pod.id), pod)

    def start(self, pod: Pod, spec: SyncSpec, watch: bool = False) -> str | None:
        """Start a sync of `spec` (with `watch`, one now and one after each local change): None, or why not, in
        words. Once started, the spec is the pod's last sync for this session ("sync again")."""
        pod = self._current(pod)
        name = visible(pod.name)
        if self.closed:
            return "the app is closing"
        if self.host.read_only and not spec.pull and not spec.dry_run:
            return "read-only mode: a push to a pod is switched off (a pull still works)"
        if watch and spec.pull:
            return "a watch follows changes to the local folder: it works with a push only"
        if watch and spec.dry_run:
            return "a dry run changes nothing, so there is nothing to watch: sync for real to watch"
        if pod.state != "RUNNING":
            return f"{name} is {visible(pod.state.lower())}: a sync needs it running"
        entry = self._entry(pod.id)
        if entry.handle is not None:
            what = "watch" if entry.watching else "sync"
            key = keymap.key_for(self.host if isinstance(self.host, App) else None, "sync.cancel")
            return f"a {what} with {name} is under way: cancel it first ({key})"
        entry.spec = spec
        handle = entry.handle = _Handle()
        entry.watching, entry.cancelling = watch, False
        work = functools.partial(self._work, pod.id, spec, watch, handle, entry.state)
        what = "watching and syncing" if watch else "syncing"
        self.host.run_worker(work, thread=True, group="sync", exit_on_error=False, description=f"{what} with {name}")
        self._draw(pod.id, at_once=True)
        if watch:
            self._follow_polls()
        return None

    def _follow_polls(self) -> None:
        """From the first watch on, each poll is looked at: a watch whose pod went down ends."""
        if not self._following_polls:
            from podtui.ui.needs import subscribe

            assert isinstance(self.host, DOMNode)
            subscribe(self.host, self.host.pods_polled, self._polled)
            self._following_polls = True

    def _polled(self, data: PodData) -> None:
        """A watch whose pod is no longer running (stopped, terminated, gone from a whole answer) is ended, and
        said: it would try, and fail, a sync at every local save (docs/sync.md#watch). A pod missing from an answer
        that skipped a record may still be there."""
        snap = data.feed.snapshot
        if snap is None or self.closed:
            return
        pods = {p.id: p for p in snap.pods}
        for pod_id, entry in self._entries.items():
            if entry.handle is None or not entry.watching or entry.cancelling:
                continue
            pod = pods.get(pod_id)
            if pod is None and snap.skipped_records:
                continue
            if pod is not None and pod.state == "RUNNING":
                continue
            why = f"is {visible(pod.state.lower())}" if pod is not None else "is gone from the account"
            name = visible(pod.name) if pod is not None else visible(pod_id)
            entry.cancelling = True
            entry.handle.cancel()
            self._draw(pod_id, at_once=True)
            self.host.notify(f"the watch with {name} ended: the pod {why}", severity="warning", markup=False)

    def again(self, pod: Pod) -> None:
        """The pod's last sync once more; the form when there was none yet."""
        spec = self.last_spec(pod.id)
        if spec is None:
            self.ask(pod)
            return
        refused = self.start(pod, spec)
        if refused is not None:
            self.host.notify(refused, severity="warning", timeout=6, markup=False)

    def toggle_watch(self, pod: Pod) -> None:
        """The watch off when on; else on, with the pod's last push (the form, with watch ticked, when there is
        none, or the last was a dry run: the form is then for real)."""
        entry = self._entries.get(pod.id)
        if entry is not None and entry.handle is not None and entry.watching:
            self.cancel(pod)
            return
        spec = entry.spec if entry is not None else None
        if spec is None or spec.pull or spec.dry_run:
            self.ask(pod, watch=True)
            return
        refused = self.start(pod, spec, watch=True)
        if refused is not None:
            self.host.notify(refused, severity="warning", timeout=6, markup=False)

    def cancel(self, pod: Pod) -> None:
        """Stop the pod's sync (between files; rsync is ended) or its watch."""
        entry = self._entries.get(pod.id)
        if entry is None or entry.handle is None:
            self.host.notify(f"no sync with {visible(pod.name)} is under way", timeout=4, markup=False)
            return
        entry.cancelling = True
        entry.handle.cancel()
        self._draw(pod.id, at_once=True)

    def close(self) -> None:
        """The app ends: every sync and watch is cancelled (their threads end between files)."""
        self.closed = True
        for entry in self._entries.values():
            if entry.handle is not None:
                entry.handle.cancel()
            if entry.timer is not None:
                entry.timer.stop()

    def _work(self, pod_id: str, spec: SyncSpec, watch: bool, handle: _Handle, state: TellingState) -> None:
        """In a thread worker: one sync, or a watch until it is stopped."""
        from podtui.core.api.client import find_pod
        from podtui.transfer.sync.run import SyncRun

        api, settings = self.services.api, self.services.ssh_settings

        def make_run() -> SyncRun:
            run = SyncRun(spec, lambda ref: find_pod(api, ref), settings, state)
            handle.attach(run)
            return run

        try:
            if watch:
                from podtui.transfer.sync.watch import watch_sync

                watch_sync(make_run, spec, handle.stop, lambda _result: None)  # each end reaches the state's done
            else:
                make_run().run()
        finally:
            self.host.post_message(SyncMoved(pod_id, finished=True))

    # --- what the threads report, on the event loop -----------------------------------------------------------

    def moved(self, message: SyncMoved) -> None:
        entry = self._entries.get(message.pod_id)
        if entry is None:
            return
        if message.result is not None and not self.closed:
            self._ended(message.result, entry.watching)
        if message.finished:
            entry.handle, entry.watching, entry.cancelling = None, False, False
        self._draw(message.pod_id, at_once=message.result is not None or message.finished)

    def _ended(self, result: SyncResult, watching: bool) -> None:
        """A sync's end is an alert, as a transfer's is (docs/alerts.md#events): a toast, and wherever the config
        sends it. In a watch only a failure is."""
        from podtui.core.alerts import sync_ended

        alert = sync_ended(result, self.services.clock(), watching)
        if alert is not None:
            self.host.alerts.router.route(alert)

    def _draw(self, pod_id: str, at_once: bool = False) -> None:
        """The pod's state published: now, or once DRAW_EVERY_S has passed since the last time."""
        entry = self._entries[pod_id]
        if entry.timer is not None:
            if not at_once:
                return
            entry.timer.stop()
            entry.timer = None
        wait = DRAW_EVERY_S - (time.monotonic() - entry.drawn_at)
        if at_once or wait <= 0:
            self._publish(pod_id)
        else:
            entry.timer = self.host.set_timer(wait, functools.partial(self._publish, pod_id))

    def _publish(self, pod_id: str) -> None:
        entry = self._entries[pod_id]
        entry.timer = None
        entry.drawn_at = time.monotonic()
        entry.snap = entry.state.read()
        self.changed_signal.publish(pod_id)

    # --- the form, the tab ------------------------------------------------------------------------------------

    def ask(self, pod: Pod, watch: bool = False) -> None:
        """The sync form on the pod, filled in with its last sync; it starts what it is sent (`start`)."""
        from podtui.ui.screens.sync_form import SyncFormScreen

        pod = self._current(pod)
        if pod.state != "RUNNING":
            self.host.notify(
                f"{visible(pod.name)} is {visible(pod.state.lower())}: a sync needs it running",
                severity="warning",
                markup=False,
            )
            return
        entry = self._entries.get(pod.id)
        watching = watch or (entry is not None and entry.handle is not None and entry.watching)
        form = SyncFormScreen(pod, self.last_spec(pod.id), watching)
        self.host.open_screen(form, ("sync-form", pod.id))

    def show(self, pod: Pod) -> None:
        """The pod's sync: the pane's Sync tab with the panes on (the pane shows the pod under the cursor), else a
        screen of its own."""
        from podtui.ui.screens.pod_list import PodListScreen

        screen = self.host.screen
        if isinstance(screen, PodListScreen) and screen.panes_on and screen.pane.pod_id == pod.id:
            screen.remove_class("-zoom-list")
            screen.pane.show_sync()
            return
        from podtui.ui.screens.sync import SyncScreen

        self.host.open_screen(SyncScreen(pod), ("sync", pod.id))
