"""The footer that fits its width: the keys that fit, the most useful first; the others are dropped whole.

Textual's Footer lays every shown key in one row and cuts what does not fit, mid-word. This one ranks the keys by
the key table's `rank` (lower is kept longer) and shows the longest run of them, in that order, that fits; the
help key (rank 0) always stays, since it lists every key. It is laid out again when the width or the bindings
change, and drawn compact when the roomy style would drop a key.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from podtui.ui import keymap

ALWAYS = 0  # the rank of a key never dropped
UNRANKED = 99  # a binding from outside the key table (Textual's own): dropped first


@dataclass(frozen=True)
class Slot:
    """A key the footer may show: the binding, whether it acts now, its rank and its place in the binding chain."""

    binding: Binding
    key_display: str
    enabled: bool
    tooltip: str
    rank: int
    order: int
    palette: bool = False  # the command palette's hint, docked on the right

    @property
    def name(self) -> str:
        return self.binding.id or self.binding.action

    def width(self, compact: bool) -> int:
        """The cells it takes with its margin, as Footer's and FooterKey's default styles draw it (Textual 8.2)."""
        key, words = cell_len(self.key_display), cell_len(self.binding.description)
        if self.palette:  # always drawn compact ("^p palette"), with a left border and one cell of padding or margin
            return (key + 1 + words if words else key) + 2
        if not words:
            return key + (1 if compact else 0)
        # roomy: " key " + "words "; compact: "key" + " words" and a one-cell right margin
        return key + words + (2 if compact else 3)

    def widget(self) -> FooterKey:
        b = self.binding
        if self.palette:
            return FooterKey(
                b.key,
                self.key_display,
                b.description,
                b.action,
                disabled=not self.enabled,
                tooltip=b.tooltip or b.description,
                classes="-command-palette",
            )
        key = FooterKey(
            b.key, self.key_display, b.description, b.action, disabled=not self.enabled, tooltip=self.tooltip
        )
        return key.data_bind(compact=FittedFooter.compact)


def rank_of(binding: Binding) -> int:
    key = keymap.BY_ID.get(binding.id or "")
    return key.rank if key is not None else UNRANKED


def longest_run(slots: Sequence[Slot], width: int, compact: bool) -> list[Slot]:
    """The slots kept at `width`: every ALWAYS one, then the others by rank (ties in chain order) until one does
    not fit. A run, not a best packing: a key is never shown while a more useful one is dropped."""
    used = sum(s.width(compact) for s in slots if s.rank == ALWAYS)
    kept = [s for s in slots if s.rank == ALWAYS]
    for slot in sorted((s for s in slots if s.rank != ALWAYS), key=lambda s: (s.rank, s.order)):
        used += slot.width(compact)
        if used > width:
            break
        kept.append(slot)
    return kept


def fit(slots: Sequence[Slot], width: int) -> tuple[list[Slot], bool]:
    """The slots to show at `width`, in the order shown, and whether compact: roomy while every key fits."""
    compact = False
    kept = longest_run(slots, width, compact)
    if len(kept) < len(slots):
        compact = True
        kept = longest_run(slots, width, compact)
    # most useful first; the ALWAYS keys (help) last, beside the palette's hint: the ways to every other key
    return sorted(kept, key=lambda s: (s.palette, s.rank == ALWAYS, s.rank, s.order)), compact


class FittedFooter(Footer):
    """Footer whose keys never overflow: see the module's docstring."""

    _shown: tuple[tuple[str, ...], bool] | None = None  # what compose last laid out

    def slots(self) -> list[Slot]:
        """Every key it may show now, in the binding chain's order (the focused widget's first), the palette's last."""
        active = self.screen.active_bindings
        slots: list[Slot] = []
        seen: set[str] = set()
        for order, (_node, binding, enabled, tooltip) in enumerate(active.values()):
            slot = Slot(binding, self.app.get_key_display(binding), enabled, tooltip, rank_of(binding), order)
            if binding.show and slot.name not in seen:  # "up,k" is two bindings of one key
                seen.add(slot.name)
                slots.append(slot)
        if self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE:
            found = active.get(self.app.COMMAND_PALETTE_BINDING)
            if found is not None:
                _node, binding, enabled, tooltip = found
                display = self.app.get_key_display(binding)
                slots.append(Slot(binding, display, enabled, tooltip, rank_of(binding), len(active), palette=True))
        return slots

    def _fitted(self) -> tuple[list[Slot], bool]:
        return fit(self.slots(), self.size.width or self.app.size.width)

    def compose(self) -> ComposeResult:
        if not self._bindings_ready:
            return
        kept, compact = self._fitted()
        self._shown = _names(kept), compact
        self.compact = compact
        for slot in kept:
            yield slot.widget()

    def on_resize(self, event: events.Resize) -> None:
        if not self._bindings_ready or not self.is_attached:
            return
        kept, compact = self._fitted()
        if (_names(kept), compact) != self._shown:
            self.refresh(recompose=True)


def _names(slots: Iterable[Slot]) -> tuple[str, ...]:
    return tuple(s.name for s in slots)
