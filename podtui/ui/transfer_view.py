"""How one transfer reads in the UI: a progress bar, rate, ETA, state and checksum as Rich text cells, the columns
that fit a table's width, the line under the table, and the transfer strip's line. No widgets here.

Paths, names, pod names and errors come from outside (the pod's shell, runpodctl, tar): shown through visible(),
so a name holding escape sequences or bidi overrides is seen as such and never acts on the terminal."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

from rich.cells import cell_len, set_cell_size
from rich.style import Style
from rich.text import Text
from textual.color import Color

from podtui.core import units
from podtui.core.visible import visible
from podtui.transfer.job import ACTIVE, TransferJob
from podtui.ui.colours import CLASSIC, Palette

BAR_WIDTH = 14
PERCENT_WIDTH = 5  # " 100%" after the bar
PAD = 1  # the table's cell padding, either side of each column


@dataclass(frozen=True)
class Column:
    """A column of the transfer table: how narrow it can be, how wide it is comfortable, how wide it may grow."""

    title: str
    least: int
    natural: int
    most: int


FILE, POD, ARROW, PROGRESS, SIZE, RATE, ETA, STATE, CHECKSUM = range(9)
COLUMNS: tuple[Column, ...] = (
    Column("File", 12, 20, 40),
    Column("Pod", 10, 16, 24),
    Column("", 1, 1, 1),
    Column("Progress", 10 + PERCENT_WIDTH, BAR_WIDTH + PERCENT_WIDTH, BAR_WIDTH + PERCENT_WIDTH),
    Column("Size", 13, 13, 13),  # "132 MB/400 MB"
    Column("Rate", 8, 8, 8),  # "1.2 GB/s"
    Column("ETA", 7, 7, 7),  # "12m 30s"
    Column("State", 12, 12, 16),  # "transferring"; "waiting for code" with room
    Column("Checksum", 15, 15, 15),  # "sha256 9f2c4e1a", "12 files vs Hub"
)
# How a table's width is shared, in order: (column, grow it to), or a column to add when it fits whole. The names and
# the bar come first; what does not fit is said in the line under the table (detail).
_FITTING: tuple[tuple[int, str], ...] = (
    (SIZE, "add"),
    (FILE, "natural"),
    (POD, "natural"),
    (PROGRESS, "natural"),
    (RATE, "add"),
    (ETA, "add"),
    (CHECKSUM, "add"),
    (STATE, "most"),
    (FILE, "most"),
    (POD, "most"),
)


def fit_columns(width: int, pod: bool = True) -> tuple[tuple[int, int], ...]:
    """The columns of a table `width` cells wide, as (index into COLUMNS, width), so that it never scrolls sideways
    (as long as the least of them fit): File, Pod (unless the table shows one pod's), the arrow, Progress and State
    always; Size, Rate, ETA and Checksum when they fit."""
    widths = {i: c.least for i, c in enumerate(COLUMNS) if i in (FILE, ARROW, PROGRESS, STATE) or (pod and i == POD)}
    room = width - sum(w + 2 * PAD for w in widths.values())
    for i, how in _FITTING:
        if how == "add":
            if i not in widths and COLUMNS[i].least + 2 * PAD <= room:
                widths[i] = COLUMNS[i].least
                room -= COLUMNS[i].least + 2 * PAD
        elif i in widths and room > 0:
            to = COLUMNS[i].natural if how == "natural" else COLUMNS[i].most
            grow = max(0, min(room, to - widths[i]))
            widths[i] += grow
            room -= grow
    return tuple(sorted(widths.items()))


# in colour roles (podtui/ui/colours.py), styled in the palette of the pane's theme
STATE_STYLES = {
    "verified": "bold good",
    "failed": "bold bad",
    "cancelled": "dim",
    "queued": "",
    "waiting_for_code": "warn",
    "transferring": "moving",
    "verifying": "checking",
}
ARROWS = {"pull": "↓", "push": "↑"}  # else hub: Hugging Face -> pod, on the pod itself
HUB_ARROW = "⇣"


def cursor_track(cursor: Style) -> Style:
    """The empty part of a bar on the cursor row: the cursor's text colour faded into its background, so that the
    filled part (the cursor's text colour itself) reads against it in any theme; dim where the colours are the
    terminal's own (an ANSI theme), which cannot be blended."""
    fg, bg = cursor.color, cursor.bgcolor
    if fg is None or bg is None or fg.triplet is None or bg.triplet is None:
        return Style(dim=True)
    faded = Color.from_rich_color(bg).blend(Color.from_rich_color(fg), 0.35)
    return Style(color=faded.rich_color)


def bar(job: TransferJob, palette: Palette = CLASSIC, width: int = BAR_WIDTH, cursor: Style | None = None) -> Text:
    """The bar and its percentage. cursor: the cursor row's style when the bar is on it; its filled part then takes
    the cursor's text colour, the rest that colour faded (cursor_track)."""
    st = palette.style
    pct = job.percent
    track = cursor_track(cursor) if cursor is not None else st("track")
    if pct is None:
        return Text("━" * width + " " * PERCENT_WIDTH, style=track)
    filled = round(width * pct / 100)
    colour = {"verified": "good", "failed": "bad", "cancelled": "absent"}.get(job.state, "moving")
    fill = Style() if cursor is not None else st(colour)
    return Text.assemble(("━" * filled, fill), ("━" * (width - filled), track), f" {pct:3.0f}%")


def state_text(job: TransferJob, runner: str | None = None, palette: Palette = CLASSIC, cursor: bool = False) -> Text:
    """The state in its colour (on the cursor row in the cursor's). runner: see cells()."""
    state = job.state_label
    if job.state == "queued" and job.error:  # waiting out a backoff before the next attempt
        state = "retry soon"
    if job.state == "waiting_for_code" and job.code:
        state = f"code {job.code[:4]}-…"
    if runner is not None and not job.finished:
        state += " (elsewhere)"
    return Text(state, style=Style() if cursor else palette.style(STATE_STYLES.get(job.state, "")), no_wrap=True)


def rate_cell(job: TransferJob) -> str:
    active = job.state in ("transferring", "waiting_for_code")
    return f"{units.size(job.rate_bytes_per_s)}/s" if active and job.rate_bytes_per_s else ""


def eta_cell(job: TransferJob) -> str:
    active = job.state in ("transferring", "waiting_for_code")
    return units.duration(job.eta_s) if active and job.eta_s is not None else ""


def checksum_cell(job: TransferJob) -> str:
    if job.direction == "hub":  # each file against the Hub's own sha256 / git sha1
        return f"{len(job.hub_files)} files {'✓' if job.state == 'verified' else 'vs Hub'}"
    return f"{job.algorithm} {job.checksum[:8]}" if job.checksum else job.algorithm


def size_cell(job: TransferJob) -> str:
    if job.total_bytes is None:
        return "—"
    if job.state in ("transferring", "waiting_for_code") and job.done_bytes < job.total_bytes:
        return f"{units.size(job.done_bytes)}/{units.size(job.total_bytes)}"
    return units.size(job.total_bytes)


def cells(job: TransferJob, runner: str | None = None, palette: Palette = CLASSIC) -> tuple[str | Text, ...]:
    """Every column's cell, in COLUMNS' order. runner: who runs the job when another podtui does ("another podtui
    (pid 123)"), else None."""
    return (
        Text(visible(job.label), overflow="ellipsis", no_wrap=True),
        Text(visible(job.pod_name or job.pod_id), overflow="ellipsis", no_wrap=True),
        ARROWS.get(job.direction, HUB_ARROW),
        bar(job, palette),
        size_cell(job),
        rate_cell(job),
        eta_cell(job),
        state_text(job, runner, palette),
        checksum_cell(job),
    )


def detail(
    job: TransferJob,
    runner: str | None = None,
    hold: str | None = None,
    forgettable: bool = False,
    forget_key: str = "d",
    shown: Collection[int] | None = None,
) -> str:
    """The line under the table for the highlighted transfer: where it goes, who runs it, and why it failed.
    hold: what holds back its "then terminate" (another podtui's transfer from the pod); forgettable: it is another
    podtui's that this one can never take over (TransferQueue.forgettable), so `forget_key` forgets it. shown: the
    table's columns (by index into COLUMNS), when not all: the size, rate, ETA and checksum it has no room for are
    said here."""
    where = f"{visible(job.source)} → {visible(job.final_path or job.target or '(pod folder)')}"
    if job.direction == "hub":
        where = (
            f"Hugging Face {job.repo_type} {visible(job.source)} → {visible(job.final_path or job.target)} on the pod"
        )
    if job.route:
        where += f"   · via {job.route}"
    if shown is not None:
        hidden = [
            text
            for i, text in (
                (SIZE, size_cell(job)),
                (RATE, rate_cell(job)),
                (ETA, eta_cell(job) and f"{eta_cell(job)} left"),
            )
            if i not in shown and text not in ("", "—")
        ]
        if CHECKSUM not in shown and job.direction == "hub":
            hidden.append(checksum_cell(job))
        elif CHECKSUM not in shown and job.checksum:
            hidden.append(f"{job.algorithm} {job.checksum[:16]}…")
        where += "".join(f"   · {text}" for text in hidden)
    if runner is not None:  # a host name written by another podtui: text from outside
        where += f"   · run by {visible(runner)}: shown as it last wrote it; act on it there"
        if forgettable:
            where += f" (if it has stopped, {forget_key} forgets it here)"
    if job.error:
        return f"{where}\n{visible(job.error)}"
    if hold is not None:
        return f"{where}\nthen terminate the pod: waits, as {visible(hold)}"
    if job.terminate_after:
        where += "   · then terminate the pod"
    return where


# --- the transfer strip ----------------------------------------------------------------------------------------

_STRIP_ORDER = {"transferring": 0, "verifying": 1, "waiting_for_code": 2, "queued": 3}


def running(jobs: Iterable[TransferJob]) -> list[TransferJob]:
    """The transfers not finished, the moving ones first, then the oldest first."""
    return sorted((j for j in jobs if not j.finished), key=lambda j: (_STRIP_ORDER.get(j.state, 9), j.created_at))


def _strip_entry(job: TransferJob, palette: Palette, name_width: int) -> Text:
    st = palette.style
    name = visible(job.label)
    if cell_len(name) > name_width:
        name = set_cell_size(name, max(1, name_width - 1)) + "…"
    pod = visible(job.pod_name or job.pod_id)
    if cell_len(pod) > 16:
        pod = set_cell_size(pod, 15) + "…"
    if job.state in ACTIVE and job.percent is not None and job.state != "waiting_for_code":
        how = f"{job.percent:.0f}%"
        if job.state == "verifying":
            how = "verifying"
        elif rate_cell(job):
            how += f" {rate_cell(job)}"
    else:
        how = state_text(job).plain
    return Text.assemble(
        (ARROWS.get(job.direction, HUB_ARROW), st("moving")),
        " ",
        (pod, st("faint")),
        " ",
        name,
        " ",
        (how, st(STATE_STYLES.get(job.state, ""))),
    )


def strip_line(jobs: Iterable[TransferJob], width: int, palette: Palette = CLASSIC) -> Text:
    """The transfer strip: the transfers under way, each as arrow, pod, name, percent and rate, as many as fit
    `width`, then how many more ("+2 more"). Empty when none is under way."""
    under_way = running(jobs)
    line = Text(no_wrap=True, overflow="ellipsis")
    for n, job in enumerate(under_way):
        more = len(under_way) - n - 1
        tail = f"  +{more} more" if more else ""
        gap = "   " if n else ""
        entry = _strip_entry(job, palette, 32)
        if n and cell_len(line.plain) + len(gap) + entry.cell_len + len(tail) > width:
            line.append(f"  +{len(under_way) - n} more", style=palette.style("muted"))
            return line
        if not n:  # the first one always, its name cut to leave room for the count
            spare = width - entry.cell_len - len(tail)
            if spare < 0:
                entry = _strip_entry(job, palette, max(4, min(32, cell_len(visible(job.label))) + spare))
        line.append(gap)
        line.append_text(entry)
    line.truncate(width, overflow="ellipsis")
    return line
