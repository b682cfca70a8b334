"""How a pod reads in the UI: labels, colours, sort keys and the filter. No widgets here, so it is easy to test.

Cells name their colours by role (podtui/ui/colours.py): the table styles them in its theme's palette when it
draws, so the cells can be built off the event loop and outlive a change of theme."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import NamedTuple

from rich.cells import cell_len
from rich.text import Text

from podtui.core import units
from podtui.core.feed import STUCK_STARTING_S, starting_label
from podtui.core.pod import Pod
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
    is in the palette's words ("bold good"), styled when it is drawn."""

    parts: tuple[tuple[str, str], ...]
    right: bool
    width: int  # in terminal cells, measured once here rather than on every refresh

    @property
    def plain(self) -> str:
        return "".join(text for text, _ in self.parts)

    def to_text(self, palette: Palette = CLASSIC) -> Text:
        return Text.assemble(*((text, palette.style(style)) for text, style in self.parts))


def cell(text: str, style: str = "", right: bool = False) -> Cell:
    return Cell(((text, style),), right, cell_len(text))


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
    style = "good" if v >= 60 else ("warn" if v >= 15 else "faint")
    return Cell(((bar.ljust(width), style), (f" {v:3.0f}%", "bold" if v >= 15 else "faint")), False, width + 5)


def util_text(value: float | None, width: int = 10, palette: Palette = CLASSIC) -> Text:
    return util_cell(value, width).to_text(palette)


Cells = tuple[Cell, ...]


def gpu_short(pod: Pod) -> str:
    """The GPU as the list shows it: v2 names a type by its id ("NVIDIA GeForce RTX 4090"); without the maker's
    words it reads as RunPod's console names it ("RTX 4090") and the table keeps to the width it had."""
    name = pod.gpu_name
    if not pod.gpu_count or not name:
        return pod.gpu_label
    for maker in ("NVIDIA ", "GeForce "):
        name = name.removeprefix(maker)
    return f"{pod.gpu_count} x {name}"


def row_cells(pod: Pod, idle: tuple[float, float] | None = None, starting_s: float | None = None) -> Cells:
    """idle: (seconds idle, what that idle time has cost) for a pod the idle tracker has marked;
    starting_s: how long a starting pod has been starting."""
    util = util_cell(pod.gpu_util)
    if idle is not None:  # in place of an empty bar: idle how long, and what that has cost
        minutes = int(idle[0] // 60)
        label = f"IDLE {minutes // 60}h{minutes % 60:02d}" if minutes >= 60 else f"IDLE {minutes}m"
        util = cell(f"{label} {units.money(idle[1])}"[: util.width].ljust(util.width), "badge")
    return (
        cell(pod.name, "bold"),
        cell(pod.id, "faint"),
        status_cell(pod, starting_s),
        cell(gpu_short(pod)),
        util,
        cell(units.rate(pod.cost_per_hr).removesuffix("/hr"), right=True),
        cell(units.duration(pod.uptime_s), right=True),
        cell(units.money(pod.accrued_cost), right=True),
        cell(pod.reach_label),
    )


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    sort_key: Callable[[Pod], tuple[int, float | str]]


def _num(get: Callable[[Pod], float | int | None]) -> Callable[[Pod], tuple[int, float | str]]:
    def key(p: Pod) -> tuple[int, float | str]:
        v = get(p)
        # Missing values sort after present ones, whichever the direction.
        return (0, float(v)) if v is not None else (1, 0.0)

    return key


def _text(get: Callable[[Pod], str]) -> Callable[[Pod], tuple[int, float | str]]:
    return lambda p: (0, get(p).lower())


COLUMNS: tuple[Column, ...] = (
    Column("name", "Name", _text(lambda p: p.name)),
    Column("id", "ID", _text(lambda p: p.id)),
    Column("status", "Status", _text(lambda p: p.state)),
    Column("gpu", "GPU", _text(gpu_short)),
    Column("util", "GPU util", _num(lambda p: p.gpu_util)),
    Column("rate", "$/hr", _num(lambda p: p.cost_per_hr)),
    Column("uptime", "Uptime", _num(lambda p: p.uptime_s)),
    Column("cost", "Cost so far", _num(lambda p: p.accrued_cost)),
    Column("reach", "SSH", _text(lambda p: p.reach_label)),
)
SORTABLE = tuple(c.key for c in COLUMNS)


def matches(pod: Pod, query: str) -> bool:
    """Every word of the filter must appear in the pod's name, id, status or GPU (case-insensitive)."""
    words = query.lower().split()
    if not words:
        return True
    hay = " ".join((pod.name, pod.id, pod.state, pod.gpu_label, pod.reach_label)).lower()
    return all(w in hay for w in words)


def arrange(pods: Iterable[Pod], query: str, sort: str, reverse: bool) -> list[Pod]:
    column = next((c for c in COLUMNS if c.key == sort), COLUMNS[0])
    keyed = [(column.sort_key(p), p.name.lower(), p.id, p) for p in pods if matches(p, query)]
    present = [k for k in keyed if k[0][0] == 0]
    missing = [k for k in keyed if k[0][0] == 1]
    present.sort(key=lambda k: k[:3], reverse=reverse)
    missing.sort(key=lambda k: k[1:3])
    return [k[3] for k in present] + [k[3] for k in missing]
