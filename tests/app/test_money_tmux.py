"""Money over time and accounts in the real app in a real terminal (tmux), typed into as a person would: `$` opens
the Spend view on the demo's month of billing, its keys change the range and the breakdown, and the palette
switches to the demo's second account, whose name the header then shows, and back."""

from __future__ import annotations

import shlex
import sys

import pytest

from tests.helpers.tmux import Tmux

pytestmark = pytest.mark.tmux


def test_spend_view_and_switching_profiles(tmux: Tmux) -> None:
    tmux.start(f"{shlex.quote(sys.executable)} -m podtui --demo", 120, 32)
    tmux.wait_for("llama-lora-3090")
    tmux.keys("$")
    tmux.wait_for("RunPod's billing")  # the demo's month, from the simulated billing routes
    screen = tmux.wait_for("by pod")
    assert "eval-a100" in screen and "per day" in screen, screen
    tmux.keys("m")  # 30 days
    tmux.wait_for("the last 30 days")
    tmux.keys("g")  # by GPU type
    tmux.wait_for("by GPU")
    tmux.keys("Escape")
    tmux.wait_for("llama-lora-3090")
    tmux.keys("C-p")
    tmux.type("Switch to profile team")
    tmux.wait_for("Switch to profile team")
    tmux.keys("Enter")  # the app starts again on the team's account
    screen = tmux.wait_for("team-finetune-a100")
    assert "llama-lora-3090" not in screen, screen
    assert "team" in screen.splitlines()[0], screen  # the profile's name in the header
    tmux.keys("C-p")
    tmux.type("Switch to profile main")
    tmux.wait_for("Switch to profile main")
    tmux.keys("Enter")
    screen = tmux.wait_for("llama-lora-3090")
    assert "team-finetune-a100" not in screen, screen
    tmux.keys("q")
    tmux.wait_for("EXIT=0")
