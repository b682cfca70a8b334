"""Detached jobs in the real app in a real terminal (tmux), typed into as a person would: J opens the selected pod's
Jobs tab, n the new-job form; a command typed there starts on the demo's pod, its end is said, the list shows it
done, and its log opens with what it printed."""

from __future__ import annotations

import shlex
import sys

import pytest

from tests.helpers.tmux import Tmux

pytestmark = pytest.mark.tmux


def test_start_a_job_and_see_it_end(tmux: Tmux) -> None:
    tmux.start(f"{shlex.quote(sys.executable)} -m podtui --demo", 120, 32)
    tmux.wait_for("llama-lora-3090")
    tmux.keys("J")  # data-prep-a5000, the first pod, selected: its Jobs tab
    tmux.wait_for("No jobs on this pod yet", timeout=60)
    tmux.keys("n")
    tmux.wait_for("New job on data-prep-a5000")
    tmux.type("sleep 2; echo hello-from-a-job")
    tmux.keys("C-s")
    tmux.wait_for("started on data-prep-a5000", timeout=60)
    tmux.wait_for("data-prep-a5000 done", timeout=90)  # its end, said (a toast: its words may wrap after these)
    tmux.keys("C-r")  # the list read again
    tmux.wait_for(" done     0 ", timeout=60)
    tmux.keys("l")
    tmux.wait_for("hello-from-a-job", timeout=60)
    tmux.wait_for("the job ended: done, exit 0", timeout=60)
    tmux.keys("Escape")
    tmux.wait_for("n new job", timeout=20)
    tmux.keys("q")
    tmux.wait_for("EXIT=0")
