"""A form's button made pressable again after what it sent was refused."""

from __future__ import annotations

from textual.widgets import Button


def ready_again(button: Button, enabled: bool = True) -> None:
    """Enable `button` (unless `enabled` is False) and end the press that sent the refused request: Textual
    ignores a click or enter on a button still marked pressed (`-active`, for 0.2 s after a press), so a refusal
    that comes back at once would otherwise swallow the user's second try (docs/architecture.md#forms)."""
    button.disabled = not enabled
    button.remove_class("-active")
