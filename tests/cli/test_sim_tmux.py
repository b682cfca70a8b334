"""`podtui sim` in one terminal and the TUI in another, as a person uses them: the TUI is given only the exports the
simulator printed, and works against it as against RunPod (v2 statuses, a stop through the keys, a console over
the SSH endpoint the API names)."""

from __future__ import annotations

import shlex
import sys
import time

from tests.helpers.tmux import Tmux


def test_the_tui_in_another_terminal_works_against_podtui_sim(tmux: Tmux) -> None:
    py = shlex.quote(sys.executable)
    tmux.start(f"{py} -m podtui sim", width=200, height=40)
    screen = tmux.wait_for("export RUNPOD_API_BASE_URL=", timeout=60)
    first = next(line for line in screen.splitlines() if line.startswith("export "))
    words = shlex.split(first)
    exports = dict(w.split("=", 1) for w in words[1:])
    assert set(exports) == {"RUNPOD_API_BASE_URL", "RUNPOD_API_KEY", "HF_ENDPOINT"}
    assert exports["RUNPOD_API_BASE_URL"].startswith("http://127.0.0.1:")

    # a second terminal: nothing but the exports (and an isolated home) tells podtui where RunPod is
    home = tmux.home / "other"
    env = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_DATA_HOME": str(home / "data"),
        "TERM": "xterm-256color",
        "PATH": "/usr/bin:/bin",
        **exports,
    }
    command = "env -i " + " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items()) + f" {py} -m podtui"
    tmux.run("new-window", "-d", "-n", "tui", f"{command}; echo EXIT=$?; sleep 30")
    tmux.run("select-window", "-t", "tui")
    tmux.run("resize-window", "-t", "tui", "-x", "150", "-y", "34")

    screen = tmux.wait_for("llama-lora-3090", timeout=30)
    assert "DEMO" not in screen  # it is not the demo: a RunPod reached through RUNPOD_API_BASE_URL
    assert "notebook-4090" in screen and "EXITED" in screen
    assert any(word in screen for word in ("PROVISIONING", "STARTING"))  # sweep-h100x2, v2's statuses

    # stop eval-a100 through the keys; the simulator (a separate process) says EXITED on the next poll
    tmux.keys("/")
    tmux.wait_for("filter: words in name")
    time.sleep(0.2)
    tmux.type("a100")
    tmux.wait_for("llama-lora-3090", absent=True)
    tmux.keys("Enter", "s")
    tmux.wait_for("Stop eval-a100?")
    tmux.keys("y")
    tmux.wait_for("EXITED", timeout=30)

    tmux.keys("Escape", "q")
    tmux.wait_for("EXIT=0")
    # the simulator keeps running in its own terminal until it is told to stop
    tmux.run("select-window", "-t", ":0")
    tmux.run("send-keys", "-t", ":0", "C-c")
    tmux.wait_for("EXIT=0", timeout=30)
