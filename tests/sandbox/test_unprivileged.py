"""Most people run the demo as themselves, not root: a pod's view is then built in a user namespace, where the
pod's shell is root of its own and the machine's files stay as read-only as they are to that user. Tried here as
`nobody`, with the system's Python (this checkout's may live where nobody cannot read)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from podtui.sim.pod_view import ENTER

PYTHON = next((p for p in ("/usr/bin/python3", "/usr/local/bin/python3") if os.path.exists(p)), None)
NOBODY = 65534
pytestmark = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None or PYTHON is None,
                                reason="needs root (to become nobody), util-linux setpriv and a system Python")


def as_nobody(*args: str) -> list[str]:
    assert PYTHON is not None
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", PYTHON, "-S", "-I", str(ENTER),
            *args]


@pytest.fixture
def pod() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="podtui-nobody-", dir="/tmp"))  # pytest's folders are root's own
    for name in ("workspace", "root", "tmp", ".rootfs"):
        (folder / name).mkdir()
    (folder / "workspace" / "mine.txt").write_text("the pod's\n")
    for path in (folder, *folder.iterdir(), folder / "workspace" / "mine.txt"):
        os.chown(path, NOBODY, NOBODY)
    folder.chmod(0o755)
    spec = {"isolated": True, "rootfs": str(folder / ".rootfs"), "cwd": "/workspace", "env": {},
            "binds": [[str(folder / n), f"/{n}", True] for n in ("workspace", "root", "tmp")]}
    (folder / "view.json").write_text(json.dumps(spec))
    yield folder
    shutil.rmtree(folder)


def test_a_user_who_is_not_root_gets_the_same_view(pod: Path) -> None:
    probe = subprocess.run(as_nobody("--probe", str(pod / ".rootfs")), capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        pytest.skip(f"this kernel allows no user namespaces: {probe.stderr.strip()}")
    script = ("id -u; pwd; cat mine.txt; echo w > /workspace/w; echo t > /tmp/t; echo h > /root/h; "
              "for p in /etc/x /usr/x /x /var/x; do touch $p 2>/dev/null && echo GOT-THROUGH $p; done; "
              "mount -o remount,rw,bind /usr 2>/dev/null && echo GOT-THROUGH remount; echo done")
    r = subprocess.run(as_nobody("--spec", str(pod / "view.json"), "--", "bash", "-c", script), capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:3] == ["0", "/workspace", "the pod's"] and r.stdout.endswith("done\n")
    assert "GOT-THROUGH" not in r.stdout
    assert [(pod / "workspace" / "w").read_text(), (pod / "tmp" / "t").read_text(), (pod / "root" / "h").read_text()
            ] == ["w\n", "t\n", "h\n"]
    assert (pod / "workspace" / "w").stat().st_uid == NOBODY  # the pod's root is this user on this machine
    assert not Path("/workspace/w").exists() and not Path("/tmp/t").exists()
