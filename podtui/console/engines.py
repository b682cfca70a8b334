"""Which terminal engines exist, which are installed, and the one a console gets.

libghostty-vt (through pyghostty) is tried first, asciinema's avt (through pyavt) second. An engine's module is
imported only when a console asks for it, so one whose wheel or native library is missing falls back to the other.
"""

from __future__ import annotations

from podtui.console.emulator import Emulator, Reply

ENGINES = ("ghostty", "avt")


def available_engines() -> list[str]:
    found = []
    for name, module in (("ghostty", "pyghostty"), ("avt", "avt")):
        try:
            __import__(module)
        except (ImportError, OSError):  # OSError: the wheel is there but its native library is not
            continue
        found.append(name)
    return found


def make_emulator(
    cols: int, rows: int, scrollback: int = 10_000, on_reply: Reply | None = None, engine: str | None = None
) -> Emulator:
    """The fastest engine installed, or the one asked for (PODTUI_TERMINAL_ENGINE overrides)."""
    import os

    wanted = engine or os.environ.get("PODTUI_TERMINAL_ENGINE") or None
    if wanted is not None and wanted not in ENGINES:
        raise ValueError(f"unknown terminal engine {wanted!r}; choose one of {', '.join(ENGINES)}")
    for name in [wanted] if wanted else list(ENGINES):
        try:
            if name == "ghostty":
                from podtui.console.ghostty_engine import GhosttyEmulator

                return GhosttyEmulator(cols, rows, scrollback, on_reply)
            from podtui.console.avt_engine import AvtEmulator

            return AvtEmulator(cols, rows, scrollback, on_reply)
        except (ImportError, OSError):
            if wanted:
                raise
    raise ImportError("no terminal engine is installed: pip install pyghostty (or pyavt)")
