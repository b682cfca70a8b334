"""How one run of the TUI goes, besides the services: `build_app` fills it from the command line and the config."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

ExitWhen = Literal["first-frame", "data"]


@dataclass(frozen=True)
class RunOptions:
    """No defaults for what the config also says: build_app() merges the two, so nothing else decides them."""

    poll_interval_s: float
    read_only: bool  # nothing that changes or costs anything
    exit_when: ExitWhen | None = None  # bench/: exit once the first frame, or the first data, is on screen
    screenshot: Path | None = None  # save the screen as SVG once data is there, then exit
