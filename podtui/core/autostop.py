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

from podtui.core.pod import Pod
from podtui.core.ssh.connect import SshSettings
from podtui.core.ssh.remote import RemoteShell, open_remote

DIR = "$HOME/.podtui"
SCRIPT, PIDFILE, LOG = f"{DIR}/autostop.sh", f"{DIR}/autostop.pid", f"{DIR}/autostop.log"

_WATCHDOG = """#!/bin/bash
# podtui autostop: stop this pod once its busiest GPU stays under {threshold}% for {limit} s (checked every {every} s)
[ -r /etc/rp_environment ] && . /etc/rp_environment  # RunPod's variables, for a shell that did not load them
threshold={threshold}; limit={limit}; every={every}; low_since=
log() {{ echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) $*"; }}
uptime_s() {{ cut -d. -f1 /proc/uptime; }}  # immune to the wall clock being set
log "watching pod $RUNPOD_POD_ID: stop after ${{limit}} s under ${{threshold}}% GPU"
while true; do
  # the busiest GPU counts (one busy GPU of eight is a busy pod); anything but plain numbers is no reading
  util=$(nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits 2>/dev/null \
         | awk 'BEGIN {{ m = -1 }} /^ *[0-9]+ *$/ {{ if ($1 + 0 > m) m = $1 + 0; n++; next }} {{ bad = 1 }}
                END {{ if (n && !bad) print m }}')
  now=$(uptime_s)
  if command -v pgrep >/dev/null && pgrep -f 'runpodctl (send|receive)|sftp-server' >/dev/null; then
    util=  # a transfer is running: the pod is in use, whatever its GPU does
  fi
  if [ -z "$util" ]; then
    [ -n "$low_since" ] && log "no GPU reading or a transfer running: idle clock reset"
    low_since=
  elif [ "$util" -lt "$threshold" ]; then
    [ -z "$low_since" ] && low_since=$now && log "GPU at ${{util}}%: idle clock started"
    if [ $((now - low_since)) -ge "$limit" ]; then
      log "idle for $((now - low_since)) s: stopping pod $RUNPOD_POD_ID"
      if runpodctl pod stop "$RUNPOD_POD_ID" 2>&1 || runpodctl stop pod "$RUNPOD_POD_ID" 2>&1; then
        log "stopped"
        exit 0
      fi
      log "runpodctl could not stop the pod; trying again in 60 s"
      sleep 60
    fi
  else
    [ -n "$low_since" ] && log "GPU at ${{util}}%: busy again"
    low_since=
  fi
  sleep "$every"
done
"""


# the pid in the file is the watchdog only if that process runs our script: a pid can be reused once it exits
_OURS = '[ -n "$p" ] && grep -qs autostop.sh "/proc/$p/cmdline"'


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
    if not (0 <= threshold_pct <= 100 and limit_s >= 1 and every_s > 0):
        raise AutostopError("threshold must be 0-100 %, the limit at least 1 s, the interval positive")
    return _WATCHDOG.format(threshold=int(threshold_pct), limit=int(limit_s), every=f"{every_s:g}")


def install(shell: RemoteShell, threshold_pct: float, limit_s: float, every_s: float = 30.0) -> WatchdogStatus:
    """Write the watchdog and start it (replacing one already running)."""
    script = base64.b64encode(watchdog_script(threshold_pct, limit_s, every_s).encode()).decode()
    check = shell.run(
        "[ -r /etc/rp_environment ] && . /etc/rp_environment; command -v runpodctl >/dev/null && "
        'command -v nvidia-smi >/dev/null && [ -n "$RUNPOD_POD_ID" ] && echo ok || echo missing',
        timeout_s=30,
    )
    if not check.output.strip().endswith("ok"):
        raise AutostopError(
            "the pod has no runpodctl, no nvidia-smi or no RUNPOD_POD_ID, which the watchdog "
            "needs (RunPod's images have all three)"
        )
    remove(shell)
    result = shell.run(
        f'mkdir -p "{DIR}" && echo {shlex.quote(script)} | base64 -d > "{SCRIPT}" && chmod 700 "{SCRIPT}" && '
        f'(nohup setsid bash "{SCRIPT}" >> "{LOG}" 2>&1 < /dev/null & echo $! > "{PIDFILE}")',
        timeout_s=30,
    )
    if result.exit_code != 0:
        raise AutostopError(f"could not start the watchdog: {result.output.strip()[:200]}")
    return status(shell)


def status(shell: RemoteShell) -> WatchdogStatus:
    result = shell.run(
        f'[ -f "{SCRIPT}" ] && echo installed; p=$(cat "{PIDFILE}" 2>/dev/null); '
        f'if {_OURS}; then echo "running $p"; fi; '
        f'echo ---; tail -n 10 "{LOG}" 2>/dev/null',
        timeout_s=30,
    )
    head, _, tail = result.output.partition("---\n")
    lines = head.split()
    running = "running" in lines
    pid = int(lines[lines.index("running") + 1]) if running and lines[-1].isdigit() else None
    return WatchdogStatus("installed" in lines, running, pid, tail.strip())


def remove(shell: RemoteShell) -> None:
    result = shell.run(
        f'p=$(cat "{PIDFILE}" 2>/dev/null); if {_OURS}; then kill "$p" 2>/dev/null; fi; '
        f'rm -f "{SCRIPT}" "{PIDFILE}"; true',
        timeout_s=30,
    )
    if result.exit_code != 0:
        raise AutostopError(f"could not remove the watchdog: {result.output.strip()[:200]}")


def on_pod(pod: Pod, settings: SshSettings, action: str, threshold_pct: float, limit_s: float) -> WatchdogStatus:
    """install, remove or status of the pod's watchdog, over one shell; where it stands afterwards."""
    with open_remote(pod, settings) as shell:
        if action == "install":
            return install(shell, threshold_pct, limit_s)
        if action == "remove":
            remove(shell)
        return status(shell)
