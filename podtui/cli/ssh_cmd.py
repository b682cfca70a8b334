"""`podtui exec`, `podtui keys setup|show`, `podtui ssh POD` (OpenSSH, or an editor) and `podtui ssh forget`."""

from __future__ import annotations

import logging
import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path
from typing import NoReturn, TextIO

from podtui.cli.session import UsageError
from podtui.core.api.client import find_pod
from podtui.core.api.errors import ApiError
from podtui.core.pod import Pod
from podtui.core.services import Services
from podtui.core.ssh.connect import SshSettings, Via
from podtui.core.ssh.errors import RemoteTimeout, ShellClosed, SshError
from podtui.core.ssh.hostkeys import HostKeyStore, gateway_name, pod_name
from podtui.core.ssh.remote import READY_TIMEOUT_S, RunVia, open_remote
from podtui.core.ssh.setup import key_status, restart_note, setup_key
from podtui.core.visible import visible

EXIT_SSH_FAILED = 255  # as ssh(1) does for its own failures
EXIT_TIMEOUT = 124  # as timeout(1) does


def cmd_exec(
    session: Services, ref: str, words: list[str], via: RunVia, timeout_s: float, out: TextIO | None = None
) -> int:
    out = out or sys.stdout  # looked up now: the CLI wraps it (podtui.cli.output)
    if not words:
        raise ValueError("nothing to run: give the command after --, e.g. podtui exec mypod -- nvidia-smi")
    command = " ".join(words)  # like ssh: the words are joined and the remote shell parses them
    pod = find_pod(session.api, ref)

    def show(text: str) -> None:
        out.write(text)
        out.flush()

    # a shell that never shows its prompt is given no longer than the command itself
    cap = int(session.config.run_remote_max_output_mb * (1 << 20))
    with open_remote(
        pod, session.ssh_settings(), via, ready_timeout_s=min(READY_TIMEOUT_S, timeout_s), max_output_bytes=cap
    ) as shell:
        try:
            result = shell.run(command, timeout_s, on_output=show)
        except RemoteTimeout as e:
            out.write(e.output)
            sys.stderr.write(f"podtui: {visible(str(e))}\n")
            return EXIT_TIMEOUT
        except ShellClosed as e:  # a drop mid-command: what arrived before it still goes out
            out.write(e.output)
            raise
    if result.output and not result.output.endswith("\n"):
        out.write("\n")
    if result.truncated:  # output came faster than it could be written, for longer than the cap holds
        sys.stderr.write(
            f"podtui: output truncated: {result.dropped_bytes:,} bytes were dropped (more than "
            f"{session.config.run_remote_max_output_mb:g} MiB arrived faster than it could be "
            "written; run_remote_max_output_mb in config.toml)\n"
        )
    return result.exit_code


def cmd_keys_setup(session: Services, path: Path | None, out: TextIO | None = None) -> int:
    out = out or sys.stdout  # looked up now: the CLI wraps it (podtui.cli.output)
    r = setup_key(session.api, path or session.key_path())
    out.write(f"{'created' if r.created else 'using'} {r.key.path} ({r.key.key.get_name()} {r.key.fingerprint})\n")
    if r.registered:
        out.write(f"registered it on your RunPod account: {r.account_keys} key(s) there now, none removed\n")
        out.write(restart_note(session.api.fetch_snapshot().pods) + "\n")
    else:
        out.write(f"already registered on your RunPod account ({r.account_keys} key(s) there); nothing changed\n")
    return 0


def cmd_keys_show(session: Services, path: Path | None, out: TextIO | None = None) -> int:
    out = out or sys.stdout  # looked up now: the CLI wraps it (podtui.cli.output)
    key, registered = key_status(session.api, path or session.key_path())
    if key is None:
        out.write("no dedicated RunPod key yet: run `podtui keys setup`\n")
        return 1
    out.write(
        f"{key.path} ({key.key.get_name()} {key.fingerprint}): "
        f"{'registered' if registered else 'NOT registered'} on the account\n"
    )
    return 0 if registered else 1


