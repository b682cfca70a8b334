"""One sync, from the listings to the result (docs/sync.md): reach the pod, list both ends, plan, hash what the plan
must, make the destination's folders and deletes, move the bytes by the pod's route, verify every file on both
ends, put what verified in place. A dropped connection is tried once more; everything is reported to a listener
as it happens (docs/sync.md#the-api)."""

from __future__ import annotations

import contextlib
import logging
import os
import posixpath
import shutil
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from podtui.core.demo_sandbox import SANDBOX_ENV, transfer_path_refusal
from podtui.core.pod import Pod
from podtui.core.ssh import openssh
from podtui.core.ssh.connect import Connection, SshSettings, Via, connect_pod
from podtui.core.ssh.errors import AuthFailed, HostKeyChanged, SshError, SshKeyError
from podtui.core.ssh.remote import RemoteShell
from podtui.core.visible import visible
from podtui.transfer.modes import umask
from podtui.transfer.sync.console_route import ConsoleRoute
from podtui.transfer.sync.ignore import BadPattern, IgnoreRules, check_excludes
from podtui.transfer.sync.local_end import LocalEnd
from podtui.transfer.sync.ops import Ops
from podtui.transfer.sync.plan import POD_UMASK, Copy, Plan, arrival_mode, make_plan, settle
from podtui.transfer.sync.pod_batch import PodBatchError, PodTemp, decoded, said
from podtui.transfer.sync.pod_end import PodEnd
from podtui.transfer.sync.route import Cancelled, LinkLost, Moved
from podtui.transfer.sync.rsync_route import RsyncRoute, local_rsync, rsync_shell, rsync_version
from podtui.transfer.sync.sftp_route import SftpRoute
from podtui.transfer.sync.state import SyncListener, SyncResult, SyncSpec
from podtui.transfer.sync.tree import ancestors

log = logging.getLogger(__name__)
DEFAULT_VOLUME = "/workspace"
PODTUI_DIR = ".podtui"  # podtui's own folder in the pod's volume and home (docs/jobs.md#layout-on-the-pod)
_PROBE = (
    'printf "podtui-home %s\\n" "$(printf %s "$HOME" | base64 -w0)"; '
    'p=$(command -v rsync 2>/dev/null) && [ -x "$p" ] && echo "podtui-rsync yes" || echo "podtui-rsync no"; '
    '[ -n "$p" ] && printf "podtui-rsyncv %s\\n" "$("$p" --version 2>/dev/null | head -n 2 | base64 -w0)" || true'
)
POD_RSYNC = (3, 0, 0)  # the far end of --protect-args (-s)


class SyncError(Exception):
    """A sync that cannot start or go on, in words."""


def check_local(spec: SyncSpec) -> None:
    """LOCAL_DIR as the direction needs it (docs/sync.md#where-remote_dir-is): a folder to push from; for a pull, a
    folder or nothing yet under a folder that is there. And --exclude patterns that are patterns."""
    local = spec.local
    try:
        check_excludes(spec.excludes)
    except BadPattern as e:
        raise SyncError(str(e)) from None
    check_delete(spec)
    shown = visible(str(local))
    if local.is_dir():
        if spec.pull and os.path.realpath(local) == "/":
            raise SyncError("LOCAL_DIR / is this machine's whole filesystem: name a folder")
        return
    if local.exists() or local.is_symlink():
        raise SyncError(f"{shown} is not a folder; sync works on folders")
    if not spec.pull:
        raise SyncError(f"{shown} does not exist here; nothing to sync from")
    if not local.parent.is_dir():
        raise SyncError(f"{shown} does not exist and neither does the folder above it; make it first")


def _home_or_above(path: str, home: str) -> bool:
    return bool(home) and (path == home or home.startswith(path.rstrip("/") + "/"))


def check_delete(spec: SyncSpec) -> None:
    """--pull --delete into this machine's home folder (or a folder above it) would delete everything in it that the
    pod's folder lacks: refused (docs/sync.md#deleting)."""
    if spec.pull and spec.delete and _home_or_above(os.path.realpath(spec.local), os.path.realpath(Path.home())):
        raise SyncError(
            f"--pull --delete into {visible(str(spec.local))} would delete everything in your home folder that the "
            "pod's folder lacks: name a folder inside it"
        )


