"""How money, time and percentages read on screen and in the CLI."""

from __future__ import annotations


def money(value: float | None) -> str:
    if value is None:
        return "—"
    if abs(value) < 10:
        return f"${value:,.3f}" if abs(value) < 1 else f"${value:,.2f}"
    return f"${value:,.2f}"


def rate(per_hr: float | None) -> str:
    return "—" if per_hr is None else f"${per_hr:,.3f}/hr"


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    s = max(0, int(seconds))
    days, s = divmod(s, 86400)
    hours, s = divmod(s, 3600)
    minutes, s = divmod(s, 60)
    if days:
        return f"{days}d {hours:02d}h"
    if hours:
        return f"{hours}h {minutes:02d}m"
    if minutes:
        return f"{minutes}m {s:02d}s"
    return f"{s}s"


def percent(value: float | None) -> str:
    return "—" if value is None else f"{value:.0f}%"


def size(nbytes: float | None) -> str:
    """Bytes in base-1000 units, as runpodctl's bar shows them: 812 B, 8.8 MB, 52 MB, 1.2 GB."""
    if nbytes is None:
        return "—"
    value, unit = float(nbytes), "B"
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(value) < 1000 or unit == "TB":
            break
        value /= 1000
    if unit == "B":
        return f"{value:.0f} B"
    return f"{value:.1f} {unit}" if abs(value) < 10 else f"{value:.0f} {unit}"


def ago(then: float | None, now: float | None) -> str:
    """When something happened, as people say it: "2h 18m ago", "just now"; "—" when unknown. A time in the future
    (a clock ahead of ours) is not shown as negative."""
    if then is None or now is None:
        return "—"
    seconds = now - then
    if seconds < 5:
        return "just now"
    return f"{duration(seconds)} ago"
