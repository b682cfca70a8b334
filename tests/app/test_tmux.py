"""The real app in a real terminal (tmux), typed into as a person would, the screen read back as text."""

from __future__ import annotations

import re
import shlex
import sys
import time

import pytest

from tests.helpers.tmux import Tmux

pytestmark = pytest.mark.tmux


def test_a_session_in_the_real_app(tmux: Tmux) -> None:
    tmux.start(f"{shlex.quote(sys.executable)} -m podtui --demo")
    screen = tmux.wait_for("llama-lora-3090")
    assert "DEMO" in screen
    # the locked H100 pod boots: PROVISIONING (its machine), then STARTING (its container), as RunPod says
    assert re.search(r"sweep-h100x2 .*(PROVISIONING|STARTING)", screen), screen

    # the third pod (sorted by name): its details in the pane under the list; Enter goes into them, escape back
    tmux.keys("j", "j")
    screen = tmux.wait_for("q7x2m9fk4r8t1a-6f3a91c2@")
    # the gateway's command as the API gives it: the demo's own gateway stands where ssh.runpod.io is
    assert re.search(r"ssh q7x2m9fk4r8t1a-6f3a91c2@127\.0\.0\.1 -p \d+", screen), screen
    assert "hf_demo" not in screen
    tmux.keys("Enter", "Escape")

    # filter down to one pod
    tmux.type("/a100")  # in one go: the letters reach the filter, not the list's keys (a is autostop)
    screen = tmux.wait_for("llama-lora-3090", absent=True)
    assert "eval-a100" in screen
    tmux.keys("Enter")

    # stop it: Cancel is the default, so Enter changes nothing; y confirms
    tmux.keys("s")
    tmux.wait_for("Stop eval-a100?")
    tmux.keys("Enter")
    tmux.wait_for("Stop eval-a100?", absent=True)
    tmux.keys("s")
    tmux.wait_for("Stop eval-a100?")
    tmux.keys("y")
    tmux.wait_for("EXITED")

    tmux.keys("Escape", "q")
    tmux.wait_for("EXIT=0")


def test_a_console_in_the_real_app(tmux: Tmux) -> None:
    """Keys go through a real terminal, Textual's key parsing, the console and SSH into the pod's shell."""
    tmux.start(f"{shlex.quote(sys.executable)} -m podtui --demo", width=120, height=30)
    tmux.wait_for("llama-lora-3090")
    tmux.keys("c")
    tmux.wait_for("/workspace#")
    tmux.type("cat README-demo.txt")
    tmux.keys("Enter")
    tmux.wait_for("This is a simulated RunPod pod")
    # ctrl+q and ctrl+p belong to the pod while the console has focus: raw mode shows their bytes
    tmux.type("stty raw -echo; echo RAW-READY; od -An -tx1 -N2; stty sane")
    tmux.keys("Enter")
    tmux.wait_for("\nRAW-READY")
    tmux.keys("C-q", "C-p")
    tmux.wait_for("11 10")
    tmux.type("sleep 60")
    tmux.keys("Enter")
    time.sleep(0.5)
    tmux.keys("C-c")
    tmux.wait_for("^C")
    # ctrl+] gives podtui its keys back; escape goes to the pods; q asks first, since a shell is open
    tmux.keys("C-]")
    time.sleep(0.3)
    tmux.keys("Escape")
    tmux.wait_for("Name")
    tmux.keys("q")
    tmux.wait_for("Quit with 1 console open?")
    tmux.keys("y")
    tmux.wait_for("EXIT=0")