def pod_places(pod: Pod, home: str) -> tuple[str, str]:
    """The pod's volume and home folder, as remote_root reads `x` and `~/x`."""
    sandbox = dict(pod.env).get(SANDBOX_ENV)  # a demo pod that is not isolated: its folders are on this machine
    if sandbox:
        return posixpath.join(sandbox, "workspace"), posixpath.join(sandbox, "root")
    return posixpath.normpath(pod.volume_mount_path or DEFAULT_VOLUME), posixpath.normpath(home or "/root")


def podtui_folders(spec: SyncSpec, pod: Pod, root: str, home: str) -> list[str]:
    """podtui's own folders on the pod (`.podtui` in its volume and its home: jobs, autostop's watchdog, Hub
    downloads) that lie inside `root`, relative to it: never listed, copied over or deleted. Raises SyncError for a
    root inside one of them, and for --delete on the pod's volume or home (or a folder above them), which would
    delete everything else there (docs/sync.md#deleting)."""
    volume, home = pod_places(pod, home)
    inside = []
    for own in (posixpath.join(volume, PODTUI_DIR), posixpath.join(home, PODTUI_DIR)):
        if root == own or root.startswith(own + "/"):
            raise SyncError(f"{visible(root)} is podtui's own folder on the pod: name another")
        if own.startswith(root.rstrip("/") + "/"):
            inside.append(own[len(root.rstrip("/")) + 1 :])
    if spec.delete and not spec.pull:
        for place, what in ((volume, "volume"), (home, "home folder")):
            if _home_or_above(root, place):
                raise SyncError(
                    f"--delete on {visible(root)} would delete everything in the pod's {what} ({visible(place)}) "
                    "that LOCAL_DIR lacks: name a folder inside it"
                )
    return inside


def remote_root(pod: Pod, text: str, home: str) -> str:
    """REMOTE_DIR as an absolute path on the pod (docs/sync.md#where-remote_dir-is)."""
    if not text or any(ord(ch) < 32 or ch == "\x7f" for ch in text):
        raise SyncError(f"REMOTE_DIR {visible(text)!r} is empty or holds control characters")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise SyncError(f"REMOTE_DIR {visible(text)!r} is not UTF-8") from None
    sandbox = dict(pod.env).get(SANDBOX_ENV)  # a demo pod that is not isolated: its folders are on this machine
    if text == "~" or text.startswith("~/"):
        base, rest = (posixpath.join(sandbox, "root") if sandbox else home or "/root"), text[2:]
    elif text.startswith("/"):
        base, rest = "/", text
    else:
        base, rest = posixpath.join(sandbox, "workspace") if sandbox else pod.volume_mount_path or DEFAULT_VOLUME, text
    path = posixpath.normpath(posixpath.join(base, rest))
    if path == "/":
        raise SyncError("REMOTE_DIR / is the pod's whole filesystem: name a folder")
    refusal = transfer_path_refusal(pod, path)
    if refusal is not None:
        raise SyncError(refusal)
    return path


def _new_enough(words: list[str] | None) -> bool:
    found = rsync_version(decoded(words[0])) if words else None
    return found is not None and found >= POD_RSYNC


