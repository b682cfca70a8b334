"""Most people run the demo as themselves, not root: a pod's container is then built in a user namespace, where the
pod's shell is root of its own and the machine's files stay as read-only as they are to that user. Tried here as
`nobody`, with the system's Python (this checkout's may live where nobody cannot read): the container's init and a
session joining it, what the session leaves running, and the end of it all."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from podtui.sim.pod_view import ENTER

PYTHON = next((p for p in ("/usr/bin/python3", "/usr/local/bin/python3") if os.path.exists(p)), None)
NOBODY = 65534
pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None or PYTHON is None,
    reason="needs root (to become nobody), util-linux setpriv and a system Python",
)


def as_nobody(*args: str) -> list[str]:
    assert PYTHON is not None
    return [
        "setpriv",
        f"--reuid={NOBODY}",
        f"--regid={NOBODY}",
        "--clear-groups",
        PYTHON,
        "-S",
        "-I",
        str(ENTER),
        *args,
    ]


@pytest.fixture
def pod() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="podtui-nobody-", dir="/tmp"))  # pytest's folders are root's own
    for name in ("workspace", "root", "tmp", ".rootfs"):
        (folder / name).mkdir()
    (folder / "workspace" / "mine.txt").write_text("the pod's\n")
    for path in (folder, *folder.iterdir(), folder / "workspace" / "mine.txt"):
        os.chown(path, NOBODY, NOBODY)
    folder.chmod(0o755)
    spec = {
        "isolated": True,
        "rootfs": str(folder / ".rootfs"),
        "cwd": "/workspace",
        "env": {},
        "hostname": "mypod",
        "binds": [[str(folder / n), f"/{n}", True] for n in ("workspace", "root", "tmp")],
    }
    (folder / "view.json").write_text(json.dumps(spec))
    yield folder
    shutil.rmtree(folder)


def host_processes(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if text.encode() in (entry / "cmdline").read_bytes().replace(b"\0", b" "):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def test_a_user_who_is_not_root_gets_a_container_too(pod: Path) -> None:
    probe = subprocess.run(as_nobody("--probe", str(pod / ".rootfs")), capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        pytest.skip(f"this kernel allows no user namespaces: {probe.stderr.strip()}")
    init = subprocess.Popen(
        as_nobody("--init", "--spec", str(pod / "view.json")),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert init.stdout is not None and init.stdin is not None
    ready = init.stdout.readline().split()
    assert ready[:1] == [b"ready"], init.stderr.read() if init.stderr else ""
    spec = json.loads((pod / "view.json").read_text())
    spec["init"] = {"pid": int(ready[1]), "start": int(ready[2])}
    (pod / "view.json").write_text(json.dumps(spec))
    tag = str(time.monotonic_ns() % 10**7 + 10**7)
    try:
        script = (
            "id -u; pwd; cat mine.txt; hostname; echo $$; echo w > /workspace/w; echo t > /tmp/t; "
            "echo h > /root/h; for p in /etc/x /usr/x /x /var/x; do touch $p 2>/dev/null && echo GOT-THROUGH $p;"
            " done; mount -o remount,rw,bind /usr 2>/dev/null && echo GOT-THROUGH remount; "
            f"(env -i setsid sleep 93{tag} </dev/null >/dev/null 2>&1 &); echo done"
        )
        r = subprocess.run(
            as_nobody("--spec", str(pod / "view.json"), "--", "bash", "-c", script),
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert r.returncode == 0, r.stderr
        lines = r.stdout.split("\n")
        assert lines[:4] == ["0", "/workspace", "the pod's", "mypod"] and r.stdout.endswith("done\n"), r.stdout
        assert 1 < int(lines[4]) < 100  # a PID namespace of its own
        assert "GOT-THROUGH" not in r.stdout
        assert [
            (pod / "workspace" / "w").read_text(),
            (pod / "tmp" / "t").read_text(),
            (pod / "root" / "h").read_text(),
        ] == ["w\n", "t\n", "h\n"]
        assert (pod / "workspace" / "w").stat().st_uid == NOBODY  # the pod's root is this user on this machine
        assert not Path("/workspace/w").exists() and not Path("/tmp/t").exists()
        assert host_processes(f"sleep 93{tag}")  # the session ended; what it left runs on in the container
    finally:
        init.stdin.close()  # as when the simulator stops or dies: the init ends, and the pod with it
        init.wait(10)
    end = time.monotonic() + 10
    while host_processes(f"sleep 93{tag}") and time.monotonic() < end:
        time.sleep(0.1)
    assert host_processes(f"sleep 93{tag}") == []
    r = subprocess.run(
        as_nobody("--spec", str(pod / "view.json"), "--", "true"), capture_output=True, text=True, timeout=30
    )
    assert r.returncode == 126 and "not running" in r.stderr  # never on this machine's own files instead
