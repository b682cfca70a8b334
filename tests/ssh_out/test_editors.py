"""VS Code and Cursor on a pod (docs/ssh-out.md#editors): fake `code` and `cursor` executables on PATH record how
they were run; the alias they are given is checked with OpenSSH's own ssh."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from podtui.core.api import V2Api
from podtui.core.editors import EditorError, NoEditor, pick_editor, prepare, workspace_folder
from podtui.core.paths import Paths
from podtui.core.pod import Pod, PodStatus, Runtime, SshEndpoint
from podtui.core.ssh.connect import SshSettings
from podtui.core.ssh.hostkeys import pod_name
from podtui.core.ssh.ssh_config import config_file
from podtui.sim.simulator import Simulator
from tests.helpers.sim import DIRECT_POD, GATEWAY_POD, find_pod, needs_sshd
from tests.ssh_out.conftest import Cli


@pytest.fixture
def editors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder first on PATH holding fake `code` and `cursor`: each writes its arguments, one a line, and its
    environment to <name>.argv and <name>.env beside itself."""
    folder = tmp_path / "editors"
    folder.mkdir()
    for name in ("code", "cursor"):
        script = folder / name
        script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > "{folder}/{name}.argv"\nenv > "{folder}/{name}.env"\n')
        script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    return folder


@needs_sshd
def test_code_opens_the_direct_pod_once_ssh_can_find_its_alias(
    cli: Cli, editors: Path, full_sim: Simulator, sim_api: V2Api, paths: Paths, user_ssh_config: Path
) -> None:
    pod = find_pod(sim_api, DIRECT_POD)
    r = cli("ssh", DIRECT_POD, "--editor")
    assert r.code == 1 and "does not include it" in r.err and "podtui ssh-config --write" in r.err
    assert not (editors / "code.argv").exists()
    # on the way, the host key was pinned and podtui's file written: only the Include line is missing
    assert pod_name(pod.id) in (paths.data_dir / "known_hosts").read_text()
    assert f"Host runpod-{DIRECT_POD}\n" in config_file(paths).read_text()
    assert cli("ssh-config", "--write", "--yes").code == 0
    r = cli("ssh", DIRECT_POD, "--editor")
    assert r.code == 0 and f"opening runpod-{DIRECT_POD} in code" in r.out, r.err
    argv = (editors / "code.argv").read_text().splitlines()
    assert argv == ["--remote", f"ssh-remote+runpod-{DIRECT_POD}", "/workspace"]
    env = (editors / "code.env").read_text()
    assert "RUNPOD_API_KEY" not in env and full_sim.api.api_key not in env
    # the alias as the editor's ssh resolves it, through ~/.ssh/config's Include
    done = subprocess.run(
        ["ssh", "-F", str(user_ssh_config), "-o", "BatchMode=yes", f"runpod-{DIRECT_POD}", "echo", "from-editor"],
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )
    assert (done.returncode, done.stdout) == (0, "from-editor\n"), done.stderr
    r = cli("ssh", DIRECT_POD, "--editor", "cursor", "--print")
    assert r.code == 0 and r.out == f"{editors}/cursor --remote ssh-remote+runpod-{DIRECT_POD} /workspace\n"


def test_a_gateway_only_pod_is_refused_with_the_way_to_direct_ssh(cli: Cli, editors: Path) -> None:
    r = cli("ssh", GATEWAY_POD, "--editor", "code")
    assert r.code == 1 and not (editors / "code.argv").exists()
    assert "VS Code and Cursor need direct SSH: a public IP and 22/tcp exposed" in r.err
    assert "22/tcp in its ports" in r.err and "public IP" in r.err


def test_which_editor(editors: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert pick_editor() == ("code", str(editors / "code"))
    assert pick_editor("cursor") == ("cursor", str(editors / "cursor"))
    (editors / "code").unlink()
    assert pick_editor("auto") == ("cursor", str(editors / "cursor"))
    with pytest.raises(NoEditor, match="`code` is not on PATH"):
        pick_editor("code")
    monkeypatch.setenv("PATH", str(editors / "nothing"))
    with pytest.raises(NoEditor, match="neither VS Code"):
        pick_editor()


def test_the_demo_and_stopped_pods_are_refused(editors: Path, tmp_path: Path) -> None:
    settings = SshSettings(known_hosts=tmp_path / "kh", search_home=False)
    running = Pod(
        "aaa", "train", PodStatus.RUNNING, runtime=Runtime(60), ssh_direct=SshEndpoint("203.0.113.7", 1, "root")
    )
    with pytest.raises(EditorError, match="the demo's pods"):
        prepare(running, [running], settings, tmp_path / "cfg", demo=True)
    stopped = Pod("bbb", "notebook", PodStatus.EXITED)
    with pytest.raises(EditorError, match="notebook is EXITED"):
        prepare(stopped, [stopped], settings, tmp_path / "cfg")
    assert not (tmp_path / "cfg").exists()


def test_the_folder_is_the_pods_volume() -> None:
    assert workspace_folder(Pod("a", "a", PodStatus.RUNNING, volume_mount_path="/data")) == "/data"
    for odd in (None, "relative", "/x;rm -rf ~", "/a/../../etc", "/x\n"):
        assert workspace_folder(Pod("a", "a", PodStatus.RUNNING, volume_mount_path=odd)) == "/workspace"
