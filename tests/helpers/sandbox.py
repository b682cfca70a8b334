"""A shell in a simulated pod's sandbox: run a command that must succeed, or try ways out that must all fail."""

from __future__ import annotations

from podtui.core.ssh.remote import RemoteShell


def out(sh: RemoteShell, command: str) -> str:
    result = sh.run(command, timeout_s=30)
    assert result.exit_code == 0, (command, result.output)
    return result.output


def none_got_through(sh: RemoteShell, attempts: list[str]) -> str:
    """Run each attempt in the pod, in a subshell of its own; returns "GOT THROUGH: ATTEMPT" for each that
    succeeded, one a line (nothing when none did)."""
    script = "; ".join(f"( {a} ) </dev/null >/dev/null 2>&1 && echo GOT-THROUGH-{i}" for i, a in enumerate(attempts))
    result = sh.run(script + "; echo TRIED-THEM-ALL", timeout_s=60)
    assert "TRIED-THEM-ALL" in result.output, result.output
    through = [int(line.split("-")[-1]) for line in result.output.splitlines() if line.startswith("GOT-THROUGH-")]
    return "".join(f"GOT THROUGH: {attempts[i]}\n" for i in through)
