"""Terminal output recorded from real programs in a real PTY, for the console benchmarks.

Three shapes a pod's console sees all day: coloured `ls -l` listings, a training log, and carriage-return
progress bars drawn by tqdm. Recorded fresh on each run (a few MB each), so nothing binary lives in the repo.
"""

from __future__ import annotations

import fcntl
import os
import struct
import subprocess
import sys
import termios

LOG_SCRIPT = r"""
import random, sys
rng = random.Random(7)
levels = ["\033[32mINFO\033[0m", "\033[33mWARNING\033[0m", "\033[36mDEBUG\033[0m"]
for step in range(int(sys.argv[1])):
    loss = 2.5 * 0.999 ** step + rng.random() * 0.05
    print(f"2026-11-30 09:{step // 600 % 60:02d}:{step // 10 % 60:02d},{step % 1000:03d} {rng.choice(levels)} "
          f"trainer: step {step} loss={loss:.4f} lr={3e-4 * 0.9999 ** step:.3e} grad_norm={rng.random() * 3:.3f} "
          f"tokens/s={rng.randint(9000, 12000)}")
"""

TQDM_SCRIPT = r"""
import sys
from tqdm import tqdm
for epoch in range(int(sys.argv[1])):
    for _ in tqdm(range(2000), desc=f"epoch {epoch}", mininterval=0, miniters=1, ncols=110, colour="green"):
        pass
"""


def record(argv: list[str], cols: int = 120, rows: int = 40) -> bytes:
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    env = dict(os.environ, TERM="xterm-256color", COLUMNS=str(cols), LINES=str(rows))
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the program exited and the PTY closed
            break
        if not data:
            break
        chunks.append(data)
    proc.wait()
    os.close(master)
    return b"".join(chunks)


def shapes(target_bytes: int = 4_000_000) -> dict[str, bytes]:
    ls = record(["ls", "-la", "--color=always", "/usr/lib", "/usr/share", "/usr/bin", "/etc"])
    log = record([sys.executable, "-c", LOG_SCRIPT, "20000"])
    bars = record([sys.executable, "-c", TQDM_SCRIPT, "6"])

    def fill(data: bytes) -> bytes:
        return data * max(1, target_bytes // max(len(data), 1))

    return {"coloured ls": fill(ls), "training log": fill(log), "tqdm progress bars": fill(bars)}
