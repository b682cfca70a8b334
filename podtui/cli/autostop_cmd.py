"""`podtui autostop POD install|status|remove`: the watchdog on the pod that stops it when its GPUs sit idle."""

from __future__ import annotations

import sys
from typing import TextIO

from podtui.core import autostop
from podtui.core.api.client import find_pod
from podtui.core.services import Services
from podtui.core.ssh.remote import open_remote
from podtui.core.visible import visible


def cmd_autostop(
    session: Services, ref: str, action: str, idle_min: float, threshold: float, out: TextIO | None = None
) -> int:
    out = out or sys.stdout  # looked up now: the CLI wraps it (podtui.cli.output)
    pod = find_pod(session.api, ref)
    name = visible(pod.name)
    with open_remote(pod, session.ssh_settings()) as shell:
        try:
            if action == "install":
                st = autostop.install(shell, threshold, idle_min * 60)
                out.write(
                    f"{name}: watchdog {st.label}; it stops the pod after {idle_min:g} min under "
                    f"{threshold:g}% GPU, even with this machine off\n"
                )
            elif action == "remove":
                autostop.remove(shell)
                out.write(f"{name}: watchdog removed\n")
            else:
                st = autostop.status(shell)
                out.write(f"{name}: watchdog {st.label}\n" + (f"{st.log_tail}\n" if st.log_tail else ""))
        except autostop.AutostopError as e:
            sys.stderr.write(f"podtui: {name}: {visible(str(e))}\n")
            return 1
    return 0
