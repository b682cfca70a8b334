"""How a pod's sync reads in the UI (docs/sync.md#the-api), no widgets: the state the Sync tab draws (the core's
SyncState, which also tells the app that it moved), and the sync asked for, what changed, the copy under way and
the last result as Rich text. Every path and pod word passes through `visible` here, where it enters the UI."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Group, RenderableType
from rich.style import Style
from rich.table import Table
from rich.text import Text

from podtui.core import units
from podtui.core.visible import visible
from podtui.transfer.sync.plan import Plan
from podtui.transfer.sync.state import SyncResult, SyncSnapshot, SyncSpec, SyncState
from podtui.ui.colours import CLASSIC, Palette

LABEL_WIDTH = 14  # "What changed  ": the sections' names, in a column of their own
LISTED = 8  # skipped or failed paths listed by name; the rest are counted
IN_FLIGHT = 3  # files in flight listed by name
NOTES = 3  # the last notes shown
BAR_MIN, BAR_MAX = 10, 60


class TellingState(SyncState):
    """The core's SyncState (what the tab draws), which also tells the app that it moved, from the sync's thread:
    once for a burst of events (a flood of progress is one message until the app has read the state again), and
    every end with its result. `tell` must be thread-safe (it posts a message)."""

    def __init__(self, tell: Callable[[SyncResult | None], None]) -> None:
        super().__init__()
        self._tell = tell
        self._flag = threading.Lock()
        self._unread = False

    def read(self) -> SyncSnapshot:
        """The state now (on the event loop): events from here on are told again."""
        with self._flag:
            self._unread = False
        return self.snapshot()

    def _moved(self) -> None:
        with self._flag:
            if self._unread:
                return
            self._unread = True
        self._tell(None)

    def started(self, spec: SyncSpec) -> None:
        super().started(spec)
        self._moved()

    def plan_ready(self, plan: Plan) -> None:
        super().plan_ready(plan)
        self._moved()

    def file_started(self, path: str, size: int) -> None:
        super().file_started(path, size)
        self._moved()

    def progress(self, done: int, total: int) -> None:
        super().progress(done, total)
        self._moved()

    def file_verified(self, path: str, digest: str) -> None:
        super().file_verified(path, digest)
        self._moved()

    def file_failed(self, path: str, why: str) -> None:
        super().file_failed(path, why)
        self._moved()

    def note(self, text: str) -> None:
        super().note(text)
        self._moved()

    def done(self, result: SyncResult) -> None:
        super().done(result)
        self._tell(result)


@dataclass(frozen=True)
class PodSync:
    """A pod's sync as the tab draws it, at one moment."""

    pod_id: str
    snap: SyncSnapshot = field(default_factory=SyncSnapshot)
    spec: SyncSpec | None = None  # the last asked for (this session): "sync again" runs it
    busy: bool = False  # a sync, or a watch, runs
    watching: bool = False
    cancelling: bool = False


def shown_path(path: Path | str) -> str:
    """A local folder as the user would write it: under the home folder with ~."""
    text = str(path)
    home = os.path.expanduser("~")
    if home not in ("", "/") and (text == home or text.startswith(home.rstrip("/") + "/")):
        text = "~" + text[len(home.rstrip("/")) :]
    return visible(text)


def way(spec: SyncSpec, pod_name: str, remote_root: str = "") -> str:
    """`~/proj → eval-a100:/workspace/proj` (the other way round for a pull)."""
    there = f"{visible(pod_name)}:{visible(remote_root or spec.remote)}"
    here = shown_path(spec.local)
    return f"{there} → {here}" if spec.pull else f"{here} → {there}"


def options(spec: SyncSpec, watching: bool) -> str:
    words = [spec.direction]
    if spec.delete:
        words.append("delete")
    if not spec.gitignore:
        words.append("no .gitignore")
    if spec.excludes:
        n = len(spec.excludes)
        words.append(f"{n} exclude{'' if n == 1 else 's'}")
    if spec.via != "auto":
        words.append(f"via {spec.via}")
    if watching:
        words.append("watching")
    return " · ".join(words)


def plan_words(plan: Plan) -> str:
    """`3 new · 2 changed · 1 to delete · 120 unchanged · 4 ignored`: what the plan found."""
    words = [f"{len(plan.new)} new", f"{len(plan.changed)} changed"]
    gone = len(plan.deletes) + len(plan.rmdirs)
    if plan.delete or gone:
        words.append(f"{gone} to delete")
    if plan.links:
        words.append(f"{len(plan.links)} links")
    words.append(f"{plan.unchanged} unchanged")
    if plan.settled:
        words.append(f"{plan.settled} only touched (same sha256)")
    if plan.ignored:
        words.append(f"{plan.ignored} ignored")
    if plan.skipped:
        words.append(f"{len(plan.skipped)} skipped")
    if plan.failed:
        words.append(f"{len(plan.failed)} cannot be done")
    if plan.extra:
        words.append(f"{plan.extra} only at the destination (kept)")
    if plan.protected:
        words.append(f"{plan.protected} kept by its .gitignore")
    return " · ".join(words)


def _paths(out: Text, items: list[tuple[str, str]], mark: str, style: Style, listed: int) -> None:
    for path, why in items[:listed]:
        out.append("\n")
        out.append(f"{mark} ", style)
        out.append(visible(path))
        out.append(f": {visible(why)}", "dim")
    if len(items) > listed:
        out.append(f"\n… and {len(items) - listed} more", "dim")


