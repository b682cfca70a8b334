"""Time to first frame and to first data of `podtui --demo`, against `python -c "import textual.app"`;
with `--against DIR`, the first frame of another checkout of podtui too (the same run, taking turns).

Each figure runs from the moment the process is launched to a wall-clock stamp the process prints when it
gets there (for podtui: the first frame on screen, the first frame with pod data). Goals (README.md#benchmarks): first
frame under 1.5x the bare Textual import; demo data on screen under 1.5 s.

Every process finds its modules' bytecode cached, as an installed package has it (pip compiles it): the first run of
each figure, not counted, writes it into the bench's own folder (PYTHONPYCACHEPREFIX), even where the environment
says not to write bytecode (PYTHONDONTWRITEBYTECODE) or the checkout is read-only. Without it, every run of a source
checkout would compile podtui's modules again, and the figure would be the compiler's.
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


Case = tuple[list[str], dict[str, str], str]  # the command, its environment, the stamp it prints


def medians(cases: dict[str, Case]) -> dict[str, float]:
    """Each case's median over RUNS runs, the cases taking turns run by run: a machine that gets busier or quieter
    meanwhile (other work runs beside the bench) moves every figure alike, and the ratios hold."""
    for cmd, env, pattern in cases.values():
        stamp_after_launch(cmd, env, pattern)  # warm the file cache and write the bytecode
    runs: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(RUNS):
        for name, (cmd, env, pattern) in cases.items():
            runs[name].append(stamp_after_launch(cmd, env, pattern))
    return {name: statistics.median(times) for name, times in runs.items()}


def main() -> None:
    home = tempfile.mkdtemp(prefix="podtui-bench-")
    os.chdir(home)  # `python -m` looks in the current folder first: only PYTHONPATH may choose the checkout
    env = {
        **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
        "HOME": home,
        "XDG_CONFIG_HOME": f"{home}/c",
        "XDG_STATE_HOME": f"{home}/s",
        "XDG_DATA_HOME": f"{home}/d",
        "PYTHONPYCACHEPREFIX": f"{home}/pycache",
    }
    py = sys.executable
    podtui = [py, "-m", "podtui", "--demo", "--exit-when"]
    cases: dict[str, Case] = {
        "base": ([py, "-c", "import textual.app, time; print('imported', time.time())"], env, "imported"),
        "hello": ([py, "-c", HELLO], env, "hello-frame"),
        "frame": ([*podtui, "first-frame"], env, "podtui-bench first-frame"),
    }
    other = sys.argv[2] if len(sys.argv) > 2 and sys.argv[1] == "--against" else None
    if other is not None:  # another checkout of podtui (e.g. `git worktree add /tmp/base COMMIT`)
        cases["other"] = ([*podtui, "first-frame"], {**env, "PYTHONPATH": other}, "podtui-bench first-frame")
    m = medians(cases)
    # after the others, not among them: the demo's simulator leaves its pods' processes ending for a moment
    data = medians({"data": ([*podtui, "data"], env, "podtui-bench data")})["data"]
    base, hello, frame = m["base"], m["hello"], m["frame"]
    print(f"runs per figure: {RUNS} (median, the figures taking turns), {os.cpu_count()} cores")
    print(f"python -c 'import textual.app'      {base:6.3f} s")
    print(f"minimal Textual app: first frame    {hello:6.3f} s   ratio {hello / base:4.2f}x   (reference)")
    print(f"podtui --demo: first frame          {frame:6.3f} s   ratio {frame / base:4.2f}x   (goal < 1.5x)")
    print(f"podtui --demo: pod list with data   {data:6.3f} s   ratio {data / 1.5:4.2f} of the 1.5 s goal")
    if other is not None:
        then = m["other"]
        print(f"the same, checkout {other}: first frame {then:6.3f} s   ratio {then / base:4.2f}x")
        print(f"this tree / that checkout            {frame / then:4.2f}x")


if __name__ == "__main__":
    main()
