"""podtui: a terminal app for people who rent GPU pods on RunPod."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from podtui.version import __version__

# A library stays quiet unless its user configures logging; the CLI sends podtui's logs to a file.
logging.getLogger("podtui").addHandler(logging.NullHandler())

if TYPE_CHECKING:
    from podtui.core.ssh.remote import run_remote


def __getattr__(name: str) -> Any:
    # `from podtui import run_remote` without paying for paramiko on every `import podtui`.
    if name == "run_remote":
        from podtui.core.ssh.remote import run_remote

        return run_remote
    raise AttributeError(name)


__all__ = ["__version__", "run_remote"]
