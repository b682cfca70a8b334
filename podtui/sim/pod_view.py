"""How a simulated pod's processes see this machine.

A demo pod's shell is a real bash here, so without care `/workspace/x` would be this machine's /workspace and
`cd /` its root. Where Linux namespaces work, each running pod is a container of its own (pod_enter.py,
pod_container.py): its own PID, mount, UTS and IPC namespaces, this machine's folders read-only, the pod's own
/workspace, /root and /tmp (its folders in the simulator's sandbox) writable, and the simulator's helpers for the
pod (its bin folder with nvidia-smi, runpodctl, hf and the image's Pythons; the image folder pip installs into)
under /.podtui. Where they do not (macOS, a locked-down kernel, or PODTUI_SIM_ISOLATION=off), pods run as
before, in their sandbox folder on the machine's own filesystem; the console says so, and the demo pods carry
their folder in their env so that transfers keep to it (podtui.core.demo_sandbox).

The helpers run this machine's Python. When it lives where the pod has its own folders (root's pyenv under
/root, a venv under /tmp), the pod sees it under /.podtui/host/<its path> and gets a venv of links to it.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shlex
import subprocess
import sys
import sysconfig
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the folder holding podtui/
ENTER = Path(__file__).with_name("pod_enter.py")
HELPERS = "/.podtui"  # the simulator's own files for a pod, as the pod sees them
HOST = HELPERS + "/host"  # this machine's paths that the pod's own folders would hide
OWN = ("/root", "/tmp", "/workspace")  # inside, the pod's own folders stand here
ISOLATION_ENV = "PODTUI_SIM_ISOLATION"  # "off": no namespaces, as on a machine without them
NOT_ISOLATED = (
    "podtui demo: this pod is not isolated from this machine; its shell reads and writes this "
    "machine's files (only its /workspace folder is its own)."
)


def enter_command(*options: str) -> list[str]:
    """The start of every command line that enters a pod (or starts its sshd): this Python, without the site
    packages it does not need, running pod_enter.py."""
    return [sys.executable, "-S", "-I", str(ENTER), *options]


@functools.cache
def namespaces_work() -> bool:
    """Whether a pod's private view can be built on this machine: tried once, for real."""
    if os.environ.get(ISOLATION_ENV, "").lower() in ("off", "0", "no") or not sys.platform.startswith("linux"):
        return False
    with tempfile.TemporaryDirectory(prefix="podtui-probe-") as folder:  # builds a container there, and ends it
        try:
            return (
                subprocess.run(
                    enter_command("--probe", folder), capture_output=True, timeout=20, start_new_session=True
                ).returncode
                == 0
            )
        except (OSError, subprocess.SubprocessError):
            return False


def _hidden(path: str) -> bool:
    return any(path == own or path.startswith(own + "/") for own in OWN)


@dataclass(frozen=True)
class Interpreter:
    """The Python the pod's helper scripts run, as the pod sees it."""

    path: str
    library_path: str | None = None  # where it finds libpython, when not where it was built to look
    binds: tuple[tuple[str, str], ...] = ()  # (this machine's path, where the pod sees it), read-only
    folder: Path | None = None  # the venv of links, on this machine (bound at HELPERS/python)

    @property
    def command(self) -> str:
        """Shell words that run it (after `exec`, too)."""
        if self.library_path is None:
            return shlex.quote(self.path)
        return f"env LD_LIBRARY_PATH={shlex.quote(self.library_path)} {shlex.quote(self.path)}"


def interpreter(sandbox: Path, isolated: bool) -> Interpreter:
    if not isolated:
        return Interpreter(sys.executable)
    real = os.path.realpath(sys.executable)
    base = os.path.realpath(sys.base_prefix)
    prefix = os.path.realpath(sys.prefix)
    wanted = {p for p in (base, prefix, os.path.dirname(os.path.dirname(real)), str(PACKAGE_ROOT)) if _hidden(p)}
    if not wanted:
        return Interpreter(sys.executable)
    binds = tuple(sorted((p, HOST + p) for p in wanted))  # a folder before what it holds

    def inside(path: str) -> str:
        return next(
            (inner + path[len(host) :] for host, inner in binds if path == host or path.startswith(host + "/")), path
        )

    # a venv made of links: pyvenv.cfg pointing at the bound base Python, the real venv's packages linked in
    venv = sandbox / "python"
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    (venv / "bin").mkdir(parents=True, exist_ok=True)
    (venv / "lib" / version).mkdir(parents=True, exist_ok=True)
    in_venv = prefix != base
    (venv / "pyvenv.cfg").write_text(
        f"home = {inside(base)}/bin\ninclude-system-site-packages = "
        f"{'false' if in_venv else 'true'}\nversion = {sys.version.split()[0]}\n"
    )
    links = {venv / "bin" / "python": inside(real)}
    if in_venv:
        links[venv / "lib" / version / "site-packages"] = inside(os.path.realpath(sysconfig.get_paths()["purelib"]))
    for link, target in links.items():
        with contextlib.suppress(FileExistsError):  # made by an earlier pod
            link.symlink_to(target)
    # the interpreter finds libpython through an absolute run path, which the pod sees elsewhere
    library_path = f"{inside(base)}/lib" if _hidden(base) else None
    return Interpreter(f"{HELPERS}/python/bin/python", library_path, binds, venv)