def bar(done: int, total: int, width: int, palette: Palette = CLASSIC) -> Text:
    """The whole copy's bar, its percentage and bytes."""
    st = palette.style
    if total <= 0:
        return Text.assemble(("━" * width, st("track")), " nothing to copy")
    frac = min(1.0, max(0.0, done / total))
    filled = round(width * frac)
    return Text.assemble(
        ("━" * filled, st("moving")),
        ("━" * (width - filled), st("track")),
        f" {frac * 100:3.0f}%  {units.size(done)} of {units.size(total)}",
    )


def bar_width(columns: int) -> int:
    """The bar's cells for a panel `columns` wide: what is left beside the label and the figures."""
    return max(BAR_MIN, min(BAR_MAX, columns - LABEL_WIDTH - 40))


def when(result: SyncResult) -> str:
    ended = result.ended if result.ended is not None else result.started
    took = ended - result.started
    spent = f"{took:.1f}s" if took < 10 else units.duration(took)
    return f"at {time.strftime('%H:%M:%S', time.localtime(ended))} · took {spent}"


def result_text(result: SyncResult, palette: Palette = CLASSIC, listed: int = LISTED) -> Text:
    """The last result: what verified, failed or was cancelled, the route, when and how long; the failed files with
    why."""
    st = palette.style
    out = Text()
    n = len(result.verified)
    verified = f"{n} verified" + (f" ({units.size(result.copied_bytes)})" if n else "")
    done = [verified]
    if result.deleted:
        done.append(f"{len(result.deleted)} deleted")
    if result.linked:
        done.append(f"{len(result.linked)} links")
    if result.touched:
        done.append(f"{result.touched} times set")
    tail = (f" · via {result.route}" if result.route else "") + f" · {when(result)}"
    if result.cancelled:
        out.append("cancelled", st("warn"))
        out.append(f": {verified} before; nothing else was put under a final name{tail}")
    elif result.error is not None:
        out.append("✗ failed", st("bold bad"))
        out.append(f": {visible(result.error, lines=False)}")
        out.append(f"\n{' · '.join(done)}{tail}", "dim")
    elif result.failed:
        out.append(f"✗ {len(result.failed)} failed", st("bold bad"))
        out.append(f" · {' · '.join(done)}{tail}")
    elif result.spec.dry_run:
        out.append("dry run: nothing was changed", st("good"))
        out.append(tail)
    elif not (n or result.deleted or result.linked or result.touched):
        out.append("✓ nothing to copy", st("good"))
        out.append(f": both ends are the same{tail}")
    else:
        out.append("✓ ", st("bold good"))
        out.append(f"{' · '.join(done)}, on both ends{tail}")
    _paths(out, result.failed, "✗", st("bad"), listed)
    return out


def sync_text(view: PodSync, pod_name: str, columns: int, palette: Palette = CLASSIC) -> RenderableType:
    """The Sync tab's body for one pod: what was asked, then what changed, what is in flight and the last result, each
    beside its name (a long line wraps in its own column)."""
    st = palette.style
    spec = view.spec
    snap = view.snap
    last = snap.last
    if spec is None:
        return Text()
    head = Text()
    # the pod's own name for its folder only when the last sync was this one: a new one's goes as asked
    root = last.remote_root if last is not None and last.spec == spec else ""
    head.append(way(spec, pod_name, root), st("bold"))
    head.append(f"   {options(spec, view.watching)}", st("muted"))
    if view.cancelling:
        head.append("\ncancelling…", st("warn"))
    elif view.watching and not snap.running:
        head.append(f"\nwatching {shown_path(spec.local)}: a change there is synced within a second", st("moving"))
    rows = Table.grid(padding=(0, 1))
    rows.add_column(width=LABEL_WIDTH - 1, no_wrap=True, style=st("bold"))
    rows.add_column(ratio=1)
    plan = snap.plan if snap.running else (last.plan if last is not None else None)
    if snap.running or plan is not None:
        changed = Text(plan_words(plan)) if plan is not None else Text("listing both folders…", st("muted"))
        if plan is not None:
            _paths(changed, plan.skipped, "skipped", st("warn"), LISTED)
        rows.add_row("What changed", changed)
    if snap.running:
        rows.add_row("In flight", _flight(snap, plan, columns, palette))
    if last is not None:
        rows.add_row("Last result", result_text(last, palette))
    notes = snap.notes if snap.running else tuple(last.notes) if last is not None else ()
    if notes:
        rows.add_row("Notes", Text("\n".join(visible(n) for n in notes[-NOTES:]), st("muted")))
    return Group(head, rows)


def _flight(snap: SyncSnapshot, plan: Plan | None, columns: int, palette: Palette) -> Text:
    """The whole copy's bar, what verified so far, the files whose bytes are moving and what failed."""
    st = palette.style
    if plan is None:
        return Text("—", st("muted"))
    out = bar(snap.done_bytes, snap.total_bytes, bar_width(columns), palette)
    out.append(f"  {snap.verified} verified", st("good") if snap.verified else st("muted"))
    for path, size in snap.in_flight[:IN_FLIGHT]:
        out.append(f"\n{visible(path)}")
        out.append(f"  {units.size(size)}", st("muted"))
    if len(snap.in_flight) > IN_FLIGHT:
        out.append(f"\n… and {len(snap.in_flight) - IN_FLIGHT} more", st("muted"))
    _paths(out, list(snap.failed), "✗", st("bad"), LISTED)
    return out
