"""The files a pod's sessions read as they start (its spec, sshd's authorized_keys) are rewritten from several threads
at once (an API request restarting the pod, the thread starting its sshd): each writer's file is whole, the last
one written wins, and a reader sees the old file or the new one, never part of one and never none."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

from podtui.sim.demo import large_world
from podtui.sim.podshell import PodMachine
from podtui.sim.sshd import PodSshd


def hammer(
    write: Callable[[int, int], None], read: Callable[[], None], writers: int = 4, times: int = 300
) -> list[str]:
    """Writers and a reader at once; returns what went wrong."""
    errors: list[str] = []
    done = threading.Event()

    def writer(n: int) -> None:
        for i in range(times):
            try:
                write(n, i)
            except Exception as e:  # any failure is the finding
                errors.append(f"writer: {e!r}")

    def reader() -> None:
        while not done.is_set():
            try:
                read()
            except Exception as e:
                errors.append(f"reader: {e!r}")

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(writers)]
    watching = threading.Thread(target=reader)
    watching.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done.set()
    watching.join()
    return errors


def test_a_pods_spec_and_keys_are_written_whole(tmp_path: Path) -> None:
    pod = next(iter(large_world(1, seed=1).pods.values()))
    machine = PodMachine(tmp_path, pod, "http://127.0.0.1:9", "key", isolated=False)
    view = machine.view

    def write_spec(n: int, i: int) -> None:
        view.write_spec({"HOSTNAME": pod.id, "WRITER": f"{n}-{i}"})

    def read_spec() -> None:
        json.loads((machine.root / "view.json").read_text())

    assert hammer(write_spec, read_spec) == []
    view.write_spec({"HOSTNAME": pod.id, "WRITER": "last"})
    assert json.loads((machine.root / "view.json").read_text())["env"]["WRITER"] == "last"

    sshd = PodSshd(machine, "ssh-ed25519 AAAA first")

    def write_keys(n: int, i: int) -> None:
        sshd.write_keys(f"ssh-ed25519 AAAA writer-{n}-{i}")

    def read_keys() -> None:
        text = sshd.authorized_keys.read_text()
        assert text.startswith("ssh-ed25519 AAAA ") and text.endswith("\n") and text.count("\n") == 1, text

    assert hammer(write_keys, read_keys) == []
    leftovers = [
        p.name
        for p in (*machine.root.iterdir(), *sshd.dir.iterdir())
        if ".new" in p.name or p.name.startswith((".view.json", ".authorized_keys"))
    ]
    assert leftovers == []  # no temporary file stays behind
    assert oct((machine.root / "view.json").stat().st_mode & 0o777) == oct(0o600)
    assert oct(sshd.authorized_keys.stat().st_mode & 0o777) == oct(0o600)
