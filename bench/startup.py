"""Time to first frame and to first data of `podtui --demo`, against `python -c "import textual.app"`;
with `--against DIR`, the first frame of another checkout of podtui too (the same run).

Each figure runs from the moment the process is launched to a wall-clock stamp the process prints when it
gets there (for podtui: the first frame on screen, the first frame with pod data). Goals (README.md#benchmarks): first
frame under 1.5x the bare Textual import; demo data on screen under 1.5 s.
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

RUNS = int(os.environ.get("BENCH_RUNS", "7"))

# For reference: the first frame of the smallest Textual app, i.e. the framework's own floor.
HELLO = """
import sys, time
from textual.app import App
from textual.widgets import Static
class Hello(App):
    def compose(self):
        yield Static("hello")
    def on_mount(self):
        self.call_after_refresh(self.done)
    def done(self):
        sys.__stderr__.write(f"hello-frame {time.time():.6f}\\n")
        self.exit()
Hello().run(headless=True)
"""


def stamp_after_launch(cmd: list[str], env: dict[str, str], pattern: str) -> float:
    t = time.time()
    out = subprocess.run(cmd, check=True, env=env, capture_output=True, text=True)
    m = re.search(pattern + r" ([\d.]+)", out.stderr + out.stdout)
    if not m:
        raise SystemExit(f"no {pattern!r} stamp from {cmd}: {out.stderr[-500:]}")
    return float(m.group(1)) - t


def median_of(cmd: list[str], env: dict[str, str], pattern: str) -> float:
    stamp_after_launch(cmd, env, pattern)  # warm the file cache
    return statistics.median(stamp_after_launch(cmd, env, pattern) for _ in range(RUNS))


def main() -> None:
    home = tempfile.mkdtemp(prefix="podtui-bench-")
    os.chdir(home)  # `python -m` looks in the current folder first: only PYTHONPATH may choose the checkout
    env = {
        **os.environ,
        "HOME": home,
        "XDG_CONFIG_HOME": f"{home}/c",
        "XDG_STATE_HOME": f"{home}/s",
        "XDG_DATA_HOME": f"{home}/d",
    }
    py = sys.executable
    base = median_of([py, "-c", "import textual.app, time; print('imported', time.time())"], env, "imported")
    hello = median_of([py, "-c", HELLO], env, "hello-frame")
    frame = median_of([py, "-m", "podtui", "--demo", "--exit-when", "first-frame"], env, "podtui-bench first-frame")
    data = median_of([py, "-m", "podtui", "--demo", "--exit-when", "data"], env, "podtui-bench data")
    print(f"runs per figure: {RUNS} (median), {os.cpu_count()} cores")
    print(f"python -c 'import textual.app'      {base:6.3f} s")
    print(f"minimal Textual app: first frame    {hello:6.3f} s   ratio {hello / base:4.2f}x   (reference)")
    print(f"podtui --demo: first frame          {frame:6.3f} s   ratio {frame / base:4.2f}x   (goal < 1.5x)")
    print(f"podtui --demo: pod list with data   {data:6.3f} s   ratio {data / 1.5:4.2f} of the 1.5 s goal")
    if len(sys.argv) > 2 and sys.argv[1] == "--against":
        # another checkout of podtui (e.g. `git worktree add /tmp/base COMMIT`), measured in this same run
        other = {**env, "PYTHONPATH": sys.argv[2]}
        cmd = [py, "-m", "podtui", "--demo", "--exit-when", "first-frame"]
        then = median_of(cmd, other, "podtui-bench first-frame")
        again = median_of(cmd, env, "podtui-bench first-frame")  # this tree again, after, for the drift
        print(f"the same, checkout {sys.argv[2]}: first frame {then:6.3f} s; this tree again {again:6.3f} s")
        print(f"this tree / that checkout            {(frame + again) / 2 / then:4.2f}x")


if __name__ == "__main__":
    main()
