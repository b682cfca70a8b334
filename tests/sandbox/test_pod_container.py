"""Each running simulated pod is a container: its own PID namespace (a /proc of its own processes only), mount,
UTS and IPC namespaces, a container's capabilities, a /dev of harmless devices, its own /run, and no way to this
machine's Unix sockets. Tried by every way in (the gateway's shell, exec and PTY over direct SSH), and by every way
out we could think of: this machine's processes through /proc, signals, ptrace, capabilities, devices, sockets,
mounts, namespaces. What a session leaves running lives on in the pod, and ends with it."""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import secrets
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from podtui.core.api import V2Api
from podtui.core.ssh.connect import SshSettings
from podtui.core.ssh.remote import RemoteShell, open_remote
from podtui.sim.pod_enter import KEPT_CAPS
from podtui.sim.pod_view import namespaces_work
from podtui.sim.simulator import Simulator
from tests.helpers.sandbox import none_got_through, out
from tests.helpers.sim import DEMO_IDS

pytestmark = pytest.mark.skipif(not namespaces_work(), reason="this machine has no usable namespaces")
KEPT = sum(1 << cap for cap in KEPT_CAPS.values())
DEV = {
    "null",
    "zero",
    "full",
    "random",
    "urandom",
    "tty",
    "fd",
    "stdin",
    "stdout",
    "stderr",
    "ptmx",
    "pts",
    "shm",
    "mqueue",
}


def processes(sh: RemoteShell) -> dict[int, str]:
    """pid -> command line, of every process the pod's /proc shows."""
    listing = out(sh, "for p in /proc/[0-9]*; do printf '%s ' ${p#/proc/}; tr '\\0' ' ' < $p/cmdline; echo; done")
    return {int(pid): rest for pid, _, rest in (line.partition(" ") for line in listing.splitlines()) if pid}