def cmd_forget(session: Services, ref: str | None, gateway: bool = False, out: TextIO | None = None) -> int:
    out = out or sys.stdout  # looked up now: the CLI wraps it (podtui.cli.output)
    settings = session.ssh_settings()
    store = HostKeyStore(settings.known_hosts)
    if gateway:
        # the gateway is where the pods' ssh.proxy says (or the config's override)
        if settings.gateway is not None:
            where = {settings.gateway}
        else:
            where = {(p.ssh_proxy.host, p.ssh_proxy.port) for p in session.api.fetch_snapshot().pods if p.ssh_proxy}
        if not where:
            out.write("no pod names RunPod's SSH gateway now (none is running); nothing forgotten\n")
            return 0
        gone = [name for host, port in sorted(where) for name in store.forget(gateway_name(host, port))]
        what = "host key of RunPod's SSH gateway " + ", ".join(f"{visible(h)}:{p}" for h, p in sorted(where))
    elif ref is not None:
        pod = find_pod(session.api, ref)
        gone = store.forget(pod_name(pod.id))
        what = f"direct-SSH host key of {pod.name} ({pod.id})"
    else:
        raise UsageError("give a pod (its direct-SSH key) or --gateway (the gateway's key)")
    if not gone:
        out.write(f"no pinned {what}\n")
        return 0
    out.write(
        f"forgot the pinned {what}: {', '.join(gone)}\n"
        "the next connection pins the key it is offered; compare its fingerprint if you can\n"
    )
    return 0


def cmd_ssh(
    session: Services,
    ref: str,
    via: Via = "auto",
    print_only: bool = False,
    editor: str | None = None,
    out: TextIO | None = None,
) -> int:
    """OpenSSH's ssh into the pod, in place of this process (docs/ssh-out.md#the-ssh-command-line); with
    print_only its argv, shell-quoted; with editor, VS Code or Cursor on the pod (docs/ssh-out.md#editors)."""
    from podtui.core.ssh import openssh, ssh_config

    out = out or sys.stdout  # looked up now: the CLI wraps it (podtui.cli.output)
    snapshot = session.api.fetch_snapshot()
    try:
        pod = snapshot.find(ref)
    except LookupError as e:
        raise ApiError(str(e)) from None
    settings = session.ssh_settings()
    if editor is not None:
        return _open_editor(session, settings, pod, list(snapshot.pods), editor, print_only, out)
    argv = openssh.ssh_argv(pod, settings, via)  # connects once first: pins the host key ssh will insist on
    if not session.demo:  # the demo's pods are not the user's: its file is never written
        try:
            ssh_config.refresh_written(snapshot.pods, settings, ssh_config.config_file(session.paths))
        except (SshError, OSError) as e:
            logging.getLogger(__name__).warning("podtui's ssh config not refreshed: %s", e)
    if print_only:
        out.write(shlex.join(argv) + "\n")
        return 0
    if session.demo:  # the demo's simulator lives in this process: ssh runs as its child
        return _run_child(argv)
    _exec(argv)


def _open_editor(
    session: Services, settings: SshSettings, pod: Pod, pods: list[Pod], editor: str, print_only: bool, out: TextIO
) -> int:
    from podtui.core import editors
    from podtui.core.ssh import openssh, ssh_config

    config = ssh_config.config_file(session.paths)
    try:
        launch = editors.prepare(pod, pods, settings, config, editor=editor, demo=session.demo)
    except editors.EditorError as e:
        sys.stderr.write(f"podtui: {e}\n")
        return 1
    if launch.config_written:
        sys.stderr.write(f"podtui: wrote {config}\n")
    if print_only:
        out.write(shlex.join(launch.argv) + "\n")
        return 0
    out.write(f"opening {launch.alias} in {launch.editor}\n")
    out.flush()
    return subprocess.run(launch.argv, env=openssh.ssh_env(), stdin=subprocess.DEVNULL, check=False).returncode


def _run_child(argv: list[str]) -> int:
    from podtui.core.ssh.openssh import ssh_env

    before = signal.signal(signal.SIGINT, signal.SIG_IGN)  # ctrl+c is ssh's (the pod's) while it runs
    try:
        return subprocess.run(argv, env=ssh_env(), check=False).returncode
    finally:
        signal.signal(signal.SIGINT, before)


def _exec(argv: list[str]) -> NoReturn:
    from podtui.core.ssh.openssh import ssh_env

    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    for handler in logging.getLogger().handlers:
        handler.flush()
    try:
        os.execvpe(argv[0], argv, ssh_env())
    except OSError as e:
        raise SshError(f"could not run {argv[0]}: {e.strerror or e}") from None
