"""The app's side of port forwarding (docs/forwarding.md): one `Forwarder` per pod, made on the first forward asked
for on it (the forwarding code loads paramiko, which the first frame must not wait for), its changes carried from
its threads to the event loop as messages and published on `changed_signal` (the services panels follow it).

Forwards are remembered by pod name: when a poll shows a remembered pod running with direct SSH, its forwards come
back by themselves, once per run of podtui (one the user stopped is forgotten, so it stays stopped). The demo's pods
are not the user's: nothing of theirs is remembered."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Protocol

from textual.dom import DOMNode
from textual.message import Message
from textual.signal import Signal

from podtui.core.pod import Pod
from podtui.core.services import Services
from podtui.ui.messages import ForwardChanged

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel

    from podtui.core.forward import Forward, Forwarder
    from podtui.core.forward_memory import ForwardMemory, PortSpec

RESTORE_AGAIN_S = 30.0  # a pod whose remembered forwards could not be made is tried again after this, then doubling


class ForwardHost(Protocol):
    """What the desk needs of the app."""

    def post_message(self, message: Message) -> bool: ...  # thread-safe
    def pods(self) -> tuple[Pod, ...]: ...


class ForwardDesk:
    def __init__(self, host: ForwardHost, services: Services) -> None:
        self.host, self.services = host, services
        assert isinstance(host, DOMNode)  # the App: a signal is published from a node of the DOM
        self.changed_signal: Signal[Forward] = Signal(host, "forwards-changed")
        self._forwarders: dict[str, Forwarder] = {}  # by pod id
        self._lock = threading.Lock()  # the dict is touched from the event loop and the workers
        self._restored: set[str] = set()  # pod names whose remembered forwards came back in this run
        self._retry_at: dict[str, float] = {}  # pod name -> when to try its remembered forwards again (monotonic)
        self._tries: dict[str, int] = {}  # pod name -> restores that failed (each said only the first time)
        self._memory: ForwardMemory | None = None
        self._memory_lock = threading.Lock()
        self._known: dict[str, list[PortSpec]] | None = None  # the memory as last read; None: read it again
        self._closed = False

    def memory(self) -> ForwardMemory:
        if self._memory is None:
            from podtui.core.forward_memory import ForwardMemory

            self._memory = ForwardMemory.for_paths(self.services.paths)
        return self._memory

    def of(self, pod_id: str) -> list[Forward]:
        with self._lock:
            forwarder = self._forwarders.get(pod_id)
        return forwarder.forwards() if forwarder is not None else []

    def changed(self, forward: Forward) -> None:
        """On the event loop: a forward's state, note or counters changed."""
        self.changed_signal.publish(forward)

    # --- in a worker thread (they connect and listen) -----------------------------------------------------

    def forward(self, pod: Pod, remote_port: int, local_port: int = 0, *, remember: bool = True) -> Forward:
        """Forward the pod's port to 127.0.0.1:local_port (0: the same port if free, else any). ForwardError or
        SshError says why not, in words."""
        from podtui.core.forward import LocalPortTaken
        from podtui.core.forward_memory import PortSpec

        forwarder = self._forwarder(pod)
        try:
            made = forwarder.add(remote_port, local_port or remote_port)
        except LocalPortTaken:
            if local_port:  # asked for by the user: said, not changed behind their back
                raise
            made = forwarder.add(remote_port, 0)
        if remember and not self.services.demo:
            # as asked: 0 comes back on the same port if free next time, any other is insisted on
            with self._memory_lock:  # workers save it: one at a time, so no update is lost
                self.memory().remember(pod.name, [PortSpec(remote_port, local_port)])
                self._known = None
        return made

    def _forwarder(self, pod: Pod) -> Forwarder:
        from podtui.core.forward import Forwarder

        with self._lock:
            if self._closed:
                raise RuntimeError("podtui is closing")
            found = self._forwarders.get(pod.id)
            if found is not None and found.failed:  # given up (a changed host key, say): a fresh start now
                del self._forwarders[pod.id]
                threading.Thread(target=_stop_all, args=([found],), name="podtui-forward-failed", daemon=True).start()
                found = None
        if found is not None:
            return found
        made = Forwarder(
            pod,
            self.services.ssh_settings(),
            refresh=lambda: self._latest(pod),
            url_template=self.services.proxy_url(),
            clock=self.services.clock,
        )

        def told(forward: Forward) -> None:  # on the forwarder's threads: handed to the event loop
            self.host.post_message(ForwardChanged(forward))

        made.listeners.append(told)
        made.start()  # SshError when the pod cannot be reached: the caller says why
        with self._lock:
            if self._closed or pod.id in self._forwarders:  # closing, or another worker won the race
                other = self._forwarders.get(pod.id)
                made.stop()
                if other is None:
                    raise RuntimeError("podtui is closing")
                return other
            self._forwarders[pod.id] = made
        return made

    def _latest(self, pod: Pod) -> Pod:
        """The pod as last polled (a restarted pod can come back on another address)."""
        return next((p for p in self.host.pods() if p.id == pod.id), pod)

    def stop(self, pod: Pod, local_port: int) -> None:
        """Stop one forward, and forget it: it does not come back next time."""
        with self._lock:
            forwarder = self._forwarders.get(pod.id)
        if forwarder is None:
            return
        gone = next((f for f in forwarder.forwards() if f.local_port == local_port), None)
        forwarder.remove(local_port)
        if gone is not None and not self.services.demo:
            with self._memory_lock:
                self.memory().forget(pod.name, gone.remote_port)
                self._known = None

    def restore(self, pods: tuple[Pod, ...]) -> list[tuple[SeverityLevel, str]]:
        """The remembered forwards of pods now running with direct SSH (in a worker: it connects). A pod's come
        back once per run; one whose forwards could not be made is tried again after RESTORE_AGAIN_S (its sshd may
        not listen yet). What to tell the user: each pod's forwards that came back, and each that did not, why."""
        from podtui.core.forward import ForwardError
        from podtui.core.ssh.errors import SshError

        remembered = self._remembered()
        said: list[tuple[SeverityLevel, str]] = []
        now = time.monotonic()
        for pod in pods:
            if not self._due(pod, remembered, now):
                continue
            back: list[str] = []
            failed = False
            # made on a try before (a failed one is made afresh)
            live = {f.remote_port for f in self.of(pod.id) if f.state not in ("stopped", "failed")}
            for spec in remembered[pod.name]:
                if spec.remote in live:
                    continue
                try:
                    made = self.forward(pod, spec.remote, spec.local, remember=False)
                except (ForwardError, SshError, OSError) as e:  # each is said once; the others are still tried
                    failed = True
                    if pod.name not in self._tries:
                        said.append(("warning", f"forward of {pod.name}:{spec.remote} not restored: {e}"))
                else:
                    back.append(f"{made.local_address} → {made.target}")
            with self._lock:
                if failed:  # tried again later and later: 30 s, 1 min, 2 min ... an hour
                    tries = self._tries[pod.name] = self._tries.get(pod.name, 0) + 1
                    self._retry_at[pod.name] = now + min(RESTORE_AGAIN_S * 2 ** (tries - 1), 3600.0)
                else:
                    self._restored.add(pod.name)
            if back:
                said.append(("information", "forwards restored: " + ", ".join(back)))
        return said

    def _due(self, pod: Pod, remembered: dict[str, list[PortSpec]], now: float) -> bool:
        if pod.name not in remembered or pod.state != "RUNNING" or pod.ssh_direct is None:
            return False
        with self._lock:
            return pod.name not in self._restored and self._retry_at.get(pod.name, 0.0) <= now

    def _remembered(self) -> dict[str, list[PortSpec]]:
        """The memory as this run knows it: read once, then kept with what this run remembers and forgets."""
        with self._memory_lock:
            if self._known is None:
                self._known = self.memory().load()
            return dict(self._known)

    def wanted(self, pods: tuple[Pod, ...]) -> bool:
        """Whether restore() has anything to do for these pods (cheap: no file read after the first, no thread)."""
        if self.services.demo:
            return False
        remembered = self._remembered()
        now = time.monotonic()
        return any(self._due(pod, remembered, now) for pod in pods)

    def prune(self, alive: set[str]) -> list[str]:
        """Stop the forwards of pods no longer on the account (after a whole answer): their ports would keep
        reconnecting to an address another pod may have now. The pods' names, to tell the user; they stay
        remembered, for a pod of the same name created again."""
        with self._lock:
            gone = [self._forwarders.pop(pid) for pid in list(self._forwarders) if pid not in alive]
        if gone:  # stopping waits for their threads: not on the event loop
            threading.Thread(target=_stop_all, args=(gone,), name="podtui-forwards-gone", daemon=True).start()
        return [f.pod.name for f in gone]

    def close(self) -> None:
        """Stop every forward (podtui is closing); they are remembered for next time."""
        with self._lock:
            self._closed = True
            forwarders, self._forwarders = list(self._forwarders.values()), {}
        for forwarder in forwarders:
            forwarder.stop()


def _stop_all(forwarders: list[Forwarder]) -> None:
    for forwarder in forwarders:
        forwarder.stop()
