"""A thread that dies inside podtui (a library's, such as paramiko's SFTP prefetch on a dropped link) goes to the
log, never to the terminal, where it would print a traceback over the full-screen app."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.helpers.repo import REPO

SCRIPT = """
import sys, threading
from pathlib import Path
from podtui.cli.session import setup_logging
from podtui.core.paths import Paths
d = Path(sys.argv[1])
setup_logging(Paths(d / "config", d / "log", d / "data"))
def prefetch():
    raise EOFError("the link dropped")
t = threading.Thread(target=prefetch, name="Thread-9 (_prefetch_thread)")
t.start()
t.join()
print("still running")
"""


def test_a_dying_thread_is_logged_not_printed(tmp_path: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path)], capture_output=True, text=True, timeout=60, cwd=REPO
    )
    assert r.returncode == 0 and r.stdout == "still running\n"
    assert r.stderr == "", r.stderr
    (log,) = (tmp_path / "log").iterdir()
    text = log.read_text()
    assert "thread Thread-9 (_prefetch_thread) ended with an error" in text and "EOFError: the link dropped" in text
