"""A simulated pod's container, and the way into it. Every process of a pod starts here (the gateway's shell, an
exec, each direct-SSH session and its SFTP server), and so does each pod's sshd (outside any pod).

Run by the simulator as `python -S -I pod_enter.py OPTIONS -- COMMAND...` (stdlib only, nothing from podtui):
the set-up happens in the child's own program, never in a preexec_fn of the simulator's threaded process.

  --init        with --spec: start the pod's container and stay as long as it runs (see below); prints
                `ready PID START` (its init's pid and start time, as this machine sees them) once it is up
  --spec FILE   the pod (JSON from pod_view.py): enter its running container (spec["init"]), take its
                environment, start in its folder; a pod without namespaces (isolated: false) only the last two
  --tty         make stdin the controlling terminal
  --ssh         the command is sshd's: $SSH_ORIGINAL_COMMAND through bash -c, or an interactive bash
  --parent PID  SIGTERM this process when the thread that started it ends (no root sshd outlives podtui)
  --hosts FILE  resolve names with FILE as /etc/hosts, in a mount namespace of this process's own (a pod's sshd:
                `localhost` is the pod's own address for what it forwards, docs/services.md)
  --probe DIR   exit 0 when a pod's container can be built here (DIR: an empty folder to build its root on)

The container (Linux): new PID, mount, UTS and IPC namespaces (and a user namespace when not run by root). Its
init, PID 1 there, builds the pod's root filesystem (pod_rootfs.py), takes the pod's id as hostname, drops to
the capabilities below, then only reaps orphans; it ends when its stdin closes (the simulator stopped or died)
or when the simulator kills it, and the kernel then kills every process of the pod, whatever it did to its
environment or session. A session joins those namespaces (setns), forks (the child is in the pod's PID
namespace), and the child starts a session of its own, drops the same capabilities, loses abstract Unix sockets
made outside (Landlock, where the kernel has it) and runs the command, while this process waits for it and
passes signals on. So what a session leaves running (nohup, setsid) lives on in the pod, and ends with it. The
pod shares this machine's network (it reaches the simulator's API, relay and Hub on 127.0.0.1).
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import os
import re
import select
import signal
import sys
import termios
import time
import warnings  # noqa: F401  (os.execvp imports it)

# Everything this program needs once it has joined a pod is imported here, at its start: from then on, this
# machine's Python library may be out of sight (root's pyenv lives under /root, and the pod has its own /root).
# Not typing, though: a session's start-up time is every command's (mypy reads TYPE_CHECKING as true).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID = 0x10000000, 0x20000000
# joined in this order: the user namespace first (it grants the rights to join the others), the mount one last
NAMESPACES = (
    ("user", CLONE_NEWUSER),
    ("ipc", CLONE_NEWIPC),
    ("uts", CLONE_NEWUTS),
    ("pid", CLONE_NEWPID),
    ("mnt", CLONE_NEWNS),
)
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_CAPBSET_DROP, PR_CAP_AMBIENT = 1, 4, 24, 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
CAPSET_VERSION_3 = 0x20080522
# Docker's default set without what it keeps safe by means this simulator lacks: MKNOD (Docker's device cgroup),
# NET_RAW and NET_BIND_SERVICE (a network namespace of its own; a pod shares this machine's network), AUDIT_WRITE.
# Gone with the rest: SYS_ADMIN (mount, setns), SYS_PTRACE, SYS_BOOT, SYS_MODULE, SYS_TIME, SYS_RAWIO, NET_ADMIN,
# DAC_READ_SEARCH (open_by_handle_at), SYSLOG, BPF, PERFMON.
KEPT_CAPS = {
    "CHOWN": 0,
    "DAC_OVERRIDE": 1,
    "FOWNER": 3,
    "FSETID": 4,
    "KILL": 5,
    "SETGID": 6,
    "SETUID": 7,
    "SETPCAP": 8,
    "SYS_CHROOT": 18,
    "SETFCAP": 31,
}
# the same numbers on every architecture
OPEN_TREE, MOVE_MOUNT, LANDLOCK_CREATE_RULESET, LANDLOCK_RESTRICT_SELF = 428, 429, 444, 446
OPEN_TREE_CLONE, AT_FDCWD, MOVE_MOUNT_F_EMPTY_PATH, MNT_DETACH = 1, -100, 4, 2
MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND, MS_REC, MS_SLAVE = 2, 4, 32, 4096, 16384, 1 << 19
LANDLOCK_CREATE_RULESET_VERSION, LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET = 1, 1
DEFAULT_SIGNALS = ("SIGINT", "SIGQUIT", "SIGPIPE", "SIGXFSZ")
FORWARDED = ("SIGHUP", "SIGINT", "SIGQUIT", "SIGTERM", "SIGUSR1", "SIGUSR2", "SIGALRM")
NOT_RUNNING = 126  # the exit status when the pod's container cannot be entered
# A terminal session's relay: what each direction holds at most, not yet taken by the other side (a pty takes
# about 4 KiB of input at a time); and what it still passes on once the pod's process has ended.
RELAY_BUFFER = 65536
DRAIN_BYTES, DRAIN_S = 1 << 20, 2.0

_libc: Any = None


def libc() -> Any:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _stat(pid: int) -> list[str] | None:
    """/proc/PID/stat's fields after the command's name (state, ppid, ...)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    return text[text.rfind(")") + 2 :].split()


