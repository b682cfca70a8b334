"""A simulated pod's root filesystem, built by its init (pod_enter.py --init) in the pod's fresh mount namespace.

Stdlib only, nothing from podtui: pod_enter.py loads this file by its path. What the pod gets, on a small tmpfs
that becomes its root (pivot_root):
- this machine's top-level folders bound read-only (every mount under them too);
- a /proc of its own PID namespace, with the files that reach the kernel read-only or hidden (as Docker does:
  /proc/sys, /proc/sysrq-trigger, /proc/kcore, ...), and this machine's /sys read-only;
- a minimal /dev (null, zero, full, random, urandom, tty; its own devpts, /dev/shm and mqueue), as `bwrap --dev`
  makes one: no disks, no /dev/kmsg, no other terminals;
- its own empty /run (systemd, Docker, tmux and D-Bus sockets live there), and an empty file over every other
  Unix socket this machine listens on when the pod starts (/proc/net/unix), since a read-only mount does not
  stop a connect();
- its own /workspace, /root and /tmp, and whatever else the spec lists: writable ones nosuid and nodev;
- an empty folder over each of the spec's hidden ones (the simulator's own, should TMPDIR be where it sees);
- the spec's `hosts` as its /etc/hosts (read-only): `localhost` is the pod's own loopback address;
- an empty, non-executable file over each of the spec's `covered` programs (an image without rsync): a read-only
  bind of this machine's /usr cannot lose a file, and `command -v` then finds nothing it can run.
Then it checks what it built and refuses (OSError) unless every mount but the pod's own is read-only.
"""

from __future__ import annotations

import ctypes
import os
import platform
import stat
from typing import Any

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_REC = 1024, 2048, 4096, 16384
MS_PRIVATE, MS_RELATIME, MS_STRICTATIME = 1 << 18, 1 << 21, 1 << 24
MNT_DETACH = 2
# glibc has no pivot_root wrapper
PIVOT_ROOT = {
    "x86_64": 155,
    "aarch64": 41,
    "arm64": 41,
    "riscv64": 41,
    "armv7l": 218,
    "i686": 217,
    "ppc64le": 203,
    "s390x": 217,
}
# per-mount flags a read-only remount must carry over (a user namespace refuses to clear locked ones)
KEPT_FLAGS = {
    "nosuid": MS_NOSUID,
    "nodev": MS_NODEV,
    "noexec": MS_NOEXEC,
    "noatime": MS_NOATIME,
    "nodiratime": MS_NODIRATIME,
    "relatime": MS_RELATIME,
    "strictatime": MS_STRICTATIME,
}
OWN = ("proc", "sys", "dev", "run", "tmp", "root", "workspace")  # top-level folders the machine's are not bound at
DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
DEV_LINKS = {
    "fd": "/proc/self/fd",
    "stdin": "/proc/self/fd/0",
    "stdout": "/proc/self/fd/1",
    "stderr": "/proc/self/fd/2",
    "ptmx": "pts/ptmx",
}
# Docker's default masked and read-only paths (moby's oci/defaults.go)
PROC_HIDDEN = ("asound", "acpi", "kcore", "keys", "latency_stats", "timer_list", "timer_stats", "sched_debug", "scsi")
PROC_READ_ONLY = ("bus", "fs", "irq", "sys", "sysrq-trigger")
SYS_HIDDEN = ("firmware", "devices/virtual/powercap")
COVER = "/.podtui/none"  # the empty file bound over this machine's Unix sockets
HOSTS = "/.podtui/hosts"  # the pod's own /etc/hosts
ST_RDONLY = 1

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


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    def c(text: str | None) -> bytes | None:
        return None if text is None else os.fsencode(text)

    _check(libc().mount(c(source), os.fsencode(target), c(fstype), ctypes.c_ulong(flags), c(data)), f"mount {target}")


def bind(source: str, target: str, recursive: bool = True) -> None:
    mount(source, target, None, MS_BIND | (MS_REC if recursive else 0))


