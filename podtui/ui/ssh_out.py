"""Leaving podtui for OpenSSH or an editor (docs/ssh-out.md), from the TUI: `!` suspends the app, runs the same
`ssh` as `podtui ssh` in this terminal and comes back when it ends; `V` opens the pod's /workspace in VS Code or
Cursor. Both first connect once with podtui's own client (pinning the host key the other program insists on), in a
worker: the event loop never waits on the network."""

from __future__ import annotations

import logging
import signal
import subprocess
import threading
from typing import TYPE_CHECKING, Any, Protocol

from podtui.core.pod import Pod
from podtui.core.visible import visible
from podtui.ui.needs import Notifies, RunsWorkers, Served

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from textual.notifications import SeverityLevel


class SshOutHost(Served, Notifies, RunsWorkers, Protocol):
    """What leaving for ssh needs of the app."""

    def suspend(self) -> AbstractContextManager[None]: ...
    def pods(self) -> tuple[Pod, ...]: ...
    def refresh(self, *, repaint: bool = True, layout: bool = False, recompose: bool = False) -> Any: ...


class SshOut:
    def __init__(self, host: SshOutHost) -> None:
        self.host = host
        self._busy: set[tuple[str, str]] = set()  # (what, pod id) under way: a key pressed twice starts one
        self._addresses: frozenset[tuple[str, str, str]] | None = None  # what podtui's ssh config was last made from
        self._config_lock = threading.Lock()

    def after_poll(self, pods: tuple[Pod, ...]) -> None:
        """podtui's ssh config file, once the user has written it, follows the pods: a pod's new address or port, a
        pod created or gone (docs/ssh-out.md). Rewritten in a worker, and only when those changed."""
        if self.host.services.demo:
            return
        addresses = frozenset((p.id, p.name, repr((p.ssh_direct, p.ssh_proxy, p.state))) for p in pods)
        if addresses == self._addresses:
            return
        self._addresses = addresses
        self.host.run_worker(
            lambda: self._refresh_config(pods),
            thread=True,
            group="ssh-config",
            description="podtui's ssh config",
            exclusive=True,
            exit_on_error=False,
        )

    def _refresh_config(self, pods: tuple[Pod, ...]) -> None:
        from podtui.core.ssh.errors import SshError
        from podtui.core.ssh.ssh_config import config_file, refresh_written

        s = self.host.services
        with self._config_lock:  # one write at a time, in the order the polls came
            try:
                refresh_written(pods, s.ssh_settings(), config_file(s.paths))  # never creates it: only --write does
            except (OSError, SshError) as e:  # said in the log; `podtui ssh-config --write` says it to the user
                log.warning("podtui's ssh config not refreshed: %s", e)

    def ssh(self, pod: Pod) -> None:
        if ("ssh", pod.id) in self._busy:
            return
        self._busy.add(("ssh", pod.id))
        self.host.notify(f"connecting to {pod.name} for ssh…", timeout=3, markup=False)
        self.host.run_worker(lambda: self._argv(pod), thread=True, group="ssh-out", description="getting ssh ready")

    def _argv(self, pod: Pod) -> None:
        from podtui.core.ssh.errors import SshError
        from podtui.core.ssh.openssh import ssh_argv

        try:
            argv = ssh_argv(pod, self.host.services.ssh_settings())
        except SshError as e:
            self.host.call_from_thread(self._said, ("ssh", pod.id), f"ssh to {pod.name}: {e}", "warning")
        except BaseException:
            self.host.call_from_thread(self._busy.discard, ("ssh", pod.id))  # the key works again
            raise
        else:
            self.host.call_from_thread(self._run_ssh, pod, argv)

    def _run_ssh(self, pod: Pod, argv: list[str]) -> None:
        """On the event loop: the app lets go of the terminal while ssh has it (Textual's suspend)."""
        from textual.app import SuspendNotSupported

        self._busy.discard(("ssh", pod.id))
        try:
            with self.host.suspend():
                code = _run_in_terminal(pod, argv)
        except SuspendNotSupported:
            self.host.notify(
                f"this terminal cannot hand itself over: run `podtui ssh {visible(pod.id)}` in another one",
                severity="warning",
                timeout=10,
                markup=False,
            )
            return
        self.host.refresh(layout=True)
        if isinstance(code, str):
            self.host.notify(f"ssh did not start: {code}", severity="error", markup=False)
            return
        said = "ended" if code == 0 else f"ended with exit status {code}"
        self.host.notify(f"back from ssh to {pod.name}: it {said}", timeout=5, markup=False)

    def editor(self, pod: Pod) -> None:
        if ("editor", pod.id) in self._busy:
            return
        self._busy.add(("editor", pod.id))
        self.host.run_worker(
            lambda: self._open_editor(pod), thread=True, group="ssh-out", description="opening an editor"
        )

    def _open_editor(self, pod: Pod) -> None:
        from podtui.core.editors import EditorError, prepare
        from podtui.core.ssh.errors import SshError
        from podtui.core.ssh.openssh import ssh_env
        from podtui.core.ssh.ssh_config import config_file

        s = self.host.services
        key = ("editor", pod.id)
        said, severity = f"{pod.name} was not opened in an editor: unexpected error (details in the log)", "error"
        try:
            launch = prepare(pod, self.host.pods(), s.ssh_settings(), config_file(s.paths), demo=s.demo)
            # its own session: the editor outlives podtui, and never reads podtui's terminal
            subprocess.Popen(
                launch.argv,
                env=ssh_env(),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
            said = f"opening {pod.name}'s /workspace in {launch.editor} ({launch.alias})"
            severity = "information"
        except (EditorError, SshError, OSError) as e:
            said, severity = str(e), "warning"
        finally:  # whatever happened, the key works again
            self.host.call_from_thread(self._said, key, said, severity)

    def _said(self, key: tuple[str, str], text: str, severity: SeverityLevel) -> None:
        """On the event loop: what became of it (done, or why not), and the key free again."""
        self._busy.discard(key)
        self.host.notify(text, severity=severity, timeout=12, markup=False)


def _run_in_terminal(pod: Pod, argv: list[str]) -> int | str:
    """ssh in the terminal the app let go of: its exit status, or why it did not start. ctrl+c and ctrl+\\ are
    ssh's while it runs (the terminal sends them to podtui too, which shares its process group): podtui catches them
    and does nothing meanwhile, as a shell does for the command it waits on. Caught, not ignored: a caught signal is
    back to its default in ssh once it execs, an ignored one would stay ignored there."""
    from podtui.core.ssh.openssh import ssh_env

    print(f"podtui: ssh to {visible(pod.name)}; podtui comes back when it ends", flush=True)
    saved = {sig: signal.signal(sig, _ignore) for sig in (signal.SIGINT, signal.SIGQUIT)}
    try:
        return subprocess.call(argv, env=ssh_env())
    except OSError as e:
        return visible(str(e))
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


def _ignore(_signum: int, _frame: object) -> None:
    """ctrl+c or ctrl+\\ while ssh runs: ssh's, not podtui's."""
