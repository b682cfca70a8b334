"""Reaching what runs on a pod, in the real app in a real terminal (tmux), typed into as a person would: the pod's
log live in the pane, its services, a link opened in the "browser" (a script that fetches it), a port forwarded and
a real HTTP request through it, then OpenSSH on the pod with the app suspended, and back."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import httpx
import pytest

from tests.helpers.sim import needs_sshd
from tests.helpers.tmux import Tmux

pytestmark = pytest.mark.tmux

BROWSER = """#!{python}
import sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=10) as answer:
    body = answer.read().decode()
open({out!r}, "w").write(f"{{answer.status}} {{sys.argv[1]}}\\n{{body}}")
"""


@needs_sshd
def test_logs_services_forward_and_ssh(tmux: Tmux, tmp_path: Path) -> None:
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser"
    browser.write_text(BROWSER.format(python=sys.executable, out=str(opened)))
    browser.chmod(0o755)
    tmux.start(f"env BROWSER={shlex.quote(str(browser))} {shlex.quote(sys.executable)} -m podtui --demo", 120, 32)
    tmux.wait_for("llama-lora-3090")
    tmux.wait_for("Details")
    tmux.keys("j", "j", "L")  # llama-lora-3090's log, live, in the pane
    tmux.wait_for("● live")
    tmux.wait_for("loss")
    tmux.keys("Escape", "S")  # its services
    screen = tmux.wait_for("8888")
    assert "-8888/" in screen, screen  # the demo's proxy, on this machine
    tmux.keys("o")  # opened in the browser, which fetches it through the simulated proxy
    tmux.wait_for("opened http://")
    for _ in range(100):
        if opened.exists() and opened.read_text():
            break
        tmux.wait_for("opened", timeout=0.1)
    status, _, body = opened.read_text().partition("\n")
    assert status.startswith("200 ") and "Jupyter Server" in body, opened.read_text()
    # forwarded to this machine over direct SSH: the demo's pods get their sshd a moment after they are listed (as a
    # real pod's ports come up after it starts); until a poll says so, f says why not: pressed again, as a user would
    for _ in range(30):
        tmux.keys("f")
        try:
            screen = tmux.wait_for("listening", timeout=2)
            break
        except AssertionError:
            continue
    screen = tmux.wait_for("listening")
    local = re.search(r"127\.0\.0\.1:(\d+)\s+8888\s+listening", screen)  # the forwards table's line
    assert local is not None, screen
    answer = httpx.get(f"http://127.0.0.1:{local.group(1)}/", timeout=10.0)
    assert answer.status_code == 200 and "Jupyter Server" in answer.text
    tmux.keys("Escape", "!")  # OpenSSH on the pod, the app suspended
    tmux.wait_for("/workspace#", timeout=30)
    tmux.type("echo SSH-$((6*7))")
    tmux.keys("Enter")
    tmux.wait_for("SSH-42")
    tmux.type("exit")
    tmux.keys("Enter")
    tmux.wait_for("back from ssh to llama-lora-3090")  # the app again, as it was
    tmux.wait_for("listening")
    tmux.keys("q")
    tmux.wait_for("EXIT=0")
