"""Bars of block characters in eighths of a cell, as the Spend view and `podtui spend` draw them
(docs/spend.md#the-spend-view)."""

from __future__ import annotations

EIGHTHS = " ▏▎▍▌▋▊▉█"


def bar_text(amount: float, most: float, width: int) -> str:
    """A bar `width` cells long at `most`, in eighths of a cell; a sliver for anything above 0."""
    if most <= 0 or amount <= 0 or width <= 0:
        return ""
    eighths = max(1, round(min(amount / most, 1.0) * width * 8))
    return "█" * (eighths // 8) + (EIGHTHS[eighths % 8] if eighths % 8 else "")
