"""Autostop on the pod itself, so it works with the laptop closed: a small watchdog started over run_remote's shell
that samples nvidia-smi and, once the GPUs have stayed under the threshold for the limit, stops the pod through
RunPod's REST v2 with the pod's own key, falling back on runpodctl only when the API does not answer
(docs/runpod-facts.md#stopping-a-pod-from-inside-it). The script is autostop_watchdog.sh beside this file.

It lives in ~/.podtui on the container disk: stopping the pod wipes that disk and ends the watchdog with it, so a
resumed pod never stops itself by surprise; installing again is one command.
"""

from __future__ import annotations

import base64
import shlex
import time
from dataclasses import dataclass
from pathlib import Path

from podtui.core.jobs.layout import jobs_dir_sh
from podtui.core.pod import Pod
from podtui.core.ssh.connect import SshSettings
from podtui.core.ssh.remote import RemoteShell, open_remote
from podtui.version import __version__

DIR = "$HOME/.podtui"
SCRIPT, PIDFILE, LOG = f"{DIR}/autostop.sh", f"{DIR}/autostop.pid", f"{DIR}/autostop.log"
_BODY = Path(__file__).with_name("autostop_watchdog.sh")
RETRY_S = 60.0  # between two attempts at stopping the pod, when one failed

# What the watchdog needs on the pod, each printed when it is missing; any one HTTP client or runpodctl will do.
_NEEDS = (
    "[ -r /etc/rp_environment ] && . /etc/rp_environment; m=; "
    'command -v nvidia-smi >/dev/null || m="$m nvidia-smi"; '
    '[ -n "$RUNPOD_POD_ID" ] || m="$m RUNPOD_POD_ID"; '
    '[ -n "$RUNPOD_API_KEY" ] || m="$m RUNPOD_API_KEY"; '
    "command -v curl >/dev/null || command -v python3 >/dev/null || command -v runpodctl >/dev/null "
    '|| m="$m curl/python3/runpodctl"; echo "missing:$m"'
)
_NEEDED_FOR = {
    "nvidia-smi": "nvidia-smi (to read the GPUs)",
    "RUNPOD_POD_ID": "RUNPOD_POD_ID (which pod to stop)",
    "RUNPOD_API_KEY": "RUNPOD_API_KEY (the pod's own key, to stop it)",
    "curl/python3/runpodctl": "curl, python3 or runpodctl (to reach RunPod)",
}


# the pid in the file is the watchdog only if that process runs our script: a pid can be reused once it exits
START_LOOKS = 10  # about 3 s
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


def watchdog_script(threshold_pct: float, limit_s: float, every_s: float = 30.0, retry_s: float = RETRY_S) -> str:
    if not (0 <= threshold_pct <= 100 and limit_s >= 1 and every_s > 0 and retry_s > 0):
        raise AutostopError("threshold must be 0-100 %, the limit at least 1 s, the intervals positive")
    head = (
        "#!/bin/bash\n"
        f"# podtui autostop: stop this pod once its busiest GPU stays under {int(threshold_pct)}% for "
        f"{int(limit_s)} s (checked every {every_s:g} s)\n"
        f"threshold={int(threshold_pct)}; limit={int(limit_s)}; every={every_s:g}; retry={retry_s:g}\n"
        f"agent='podtui/{__version__} autostop'\n"
        # podtui's detached jobs, whose running process groups count as use (docs/jobs.md#the-watchdog-counts-jobs)
        f"{jobs_dir_sh('jobs')}\n"
    )
    return head + _BODY.read_text(encoding="utf-8")


def missing_on_pod(shell: RemoteShell) -> list[str]:
    """What the pod lacks of what the watchdog needs, in words (empty: nothing); AutostopError when its shell does
    not say."""
    result = shell.run(_NEEDS, timeout_s=30)
    lines = [line for line in result.output.splitlines() if line.startswith("missing:")]
    if not lines:
        raise AutostopError(f"could not check the pod for what the watchdog needs: {result.output.strip()[:200]}")
    return [_NEEDED_FOR.get(word, word) for word in lines[-1].removeprefix("missing:").split()]


def install(
    shell: RemoteShell, threshold_pct: float, limit_s: float, every_s: float = 30.0, retry_s: float = RETRY_S
) -> WatchdogStatus:
    """Write the watchdog and start it (replacing one already running)."""
    script = base64.b64encode(watchdog_script(threshold_pct, limit_s, every_s, retry_s).encode()).decode()
    missing = missing_on_pod(shell)
    if missing:
        lacks = ", ".join(missing[:-1]) + " and " + missing[-1] if len(missing) > 1 else missing[0]
        raise AutostopError(f"the pod lacks {lacks}, which the watchdog needs (RunPod's images have them all)")
    remove(shell)
    result = shell.run(
        f'mkdir -p "{DIR}" && echo {shlex.quote(script)} | base64 -d > "{SCRIPT}" && chmod 700 "{SCRIPT}" && '
        f'(nohup setsid bash "{SCRIPT}" >> "{LOG}" 2>&1 < /dev/null & echo $! > "{PIDFILE}")',
        timeout_s=30,
    )
    if result.exit_code != 0:
        raise AutostopError(f"could not start the watchdog: {result.output.strip()[:200]}")
    # the background process may not have become the script yet (its /proc cmdline is the shell's until it
    # execs): look again for a moment before saying it is not running
    seen = status(shell)
    for _ in range(START_LOOKS):
        if seen.running:
            break
        time.sleep(0.3)
        seen = status(shell)
    return seen


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
