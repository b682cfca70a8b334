"""How a pod reads in the UI: labels, colours, sort keys, the filter, and which of the list's columns fit a width
and how wide (`fit`). No widgets here, so it is easy to test.

Cells name their colours by role (podtui/ui/colours.py): the table styles them in its theme's palette when it
draws, so the cells can be built off the event loop and outlive a change of theme."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from rich.cells import cell_len
from rich.text import Text

from podtui.core import units
from podtui.core.feed import STUCK_STARTING_S, starting_label
from podtui.core.pod import Pod, PodStatus
from podtui.ui.colours import CLASSIC, Palette

STATUS_STYLE = {  # in colour roles
    "RUNNING": "bold good",
    "PROVISIONING": "bold warn",
    "STARTING": "bold warn",
    "EXITED": "muted",
    "ERROR": "bold bad",
    "TERMINATED": "bad",
    "UNKNOWN": "bold odd",
}


class Cell(NamedTuple):
    """One table cell as styled runs of text: cheap to build, compare and draw (no Rich rendering). A run's style
    is in the palette's words ("bold good"), styled when it is drawn. `alts` are narrower forms of the same value,
    widest first, for a table with little room (a shorter GPU name, a shorter bar)."""

    parts: tuple[tuple[str, str], ...]
    right: bool
    width: int  # in terminal cells, measured once here rather than on every refresh
    alts: tuple[Cell, ...] = ()

    @property
    def plain(self) -> str:
        return "".join(text for text, _ in self.parts)

    @property
    def narrowest(self) -> Cell:
        return self.alts[-1] if self.alts else self

    def fit(self, width: int) -> Cell:
        """The widest form that fits `width`, or the narrowest (which the table then cuts with "…")."""
        if self.width <= width:
            return self
        return next((alt for alt in self.alts if alt.width <= width), self.narrowest)

    def to_text(self, palette: Palette = CLASSIC) -> Text:
        return Text.assemble(*((text, palette.style(style)) for text, style in self.parts))


def cell(text: str, style: str = "", right: bool = False, alts: tuple[Cell, ...] = ()) -> Cell:
    return Cell(((text, style),), right, cell_len(text), alts)


def status_cell(pod: Pod, starting_s: float | None = None) -> Cell:
    """starting_s: how long the pod has been starting; shown from a minute on, flagged once it may be stuck."""
    label = pod.state
    key = "UNKNOWN" if label.startswith("?") else label
    if label in ("STARTING", "PROVISIONING") and starting_s is not None and starting_s >= 60:
        style = "bold bad" if starting_s >= STUCK_STARTING_S else STATUS_STYLE[key]
        return cell(starting_label(starting_s, label), style)
    return cell(label, STATUS_STYLE.get(key, ""))


def status_text(pod: Pod, starting_s: float | None = None, palette: Palette = CLASSIC) -> Text:
    return status_cell(pod, starting_s).to_text(palette)


def util_cell(value: float | None, width: int = 10) -> Cell:
    if value is None:
        return cell("—".rjust(width + 5), "absent")
    v = max(0.0, min(100.0, value))
    eighths = round(v / 100 * width * 8)
    full, part = divmod(eighths, 8)
    bar = "█" * full + (" ▏▎▍▌▋▊▉"[part] if part else "")
    return Cell(((bar.ljust(width), _busy(v)), (f" {v:3.0f}%", "bold" if v >= 15 else "faint")), False, width + 5)


def _busy(v: float) -> str:
    return "good" if v >= 60 else ("warn" if v >= 15 else "faint")


def util_text(value: float | None, width: int = 10, palette: Palette = CLASSIC) -> Text:
    return util_cell(value, width).to_text(palette)


UTIL_BARS = (9, 8, 7, 6, 5, 4, 3)  # the narrower bars the list falls back to, before the percentage alone


@lru_cache(maxsize=1024)  # a poll of many pods repeats few values; cells are immutable, so they are shared
def util_column_cell(value: float | None) -> Cell:
    """The list's GPU util: a bar of 10 cells and the percentage, narrower bars when room is short, then the
    percentage alone in the bar's colour (so a busy GPU still reads as one)."""
    if value is None:
        return cell("—", "absent", right=True)
    v = max(0.0, min(100.0, value))
    alone = cell(f"{v:3.0f}%", "faint" if v < 15 else "bold " + _busy(v), right=True)
    return util_cell(v)._replace(alts=(*(util_cell(v, w) for w in UTIL_BARS), alone))


Cells = tuple[Cell, ...]

