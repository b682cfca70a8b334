"""How a pod reads in the UI: labels, colours, sort keys and the filter. No widgets here, so it is easy to test."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from rich.text import Text

from podtui.core import units
from podtui.core.pod import Pod

STATUS_STYLE = {
    "RUNNING": "bold green",
    "STARTING": "bold yellow",
    "RESTARTING": "bold yellow",
    "EXITED": "grey62",
    "PAUSED": "grey62",
    "DEAD": "bold red",
    "TERMINATED": "red",
    "UNKNOWN": "bold magenta",
}


def status_text(pod: Pod) -> Text:
    label = pod.state
    key = "UNKNOWN" if label.startswith("?") else label
    return Text(label, style=STATUS_STYLE.get(key, ""))


def util_text(value: float | None, width: int = 10) -> Text:
    if value is None:
        return Text("—".rjust(width + 5), style="grey50")
    v = max(0.0, min(100.0, value))
    eighths = round(v / 100 * width * 8)
    full, part = divmod(eighths, 8)
    bar = "█" * full + (" ▏▎▍▌▋▊▉"[part] if part else "")
    style = "green" if v >= 60 else ("yellow" if v >= 15 else "grey58")
    return Text.assemble((bar.ljust(width), style), (f" {v:3.0f}%", "bold" if v >= 15 else "grey58"))


Cells = tuple[Text | str, ...]


def row_cells(pod: Pod) -> Cells:
    return (
        Text(pod.name, style="bold"),
        Text(pod.id, style="grey58"),
        status_text(pod),
        pod.gpu_label,
        util_text(pod.gpu_util),
        Text(units.rate(pod.cost_per_hr).removesuffix("/hr"), justify="right"),
        Text(units.duration(pod.uptime_s), justify="right"),
        Text(units.money(pod.accrued_cost), justify="right"),
        pod.reach_label,
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
    Column("gpu", "GPU", _text(lambda p: p.gpu_label)),
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
    chosen = [p for p in pods if matches(p, query)]
    present = [p for p in chosen if column.sort_key(p)[0] == 0]
    missing = [p for p in chosen if column.sort_key(p)[0] == 1]
    present.sort(key=lambda p: (column.sort_key(p), p.name.lower(), p.id), reverse=reverse)
    missing.sort(key=lambda p: (p.name.lower(), p.id))
    return present + missing
