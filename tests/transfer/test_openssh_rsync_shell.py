"""rsync through OpenSSH with podtui's key and pinned host key (core/ssh/openssh.py rsync_shell): the `-e` value
as real rsync splits it, whatever the words hold, and a real rsync to a simulated pod's sshd with the key and the
known-hosts file in folders whose names need quoting."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from podtui.core.api import V2Api
from podtui.core.ssh.connect import SshSettings
from podtui.core.ssh.errors import SshError
from podtui.core.ssh.openssh import RSYNC_HOST, rsync_shell, rsync_word, ssh_env
from podtui.sim.simulator import Simulator
from tests.helpers.sim import DIRECT_POD, GATEWAY_POD, find_pod, needs_sshd, pod_id, pod_workspace

needs_rsync = pytest.mark.skipif(shutil.which("rsync") is None, reason="needs rsync (scripts/setup-test-env.sh)")

WORDS = [
    "plain",
    "with space",
    "it's",
    'say "hi"',
    "both ' and \"",
    "''",
    '""',
    "back\\slash",
    "$HOME",
    "-oProxyCommand=x",
    "tab\there",
    "ünïcødé 模型",
    "  leading and trailing  ",
    "",
]


@needs_rsync
def test_rsync_splits_each_word_back_as_it_was(tmp_path: Path) -> None:
    """rsync's own splitting of `-e` (spaces; '...' and "..." with doubled quotes; no backslash escapes), run for
    real: a stand-in shell that records the argv rsync gives it."""
    seen = tmp_path / "argv.json"
    shell = tmp_path / "shell.py"
    shell.write_text(f"import json, sys\njson.dump(sys.argv[1:], open({str(seen)!r}, 'w'))\nsys.exit(1)\n")
    value = " ".join(rsync_word(w) for w in [sys.executable, str(shell), *WORDS])
    subprocess.run(["rsync", "-e", value, f"{RSYNC_HOST}:x", str(tmp_path / "y")], capture_output=True, timeout=60)
    argv = json.loads(seen.read_text())
    assert argv[: len(WORDS)] == WORDS
    assert RSYNC_HOST in argv[len(WORDS) :]  # then rsync's own: the host, `rsync --server ...`


@needs_sshd
@needs_rsync
def test_rsync_reaches_the_pod_with_podtuis_key_and_pin(
    full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings, tmp_path: Path
) -> None:
    assert ssh_settings.key_path is not None
    keys = tmp_path / "my keys" / 'it\'s "here"'
    keys.mkdir(parents=True)
    key = keys / "id ed25519"
    shutil.copy(ssh_settings.key_path, key)
    key.chmod(0o600)
    settings = SshSettings(
        known_hosts=tmp_path / "known hosts" / "kh", key_path=key, use_agent=False, search_home=False
    )
    settings.known_hosts.parent.mkdir()
    src = tmp_path / "code"
    (src / "pkg").mkdir(parents=True)
    (src / "train.py").write_text("print('train')\n")
    (src / "pkg" / "odd name's.bin").write_bytes(os.urandom(5000))
    pod = find_pod(sim_api, DIRECT_POD)
    value = rsync_shell(pod, settings)  # connects once with podtui's client: the host key is pinned now
    assert "SECRET" not in value and str(key) not in value.split(" ")  # quoted, as one word
    r = subprocess.run(
        ["rsync", "-a", "-e", value, f"{src}/", f"{RSYNC_HOST}:dest dir/"],
        capture_output=True,
        text=True,
        env=ssh_env(),
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert r.returncode == 0, r.stderr
    ws = pod_workspace(full_sim, sim_api, DIRECT_POD)
    assert (ws / "dest dir" / "train.py").read_text() == "print('train')\n"
    assert (ws / "dest dir" / "pkg" / "odd name's.bin").read_bytes() == (src / "pkg" / "odd name's.bin").read_bytes()

    # the pod's host key changes during its run: ssh refuses it, as podtui's own client would
    sshd = full_sim.sshds[pod_id(sim_api, DIRECT_POD)]
    sshd.stop()
    for host_key in sshd.dir.glob("ssh_host_*"):
        host_key.unlink()
    sshd.start()
    unchecked = rsync_shell(pod, settings, check=False)
    r = subprocess.run(
        ["rsync", "-a", "-e", unchecked, f"{src}/", f"{RSYNC_HOST}:other/"],
        capture_output=True,
        text=True,
        env=ssh_env(),
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert r.returncode != 0 and "host key verification failed" in r.stderr.lower(), r.stderr
    assert not (ws / "other").exists()


def test_gateway_only_pods_have_no_rsync_shell(full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings) -> None:
    with pytest.raises(SshError, match="no direct SSH"):
        rsync_shell(find_pod(sim_api, GATEWAY_POD), ssh_settings, check=False)
