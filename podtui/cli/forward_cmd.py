"""`podtui forward POD REMOTE[:LOCAL]...`: a pod's ports on 127.0.0.1 here, over its direct SSH, until ctrl+c
(docs/forwarding.md).

What is forwarded goes to stdout once it listens; what happens meanwhile (the connection dropped and came back, a
refused port) to stderr; at the end, what went through each forward. ctrl+c is how it is meant to end: exit 0. A
gateway-only pod or one that is not running is refused with the reason (and the proxy URL of an HTTP port): exit 1.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

from podtui.cli.session import UsageError, open_session
from podtui.core import units
from podtui.core.api.client import find_pod
from podtui.core.forward import Forward, Forwarder, ForwardError, PodGone, check_forwardable
from podtui.core.forward_memory import ForwardMemory, PortSpec, SpecError, parse_specs
from podtui.core.paths import Paths
from podtui.core.pod import Pod
from podtui.core.services import Services
from podtui.core.visible import visible

WAIT_S = 0.5  # how often the foreground wait looks whether every forward has failed
DEMO_SSH_WAIT_S = 5.0  # the demo's sshds are up within a second or two of its start


def fill_parser(p: argparse.ArgumentParser, common: argparse.ArgumentParser) -> None:
    """`podtui forward`'s parser (its line in `podtui --help` is in podtui.cli.main.READY)."""
    p.description = (
        "Forward a pod's ports to 127.0.0.1 on this machine over the pod's direct SSH, until ctrl+c: "
        "`podtui forward mypod 8888` serves the pod's port 8888 at http://127.0.0.1:8888. The connection is made "
        "again when it drops. RunPod's SSH gateway cannot forward ports: the pod needs a public IP and 22/tcp."
    )
    p.add_argument("pod", help="pod id or name")
    p.add_argument(
        "ports",
        nargs="+",
        metavar="REMOTE[:LOCAL]",
        help="the pod's port, and the local one (default the same; 0: any free port)",
    )
    p.add_argument(
        "--host",
        default="localhost",
        metavar="HOST",
        help="where the pod connects to (default localhost: the pod itself; or an address the pod reaches)",
    )
    p.add_argument("--json", action="store_true", help="one JSON object per line: each forward's state as it changes")


def main(args: argparse.Namespace, paths: Paths, demo: bool, read_only: bool) -> int:
    # not a mutation: nothing on the pod or the account changes, so --read-only allows it
    try:
        specs = parse_specs(args.ports)
    except SpecError as e:
        raise UsageError(str(e)) from None
    with open_session(demo, paths) as session:
        memory = None if demo else ForwardMemory.for_paths(paths)  # the demo's pods are not remembered
        return cmd_forward(session, args.pod, specs, args.host, args.json, memory)


def cmd_forward(
    session: Services,
    ref: str,
    specs: list[PortSpec],
    remote_host: str = "localhost",
    as_json: bool = False,
    memory: ForwardMemory | None = None,
    out: TextIO | None = None,
    until: threading.Event | None = None,
) -> int:
    """Forward until ctrl+c (or `until` is set); 0 then, 1 when the pod cannot be forwarded from or every forward
    failed."""
    out = out or sys.stdout  # looked up now: the CLI wraps it (podtui.cli.output)
    pod = _find(session, ref)
    template = getattr(session, "proxy_url", None)  # where the services know the proxy's URL (the config's, the demo's)
    if callable(template):
        template = template()
    url_template = template if isinstance(template, str) else None
    try:
        for spec in specs:  # the gateway-only refusal names the proxy URL of the port asked for
            check_forwardable(pod, spec.remote, url_template)
        forwarder = Forwarder(
            pod,
            session.ssh_settings(),
            refresh=_refresher(session, pod),
            remote_host=remote_host,
            url_template=url_template,
        )
    except ForwardError as e:
        sys.stderr.write(f"podtui: {visible(str(e))}\n")
        return 1
    reporter = _Reporter(out, as_json)
    forwarder.listeners.append(reporter)
    try:
        try:
            for spec in specs:
                forwarder.add(spec.remote, spec.local)
            forwarder.start()
        except ForwardError as e:
            sys.stderr.write(f"podtui: {visible(str(e))}\n")
            return 1
        forwards = forwarder.forwards()
        reporter.started(forwards)
        if memory is not None:
            _remember(memory, pod.name, specs)
        until = until or threading.Event()
        try:
            while not until.wait(WAIT_S):
                if all(f.state == "failed" for f in forwarder.forwards()):
                    break
        except KeyboardInterrupt:
            pass
    finally:
        forwarder.listeners.remove(reporter)
        forwarder.stop()
    final = forwarder.forwards()
    reporter.summary(final)
    # every forward failed for good: said as it happened (_Reporter)
    return 1 if final and all(f.state == "failed" for f in final) else 0


