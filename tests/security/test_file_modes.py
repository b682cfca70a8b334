"""Files that hold keys, tokens, history or a shell's output are the owner's only (0600)."""

from __future__ import annotations

import io
import logging
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from podtui.cli.main import main
from podtui.console.link import ConsoleLink, pod_connector
from podtui.core.api import V2Api
from podtui.core.log_file import PrivateRotatingFileHandler
from podtui.core.paths import Paths
from podtui.core.ssh.connect import SshSettings
from podtui.core.ssh.keys import generate_dedicated_key
from podtui.sim.simulator import Simulator
from podtui.transfer.history import TransferHistory
from podtui.transfer.job import TransferJob

KEY = "rpa_MODESMODESMODESMODESMODES0600"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(autouse=True)
def open_umask() -> object:
    """The usual umask (022): a file made without care would be readable by everyone."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_config_file_is_0600_after_set_key_even_when_it_was_readable(
    paths: Paths, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    paths.config_file.parent.mkdir(parents=True)
    paths.config_file.write_text("# mine\npoll_interval_s = 3\n")
    paths.config_file.chmod(0o644)
    monkeypatch.setattr("sys.stdin", io.StringIO(KEY + "\n"))
    assert main(["config", "set-key", "--stdin"]) == 0
    out = capfd.readouterr().out
    assert "(mode 0600)" in out and KEY not in out
    assert mode(paths.config_file) == 0o600
    text = paths.config_file.read_text()
    assert "# mine" in text and "poll_interval_s = 3" in text and KEY in text


def test_dedicated_ssh_key_is_0600(tmp_path: Path) -> None:
    key = generate_dedicated_key(tmp_path / "ssh" / "id_ed25519_runpod", comment="t")
    assert mode(key.path) == 0o600
    assert mode(key.path.with_suffix(".pub")) == 0o644  # public: fine to read


def test_transfer_history_is_0600(tmp_path: Path) -> None:
    path = tmp_path / "data" / "transfers.json"
    TransferHistory(path).save([TransferJob("q7x2m9fk4r8t1a", "pull", "a.bin", str(tmp_path))])
    assert mode(path) == 0o600
    TransferHistory(path).save([])  # rewritten: still 0600
    assert mode(path) == 0o600


def test_saved_console_output_is_0600(
    full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings, tmp_path: Path
) -> None:
    pod = sim_api.fetch_snapshot().find("eval-a100")
    link = ConsoleLink(pod_connector(pod, lambda: ssh_settings, sim_api), pod.name, cols=80, rows=24)
    try:
        link.open()
        link.send(b"echo console-$((6*7))\r")
        for _ in range(200):
            if "console-42" in link.emulator.text():
                break
            time.sleep(0.02)
        saved = link.save(tmp_path / "out.txt")
    finally:
        link.close()
    assert "console-42" in saved.read_text()
    assert mode(saved) == 0o600
    assert full_sim.api.api_key not in saved.read_text()


def test_log_files_are_0600_across_a_rollover(tmp_path: Path) -> None:
    path = tmp_path / "log" / "podtui.log"
    path.parent.mkdir()
    handler = PrivateRotatingFileHandler(path, maxBytes=4000, backupCount=2, encoding="utf-8")
    record = logging.LogRecord("t", logging.INFO, __file__, 1, "x" * 1000, None, None)
    for _ in range(12):
        handler.emit(record)
    handler.close()
    files = sorted(path.parent.iterdir())
    assert [f.name for f in files] == ["podtui.log", "podtui.log.1", "podtui.log.2"]
    assert [mode(f) for f in files] == [0o600] * 3


_ROLL = """
import logging, sys
from pathlib import Path
from podtui.cli.session import setup_logging
from podtui.core.paths import Paths
d = Path(sys.argv[1])
setup_logging(Paths(d / "config", d / "log", d / "data"))
for _ in range(2500):
    logging.getLogger("podtui").info("x" * 1000)
"""


def test_podtui_log_is_0600_after_a_rollover(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-c", _ROLL, str(tmp_path)], check=True, timeout=60)
    files = sorted((tmp_path / "log").iterdir())
    assert len(files) >= 2  # rolled over at 2 MB
    assert {f.name: mode(f) for f in files} == {f.name: 0o600 for f in files}