def start_time(pid: int) -> int | None:
    """When the process started, in clock ticks since boot; a reused pid has another one."""
    fields = _stat(pid)
    return None if fields is None else int(fields[19])


def parent_of(pid: int) -> int | None:
    fields = _stat(pid)
    return None if fields is None else int(fields[1])


# --- what every process of a pod gives up ------------------------------------------------------------------


def drop_capabilities() -> None:
    """Down to KEPT_CAPS: the bounding set (what any program run from here can ever hold) and this process's
    own sets; no ambient ones."""
    for cap in range(64):
        if cap not in KEPT_CAPS.values() and libc().prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            if ctypes.get_errno() == 22:  # EINVAL: past the last capability this kernel knows
                break
            _check(-1, f"drop capability {cap}")
    libc().prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)  # EINVAL before Linux 4.3: none to clear
    kept = sum(1 << cap for cap in KEPT_CAPS.values())
    header = (ctypes.c_uint32 * 2)(CAPSET_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)(kept, kept, 0, 0, 0, 0)  # effective, permitted, inheritable; then caps 32-63
    _check(libc().capset(header, data), "capset")


def scope_abstract_sockets() -> bool:
    """No connect() from here to an abstract Unix socket made outside (X11's, D-Bus's, a container runtime's):
    they are per network namespace, and a pod shares this machine's. Landlock ABI 6 (Linux 6.12); False where
    the kernel cannot."""
    abi = libc().syscall(LANDLOCK_CREATE_RULESET, None, 0, LANDLOCK_CREATE_RULESET_VERSION)
    if abi < 6:
        return False
    attr = (ctypes.c_uint64 * 3)(0, 0, LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET)  # fs, net, scoped
    fd = libc().syscall(LANDLOCK_CREATE_RULESET, attr, ctypes.sizeof(attr), 0)
    if fd < 0:
        return False
    try:
        _check(libc().syscall(LANDLOCK_RESTRICT_SELF, fd, 0), "landlock_restrict_self")
    finally:
        os.close(fd)
    return True


# --- the container -----------------------------------------------------------------------------------------


_pod_rootfs: Any = None


def _rootfs() -> Any:
    """pod_rootfs.py next to this file (run as a script, this program has no package to import it from)."""
    global _pod_rootfs
    if _pod_rootfs is None:
        import importlib.util  # only ever before this process joins a pod

        spec = importlib.util.spec_from_file_location(
            "pod_rootfs", os.path.join(os.path.dirname(__file__), "pod_rootfs.py")
        )
        assert spec is not None and spec.loader is not None
        _pod_rootfs = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(_pod_rootfs)
    return _pod_rootfs


