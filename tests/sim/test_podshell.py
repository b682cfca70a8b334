"""A simulated pod's shell starts as a real pod's does, whatever the simulator was started with."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from tests.helpers.repo import REPO

SCRIPT = textwrap.dedent("""
    import os, select, signal, sys, time
    from pathlib import Path
    from podtui.sim.demo import large_world
    from podtui.sim.podshell import PodMachine

    # as `podtui --demo &` from a script starts it: SIGINT and SIGQUIT ignored
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGQUIT, signal.SIG_IGN)
    pod = next(iter(large_world(1, seed=1).pods.values()))
    machine = PodMachine(Path(sys.argv[1]), pod, "http://127.0.0.1:9", "key")
    proc, master = machine.spawn_pty_shell("xterm", 80, 24)
    os.write(master, b"grep SigIgn /proc/self/status; sleep 30; echo not-interrupted\\r")
    time.sleep(1.5)
    os.write(master, b"\\x03")  # ctrl+c, as a person types it
    os.write(master, b"echo done-$((6*7))\\r")
    out, end = b"", time.monotonic() + 15
    while b"done-42" not in out and time.monotonic() < end:
        if select.select([master], [], [], 0.2)[0]:
            out += os.read(master, 65536)
    proc.kill()
    print(out.decode(errors="replace"))
""")


def test_ctrl_c_stops_a_command_even_when_the_simulator_ignores_it(tmp_path: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path)], capture_output=True, text=True, timeout=60, cwd=REPO
    )
    assert "done-42" in r.stdout, (r.stdout, r.stderr)
    ignored = int(next(line for line in r.stdout.splitlines() if line.startswith("SigIgn:")).split()[1], 16)
    assert not ignored & (1 << 1) and not ignored & (1 << 2), hex(ignored)  # SIGINT (2), SIGQUIT (3)
    assert "not-interrupted" not in [line.strip() for line in r.stdout.splitlines()]  # the sleep was cut short
