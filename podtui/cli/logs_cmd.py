"""`podtui logs POD`: a pod's container and system logs from RunPod's log stream (docs/architecture.md#logs).

Without --follow it prints the last lines and exits 0 once the backfill is out; with --follow it goes on until
ctrl+c, resuming after a dropped connection without losing or repeating a line (and saying so on stderr)."""

from __future__ import annotations

import argparse
import functools
import json
import sys
from typing import TextIO

from podtui.cli.session import UsageError, open_session
from podtui.core import units
from podtui.core.api.client import find_pod
from podtui.core.api.errors import InvalidInput
from podtui.core.logs import SOURCES, TAIL_DEFAULT, TAIL_MAX, LogFollower, LogRequest, StreamState, check_request
from podtui.core.paths import Paths
from podtui.core.services import Services

FOLLOW_QUIET_S = 60.0  # a live stream quiet this long is resumed (a connection that died without a word)
# without --follow the backfill ends at its last line asked for (or the first newer than RunPod's answer); a pod
# with fewer lines than asked ends it when the stream is this quiet
BACKFILL_QUIET_S = 5.0


def fill_parser(p: argparse.ArgumentParser, common: argparse.ArgumentParser) -> None:
    """`podtui logs`'s parser (its line in `podtui --help` is in podtui.cli.main.READY)."""
    p.description = (
        "A pod's logs from RunPod: the container's (what its main process prints) and the system's (the image "
        "pulled, the container started or failed; there from the start of provisioning, so they say why a pod "
        "never comes up). Terminal escape sequences in the lines are shown, never acted on."
    )
    p.add_argument("pod", help="pod id or name")
    p.add_argument("--source", choices=SOURCES, default="all", help="container, system or all (default all)")
    p.add_argument(
        "--tail",
        type=int,
        default=TAIL_DEFAULT,
        metavar="N",
        help=f"the last N lines first (default 100, at most {TAIL_MAX})",
    )
    p.add_argument("--since", metavar="TIME", help="lines from then on instead: 10m, 2h, 1d ago, or 2026-12-01T09:30Z")
    p.add_argument("--follow", "-f", action="store_true", help="go on with the lines as they come, until ctrl+c")
    p.add_argument("--json", action="store_true", help="one JSON object per line: ts, source, line")


def main(args: argparse.Namespace, paths: Paths, demo: bool, read_only: bool) -> int:
    with open_session(demo, paths) as session:
        return cmd_logs(session, args.pod, args.source, args.tail, args.since, args.follow, args.json)


def cmd_logs(
    session: Services,
    ref: str,
    source: str,
    tail: int,
    since: str | None,
    follow: bool,
    as_json: bool,
    out: TextIO | None = None,
) -> int:
    out = out or sys.stdout  # looked up now: the CLI wraps it (podtui.cli.output)
    try:
        since_at = check_request(source, tail, since)
    except InvalidInput as e:
        raise UsageError(str(e)) from None
    pod = find_pod(session.api, ref)
    request = LogRequest(pod.id, source, tail, since_at)  # type: ignore[arg-type]  # checked above
    opener = functools.partial(session.api.open_pod_logs, quiet_s=FOLLOW_QUIET_S if follow else BACKFILL_QUIET_S)
    follower = LogFollower(opener, request, on_state=_StateLine(), on_problem=_say_problem)
    for line in follower.lines(until_live=not follow):
        if as_json:
            out.write(json.dumps(line.as_json()) + "\n")
        else:
            out.write(f"{line.ts} {line.source:<9} {line.text}\n" if source == "all" else f"{line.ts} {line.text}\n")
        out.flush()
    return 0


class _StateLine:
    """The stream's state on stderr (a pipe gets the lines alone): down, and back once it was down, with --follow
    or without (a backfill waits through a drop too)."""

    def __init__(self) -> None:
        self.was_down = False

    def __call__(self, state: StreamState) -> None:
        if not state.up:
            retry = f"; again in {units.duration(state.retry_in)}" if state.retry_in is not None else ""
            sys.stderr.write(f"podtui: the log stream is down ({state.reason}){retry}\n")
            self.was_down = True
        elif self.was_down:
            sys.stderr.write("podtui: the log stream is back, resumed from the last line shown\n")
            self.was_down = False


def _say_problem(text: str) -> None:
    sys.stderr.write(f"podtui: {text}\n")