def host_processes(text: str) -> list[int]:
    """This machine's processes whose command line holds `text`."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError):
            if text.encode() in (entry / "cmdline").read_bytes().replace(b"\0", b" "):
                found.append(int(entry.name))
    return found


def until_gone(text: str, timeout_s: float = 20.0) -> list[int]:
    end = time.monotonic() + timeout_s
    while (left := host_processes(text)) and time.monotonic() < end:
        time.sleep(0.1)
    return left


def test_a_pod_sees_its_own_processes_only(shell: RemoteShell, route: tuple[str, str]) -> None:
    seen = processes(shell)
    assert "pod_enter.py --init" in seen[1]  # its init is PID 1
    programs = {os.path.basename(command.split(" ")[0]) for command in seen.values()}
    assert not programs & {"sshd", "sshd-session", "process_api", "systemd", "init"}, seen
    assert not any(" -m pytest" in command or "/pytest " in command for command in seen.values()), seen
    assert out(shell, "hostname").strip() == DEMO_IDS[route[0]]  # the pod's id, as on RunPod
    # nothing of its init to read: its environment, descriptors, memory or root
    attempts = [
        "cat /proc/1/environ",
        "readlink /proc/1/fd/0",
        "head -c 0 /proc/1/fd/0",
        "ls /proc/1/root/",
        "head -c 1 /proc/1/mem",
        "nsenter -t 1 -a true",
        "nsenter -t 1 -m -p true",
    ]
    assert "GOT THROUGH" not in none_got_through(shell, attempts) or os.geteuid() != 0


def test_it_cannot_signal_this_machines_processes(shell: RemoteShell) -> None:
    got: list[int] = []
    before = signal.signal(signal.SIGUSR1, lambda signum, _frame: got.append(signum))
    try:
        assert os.getpid() not in processes(shell)
        result = shell.run(f"kill -USR1 {os.getpid()} && echo SENT; echo done", timeout_s=30)
        assert "SENT" not in result.output and result.output.endswith("done\n"), result.output
    finally:
        signal.signal(signal.SIGUSR1, before)
    assert got == []  # this test process, which runs the simulator


def test_it_has_a_containers_capabilities(shell: RemoteShell) -> None:
    status = dict(line.split(":\t") for line in out(shell, "grep ^Cap /proc/self/status").splitlines())
    assert {k: int(v, 16) for k, v in status.items()} == {
        "CapInh": 0,
        "CapPrm": KEPT,
        "CapEff": KEPT,
        "CapBnd": KEPT,
        "CapAmb": 0,
    }
    address = f"127.255.{secrets.randbelow(250)}.{secrets.randbelow(250) + 1}/32"
    try:  # CAP_NET_ADMIN: this machine's network, which the pod shares
        assert "GOT THROUGH" not in none_got_through(shell, [f"ip addr add {address} dev lo"])
    finally:
        subprocess.run(["ip", "addr", "del", address, "dev", "lo"], capture_output=True, check=False)


def test_its_dev_holds_harmless_devices_only(shell: RemoteShell, route: tuple[str, str]) -> None:
    assert set(out(shell, "ls -A /dev").split()) <= DEV and DEV - {"mqueue"} <= set(out(shell, "ls -A /dev").split())
    # none of this machine's terminals: the pod's own only (this session's, if it has one)
    assert sorted(out(shell, "ls -A /dev/pts").split()) == (["ptmx"] if route[1] == "exec" else ["0", "ptmx"])
    disk = os.stat("/").st_dev
    block = f"{os.major(disk)} {os.minor(disk)}"
    attempts = ["echo x > /dev/kmsg", "echo x > /dev/console", "mknod /dev/disk b " + block]
    attempts += [
        f"mknod {folder}/disk-{secrets.token_hex(3)} b {block}"
        for folder in ("/tmp", "/workspace", "/root", "/dev/shm", "/run")
    ]
    attempts += [f"mknod /tmp/mem-{secrets.token_hex(3)} c 1 1"]
    assert "GOT THROUGH" not in none_got_through(shell, attempts)
    out(shell, "mkfifo /tmp/fifo && rm /tmp/fifo")  # what needs no privilege still works
    # the pod's writable folders: no device nodes, no set-user-ID programs
    mountinfo = out(shell, "cat /proc/self/mountinfo").splitlines()
    options = {fields[4]: fields[5].split(",") for fields in (line.split() for line in mountinfo)}
    for point in ("/workspace", "/root", "/tmp", "/run", "/dev/shm", "/.podtui/image"):
        assert "rw" in options[point] and "nosuid" in options[point] and "nodev" in options[point], point


def test_proc_and_sys_do_not_reach_the_kernel(shell: RemoteShell) -> None:
    attempts = [
        "cat /proc/sys/kernel/core_pattern > /proc/sys/kernel/core_pattern",  # the same value
        "cat /proc/sys/kernel/hostname > /proc/sys/kernel/hostname",
        "echo h > /proc/sysrq-trigger",  # h: help, harmless if it got through
        '[ -n "$(cat /proc/timer_list)" ]',
        '[ -n "$(head -c 1 /proc/kcore)" ]',
        "cat /sys/kernel/mm/transparent_hugepage/khugepaged/defrag > "
        "/sys/kernel/mm/transparent_hugepage/khugepaged/defrag",
    ]
    assert "GOT THROUGH" not in none_got_through(shell, attempts)


@pytest.fixture
def listening(victim: Path) -> Iterator[dict[str, str]]:
    """Unix sockets of this machine's, listening before the pod's container starts: one under /run (where
    systemd, Docker and D-Bus keep theirs), one in a folder the pod sees read-only, one abstract."""
    tag = uuid.uuid4().hex[:8]
    made = {"run": f"/run/podtui-test-{tag}.sock", "elsewhere": f"{victim}/daemon.sock"}
    socks = []
    try:
        for path in made.values():
            s = socket.socket(socket.AF_UNIX)
            s.bind(path)
            s.listen()
            socks.append(s)
        abstract = socket.socket(socket.AF_UNIX)
        abstract.bind(f"\0podtui-test-{tag}")
        abstract.listen()
        socks.append(abstract)
        yield {**made, "abstract": f"podtui-test-{tag}"}
    finally:
        for s in socks:
            s.close()
        for path in made.values():
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)


def landlock_scopes() -> bool:
    return int(ctypes.CDLL(None).syscall(444, None, 0, 1)) >= 6


def test_this_machines_unix_sockets_are_out_of_reach(listening: dict[str, str], shell: RemoteShell) -> None:
    connect = "python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.settimeout(3); s.connect({})'"
    attempts = [connect.format(f'"{listening["run"]}"'), connect.format(f'"{listening["elsewhere"]}"')]
    if landlock_scopes():
        attempts.append(connect.format(f'"\\0{listening["abstract"]}"'))
    assert "GOT THROUGH" not in none_got_through(shell, attempts)
    # the pod's own sockets work, abstract ones too
    out(
        shell,
        'python3 -c \'import socket; a = socket.socket(socket.AF_UNIX); a.bind("\\0mine"); a.listen(); '
        'b = socket.socket(socket.AF_UNIX); b.connect("\\0mine"); '
        'c = socket.socket(socket.AF_UNIX); c.bind("/tmp/mine.sock"); c.listen(); '
        'd = socket.socket(socket.AF_UNIX); d.connect("/tmp/mine.sock")\' && rm /tmp/mine.sock',
    )


def test_mounts_and_namespaces_lead_nowhere(shell: RemoteShell, victim: Path) -> None:
    attempts = [
        "mount -t tmpfs none /mnt",
        "unshare -m true",
        "unshare -p -f true",
        "unshare -n true",
        "nsenter -t 1 -m -u -i -n -p true",
        f"mount -o remount,rw,bind {victim.parent}",
        # a user namespace of its own is every user's right; the machine's read-only mounts stay locked
        f"unshare -Urm sh -c 'mount -o remount,rw,bind {victim.parent} && touch {victim}/x'",
        f"for p in /proc/[0-9]*; do echo pwned > $p/root{victim}/data && exit 0; done; exit 1",
        f"for p in /proc/[0-9]*; do echo pwned > $p/cwd/../../..{victim}/data && exit 0; done; exit 1",
    ]
    assert "GOT THROUGH" not in none_got_through(shell, attempts)
    assert sorted(p.name for p in victim.iterdir()) == ["data"] and (victim / "data").read_text() == "precious\n"


def test_its_ipc_is_its_own(shell: RemoteShell) -> None:
    made = subprocess.run(["ipcmk", "-M", "4096"], capture_output=True, text=True, check=True)
    shm = re.search(r"(\d+)\s*$", made.stdout.strip())
    assert shm is not None
    try:
        assert shm.group(1) in subprocess.run(["ipcs", "-m"], capture_output=True, text=True).stdout
        assert not re.search(rf"\s{shm.group(1)}\s", out(shell, "ipcs -m"))
    finally:
        subprocess.run(["ipcrm", "-m", shm.group(1)], capture_output=True, check=False)


def test_what_a_session_leaves_running_lives_in_the_pod_and_ends_with_it(
    full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings
) -> None:
    full_sim.stop_grace_s = 0.0
    tag = str(secrets.randbelow(10**6) + 10**6)
    left = [f"sleep 91{tag}", f"sleep 92{tag}"]
    pods = {key: sim_api.fetch_snapshot().find(DEMO_IDS[key]) for key in ("idle", "bursty")}
    with open_remote(pods["idle"], ssh_settings, via="gateway") as sh:  # type: ignore[arg-type]
        # a watchdog's way, and one that clears its environment and leaves the session
        out(sh, f"(nohup {left[0]} >/dev/null 2>&1 &); (env -i setsid {left[1]} </dev/null >/dev/null 2>&1 &)")
    with open_remote(pods["idle"], ssh_settings, via="gateway") as sh:  # type: ignore[arg-type]
        seen = out(sh, "ps -eo args")
        assert all(cmd in seen for cmd in left), seen  # another session of the same pod: the same container
    with open_remote(pods["bursty"], ssh_settings, via="gateway") as sh:  # type: ignore[arg-type]
        assert not any(cmd in out(sh, "ps -eo args") for cmd in left)  # another pod: another container
    assert all(host_processes(cmd) for cmd in left)
    full_sim.world.stop(DEMO_IDS["idle"])
    assert until_gone(left[0]) == [] and until_gone(left[1]) == []  # the pod stopped: its container ended


def test_a_terminal_session_has_a_terminal_of_the_pods_own(shell: RemoteShell, route: tuple[str, str]) -> None:
    """The gateway's and sshd's terminals are this machine's, which the pod's /dev/pts does not show: its shell
    gets one of the pod's own, so `tty`, tmux and whatever asks its terminal's name work as on a pod."""
    if route[1] == "exec":
        pytest.skip("an exec session has no terminal")
    name = "/dev/" + out(shell, "ps -o tty= -p $$").strip()  # the shell's controlling terminal, named by ps
    assert re.fullmatch(r"/dev/pts/\d+", name) and name.split("/")[-1] in out(shell, "ls /dev/pts").split()
    assert out(shell, f"tty < {name}").strip() == name  # ttyname() finds it