def unescape(field: str) -> str:
    """mountinfo writes space, tab, newline and backslash in paths as octal escapes."""
    out, i = [], 0
    while i < len(field):
        code = field[i + 1 : i + 4]
        if field[i] == "\\" and len(code) == 3 and code.isdigit():
            out.append(chr(int(code, 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def mounts() -> list[tuple[str, int]]:
    """(mount point, the flags a remount must keep) of every mount this namespace sees, in mount order."""
    found = []
    with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            fields = line.split()
            flags = 0
            for option in fields[5].split(","):
                flags |= KEPT_FLAGS.get(option, 0)
            found.append((unescape(fields[4]), flags))
    return found


def under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _empty_file(path: str) -> None:
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644))


def _bind_host_tops(new: str) -> None:
    for entry in sorted(os.scandir("/"), key=lambda e: e.name):
        target = f"{new}/{entry.name}"
        if entry.name in OWN:
            continue
        if entry.is_symlink():  # /bin -> usr/bin on merged-/usr systems
            os.symlink(os.readlink(entry.path), target)
        elif entry.is_dir():
            os.mkdir(target)
            bind(entry.path, target)
        elif entry.is_file():
            _empty_file(target)
            bind(entry.path, target)


def _proc(new: str) -> list[str]:
    """A /proc of this PID namespace (the caller is its init), with Docker's hidden and read-only paths."""
    proc = f"{new}/proc"
    os.mkdir(proc)
    mount("proc", proc, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    for name in PROC_READ_ONLY:
        path = f"{proc}/{name}"
        if os.path.lexists(path):
            bind(path, path)  # its own mount, made read-only with the rest
    _hide(proc, PROC_HIDDEN, f"{new}/dev/null", strict=True)
    return [proc]


def _hide(folder: str, names: tuple[str, ...], null: str, strict: bool) -> None:
    """An empty read-only folder over each folder named, /dev/null over each file. strict: a failure is an error
    (under /proc: the kernel's keys and memory); otherwise it only costs a read-only view of firmware tables."""
    for name in names:
        path = f"{folder}/{name}"
        try:
            if os.path.isdir(path) and not os.path.islink(path):
                mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY, "mode=555,size=4k")
            elif os.path.exists(path) and not os.path.islink(path):
                bind(null, path, recursive=False)
        except OSError:
            if strict:
                raise


def _dev(new: str, root: bool) -> list[str]:
    """A /dev with the harmless devices only, and its own terminals, shared memory and message queues."""
    dev = f"{new}/dev"
    os.mkdir(dev)
    mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=755,size=64k")
    for name in DEVICES:
        _empty_file(f"{dev}/{name}")
        bind(f"/dev/{name}", f"{dev}/{name}", recursive=False)
    for name, target in DEV_LINKS.items():
        os.symlink(target, f"{dev}/{name}")
    writable = []
    os.mkdir(f"{dev}/pts")
    # gid 5 (tty) is not mapped in a user namespace of one user
    mount(
        "devpts",
        f"{dev}/pts",
        "devpts",
        MS_NOSUID | MS_NOEXEC,
        "newinstance,ptmxmode=0666,mode=620" + (",gid=5" if root else ""),
    )
    writable.append(f"{dev}/pts")
    os.mkdir(f"{dev}/shm")
    mount("tmpfs", f"{dev}/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")
    writable.append(f"{dev}/shm")
    os.mkdir(f"{dev}/mqueue")
    try:  # the pod's IPC namespace's POSIX message queues; nothing needs them enough to fail without
        mount("mqueue", f"{dev}/mqueue", "mqueue", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        writable.append(f"{dev}/mqueue")
    except OSError:
        pass
    return writable


def _run(new: str) -> list[str]:
    """An empty /run of the pod's own: this machine's daemons' sockets live in its /run."""
    os.mkdir(f"{new}/run")
    mount("tmpfs", f"{new}/run", "tmpfs", MS_NOSUID | MS_NODEV, "mode=755")
    writable = [f"{new}/run"]
    var_run = f"{new}/var/run"  # a link to /run nearly everywhere; a folder of its own on old systems
    if os.path.isdir(var_run) and not os.path.islink(var_run):
        mount("tmpfs", var_run, "tmpfs", MS_NOSUID | MS_NODEV, "mode=755")
        writable.append(var_run)
    return writable


def host_sockets() -> list[str]:
    """This machine's Unix sockets bound to a path (resolved), as /proc/net/unix lists them: the network namespace
    the pod shares. Paths bound in other mount namespaces may not exist here; they are left out."""
    found = set()
    try:
        with open("/proc/net/unix", encoding="utf-8", errors="surrogateescape") as f:
            lines = f.read().splitlines()[1:]
    except OSError:
        return []
    for line in lines:
        fields = line.split(None, 7)
        if len(fields) < 8 or not fields[7].startswith("/"):
            continue  # unbound, abstract (@...) or relative
        path = os.path.realpath(fields[7])
        try:
            if stat.S_ISSOCK(os.lstat(path).st_mode):
                found.add(path)
        except OSError:
            continue
    return sorted(found)


def _cover_sockets(new: str) -> None:
    cover = new + COVER
    for path in host_sockets():
        top = path.split("/")[1]
        if top in OWN:
            continue  # the pod has its own of that folder
        try:
            bind(cover, new + path, recursive=False)
        except OSError:
            continue  # gone meanwhile


def _cover_programs(new: str, paths: list[str]) -> None:
    """The image lacks these programs (pod_view.PodView.lacks): the empty file over each, where it is a file."""
    for path in paths:
        target = os.path.realpath(new + path)  # through /bin -> usr/bin too
        if under(target, new) and os.path.isfile(target):
            bind(new + COVER, target, recursive=False)


def _hosts(new: str, text: str) -> None:
    """The pod's /etc/hosts, on its own root's tmpfs, bound over the machine's file. Where a link leads there (a
    linked /etc or hosts file), it is left alone: the bind would land outside the pod's root."""
    target = f"{new}/etc/hosts"
    if os.path.realpath(target) != target or not os.path.isfile(target):
        return
    own = new + HOSTS
    with open(own, "x", encoding="utf-8") as f:
        f.write(text)
    bind(own, target, recursive=False)


def build(spec: dict[str, Any], root: bool) -> None:
    """Make a pod's root filesystem on spec["rootfs"] (an empty folder) and pivot into it. The caller has just
    unshared a mount namespace, and is the init of the pod's PID namespace. root: run by the real root, not
    root of a user namespace."""
    mount(None, "/", None, MS_REC | MS_PRIVATE)  # from here on, no mount propagates to the machine
    # mountinfo shows resolved paths: a symlink anywhere in TMPDIR must not hide a mount from the remount below
    new = os.path.realpath(spec["rootfs"])
    mount("tmpfs", new, "tmpfs", MS_NOSUID | MS_NODEV, "mode=755,size=1m")
    _bind_host_tops(new)
    if new.split("/")[1] not in OWN:  # TMPDIR in a folder bound just now: that bind holds a copy of the new root
        _check(libc().umount2(os.fsencode(new + new), MNT_DETACH), "umount the new root's copy")
    writable = _dev(new, root)
    writable += _proc(new)
    os.mkdir(f"{new}/sys")
    bind("/sys", f"{new}/sys")
    _hide(f"{new}/sys", SYS_HIDDEN, f"{new}/dev/null", strict=False)
    writable += _run(new)
    for host, inside, rw in spec.get("binds", []):
        target = new + inside
        os.makedirs(target, exist_ok=True)  # on the tmpfs (or under a folder bound just before)
        bind(os.path.realpath(host), target)
        if rw:
            mount(None, target, None, MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV | _kept(target))
            writable.append(target)
    hidden: list[str] = []
    for path in sorted(os.path.realpath(folder) for folder in spec.get("hidden", [])):
        if path.split("/")[1] in OWN or any(under(path, h) for h in hidden) or not os.path.isdir(new + path):
            continue  # the pod has its own of that top folder, or it is hidden already, or it is not there
        mount("tmpfs", new + path, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY, "mode=000,size=4k")
        hidden.append(path)
    os.makedirs(os.path.dirname(new + COVER), exist_ok=True)
    _empty_file(new + COVER)
    if spec.get("hosts"):
        _hosts(new, str(spec["hosts"]))
    _cover_sockets(new)
    _cover_programs(new, spec.get("covered", []))
    for point, flags in mounts():
        if any(under(point, new + h) and point != new + h for h in hidden):
            continue  # out of reach under an empty folder
        if under(point, new) and point != new and point not in writable:
            mount(None, point, None, MS_REMOUNT | MS_BIND | MS_RDONLY | flags)
    os.chdir(new)
    number = PIVOT_ROOT.get(platform.machine())
    if number is None:
        raise OSError(f"pivot_root: no system call number known for {platform.machine()}")
    _check(libc().syscall(number, b".", b"."), "pivot_root")
    _check(libc().umount2(b".", MNT_DETACH), "umount the machine's root")  # the old root, stacked on top
    os.chdir("/")
    mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    verify([w[len(new) :] for w in writable])


def _kept(point: str) -> int:
    """The locked flags of the mount at `point` (the last one mounted there)."""
    return next((flags for p, flags in reversed(mounts()) if p == point), 0)


def verify(writable: list[str]) -> None:
    """Fail closed: after the pivot, every mount the pod can reach and every top-level entry that is not the pod's
    own must be read-only. Raises OSError naming the first that is not."""
    for point, _flags in mounts():
        if point in writable:
            continue
        _read_only(point)
    for entry in os.scandir("/"):
        if entry.name not in OWN:
            _read_only(entry.path)


def _read_only(path: str) -> None:
    try:
        flags = os.statvfs(path).f_flag
    except (PermissionError, FileNotFoundError):  # out of the pod's reach (a dangling link, a closed folder)
        return
    if not flags & ST_RDONLY:
        raise OSError(f"{path} would be writable in the pod")
