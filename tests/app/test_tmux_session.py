"""A whole working session in the real app, typed into tmux as a person would and read back from the screen:
the doctor, a console command, a download that verifies, a stop that the ticker shows, a terminate with the
name typed, and quitting."""

from __future__ import annotations

import re
import shlex
import sys
import time

from tests.helpers.tmux import Tmux


def burn(screen: str) -> float:
    m = re.search(r"burn\s+\$([0-9.]+)/hr", screen)
    assert m, f"no burn on screen:\n{screen}"
    return float(m.group(1))


def test_a_working_session(tmux: Tmux) -> None:
    # started in the isolated home: a download lands there, never in the repository
    run = f"cd {shlex.quote(str(tmux.home))} && exec {shlex.quote(sys.executable)} -m podtui --demo"
    tmux.start(f"sh -c {shlex.quote(run)}")
    screen = tmux.wait_for("llama-lora-3090")
    before = burn(tmux.wait_for("live"))

    # the doctor on the broken image (first row, sorted by name): transformers 5 on torch 2.1
    tmux.keys("D")
    screen = tmux.wait_for("checked", timeout=40)
    assert "FAIL" in screen and "transformers 5.9.0 needs torch 2.4" in screen
    tmux.keys("Escape")
    tmux.wait_for("Cost so far")

    # a console on llama-lora-3090 (third row): a command and its answer
    tmux.keys("j", "j", "c")
    tmux.wait_for("/workspace#", timeout=30)
    tmux.type("echo $((6*7)) answered")
    tmux.keys("Enter")
    tmux.wait_for("42 answered")
    tmux.keys("C-]")
    time.sleep(0.3)
    tmux.keys("Escape")
    tmux.wait_for("Cost so far")

    # a download from that pod, watched until its checksums match on both ends
    tmux.keys("u")
    tmux.wait_for("Add a transfer")
    time.sleep(0.3)
    tmux.type("README-demo.txt")
    tmux.keys("C-s")
    tmux.wait_for("Add a transfer", absent=True)
    end = time.monotonic() + 60
    while not any("README-demo.txt" in line and "verified" in line for line in tmux.screen().splitlines()):
        assert time.monotonic() < end, tmux.screen()
        time.sleep(0.2)
    assert (tmux.home / "README-demo.txt").read_text().startswith("This is a simulated RunPod pod")
    tmux.keys("Escape")
    tmux.wait_for("Cost so far")

    # stop eval-a100 (second row): the ticker's burn drops by its GPU price
    tmux.keys("k", "s")
    tmux.wait_for("Stop eval-a100?")
    tmux.keys("y")
    tmux.wait_for("EXITED", timeout=30)
    end = time.monotonic() + 20
    while burn(tmux.screen()) > before - 1.0 and time.monotonic() < end:
        time.sleep(0.2)
    assert burn(tmux.screen()) <= before - 1.0, tmux.screen()

    # terminate notebook-4090: Cancel has focus, and only the pod's name typed in full confirms
    tmux.keys("j", "j", "T")
    tmux.wait_for("Type the pod's name")
    # typed fast: the first letter moves focus to the name box, and the letters right after it must not be lost
    tmux.type("notebook-409")
    tmux.keys("Enter")
    tmux.wait_for("that is not the pod's name")
    tmux.keys("0")
    tmux.keys("Enter")
    tmux.wait_for("notebook-4090", absent=True, timeout=30)

    # quit: a console is still open, so podtui asks first
    tmux.keys("q")
    tmux.wait_for("Quit with 1 console open?")
    tmux.keys("y")
    tmux.wait_for("EXIT=0")