_MAKERS = frozenset({"NVIDIA", "GeForce", "AMD", "Instinct", "Tesla"})
_LEFT_OUT = frozenset({"Generation", "Blackwell", "Server", "Edition", "OAM"})  # "RTX 6000 Ada Generation"
_RENAMED = {"PCIE": "PCIe", "Workstation": "WK"}
_MEMORY = re.compile(r"\d+GB")
_SXM = re.compile(r"SXM\d*")
_HBM = re.compile(r"HBM\d\w*")


@lru_cache(maxsize=256)  # an account has a few GPU types among many pods
def gpu_model(type_id: str) -> tuple[str, str]:
    """A GPU type as RunPod's console names it, wide and narrow. v2 names a type by its id ("NVIDIA A100 80GB
    PCIe", "NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3"); without the maker's words and with its form factor
    in one word it reads "A100 80GB PCIe", "A100 SXM 80GB", "H100 SXM" (the 80GB HBM3 board is the SXM one), and
    narrow without its memory: "A100 PCIe". Words it does not know are kept as they are."""
    words = type_id.split()
    while len(words) > 1 and words[0] in _MAKERS:
        words = words[1:]
    out: list[str] = []
    for word in words:
        # an id in one word ("A100-SXM4-80GB") is split; a name's own hyphen ("Max-Q") is kept
        for part in word.split("-") if word.isupper() else [word]:
            if not part or part in _LEFT_OUT:
                continue
            if _HBM.fullmatch(part):
                if out and _MEMORY.fullmatch(out[-1]):
                    out.pop()
                part = "SXM"
            elif _SXM.fullmatch(part):
                part = "SXM"
            out.append(_RENAMED.get(part, part))
    wide = " ".join(out) or type_id.strip() or "?"
    narrow = " ".join(w for w in out if not _MEMORY.fullmatch(w)) if len(out) > 1 else wide
    return wide, narrow or wide


TIMES = "\u00d7"  # the multiplication sign: "2\u00d7 H100 SXM"


def gpu_names(pod: Pod) -> tuple[str, str]:
    """The pod's GPU as the list shows it, wide and narrow: "A100 80GB PCIe" and "A100 PCIe", two H100 SXM as
    "2\u00d7 H100 SXM" (the count only when there are several), "CPU" for a CPU pod."""
    if pod.gpu_count == 0:
        return "CPU", "CPU"
    wide, narrow = gpu_model(pod.gpu_name) if pod.gpu_name else ("?", "?")
    if pod.gpu_count is not None and pod.gpu_count > 1:
        return f"{pod.gpu_count}{TIMES} {wide}", f"{pod.gpu_count}{TIMES} {narrow}"
    return wide, narrow


def _gpu_cell(pod: Pod) -> Cell:
    wide, narrow = gpu_names(pod)
    return cell(wide, alts=(cell(narrow),) if narrow != wide else ())


