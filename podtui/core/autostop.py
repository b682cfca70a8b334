"""Autostop on the pod itself, so it works with the laptop closed: a small watchdog started over run_remote's shell
that samples nvidia-smi and, once the GPUs have stayed under the threshold for the limit, stops the pod with the
pod's own runpodctl (v2 `runpodctl pod stop $RUNPOD_POD_ID`, or the v1 form `runpodctl stop pod ...`).

It lives in ~/.podtui on the container disk: stopping the pod wipes that disk and ends the watchdog with it, so a
resumed pod never stops itself by surprise; installing again is one command.
"""

from __future__ import annotations

import base64
import shlex
from dataclasses import dataclass

from podtui.core.ssh.remote import RemoteShell

DIR = "$HOME/.podtui"
SCRIPT, PIDFILE, LOG = f"{DIR}/autostop.sh", f"{DIR}/autostop.pid", f"{DIR}/autostop.log"

_WATCHDOG = """#!/bin/bash
# podtui autostop: stop this pod once its GPUs stay under {threshold}% for {limit} s (checked every {every} s)
threshold={threshold}; limit={limit}; every={every}; low_since=
log() {{ echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) $*"; }}
log "watching: stop after ${{limit}} s under ${{threshold}}% GPU"
while true; do
  util=$(nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits 2>/dev/null \\
         | awk '{{ s += $1; n++ }} END {{ if (n) printf "%d", s / n; else print "" }}')
  now=$(date +%s)
  if [ -z "$util" ]; then
    low_since=  # no reading is no evidence of idleness
  elif [ "$util" -lt "$threshold" ]; then
    [ -z "$low_since" ] && low_since=$now && log "GPU at ${{util}}%: idle clock started"
    if [ $((now - low_since)) -ge "$limit" ]; then
      log "idle for $((now - low_since)) s: stopping pod $RUNPOD_POD_ID"
      runpodctl pod stop "$RUNPOD_POD_ID" 2>&1 || runpodctl stop pod "$RUNPOD_POD_ID" 2>&1
      log "runpodctl exit status $?"
      exit 0
    fi
  else
    [ -n "$low_since" ] && log "GPU at ${{util}}%: busy again"
    low_since=
  fi
  sleep "$every"
done
"""


class AutostopError(Exception):
    """The watchdog could not be installed, read or removed; the message says why."""


@dataclass(frozen=True)
class WatchdogStatus:
    installed: bool
    running: bool
    pid: int | None
    log_tail: str

    @property
    def label(self) -> str:
        if self.running:
            return f"running (pid {self.pid})"
        return "installed but not running" if self.installed else "not installed"


def watchdog_script(threshold_pct: float, limit_s: float, every_s: float = 30.0) -> str:
    if not (0 <= threshold_pct <= 100 and limit_s > 0 and every_s > 0):
        raise AutostopError("threshold must be 0-100 %, limit and interval positive")
    return _WATCHDOG.format(threshold=int(threshold_pct), limit=int(limit_s), every=f"{every_s:g}")


def install(shell: RemoteShell, threshold_pct: float, limit_s: float, every_s: float = 30.0) -> WatchdogStatus:
    """Write the watchdog and start it (replacing one already running)."""
    script = base64.b64encode(watchdog_script(threshold_pct, limit_s, every_s).encode()).decode()
    check = shell.run("command -v runpodctl >/dev/null && command -v nvidia-smi >/dev/null && echo ok || "
                      "echo missing", timeout_s=30)
    if not check.output.strip().endswith("ok"):
        raise AutostopError("the pod has no runpodctl or no nvidia-smi, which the watchdog needs (RunPod's "
                            "images have both)")
    remove(shell)
    result = shell.run(
        f'mkdir -p "{DIR}" && echo {shlex.quote(script)} | base64 -d > "{SCRIPT}" && chmod 700 "{SCRIPT}" && '
        f'(nohup setsid bash "{SCRIPT}" >> "{LOG}" 2>&1 < /dev/null & echo $! > "{PIDFILE}")', timeout_s=30)
    if result.exit_code != 0:
        raise AutostopError(f"could not start the watchdog: {result.output.strip()[:200]}")
    return status(shell)


def status(shell: RemoteShell) -> WatchdogStatus:
    result = shell.run(f'[ -f "{SCRIPT}" ] && echo installed; p=$(cat "{PIDFILE}" 2>/dev/null); '
                       'if [ -n "$p" ] && kill -0 "$p" 2>/dev/null; then echo "running $p"; fi; '
                       f'echo ---; tail -n 10 "{LOG}" 2>/dev/null', timeout_s=30)
    head, _, tail = result.output.partition("---\n")
    lines = head.split()
    running = "running" in lines
    pid = int(lines[lines.index("running") + 1]) if running and lines[-1].isdigit() else None
    return WatchdogStatus("installed" in lines, running, pid, tail.strip())


def remove(shell: RemoteShell) -> None:
    result = shell.run(f'p=$(cat "{PIDFILE}" 2>/dev/null); [ -n "$p" ] && kill "$p" 2>/dev/null; '
                       f'rm -f "{SCRIPT}" "{PIDFILE}"; true', timeout_s=30)
    if result.exit_code != 0:
        raise AutostopError(f"could not remove the watchdog: {result.output.strip()[:200]}")
