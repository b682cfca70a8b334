"""The way into a simulated pod: its own view of the filesystem, a controlling terminal, default signals, then
the command. Every process of a pod starts here (the gateway's shell, an exec, each direct-SSH session and its
SFTP server), and so does each pod's sshd.

Run by the simulator as `python -S -I pod_enter.py OPTIONS -- COMMAND...` (stdlib only, nothing from podtui):
the set-up happens in the child's own program, never in a preexec_fn of the simulator's threaded process.

  --spec FILE   the pod's view (JSON from pod_view.py): enter it, take its environment, start in its folder
  --tty         make stdin the controlling terminal (the caller made this process a session leader)
  --ssh         the command is sshd's: $SSH_ORIGINAL_COMMAND through bash -c, or an interactive bash
  --parent PID  SIGTERM this process when the thread that started it ends (no root sshd outlives podtui)
  --probe DIR   exit 0 when a private view can be built here (DIR: an empty folder to build it on)

The view (Linux, mount namespaces): a new mount namespace, private, so nothing made here reaches the machine; a
small tmpfs as the new root holding the machine's top-level folders bound read-only, the machine's /dev, /proc
and /sys (read-only, a private /dev/shm), the pod's own /workspace, /root and /tmp bound writable, and whatever
else the spec lists; then pivot_root into it, and the capability to mount dropped, so the pod's root cannot
remount anything writable. A user who is not root gets the same in a user namespace, as root of it.
"""

from __future__ import annotations

import ctypes
import json
import os
import platform
import signal
import sys
from typing import Any

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_REC = 1024, 2048, 4096, 16384
MS_PRIVATE, MS_RELATIME, MS_STRICTATIME = 1 << 18, 1 << 21, 1 << 24
MNT_DETACH = 2
CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
PR_SET_PDEATHSIG, PR_CAPBSET_DROP, CAP_SYS_ADMIN = 1, 24, 21
# glibc has no pivot_root wrapper
PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "arm64": 41, "riscv64": 41, "armv7l": 218, "i686": 217,
              "ppc64le": 203, "s390x": 217}
# per-mount flags a read-only remount must carry over (a user namespace refuses to clear locked ones)
KEPT_FLAGS = {"nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC, "noatime": MS_NOATIME,
              "nodiratime": MS_NODIRATIME, "relatime": MS_RELATIME, "strictatime": MS_STRICTATIME}
OWN = ("proc", "sys", "dev", "tmp", "root", "workspace")  # top-level folders the host's are not bound at
DEFAULT_SIGNALS = ("SIGINT", "SIGQUIT", "SIGPIPE", "SIGXFSZ")

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
        return None if text is None else text.encode()

    _check(libc().mount(c(source), target.encode(), c(fstype), ctypes.c_ulong(flags), c(data)), f"mount {target}")


def bind(source: str, target: str) -> None:
    mount(source, target, None, MS_BIND | MS_REC)


def _unescape(field: str) -> str:
    """mountinfo writes space, tab, newline and backslash in paths as octal escapes."""
    out, i = [], 0
    while i < len(field):
        code = field[i + 1:i + 4]
        if field[i] == "\\" and len(code) == 3 and code.isdigit():
            out.append(chr(int(code, 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def mounts() -> list[tuple[str, int]]:
    """(mount point, the flags a remount must keep) of every mount this namespace sees."""
    found = []
    with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            fields = line.split()
            flags = 0
            for option in fields[5].split(","):
                flags |= KEPT_FLAGS.get(option, 0)
            found.append((_unescape(fields[4]), flags))
    return found


def under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def enter_view(spec: dict[str, Any]) -> None:
    """Build the pod's filesystem on spec["rootfs"] (an empty folder) and make it this process's root."""
    uid, gid = os.getuid(), os.getgid()
    if uid == 0:
        _check(libc().unshare(CLONE_NEWNS), "unshare")
    else:  # root of a user namespace of our own: allowed to mount in it, and nothing beyond what this user may do
        _check(libc().unshare(CLONE_NEWNS | CLONE_NEWUSER), "unshare")
        for name, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"), ("gid_map", f"0 {gid} 1")):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
    mount(None, "/", None, MS_REC | MS_PRIVATE)  # from here on, no mount propagates to the machine
    new = spec["rootfs"].rstrip("/")
    mount("tmpfs", new, "tmpfs", MS_NOSUID | MS_NODEV, "mode=755,size=1m")
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
            open(target, "w").close()
            bind(entry.path, target)
    for name in ("dev", "proc", "sys"):
        os.mkdir(f"{new}/{name}")
        bind(f"/{name}", f"{new}/{name}")
    writable = [f"{new}/dev/shm"]
    for host, inside, rw in spec.get("binds", []):
        target = new + inside
        os.makedirs(target, exist_ok=True)  # on the tmpfs (or under a folder bound just before)
        bind(host, target)
        if rw:
            writable.append(target)
    mount("tmpfs", f"{new}/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")  # a container's own /dev/shm
    for point, flags in mounts():
        if under(point, new) and point != new and not any(under(point, w) for w in writable):
            mount(None, point, None, MS_REMOUNT | MS_BIND | MS_RDONLY | flags)
    os.chdir(new)
    number = PIVOT_ROOT.get(platform.machine())
    if number is None:
        raise OSError(f"pivot_root: no system call number known for {platform.machine()}")
    _check(libc().syscall(number, b".", b"."), "pivot_root")
    _check(libc().umount2(b".", MNT_DETACH), "umount the machine's root")  # the old root, stacked on top
    os.chdir("/")
    mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    # a container's root cannot mount: no remounting the machine's folders writable from inside
    _check(libc().prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0), "drop CAP_SYS_ADMIN")


def die_with_parent(parent: int) -> None:
    if not sys.platform.startswith("linux"):  # no parent-death signal elsewhere; sshd is simulated on Linux only
        return
    _check(libc().prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0), "prctl")
    if os.getppid() != parent:  # it went before the prctl took hold
        os.kill(os.getpid(), signal.SIGTERM)


def main(argv: list[str]) -> int:
    if "--" in argv:
        cut = argv.index("--")
        options, command = argv[:cut], argv[cut + 1:]
    else:
        options, command = argv, []
    spec: dict[str, Any] | None = None
    ssh = tty = False
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
        elif option == "--parent":
            die_with_parent(int(options[i + 1]))
            i += 1
        elif option == "--probe":
            try:
                enter_view({"rootfs": options[i + 1]})
            except OSError as e:
                sys.stderr.write(f"{e}\n")
                return 1
            return 0
        else:
            sys.stderr.write(f"pod_enter: unknown option {option}\n")
            return 2
        i += 1
    if tty:
        import fcntl
        import termios

        fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    if spec is not None:
        if spec.get("isolated"):
            try:
                enter_view(spec)
            except OSError as e:  # never run the pod's command on the machine's own files instead
                sys.stderr.write(f"podtui simulator: cannot enter the pod's filesystem: {e}\n")
                return 126
        if ssh:  # sshd's environment, with the pod's over it (the other ways in are started with the pod's)
            os.environ.update(spec.get("env", {}))
        os.chdir(spec["cwd"])
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
    # a pod's programs start with these at their defaults, whatever the simulator runs with (Python ignores
    # SIGPIPE and SIGXFSZ; a simulator started with `&` from a script ignores SIGINT and SIGQUIT)
    for name in DEFAULT_SIGNALS:
        signal.signal(getattr(signal, name), signal.SIG_DFL)
    try:
        os.execvp(command[0], command)
    except OSError as e:
        sys.stderr.write(f"{command[0]}: {e.strerror}\n")
        return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
