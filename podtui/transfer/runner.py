"""What every kind of transfer shares: the interface its runner implements, what a runner is given, how a
transfer fails, and how it reaches the pod.

A runner runs one job to verified and tells the queue what it must know about that kind of transfer without
running it: whether read-only mode refuses it, whether its work goes on on the pod by itself (so a cancel must end
it there), whether what it verified is still in place, and what it is doing, in words. runners.py picks the
runner for a job by its direction; the queue asks the runner, never the direction.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from podtui.core.hf.repo import endpoint_from_env
from podtui.core.pod import Pod
from podtui.core.ssh.connect import Connection, SshSettings, connect_pod
from podtui.core.ssh.errors import AuthFailed, HostKeyChanged, SshError, SshKeyError
from podtui.core.ssh.remote import RemoteShell
from podtui.transfer.job import TransferJob
from podtui.transfer.progress import Reporter


class TransferFailed(Exception):
    def __init__(self, message: str, kind: str = "failed", retryable: bool = False) -> None:
        super().__init__(message)
        self.kind = kind
        self.retryable = retryable


@dataclass
class TransferContext:
    lookup: Callable[[str], Pod]  # pod id -> the pod as the API sees it now
    ssh_settings: Callable[[], SshSettings]
    work_dir: Path  # where folders are packed before an upload
    runpodctl: str | None = None  # this machine's runpodctl; None: the one on PATH
    # the Hugging Face token a download on the pod is handed, asked for when a job starts (never kept in the job);
    # none unless the caller gives one: a token found on this machine never reaches a pod (a simulated one) by
    # default
    hf_token: Callable[[], str | None] = field(default=lambda: None)
    hf_endpoint: Callable[[], str] = endpoint_from_env  # asked again after a refusal
    # final names being written right now: two transfers never race for one name
    claims: set[str] = field(default_factory=set)
    claims_lock: threading.Lock = field(default_factory=threading.Lock)

    @contextmanager
    def claim(self, key: str, label: str) -> Iterator[None]:
        with self.claims_lock:
            if key in self.claims:
                raise TransferFailed(
                    f"another transfer is writing {label} right now; this one waits its turn", "busy", retryable=True
                )
            self.claims.add(key)
        try:
            yield
        finally:
            with self.claims_lock:
                self.claims.discard(key)


class TransferRunner(ABC):
    """Runs one kind of transfer; one instance serves every job of that kind (it keeps no state of its own)."""

    # what a job of this kind is doing, in words, around its label and then the pod's name ("pulling {} from")
    activity: ClassVar[str]
    # what read-only mode calls these transfers ("uploads"); None: they change no pod, and read-only runs them
    changes_pods: ClassVar[str | None] = None
    # once started, its work goes on on the pod by itself, outliving the connection and podtui: a cancel outside
    # an attempt ends it there, and a podtui that took the job over after a stop queues it to re-attach
    runs_on_pod: ClassVar[bool] = False
    reattaching: ClassVar[str] = ""  # what that podtui says in the job's log as it queues it (runs_on_pod only)

    @abstractmethod
    def run(self, job: TransferJob, reporter: Reporter, ctx: TransferContext) -> None:
        """Run the job to verified; raises TransferFailed (or TransferCancelled) otherwise."""

    def started_on_pod(self, job: TransferJob) -> bool:
        """Whether work of the job may be running on the pod by itself now (a runs_on_pod job started there)."""
        return False

    def stop_on_pod(self, job: TransferJob, ctx: TransferContext) -> str | None:
        """End the job's work on the pod, outside an attempt (it blocks: the queue calls it from a thread). Returns
        the line to add to the job's log, or None when nothing was started there."""
        return None

    def landed(self, job: TransferJob) -> bool:
        """Whether what the verified job put in place is still there as it was verified: checked again before a pod
        is terminated after it. Only a download to this machine can tell otherwise."""
        return True


@dataclass
class ReachedPod:
    """A pod reached over SSH: the connection, and a shell on it (exec with direct SSH, a PTY through the
    gateway)."""

    conn: Connection
    shell: RemoteShell

    @property
    def direct(self) -> bool:
        return self.conn.endpoint.mode == "direct"


@contextmanager
def reach(pod: Pod, settings: SshSettings) -> Iterator[ReachedPod]:
    try:
        conn = connect_pod(pod, settings, "auto")
    except (AuthFailed, HostKeyChanged, SshKeyError) as e:  # trying again changes nothing: the user must act
        raise TransferFailed(f"cannot log in to {pod.name}: {e}", "auth") from None
    except SshError as e:
        raise TransferFailed(f"cannot reach {pod.name}: {e}", "unreachable", retryable=True) from None
    shell = RemoteShell(lambda: conn, "exec" if conn.endpoint.mode == "direct" else "pty")
    try:
        shell.open()
        yield ReachedPod(conn, shell)
    except SshError as e:  # the message may name the pod already ("the connection to X dropped while ...")
        said = str(e) if pod.name in str(e) else f"the connection to {pod.name} failed: {e}"
        raise TransferFailed(said, "connection", retryable=True) from None
    finally:
        shell.close()
        conn.close()
