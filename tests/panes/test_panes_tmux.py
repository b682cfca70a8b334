"""The panes in the real app in a real terminal (tmux), typed into as a person would: select a pod, open its
console in the pane, zoom, come back; and at 80x24 the money columns in sight (docs/architecture.md#panes)."""

from __future__ import annotations

import shlex
import sys

import pytest

from tests.helpers.tmux import Tmux

pytestmark = pytest.mark.tmux


def test_select_console_zoom_and_back_at_120x32(tmux: Tmux) -> None:
    tmux.start(f"{shlex.quote(sys.executable)} -m podtui --demo", width=120, height=32)
    tmux.wait_for("llama-lora-3090")
    tmux.wait_for("Details")  # the pane's tabs, under the list
    tmux.keys("j", "j")  # llama-lora-3090: the pane follows
    tmux.wait_for("q7x2m9fk4r8t1a-6f3a91c2@")
    tmux.keys("c")  # its console, in the pane: the list stays on screen above it
    screen = tmux.wait_for("/workspace#")
    assert "eval-a100" in screen and "notebook-4090" in screen, screen
    tmux.type("echo PANE-$((6*7))")
    tmux.keys("Enter")
    tmux.wait_for("PANE-42")
    tmux.keys("C-]")  # podtui's keys again
    tmux.wait_for("PODTUI KEYS")
    tmux.keys("z")  # the focused pane (the pod's) fills the screen: the list goes
    screen = tmux.wait_for("notebook-4090", absent=True)
    assert "PANE-42" in screen, screen
    tmux.keys("z")  # and back
    screen = tmux.wait_for("notebook-4090")
    assert "PANE-42" in screen, screen
    tmux.keys("Escape", "k")  # to the list, up a pod: the pane follows, the shell goes on
    tmux.wait_for("no console on this pod")
    tmux.keys("j")
    tmux.wait_for("PANE-42")
    tmux.keys("q")
    tmux.wait_for("Quit with 1 console open?")
    tmux.keys("y")
    tmux.wait_for("EXIT=0")


def test_the_money_columns_fit_80x24(tmux: Tmux) -> None:
    tmux.start(f"{shlex.quote(sys.executable)} -m podtui --demo", width=80, height=24)
    screen = tmux.wait_for("llama-lora-3090")
    header = next(line for line in screen.splitlines() if "Name" in line and "Status" in line)
    assert "$/hr" in header and "Cost" in header, screen
    rows = [line for line in screen.splitlines() if "llama-lora-3090" in line]
    assert rows and "$0.220" in rows[0], screen  # its $/hr, in sight
    assert all(len(line) <= 80 for line in screen.splitlines())
    tmux.keys("q")
    tmux.wait_for("EXIT=0")