@dataclass
class PodView:
    """One pod's folders on this machine and where its processes see them."""

    folder: Path  # the pod's sandbox folder: workspace/, root/, tmp/, bin/, image/
    isolated: bool
    # its container's /etc/hosts, where `localhost` is the pod's own address (docs/services.md); None: this machine's
    hosts: str | None = None
    # programs its image lacks (image.ImageProfile.lacks): covered in its container; a pod without namespaces has
    # this machine's
    lacks: tuple[str, ...] = ()
    python: Interpreter = field(init=False)
    _lock: threading.Lock = field(init=False, default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.python = interpreter(self.folder.parent, self.isolated)

    def _places(self) -> list[tuple[str, str, bool]]:
        """(this machine's path, the pod's path, writable)."""
        f = str(self.folder)
        places = [
            (f"{f}/workspace", "/workspace", True),
            (f"{f}/root", "/root", True),
            (f"{f}/tmp", "/tmp", True),
            (f"{f}/bin", f"{HELPERS}/bin", False),
            (f"{f}/image", f"{HELPERS}/image", True),
        ]
        places += [(host, inner, False) for host, inner in self.python.binds]
        if self.python.folder is not None:
            places.append((str(self.python.folder), f"{HELPERS}/python", False))
        return places

    def hidden(self) -> list[Path]:
        """Folders of this machine a pod must not even read, when it would see them (a TMPDIR outside /tmp): the
        folder holding every pod's (other pods' files, their specs with the simulator's key, sshd's host keys) and
        the simulator run's own (the demo's SSH key)."""
        pods = self.folder.parent
        return [pods, pods.parent] if (pods.parent / "owner.json").exists() else [pods]

    def inside(self, path: Path | str) -> str:
        """`path` on this machine as the pod's processes see it."""
        p = str(path)
        if not self.isolated:
            return p
        for host, inner, _rw in self._places():
            if p == host or p.startswith(host + "/"):
                return inner + p[len(host) :]
        return p

    def spec(self, env: dict[str, str], init: tuple[int, int] | None = None) -> dict[str, object]:
        """What pod_enter.py needs (written to a file: the container's init and sshd's sessions read it).
        init: the pid and start time of the pod's running container's init, which sessions join."""
        return {
            "isolated": self.isolated,
            "rootfs": str(self.folder / ".rootfs"),
            "binds": [list(place) for place in self._places()],
            "hidden": [str(p) for p in self.hidden()],
            "hostname": env.get("HOSTNAME", "pod"),
            "init": None if init is None else {"pid": init[0], "start": init[1]},
            "env": {k: v for k, v in env.items() if k != "TERM"},  # TERM is the SSH client's
            "cwd": self.inside(self.folder / "workspace"),
            "banner": None if self.isolated else NOT_ISOLATED + "\r\n",
            "hosts": self.hosts,
            "covered": covered(self.lacks),
        }

    def write_spec(self, env: dict[str, str], init: tuple[int, int] | None = None) -> Path:
        path = self.folder / SPEC
        with self._lock:  # the newest spec is the last one written, whichever thread wrote it
            replace_whole(path, json.dumps(self.spec(env, init)).encode())  # 0600: it holds the API key
        return path


SPEC = "view.json"  # in the pod's folder
PROGRAM_DIRS = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")


def covered(programs: tuple[str, ...]) -> list[str]:
    """Where this machine has each of `programs` in the usual folders of a PATH: what a pod lacking them covers."""
    found: list[str] = []
    for name in programs:
        for folder in PROGRAM_DIRS:
            path = f"{folder}/{name}"
            if os.path.lexists(path) and os.path.realpath(path) not in {os.path.realpath(p) for p in found}:
                found.append(path)
    return found


def replace_whole(path: Path, data: bytes) -> None:
    """Write `path` (0600) so that a reader sees the old or the new file, whole: a temporary file of a unique name
    in the same folder, renamed over it. Concurrent writers each rename their own."""
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)  # 0600 from the start
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
