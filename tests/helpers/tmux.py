"""The real app in a real terminal: tmux driven as a person would, the screen read back as text."""

from __future__ import annotations

import os
import shlex
import subprocess
import time
import uuid
from pathlib import Path


class Tmux:
    def __init__(self, home: Path) -> None:
        self.socket = f"podtui-test-{uuid.uuid4().hex[:8]}"
        self.home = home

    def run(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=True).stdout

    def start(self, command: str, width: int = 130, height: int = 34) -> None:
        env = {
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.home / "config"),
            "XDG_STATE_HOME": str(self.home / "state"),
            "XDG_DATA_HOME": str(self.home / "data"),
            "TERM": "xterm-256color",
            "PATH": os.environ.get("PATH", ""),
        }
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        # `; sleep` keeps the pane after exit so the test can read the exit status.
        self.run(
            "new-session",
            "-d",
            "-x",
            str(width),
            "-y",
            str(height),
            f"env -i {exports} {command}; echo EXIT=$?; sleep 30",
        )

    def keys(self, *keys: str) -> None:
        for k in keys:
            self.run("send-keys", k)
            # A bare ESC followed quickly by a key reads as alt+key in any terminal; pause as a person would.
            time.sleep(0.3 if k == "Escape" else 0.05)

    def type(self, text: str) -> None:
        self.run("send-keys", "-l", text)

    def screen(self) -> str:
        return self.run("capture-pane", "-p")

    def wait_for(self, text: str, timeout: float = 20.0, absent: bool = False) -> str:
        end = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < end:
            screen = self.screen()
            if (text in screen) != absent:
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{'still' if absent else 'never'} saw {text!r} on screen:\n{screen}")

    def kill(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)