def _find(session: Services, ref: str) -> Pod:
    """The pod; in the demo, once its direct SSH is up: the simulator's sshds start a moment after its API, as a real
    pod's ports appear a moment after it is listed (a real pod is taken as RunPod describes it now)."""
    pod = find_pod(session.api, ref)
    if not session.demo or pod.ssh_direct is not None or pod.state != "RUNNING":
        return pod
    session.ssh_settings()  # starts the simulator's SSH side if nothing has yet
    deadline = time.monotonic() + DEMO_SSH_WAIT_S
    while pod.ssh_direct is None and time.monotonic() < deadline:
        time.sleep(0.25)
        pod = find_pod(session.api, pod.id)
    return pod


def _refresher(session: Services, pod: Pod) -> Callable[[], Pod]:
    """The pod as the API lists it now, before each reconnect: a restarted pod's new address and run, a stopped
    one's state; PodGone once it is no longer listed (terminated)."""

    def refresh() -> Pod:
        now = next((p for p in session.api.fetch_snapshot().pods if p.id == pod.id), None)
        if now is None:
            raise PodGone(f"{pod.name} ({pod.id}) is no longer on the account: its forwards end")
        return now

    return refresh


def _remember(memory: ForwardMemory, pod_name: str, specs: list[PortSpec]) -> None:
    try:
        memory.remember(pod_name, specs)
    except OSError as e:  # forwarding works all the same
        sys.stderr.write(f"podtui: could not remember these forwards in {visible(str(memory.path))}: {e.strerror}\n")
        return
    if memory.warning:  # what was there could not be read; it has been replaced
        sys.stderr.write(f"podtui: {memory.warning}\n")


class _Reporter:
    """States on stderr as they change, once per change of the connection (not once per forward); notes as they
    come; with --json, every snapshot on stdout instead."""

    def __init__(self, out: TextIO, as_json: bool) -> None:
        self.out = out
        self.as_json = as_json
        self.lock = threading.Lock()
        self.live = False  # after started(): what changes from here on is news
        self.last: dict[int, tuple[str, str | None, float | None]] = {}  # state, reason, when the note came
        self.said: tuple[str, str | None] | None = None

    def started(self, forwards: list[Forward]) -> None:
        with self.lock:
            for i, f in enumerate(forwards):
                self.last[f.local_port] = (f.state, f.reason, f.note_at)
                if self.as_json:
                    self._json("forwarding", f)
                else:
                    tail = " (ctrl+c to stop)" if i == len(forwards) - 1 else ""
                    self.out.write(f"forwarding {f.local_address} -> {visible(f.target)}{tail}\n")
            self.said = (forwards[0].state, forwards[0].reason) if forwards else None
            self.live = True
            self.out.flush()

    def __call__(self, f: Forward) -> None:
        with self.lock:
            if not self.live:
                return
            before = self.last.get(f.local_port)
            self.last[f.local_port] = (f.state, f.reason, f.note_at)
            if before == (f.state, f.reason, f.note_at):
                return
            if self.as_json:
                self._json("state", f)
                self.out.flush()
                return
            if f.note and (before is None or f.note_at != before[2]):
                sys.stderr.write(f"podtui: {f.local_address}: {visible(f.note)}\n")
            if (f.state, f.reason) == self.said or f.state == "stopped":
                return
            self.said = (f.state, f.reason)
            if f.state == "reconnecting":
                again = f"; again in {units.duration(math.ceil(f.retry_at - time.time()))}" if f.retry_at else ""
                sys.stderr.write(f"podtui: reconnecting: {visible(f.reason or '')}{again}\n")
            elif f.state == "listening":
                sys.stderr.write(f"podtui: connected to {visible(f.pod_name)} again; forwarding goes on\n")
            elif f.state == "failed":
                sys.stderr.write(f"podtui: forwarding from {visible(f.pod_name)} failed: {visible(f.reason or '')}\n")

    def summary(self, forwards: list[Forward]) -> None:
        with self.lock:
            self.live = False
            for f in forwards:
                if self.as_json:
                    self._json("summary", f)
                else:
                    self.out.write(
                        f"stopped {f.local_address} -> {visible(f.target)}: {f.connections_total} connection"
                        f"{'' if f.connections_total == 1 else 's'}, {units.size(f.bytes_in)} in, "
                        f"{units.size(f.bytes_out)} out\n"
                    )
            self.out.flush()

    def _json(self, event: str, f: Forward) -> None:
        self.out.write(json.dumps({"event": event, **f.as_json()}) + "\n")
