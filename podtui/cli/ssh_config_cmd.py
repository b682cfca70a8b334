"""`podtui ssh-config [--write] [--yes] [--pin]`: podtui's ssh config, one `Host` block per pod
(docs/ssh-out.md#the-config-file), and the one `Include` line in ~/.ssh/config, only with consent
(docs/ssh-out.md#the-include-line)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from podtui.cli.session import UsageError, open_session
from podtui.core.paths import Paths
from podtui.core.pod import Pod
from podtui.core.services import Services
from podtui.core.visible import visible

if TYPE_CHECKING:  # paramiko (under podtui.core.ssh) loads when the command runs, not when its help is printed
    from podtui.core.ssh.connect import SshSettings


def fill_parser(p: argparse.ArgumentParser, common: argparse.ArgumentParser) -> None:
    """`podtui ssh-config`'s parser (its line in `podtui --help` is in podtui.cli.main.READY)."""
    p.description = (
        "One SSH Host block per pod (runpod-<name>: its address, port, user, podtui's key and podtui's pinned host "
        "key), for ssh, scp, rsync, VS Code and Cursor. Prints it; --write keeps it in podtui's config folder and "
        "offers to add one Include line at the top of ~/.ssh/config (nothing else there is touched). podtui "
        "rewrites its file when a pod's address changes."
    )
    p.add_argument("--write", action="store_true", help="write podtui's file (and offer the Include line)")
    p.add_argument(
        "--yes", "-y", action="store_true", help="with --write: add the Include line to ~/.ssh/config without asking"
    )
    p.add_argument(
        "--pin",
        action="store_true",
        help="first connect once to each running pod with podtui's client, pinning the host keys ssh insists on",
    )


def main(args: argparse.Namespace, paths: Paths, demo: bool, read_only: bool) -> int:
    if demo and args.write:
        raise UsageError(
            "the demo's pods last only while the demo runs: --write is for your own pods "
            "(`podtui ssh-config --demo` shows what it writes)"
        )
    with open_session(demo, paths) as session:
        return cmd_ssh_config(session, args.write, args.yes, args.pin)


def cmd_ssh_config(
    session: Services,
    write: bool,
    yes: bool = False,
    pin: bool = False,
    out: TextIO | None = None,
    ask: Callable[[str], bool] | None = None,
    user_config: Path | None = None,
) -> int:
    from podtui.core.ssh.ssh_config import (
        USER_CONFIG,
        add_include,
        config_file,
        include_line,
        includes,
        render,
        write_config,
    )

    out = out or sys.stdout  # looked up now: the CLI wraps it (podtui.cli.output)
    user_config = (user_config or USER_CONFIG).expanduser()
    pods = session.api.fetch_snapshot().pods
    settings = session.ssh_settings()
    if pin:
        _pin(pods, settings)
    rendered = render(pods, settings)
    if not write:
        out.write(rendered.text)
        return 0
    path = config_file(session.paths)
    changed = write_config(path, rendered.text)
    hosts = ", ".join(sorted(b.alias for b in rendered.hosts.values())) or "none: no pod has SSH now"
    out.write(f"{'wrote' if changed else 'unchanged:'} {path} (hosts: {hosts})\n")
    if includes(user_config, path):
        out.write(f"{user_config} includes it\n")
        return 0
    line = include_line(path)
    if yes or (ask or _ask)(f"Add `{line}` to {user_config}? [y/N] "):
        add_include(user_config, path)
        out.write(f"added `{line}` at the top of {user_config}; nothing else in it changed\n")
    else:
        out.write(
            f"{user_config} left as it is. ssh, VS Code and Cursor find these hosts once it has this line at its top "
            f"(above any Host block):\n    {line}\n"
            "run `podtui ssh-config --write --yes` to add it, or add it yourself\n"
        )
    return 0


def _ask(question: str) -> bool:
    """The user's consent at a terminal; no terminal, no consent."""
    if not sys.stdin.isatty():
        return False
    try:
        return input(question).strip().lower() in ("y", "yes")
    except EOFError:
        return False


def _pin(pods: Sequence[Pod], settings: SshSettings) -> None:
    """One connection to each running pod (direct SSH where it has it, else the gateway, once per gateway) with
    podtui's client, which pins its host key on first use (hostkeys.py)."""
    from podtui.core.ssh.connect import connect, endpoints_for
    from podtui.core.ssh.errors import SshError

    done: set[str] = set()
    for pod in pods:
        try:
            endpoint = endpoints_for(pod, settings)[0]
        except SshError:
            continue  # no SSH now: no block to pin for
        if endpoint.pin in done:
            continue
        try:
            connect(endpoint, settings).close()
            done.add(endpoint.pin)
        except SshError as e:
            sys.stderr.write(f"podtui: {visible(pod.name)}: not pinned: {visible(str(e))}\n")