class SyncRun:
    """One sync of `spec`. run() blocks (a worker thread's job) and returns the result; cancel() from anywhere."""

    def __init__(
        self,
        spec: SyncSpec,
        lookup: Callable[[str], Pod],
        ssh_settings: Callable[[], SshSettings],
        listener: SyncListener | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.spec = spec
        self.lookup = lookup
        self.ssh_settings = ssh_settings
        self.listener = listener or SyncListener()
        self.environ = environ
        self._cancel = threading.Event()
        self._route: RsyncRoute | SftpRoute | ConsoleRoute | None = None  # while its bytes move (to cancel it)
        self._last_route: RsyncRoute | SftpRoute | ConsoleRoute | None = None
        self._decided = ""  # the route's name, once the pod is reached

    def cancel(self) -> None:
        self._cancel.set()
        route = self._route
        if route is not None:
            route.cancel()

    def check(self) -> None:
        if self._cancel.is_set():
            raise Cancelled

    def run(self) -> SyncResult:
        result = SyncResult(self.spec)
        self.listener.started(self.spec)
        try:
            check_local(self.spec)
            for attempt in (1, 2):
                # what an attempt that dropped had verified, deleted or linked stays done; the rest is asked again
                result.attempts, result.plan, result.failed, result.kept, result.touched = attempt, None, [], [], 0
                try:
                    self._once(result)
                    break
                except LinkLost as e:
                    why = str(e)
                except (AuthFailed, HostKeyChanged, SshKeyError) as e:
                    raise SyncError(f"cannot log in to the pod: {e}") from None
                except SshError as e:
                    why = str(e)
                stopped = self._stopped()
                if stopped is not None:
                    result.error = stopped
                    break
                if attempt == 1:
                    self._note(result, f"the connection dropped ({why}); trying once more")
                    continue
                result.error = f"the connection to {result.pod_name or 'the pod'} dropped again: {why}"
        except SyncError as e:
            result.error = str(e)
        except PodBatchError as e:
            result.error = str(e)
        except OSError as e:  # this machine's folder: unreadable, read-only, full
            where = f" ({e.filename})" if e.filename else ""
            result.error = f"this machine's side of the sync failed: {e.strerror or e}{where}"
        except Cancelled:
            result.cancelled = True
        finally:
            result.ended = time.time()
            if result.error is not None:
                log.info("sync %s: %s", self.spec.direction, result.error)
            self.listener.done(result)
        return result

    def _stopped(self) -> str | None:
        """After a drop: the pod's state, when it is not running any more (None: it runs, or cannot be told)."""
        try:
            pod = self.lookup(self.spec.pod_id)
        except Exception as e:  # an API error of any kind: the drop is what to say
            log.info("looking the pod up after a drop failed: %s", e)
            return None
        if pod.state == "RUNNING":
            return None
        return (
            f"{pod.name} is {pod.state}: the sync stopped with it. What verified is in place; nothing else was put "
            "under a final name"
        )

    def _note(self, result: SyncResult, text: str) -> None:
        result.notes.append(text)
        self.listener.note(text)

    def _fail(self, result: SyncResult, path: str, why: str) -> None:
        result.failed.append((path, why))
        self.listener.file_failed(path, why)

    # -- one attempt ----------------------------------------------------------------------------------------

    def _once(self, result: SyncResult) -> None:
        spec = self.spec
        pod = self.lookup(spec.pod_id)
        result.pod_name = pod.name
        if pod.state != "RUNNING":
            raise SyncError(f"{pod.name} is {pod.state}: sync needs it RUNNING")
        settings = self.ssh_settings()
        via: Via = "direct" if spec.via in ("rsync", "sftp") else "auto"
        try:
            conn = connect_pod(pod, settings, via)
        except (AuthFailed, HostKeyChanged, SshKeyError):
            raise
        except SshError as e:
            if spec.via in ("rsync", "sftp") and pod.ssh_direct is None:
                raise SyncError(f"--via {spec.via} needs direct SSH: {e}") from None
            raise
        try:
            shell = RemoteShell(lambda: conn, "exec" if conn.endpoint.mode == "direct" else "pty")
            shell.open()
            try:
                self._with_shell(result, pod, settings, conn, shell)
            finally:
                shell.close()
        finally:
            conn.close()

    def _with_shell(
        self, result: SyncResult, pod: Pod, settings: SshSettings, conn: Connection, shell: RemoteShell
    ) -> None:
        spec = self.spec
        probe = shell.run(_PROBE, timeout_s=60)
        home_said = said(probe.output, "home")
        home = decoded(home_said[0]) if home_said else ""
        root = remote_root(pod, spec.remote, home)
        result.remote_root = root
        podtuis = podtui_folders(spec, pod, root, home)
        version = said(probe.output, "rsyncv")
        pod_rsync = said(probe.output, "rsync") == ["yes"] and bool(version) and _new_enough(version)
        self._decided = result.route = self._route_name(conn, pod_rsync)
        with PodTemp(shell, root) as temp:
            pod_end = PodEnd(temp, self.check)
            local_end = LocalEnd(spec.local, self.check)
            src: PodEnd | LocalEnd = pod_end if spec.pull else local_end
            dst: PodEnd | LocalEnd = local_end if spec.pull else pod_end
            own = IgnoreRules(spec.excludes, spec.gitignore, podtuis)
            source = src.scan(own)
            if source.missing:
                raise SyncError(f"{visible(root)} does not exist on the pod; nothing to pull")
            theirs = IgnoreRules(spec.excludes, spec.gitignore, podtuis)
            dest = dst.scan(theirs, by=own)
            plan = make_plan(source, dest, theirs, pull=spec.pull, delete=spec.delete)
            if plan.check:
                paths = [c.path for c in plan.check]
                size = sum(c.size for c in plan.check)
                settle(plan, src.hash(paths, size), dst.hash(paths, size))
            result.plan = plan
            for note in plan.notes:
                self._note(result, note)
            self.listener.plan_ready(plan)
            for path, why in plan.failed:
                self._fail(result, path, why)
            if spec.dry_run or plan.empty:
                return
            dst.open_stage()
            try:
                self._carry_out(result, plan, src, dst, pod, settings, conn, shell, temp)
            finally:
                with contextlib.suppress(Exception):  # after a drop this fails too; the drop is what to say
                    dst.close_stage()

    def _route_name(self, conn: Connection, pod_rsync: bool) -> str:
        direct = conn.endpoint.mode == "direct"
        here = local_rsync() is not None and shutil.which(openssh.SSH) is not None
        want = self.spec.via
        if want == "auto":
            return "rsync" if direct and here and pod_rsync else "sftp" if direct else "console"
        if want in ("rsync", "sftp") and not direct:
            raise SyncError(f"--via {want} needs direct SSH, and this pod is reachable only through RunPod's gateway")
        if want == "rsync" and not here:
            raise SyncError(
                "--via rsync: rsync 3.1 or later (and OpenSSH's ssh) is not installed on this machine (use --via sftp)"
            )
        if want == "rsync" and not pod_rsync:
            raise SyncError("--via rsync: the pod has no rsync, or one older than 3.0 (use --via sftp)")
        return want

    def _carry_out(
        self,
        result: SyncResult,
        plan: Plan,
        src: PodEnd | LocalEnd,
        dst: PodEnd | LocalEnd,
        pod: Pod,
        settings: SshSettings,
        conn: Connection,
        shell: RemoteShell,
        temp: PodTemp,
    ) -> None:
        spec = self.spec
        stage = dst.stage or ""
        prepared = dst.apply(Ops(delete=plan.deletes, rmdir=plan.rmdirs, mkdir=plan.mkdirs))
        for path, why in prepared.failed.items():
            self._fail(result, path, why)
        result.deleted = [p for p in plan.deletes + plan.rmdirs if p not in prepared.failed and p not in prepared.kept]
        result.kept = list(prepared.kept)
        if prepared.kept:
            self._note(result, f"{len(prepared.kept)} folders kept: they still hold what is ignored there")
        blocked = set(prepared.failed)
        copies = []
        for c in plan.copies:
            if any(a in blocked for a in ancestors(c.path)):
                self._fail(result, c.path, "its folder could not be made")
            else:
                copies.append(c)
        moved = self._move(copies, stage, pod, settings, conn, shell, temp)
        for path, why in moved.failed.items():
            self._fail(result, path, why)
        for c in copies:  # a route that neither landed nor failed a file must not let it pass as done
            if c.path not in moved.landed and c.path not in moved.failed:
                self._fail(result, c.path, f"the {self._decided} route did not copy it")
        verified = self._verify(result, copies, moved, src, dst)
        finish = Ops(links=plan.links, times=plan.touch, modes=plan.chmod)
        mask = umask() if spec.pull else POD_UMASK
        by_folder: dict[str, list[tuple[str, str]]] = {}
        for c, _digest in verified:
            landed = moved.landed[c.path]
            if landed.staged and landed.group:
                by_folder.setdefault(posixpath.dirname(c.path), []).append((landed.where, c.path))
            elif landed.staged:
                finish.singles.append((landed.where, c.path))
            if landed.needs_time:
                finish.staged_times.append((landed.where, c.mtime_ns))
            if landed.needs_mode:
                finish.staged_modes.append((landed.where, arrival_mode(c, mask)))
        finish.groups = sorted(by_folder.items())
        applied = dst.apply(finish)
        for c, digest in verified:
            refused = applied.failed.get(c.path)
            if refused is None:
                result.verified.append((c.path, digest))
                self.listener.file_verified(c.path, digest)
            else:
                self._fail(result, c.path, refused)
        for path, _ in plan.links:
            if path in applied.failed:
                self._fail(result, path, applied.failed[path])
            else:
                result.linked.append(path)
        touched = {p for p, _ in plan.touch}
        chmodded = {p for p, _ in plan.chmod}
        for path, why in applied.failed.items():
            if path in touched or path in chmodded:
                self._fail(result, path, why)
        result.touched = len(touched - set(applied.failed))

    def _move(
        self,
        copies: list[Copy],
        stage: str,
        pod: Pod,
        settings: SshSettings,
        conn: Connection,
        shell: RemoteShell,
        temp: PodTemp,
    ) -> Moved:
        spec = self.spec
        route: RsyncRoute | SftpRoute | ConsoleRoute
        if not copies:
            return Moved()
        root = temp.root
        if self._decided == "rsync":
            shell_e, destination = rsync_shell(pod, settings)
            environ = dict(self.environ) if self.environ is not None else openssh.ssh_env()
            route = RsyncRoute(shell_e, destination, spec.local, root, spec.pull, self.listener, environ, self.check)
        elif self._decided == "sftp":
            route = SftpRoute(conn, spec.local, root, spec.pull, self.listener, self.check)
        else:
            route = ConsoleRoute(shell, temp, spec.local, spec.pull, self.listener, self.check)
        self._route = self._last_route = route
        if self._cancel.is_set():
            raise Cancelled
        try:
            return route.copy(copies, stage)
        finally:
            self._route = None

    def _verify(
        self, result: SyncResult, copies: list[Copy], moved: Moved, src: PodEnd | LocalEnd, dst: PodEnd | LocalEnd
    ) -> list[tuple[Copy, str]]:
        """Hash both ends of what landed, in one batch each: the source file now, and the copy. Only a match counts;
        a local source that changed while it was copied fails (docs/sync.md#verification)."""
        landed = [c for c in copies if c.path in moved.landed]
        if not landed:
            return []
        size = sum(c.size for c in landed)
        here = src.hash([c.path for c in landed], size)
        there = dst.hash([moved.landed[c.path].where for c in landed], size)
        verified = []
        for c in landed:
            a, b = here.get(c.path), there.get(moved.landed[c.path].where)
            if not self.spec.pull and self._changed_here(c):
                self._fail(result, c.path, "it changed while it was copied; sync again to copy it as it is now")
            elif a is None:
                self._fail(result, c.path, "the source could not be hashed after the copy (gone, or unreadable)")
            elif b is None:
                last = self._last_route
                why = last.why_missing() if isinstance(last, RsyncRoute) else "the copy is not there"
                self._fail(result, c.path, why)
            elif a != b and isinstance(self._last_route, RsyncRoute) and self._last_route.code not in (0, 23, 24):
                self._fail(result, c.path, self._last_route.why_missing())  # rsync stopped before it: the old bytes
            elif a != b:
                where = "the copy differs from the source" + (
                    " (it is under its final name: the next sync copies it again)"
                    if not moved.landed[c.path].staged
                    else "; it was discarded"
                )
                self._fail(result, c.path, f"sha256 mismatch: {where}")
            else:
                verified.append((c, a))
        return verified

    def _changed_here(self, c: Copy) -> bool:
        try:
            st = os.stat(self.spec.local / c.path, follow_symlinks=False)
        except OSError:
            return True
        return st.st_size != c.size or st.st_mtime_ns != c.mtime_ns