def start_container(spec: dict[str, Any], probe: bool = False) -> int:
    """Unshare, fork the pod's init, report it, wait for it. This process stays outside the pod's PID namespace
    (a pod's processes never see it); if it is killed, so is the init."""
    root = os.getuid() == 0
    flags = CLONE_NEWPID | (0 if root else CLONE_NEWUSER)
    uid, gid = os.getuid(), os.getgid()
    _check(libc().unshare(flags), "unshare")
    if not root:  # root of a user namespace of our own: allowed to mount in it, nothing beyond what we may do
        for name, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"), ("gid_map", f"0 {gid} 1")):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(ready_r)
        _init(spec, root, ready_w, probe)
    os.close(ready_w)
    ready = os.read(ready_r, 64)
    os.close(ready_r)
    if ready == b"ready\n" and not probe:
        os.write(1, f"ready {pid} {start_time(pid)}\n".encode())
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (1, 2):  # nothing more to say; the simulator stops reading
            os.dup2(null, fd)
        os.close(null)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except ChildProcessError:
            return 1
    return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


def _init(spec: dict[str, Any], root: bool, ready: int, probe: bool) -> NoReturn:
    """PID 1 of the pod."""
    try:
        _check(libc().prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl")
        _check(libc().unshare(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC), "unshare")
        _rootfs().build(spec, root)
        hostname = str(spec.get("hostname") or "pod").encode()
        _check(libc().sethostname(hostname, len(hostname)), "sethostname")
        if root:  # /proc/1 of the pod: no one in it may read its memory or descriptors (its stdin)
            _check(libc().prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), "prctl")
        drop_capabilities()
    except (OSError, ValueError, KeyError) as e:
        sys.stderr.write(f"podtui simulator: cannot build the pod's container: {e}\n")
        sys.stderr.flush()
        os._exit(NOT_RUNNING)
    os.write(ready, b"ready\n")
    os.close(ready)
    if probe:
        os._exit(0)
    null = os.open("/dev/null", os.O_RDWR)
    for fd in (1, 2):
        os.dup2(null, fd)
    os.close(null)
    # PID 1 gets no signal from inside its namespace that it has no handler for; Python's own SIGINT handler
    # would let any pod process end the pod
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    woken_r, woken_w = os.pipe()
    os.set_blocking(woken_w, False)
    signal.set_wakeup_fd(woken_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    while True:
        _reap()
        readable = select.select([0, woken_r], [], [])[0]
        if 0 in readable and not os.read(0, 4096):  # the simulator closed its end, or died
            os._exit(0)
        if woken_r in readable:
            os.read(woken_r, 4096)


def _reap() -> None:
    """Orphans of the pod are the init's children: wait for each that has ended."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


# --- a session ---------------------------------------------------------------------------------------------


def join(init: dict[str, Any], binds: list[list[Any]] | None = None) -> None:
    """Join the namespaces of the pod's init (its pid and start time in spec["init"]). binds: the spec's, whose
    writable folders get what this machine mounted in them since the container started (below)."""
    pid, started = int(init["pid"]), int(init["start"])
    fds: dict[str, int] = {}
    carried: list[tuple[int, str]] = []
    stale: list[str] = []
    try:
        for name, _flag in NAMESPACES:
            fds[name] = os.open(f"/proc/{pid}/ns/{name}", os.O_RDONLY | os.O_CLOEXEC)
        if start_time(pid) != started:  # checked after opening: these are that process's namespaces
            raise ProcessLookupError
        same_user = os.fstat(fds["user"]).st_ino == os.stat("/proc/self/ns/user").st_ino
        if same_user and binds:  # root: a user namespace's mounts are locked to it
            _to_machines_mounts(pid)
            carried, stale = _mounts_to_carry(pid, binds)
        for name, flag in NAMESPACES:
            if name == "user" and same_user:
                continue  # root: the pod has no user namespace of its own
            _check(libc().setns(fds[name], flag), f"setns {name}")
        _carry(carried, stale)
    except (FileNotFoundError, ProcessLookupError):
        raise OSError("this pod's container is not running") from None
    finally:
        for fd in [*fds.values(), *(fd for fd, _ in carried)]:
            os.close(fd)


def _to_machines_mounts(pid: int) -> None:
    """Into the mount namespace the pod's container was started from, that of its init's parent (the container's
    shim, alive as long as the init), when this process is elsewhere: a session of the pod's sshd starts in sshd's
    own (its /etc/hosts: own_hosts), which has not seen what this machine mounted since sshd started."""
    parent = parent_of(pid)
    if parent is None:
        raise ProcessLookupError
    fd = os.open(f"/proc/{parent}/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)
    try:
        if parent_of(pid) != parent:  # the init went, and its pid's parent is another process: not the shim
            raise ProcessLookupError
        theirs, mine = os.fstat(fd), os.stat("/proc/self/ns/mnt")
        if (theirs.st_dev, theirs.st_ino) != (mine.st_dev, mine.st_ino):
            _check(libc().setns(fd, CLONE_NEWNS), "setns the machine's mnt")
    finally:
        os.close(fd)


def own_hosts(path: str) -> None:
    """From here on, this process and what it runs resolve names with `path` as /etc/hosts: bound in a mount
    namespace of its own, which takes this machine's later mounts where they propagate and gives none back. Said on
    stderr (sshd's log) when it cannot be: `localhost` is then this machine's."""
    try:
        _check(libc().unshare(CLONE_NEWNS), "unshare")
        _check(libc().mount(None, b"/", None, ctypes.c_ulong(MS_REC | MS_SLAVE), None), "mount --make-rslave /")
        _check(libc().mount(os.fsencode(path), b"/etc/hosts", None, ctypes.c_ulong(MS_BIND), None), "bind /etc/hosts")
    except OSError as e:
        sys.stderr.write(f"{HOSTS_NOT_OWN}: {e}\n")
        sys.stderr.flush()


HOSTS_NOT_OWN = "podtui simulator: localhost is this machine's, not the pod's"


def _mount_points(path: str) -> list[str]:
    """Mount points in a mountinfo file (which writes space, tab, newline and backslash as octal escapes)."""
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        return [re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), line.split()[4]) for line in f]


def _mounts_to_carry(pid: int, binds: list[list[Any]]) -> tuple[list[tuple[int, str]], list[str]]:
    """What this machine mounted in the pod's writable folders since its container started (a test's small disk
    on a pod's /workspace), each cloned here (an fd) with where the pod has it; and the mounts the pod still has
    there that this machine has taken away. The pod itself cannot mount, so every mount in its folders but the
    folders themselves came from here."""
    own = [(os.path.realpath(host), inside) for host, inside, rw in binds if rw]
    here: dict[str, str] = {}
    for point in _mount_points("/proc/self/mountinfo"):
        for host, inside in own:
            if point.startswith(host.rstrip("/") + "/"):
                here[inside + point[len(host) :]] = point
    folders = {inside for _host, inside in own}
    theirs = [
        p
        for p in _mount_points(f"/proc/{pid}/mountinfo")
        if p not in folders and any(p.startswith(f.rstrip("/") + "/") for f in folders)
    ]
    carried = []
    for inside, point in here.items():
        if inside not in theirs:
            fd = libc().syscall(OPEN_TREE, AT_FDCWD, os.fsencode(point), OPEN_TREE_CLONE | os.O_CLOEXEC)
            if fd >= 0:  # ENOSYS before Linux 5.2: the pod goes without it
                carried.append((fd, inside))
    return carried, [p for p in reversed(theirs) if p not in here]


def _carry(carried: list[tuple[int, str]], stale: list[str]) -> None:
    for path in stale:
        libc().umount2(os.fsencode(path), MNT_DETACH)
    for fd, inside in carried:
        if libc().syscall(MOVE_MOUNT, fd, b"", AT_FDCWD, os.fsencode(inside), MOVE_MOUNT_F_EMPTY_PATH) == 0:
            libc().mount(
                None, os.fsencode(inside), None, ctypes.c_ulong(MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV), None
            )


def run_in_pod(command: list[str], tty: bool, cwd: str, ssh: bool = False) -> int:
    """Fork the pod's process (in its PID namespace since join), wait for it, pass signals on, end as it ended.
    tty: stdin is a terminal of this machine's (the gateway's, sshd's), which the pod's own /dev/pts does not
    show: the pod's process gets a terminal of the pod's own (so `tty`, tmux and the like work there), and this
    process carries bytes, window size and hang-up between the two, as `docker exec -t` does."""
    terminal = PodTerminal(copy_modes=ssh) if tty else None
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()  # a session and process group of its own: kill(0) or a hang-up reaches no host process
            # killed with this process, as when it was the pod's process itself (a gateway shell that will not go)
            _check(libc().prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl")
            if terminal is not None:
                terminal.become_its_process()
            scope_abstract_sockets()
            drop_capabilities()
            os.chdir(cwd)
        except OSError as e:
            sys.stderr.write(f"podtui simulator: cannot start in the pod: {e}\n")
            sys.stderr.flush()
            os._exit(NOT_RUNNING)
        os._exit(execute(command))

    def forward(signum: int, _frame: object) -> None:
        for kill in (os.killpg, os.kill):  # its process group; or itself, before its setsid
            try:
                kill(pid, signum)
                return
            except ProcessLookupError:
                continue

    for name in FORWARDED:
        signal.signal(getattr(signal, name), forward)
    status = terminal.relay(pid) if terminal is not None else _wait(pid)
    if status is None:
        return 1
    if os.WIFSIGNALED(status):  # end the same way, so that sshd and the gateway report the signal
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
        return 128 + sig
    return os.waitstatus_to_exitcode(status)


def _wait(pid: int) -> int | None:
    try:
        return os.waitpid(pid, 0)[1]
    except ChildProcessError:
        return None


class PodTerminal:
    """A pseudo-terminal of the pod's own devpts (opened once this process has joined the pod), for the terminal
    this process was given (fd 0 and 1), which goes raw: the pod's terminal does the line discipline."""

    def __init__(self, copy_modes: bool) -> None:
        """copy_modes: the pod's terminal starts with this one's modes (sshd set them as the client asked);
        otherwise with a new terminal's (the gateway's, which the simulator made raw from the start)."""
        self.master, self.slave = os.openpty()  # /dev/ptmx, resolved in the pod's mount namespace
        # the gateway made this process a session leader: its terminal's SIGWINCH and hang-up come here (sshd's
        # sessions have it already)
        with contextlib.suppress(OSError):
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)
        self.saved: list[Any] | None = None
        try:
            self.saved = termios.tcgetattr(0)
            if copy_modes:
                termios.tcsetattr(self.slave, termios.TCSANOW, self.saved)
            raw = [*self.saved[:6], list(self.saved[6])]
            raw[0] &= ~(termios.BRKINT | termios.ICRNL | termios.INPCK | termios.ISTRIP | termios.IXON)
            raw[1] &= ~termios.OPOST
            raw[2] = (raw[2] & ~(termios.CSIZE | termios.PARENB)) | termios.CS8
            raw[3] &= ~(termios.ECHO | termios.ICANON | termios.IEXTEN | termios.ISIG)
            raw[6][termios.VMIN], raw[6][termios.VTIME] = 1, 0
            termios.tcsetattr(0, termios.TCSANOW, raw)  # TCSANOW: what was typed already goes on to the pod
        except (termios.error, OSError):
            pass
        self.resized()

    def resized(self, *_: object) -> None:
        try:
            size = fcntl.ioctl(0, termios.TIOCGWINSZ, b"\0" * 8)
            fcntl.ioctl(self.master, termios.TIOCSWINSZ, size)  # the pod's foreground job gets its SIGWINCH
        except OSError:
            pass

    def become_its_process(self) -> None:
        """In the child, after setsid: the pod's terminal is its controlling one, and its stdin, stdout, stderr."""
        os.close(self.master)
        fcntl.ioctl(self.slave, termios.TIOCSCTTY, 0)
        for fd in (0, 1, 2):
            os.dup2(self.slave, fd)
        if self.slave > 2:
            os.close(self.slave)

    def relay(self, pid: int) -> int | None:
        """Carry bytes both ways until the pod's process ends (then what it wrote last), or either side hangs up:
        then the pod's terminal hangs up too, as sshd's would. Returns the process's wait status.

        Neither direction ever waits on the other: every descriptor is non-blocking and each direction holds at
        most RELAY_BUFFER bytes it could not pass on yet. While the pod's input is full (a paste into a program
        that is itself blocked writing its output), its output still flows; while one side does not read, this
        side stops reading what would go to it (backpressure, never unbounded memory)."""
        os.close(self.slave)
        woken_r, woken_w = os.pipe()
        os.set_blocking(woken_w, False)
        signal.set_wakeup_fd(woken_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.signal(signal.SIGWINCH, self.resized)
        master = self.master
        # fd 0 and 1 are usually one open terminal, shared with whoever passed it: its mode is put back after
        blocking: dict[int, bool] = {}
        with contextlib.suppress(OSError):
            blocking = {fd: os.get_blocking(fd) for fd in (0, 1)}
        for fd in (*blocking, master):
            os.set_blocking(fd, False)
        to_pod, to_out = bytearray(), bytearray()
        pod_open = True  # the pod's terminal still open on its side (not every descriptor of it closed)
        # poll, not select: a hang-up is reported for a descriptor that is not being read (full input buffer)
        poller = select.poll()
        poller.register(woken_r, select.POLLIN)
        try:
            while True:
                waited, status = os.waitpid(pid, os.WNOHANG)
                if waited:
                    self._drain(to_out)
                    return status
                if not pod_open and not to_out:
                    break
                poller.register(0, 0 if to_pod else select.POLLIN)
                poller.register(1, select.POLLOUT if to_out else 0)
                wanted = (select.POLLIN if len(to_out) < RELAY_BUFFER else 0) | (select.POLLOUT if to_pod else 0)
                if pod_open and wanted:
                    poller.register(master, wanted)
                else:  # unwatched: a closed pod terminal's hang-up would wake this loop for nothing
                    with contextlib.suppress(KeyError):
                        poller.unregister(master)
                events = dict(poller.poll())
                if events.get(woken_r):
                    os.read(woken_r, 4096)
                if events.get(0) and (to_pod or not _fill(0, to_pod, RELAY_BUFFER)):
                    break  # the outer terminal hung up
                if events.get(1, 0) & ~select.POLLOUT or (events.get(1) and not _flush(1, to_out)):
                    break
                if events.get(master):
                    closed = events[master] & ~(select.POLLIN | select.POLLOUT)  # on the pod's side
                    if closed or (to_pod and not _flush(master, to_pod)):
                        to_pod.clear()  # no one reads it any more; what the pod wrote still comes (below)
                    if len(to_out) < RELAY_BUFFER and not _fill(master, to_out, RELAY_BUFFER - len(to_out)):
                        pod_open = False
            os.close(master)
            self.master = -1
            return _wait(pid)
        except ChildProcessError:
            return None
        finally:
            if self.master >= 0:
                os.close(self.master)
            for fd, was in blocking.items():
                with contextlib.suppress(OSError):
                    os.set_blocking(fd, was)
            if self.saved is not None:
                with contextlib.suppress(termios.error):
                    termios.tcsetattr(0, termios.TCSANOW, self.saved)

    def _drain(self, to_out: bytearray) -> None:
        """The pod's process ended: pass on what it wrote just before, that is what its terminal holds now, within
        DRAIN_BYTES and DRAIN_S (a job it left in the background may write on forever)."""
        end = time.monotonic() + DRAIN_S
        budget, reading = DRAIN_BYTES, True
        while reading or to_out:
            if reading and len(to_out) < RELAY_BUFFER:
                before = len(to_out)
                # empty for now (EAGAIN), or gone: all it wrote has come
                reading = _fill(self.master, to_out, min(RELAY_BUFFER - before, budget), eagain=False)
                budget -= len(to_out) - before
                reading = reading and budget > 0
            left = end - time.monotonic()
            if left <= 0:
                return
            if to_out and (not select.select([], [1], [], left)[1] or not _flush(1, to_out)):
                return


def _fill(source: int, buffer: bytearray, size: int, eagain: bool = True) -> bool:
    """Read up to `size` bytes of `source` into `buffer`; False when it is gone (end of file, EIO), and when it
    has nothing now unless `eagain` (select may report a descriptor another reader emptied)."""
    try:
        data = os.read(source, size)
    except BlockingIOError:
        return eagain
    except OSError:
        return False
    buffer += data
    return bool(data)


def _flush(target: int, buffer: bytearray) -> bool:
    """Write what `target` takes now of `buffer`, and drop it from there; False when `target` is gone."""
    try:
        del buffer[: os.write(target, buffer)]
    except BlockingIOError:
        pass
    except OSError:
        return False
    return True


def execute(command: list[str]) -> int:
    # a pod's programs start with these at their defaults, whatever the simulator runs with (Python ignores
    # SIGPIPE and SIGXFSZ; a simulator started with `&` from a script ignores SIGINT and SIGQUIT)
    for name in DEFAULT_SIGNALS:
        signal.signal(getattr(signal, name), signal.SIG_DFL)
    try:
        os.execvp(command[0], command)
    except OSError as e:
        sys.stderr.write(f"{command[0]}: {e.strerror}\n")
        sys.stderr.flush()
    return 127


def die_with_parent(parent: int) -> None:
    if not sys.platform.startswith("linux"):  # no parent-death signal elsewhere; sshd is simulated on Linux only
        return
    _check(libc().prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0), "prctl")
    if os.getppid() != parent:  # it went before the prctl took hold
        os.kill(os.getpid(), signal.SIGTERM)


def main(argv: list[str]) -> int:
    if "--" in argv:
        cut = argv.index("--")
        options, command = argv[:cut], argv[cut + 1 :]
    else:
        options, command = argv, []
    spec: dict[str, Any] | None = None
    hosts: str | None = None
    ssh = tty = init = False
    i = 0
    while i < len(options):
        option = options[i]
        if option == "--spec":
            with open(options[i + 1], encoding="utf-8") as f:
                spec = json.load(f)
            i += 1
        elif option == "--tty":
            tty = True
        elif option == "--ssh":
            ssh = True
        elif option == "--init":
            init = True
        elif option == "--parent":
            die_with_parent(int(options[i + 1]))
            i += 1
        elif option == "--hosts":
            hosts = options[i + 1]
            i += 1
        elif option == "--probe":
            try:
                return start_container({"rootfs": options[i + 1], "hostname": "probe"}, probe=True)
            except OSError as e:
                sys.stderr.write(f"{e}\n")
                return 1
        else:
            sys.stderr.write(f"pod_enter: unknown option {option}\n")
            return 2
        i += 1
    if hosts is not None:
        own_hosts(hosts)
    if init:
        if spec is None:
            sys.stderr.write("pod_enter: --init needs --spec\n")
            return 2
        try:
            return start_container(spec)
        except OSError as e:
            sys.stderr.write(f"podtui simulator: cannot start the pod's container: {e}\n")
            return NOT_RUNNING
    isolated = spec is not None and bool(spec.get("isolated"))
    if spec is not None and isolated:
        try:
            join(spec.get("init") or {"pid": 0, "start": -1}, spec.get("binds"))
        except OSError as e:  # never run the pod's command on the machine's own files instead
            sys.stderr.write(f"podtui simulator: cannot enter the pod: {e}\n")
            return NOT_RUNNING
    if spec is not None and ssh:  # sshd's environment, with the pod's over it (the other ways in come with it)
        os.environ.update(spec.get("env", {}))
    if ssh:
        original = os.environ.get("SSH_ORIGINAL_COMMAND")
        if original:
            command = ["/bin/bash", "-c", original]
        else:
            if spec is not None and spec.get("banner") and os.isatty(1):
                os.write(1, spec["banner"].encode())
            command = ["/bin/bash", "-i"]
    if not command:
        sys.stderr.write("pod_enter: no command\n")
        return 2
    if isolated:
        assert spec is not None
        return run_in_pod(command, tty or (ssh and os.isatty(0)), spec["cwd"], ssh)
    if tty:  # not for sshd's sessions: sshd made the terminal theirs already
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    if spec is not None:
        os.chdir(spec["cwd"])
    return execute(command)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