def _idle_cell(idle: tuple[float, float]) -> Cell:
    """In place of an empty bar: idle how long and what that has cost, then shorter."""
    minutes = int(idle[0] // 60)
    label = f"IDLE {minutes // 60}h{minutes % 60:02d}" if minutes >= 60 else f"IDLE {minutes}m"
    full = f"{label} {units.money(idle[1])}"
    return cell(full.ljust(15), "badge", alts=(cell(full, "badge"), cell(label, "badge"), cell("IDLE", "badge")))


def row_cells(pod: Pod, idle: tuple[float, float] | None = None, starting_s: float | None = None) -> Cells:
    """One pod's cells in COLUMNS' order. idle: (seconds idle, what that idle time has cost) for a pod the idle
    tracker has marked; starting_s: how long a starting pod has been starting."""
    return (
        cell(pod.name, "bold"),
        cell(pod.id, "faint"),
        status_cell(pod, starting_s),
        _gpu_cell(pod),
        util_column_cell(pod.gpu_util) if idle is None else _idle_cell(idle),
        cell(units.rate(pod.cost_per_hr).removesuffix("/hr"), right=True),
        cell(units.duration(pod.uptime_s), right=True),
        cell(units.money(pod.accrued_cost), right=True),
        cell(pod.reach_label),
    )


SortKey = tuple[int, float | str, int]  # (0 present or 1 missing, the value, a second value)


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    short: str  # the heading when room is short
    priority: int  # 1 is kept longest: columns are left out from the highest number up when room is short
    sort_key: Callable[[Pod], SortKey]
    cut: int | None = None  # its values may be cut with "…" down to this many cells


def _num(get: Callable[[Pod], float | int | None]) -> Callable[[Pod], SortKey]:
    def key(p: Pod) -> SortKey:
        v = get(p)
        # Missing values sort after present ones, whichever the direction.
        return (0, float(v), 0) if v is not None else (1, 0.0, 0)

    return key


def _text(get: Callable[[Pod], str]) -> Callable[[Pod], SortKey]:
    return lambda p: (0, get(p).lower(), 0)


def _gpu_key(p: Pod) -> SortKey:
    """By the GPU's model, then how many: one RTX 3090, then two, then an RTX 4090."""
    if p.gpu_count == 0:
        return (0, "cpu", 0)
    if not p.gpu_name:
        return (1, "", 0)
    return (0, gpu_model(p.gpu_name)[0].lower(), p.gpu_count or 0)


COLUMNS: tuple[Column, ...] = (
    Column("name", "Name", "Name", 1, _text(lambda p: p.name), cut=12),
    Column("id", "ID", "ID", 9, _text(lambda p: p.id)),
    Column("status", "Status", "Status", 2, _text(lambda p: p.state)),
    Column("gpu", "GPU", "GPU", 6, _gpu_key),
    Column("util", "GPU util", "Util", 5, _num(lambda p: p.gpu_util)),
    Column("rate", "$/hr", "$/hr", 3, _num(lambda p: p.cost_per_hr)),
    Column("uptime", "Uptime", "Up", 7, _num(lambda p: p.uptime_s)),
    Column("cost", "Cost so far", "Cost", 4, _num(lambda p: p.accrued_cost)),
    Column("reach", "SSH", "SSH", 8, _text(lambda p: p.reach_label)),
)
SORTABLE = tuple(c.key for c in COLUMNS)


def headings(sort: str, reverse: bool) -> Cells:
    """The headings, the sorted column's with its arrow; each has its short form for when room is short."""

    def head(column: Column, label: str) -> Cell:
        if column.key != sort:
            return cell(label)
        return Cell(((label, ""), (" ▼" if reverse else " ▲", "bold")), False, cell_len(label) + 2)

    return tuple(head(c, c.label)._replace(alts=(head(c, c.short),) if c.short != c.label else ()) for c in COLUMNS)


# --- fitting the columns to the room there is ---------------------------------------------------------------


class Span(NamedTuple):
    """A column's widths in cells: the least it can take (narrowest forms, short heading, names cut), what its
    values want, and what its whole heading wants too."""

    least: int
    values: int
    full: int


Layout = tuple[tuple[int, int], ...]  # the columns shown, in screen order: (index in COLUMNS, width)


def measure(rows: Iterable[Cells], heads: Cells) -> tuple[Span, ...]:
    """Each column's widths for these rows under these headings (the sorted one carries its arrow)."""
    widest = [0] * len(COLUMNS)
    narrowest = [0] * len(COLUMNS)
    for row in rows:
        for i, c in enumerate(row):
            if c.width > widest[i]:
                widest[i] = c.width
            least = c.alts[-1].width if c.alts else c.width
            if least > narrowest[i]:
                narrowest[i] = least
    spans = []
    for i, column in enumerate(COLUMNS):
        least = narrowest[i] if column.cut is None else min(narrowest[i], column.cut)
        least = max(least, heads[i].narrowest.width)
        values = max(least, widest[i])
        spans.append(Span(least, values, max(values, heads[i].width)))
    return tuple(spans)


def fit(spans: Sequence[Span], room: int | None, pad: int = 1) -> Layout:
    """The columns that fit `room` cells (None: no limit), and their widths, each with `pad` cells either side.

    Everything at full width if it fits. Otherwise every column starts at its least width (the name at up to
    NAME_KEPT cells of it), and while that is still too wide the column of lowest priority is left out, down to the
    core four; only then is the name cut to its least too. What room is left goes back in priority order, first to
    the values, then to whole headings. So a GPU is named short and a bar narrowed before a column goes, and
    nothing is wider than the room unless the name alone is."""
    everything = range(len(spans))
    if room is None or sum(s.full + 2 * pad for s in spans) <= room:
        return tuple((i, spans[i].full) for i in everything)
    by_priority = sorted(everything, key=lambda i: COLUMNS[i].priority)
    # A name is the pod's identity: it is cut only once the columns under it are gone (up to NAME_KEPT cells), so
    # "llama-lora-3090" and "llama-lora-4090" do not both read "llama-lora-…" while the ID is in sight.
    wants = [
        min(s.values, max(s.least, NAME_KEPT)) if COLUMNS[i].key == "name" else s.least for i, s in enumerate(spans)
    ]
    kept = _kept(by_priority, wants, room, pad, least=len([c for c in COLUMNS if c.priority < CORE_PRIORITY]))
    if sum(wants[i] + 2 * pad for i in kept) > room:  # even the core columns want more: the name is cut too
        wants = [s.least for s in spans]
        kept = _kept(by_priority, wants, room, pad, least=1)
    widths = {i: wants[i] for i in kept}
    spare = room - sum(w + 2 * pad for w in widths.values())
    for tier in (1, 2):  # Span's values, then its full width
        for i in kept:
            more = min(spare, spans[i][tier] - widths[i])
            if more > 0:
                widths[i] += more
                spare -= more
    return tuple((i, widths[i]) for i in everything if i in widths)


NAME_KEPT = 20  # the cells of a name kept whole before lower columns go
CORE_PRIORITY = 5  # under it, name, status, $/hr and the cost so far: the columns kept before a name is cut


def _kept(by_priority: list[int], wants: Sequence[int], room: int, pad: int, least: int) -> list[int]:
    """The columns kept, highest priority first: the lowest left out while they want more than the room, but
    never fewer than `least`."""
    kept = list(by_priority)
    while len(kept) > max(1, least) and sum(wants[i] + 2 * pad for i in kept) > room:
        kept.pop()
    return kept


# --- marks: what podtui itself is doing with a pod ----------------------------------------------------------

PICKED_MARK = "\u25cf"  # a black circle: marked for a stop or terminate of several pods
CONSOLE_MARK = "\u276f"  # a heavy angle quote, a shell's prompt
AUTOSTOP_MARK = "\u25f7"  # a circle with a quadrant, a clock face
LOCKED_MARK = "\u2298"  # a circled slash: RunPod will not stop or reset it
AT_ZERO_MARK = "$"  # no network volume: its data is deleted at a $0 balance
MARKS = (  # (glyph, colour role, meaning): drawn in a narrow column left of the name, for a legend too
    (PICKED_MARK, "bold key", "marked: stop and terminate act on the marked pods"),
    (CONSOLE_MARK, "moving", "a console is open on the pod"),
    (AUTOSTOP_MARK, "warn", "autostop is on: podtui stops the pod once it has been idle"),
    (LOCKED_MARK, "bad", "locked: Locked pods cannot be stopped or reset"),
    # RunPod terminates pods without a network volume at a $0 balance (docs/runpod-facts.md#pricing-and-the-balance)
    (AT_ZERO_MARK, "muted", "data deleted at $0: no network volume"),
)
PICKED, CONSOLE, AUTOSTOP, LOCKED, AT_ZERO = range(len(MARKS))  # each mark's place in MARKS


def pod_marks(pod: Pod) -> tuple[bool, bool]:
    """The marks a pod carries of itself: locked, and data deleted at $0 (no network volume)."""
    return pod.locked, pod.status is not PodStatus.TERMINATED and not pod.network_volume


def marks_cell(on: Sequence[bool], slots: Sequence[int]) -> Cell:
    """One pod's marks: `on` says for each of MARKS whether it applies; `slots` are the MARKS the column has room
    for (those any pod in the list has), each in its own cell so that the marks line up."""
    parts = tuple((MARKS[k][0], MARKS[k][1]) if on[k] else (" ", "") for k in slots)
    return Cell(parts, False, len(parts))


def matches(pod: Pod, query: str) -> bool:
    """Every word of the filter must appear in the pod's name, id, status or GPU (case-insensitive)."""
    words = query.lower().split()
    if not words:
        return True
    hay = " ".join((pod.name, pod.id, pod.state, pod.gpu_label, gpu_names(pod)[0], pod.reach_label)).lower()
    return all(w in hay for w in words)


def arrange(pods: Iterable[Pod], query: str, sort: str, reverse: bool) -> list[Pod]:
    column = next((c for c in COLUMNS if c.key == sort), COLUMNS[0])
    keyed = [(column.sort_key(p), p.name.lower(), p.id, p) for p in pods if matches(p, query)]
    present = [k for k in keyed if k[0][0] == 0]
    missing = [k for k in keyed if k[0][0] == 1]
    present.sort(key=lambda k: k[:3], reverse=reverse)
    missing.sort(key=lambda k: k[1:3])
    return [k[3] for k in present] + [k[3] for k in missing]
