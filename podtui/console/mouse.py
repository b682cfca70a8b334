"""Mouse events to the reports a program asked for with DEC modes 9, 1000, 1002, 1003 and 1006 (SGR)."""

from __future__ import annotations

from typing import Literal

from podtui.console.emulator import Modes

Kind = Literal["press", "release", "drag", "move", "wheel_up", "wheel_down"]
_LEGACY_MAX = 223  # the old encoding puts 32 + coordinate in one byte


def wants(kind: Kind, modes: Modes) -> bool:
    if modes.mouse == 0:
        return False
    if modes.mouse == 9:
        return kind == "press"
    if kind == "drag":
        return modes.mouse in (1002, 1003)
    if kind == "move":
        return modes.mouse == 1003
    return True


def encode_mouse(
    kind: Kind,
    x: int,
    y: int,
    modes: Modes,
    button: int = 0,
    *,
    shift: bool = False,
    meta: bool = False,
    ctrl: bool = False,
) -> bytes | None:
    """x and y are 0-based cells; button 0 left, 1 middle, 2 right."""
    if not wants(kind, modes) or x < 0 or y < 0:
        return None
    if kind in ("wheel_up", "wheel_down"):
        code = 64 + (kind == "wheel_down")
    elif kind == "move":
        code = 35  # motion with no button
    else:
        code = button + (32 if kind == "drag" else 0)
    if modes.mouse != 9:
        code += 4 * shift + 8 * meta + 16 * ctrl
    if modes.mouse_sgr:
        return f"\x1b[<{code};{x + 1};{y + 1}{'m' if kind == 'release' else 'M'}".encode()
    if kind == "release":
        code = 3 + (code & ~3)
    if x + 1 > _LEGACY_MAX or y + 1 > _LEGACY_MAX:
        return None
    return bytes([0x1B, 0x5B, 0x4D, 32 + code, 33 + x, 33 + y])
