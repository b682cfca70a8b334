"""A config, key or token file that is a FIFO, a directory or a device is refused with one line naming it, and
never hangs podtui (a FIFO's open waits for a writer; /dev/zero never ends)."""

from __future__ import annotations

import contextlib
import os
import re
import stat
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from podtui.core import user_files
from podtui.core.config import Config, ConfigError, load_config, resolve_api_key, save_api_key
from podtui.core.hf.token import discover
from podtui.core.paths import Paths
from podtui.core.ssh import keys as keys_module
from podtui.core.ssh.errors import SshKeyError
from podtui.core.ssh.keys import KeyFile, available_keys, generate_dedicated_key, load_key, read_public_key
from podtui.core.user_files import NotAFile, read_user_file

KINDS = {
    "fifo": "is a FIFO (named pipe), not a regular file",
    "directory": "is a directory, not a regular file",
    "device": "is a character device, not a regular file",
}


def make(path: Path, kind: str) -> Path:
    """`path` as a FIFO, a directory, or a symlink to /dev/zero."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    else:
        path.symlink_to("/dev/zero")
    return path


def one_line(message: str, path: Path, kind: str) -> None:
    assert "\n" not in message and str(path) in message and KINDS[kind] in message


def podtui(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean_env = {
        k: v for k, v in os.environ.items() if k not in ("RUNPOD_API_KEY", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")
    }
    # a short timeout: a hang fails here, long before the suite's own
    return subprocess.run(
        [sys.executable, "-m", "podtui", *args],
        capture_output=True,
        text=True,
        timeout=30,
        env={**clean_env, **(env or {})},
    )


def assert_refused_by_the_cli(r: subprocess.CompletedProcess[str], path: Path, kind: str) -> None:
    assert r.returncode == 1, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("podtui: error: "), r.stderr
    one_line(lines[0], path, kind)
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("kind", list(KINDS))
def test_podtuis_config_file(kind: str, paths: Paths) -> None:
    path = make(paths.config_file, kind)
    with pytest.raises(ConfigError) as e:
        load_config(paths)
    one_line(str(e.value), path, kind)
    with pytest.raises(ConfigError) as e:  # nor is it replaced by a file holding the key
        save_api_key(paths, "rpa_SOMEKEYSOMEKEYSOMEKEY")
    one_line(str(e.value), path, kind)
    assert_refused_by_the_cli(podtui("config", "show"), path, kind)


@pytest.mark.parametrize("kind", list(KINDS))
def test_runpods_config_file(kind: str, isolated_home: Path) -> None:
    path = make(isolated_home / ".runpod" / "config.toml", kind)
    with pytest.raises(ConfigError) as e:
        resolve_api_key(Config(), environ={})
    one_line(str(e.value), path, kind)
    # a key from elsewhere is used without reading it
    assert resolve_api_key(Config(), environ={"RUNPOD_API_KEY": "rpa_FROMENVFROMENVFROMENV"}) is not None
    assert_refused_by_the_cli(podtui("config", "show"), path, kind)


@pytest.mark.parametrize("kind", list(KINDS))
def test_ssh_key_files(kind: str, isolated_home: Path, tmp_path: Path) -> None:
    key = make(isolated_home / ".ssh" / "id_ed25519_runpod", kind)
    with pytest.raises(SshKeyError) as e:
        load_key(key)
    one_line(str(e.value), key, kind)
    keys, notes = available_keys()
    assert keys == [] and len(notes) == 1
    one_line(notes[0], key, kind)
    assert_refused_by_the_cli(podtui("keys", "setup", env={"RUNPOD_API_KEY": "rpa_NOTUSEDNOTUSEDNOTUSED"}), key, kind)
    assert_refused_by_the_cli(
        podtui("keys", "show", env={"RUNPOD_API_KEY": "rpa_NOTUSEDNOTUSEDNOTUSED"}), key, kind
    )  # said, not taken for "no key yet"
    # a certificate paramiko would read next to a good key, and the public half
    good = generate_dedicated_key(tmp_path / "k" / "id_ed25519")
    cert = make(Path(f"{good.path}-cert.pub"), kind)
    with pytest.raises(SshKeyError) as e:
        load_key(good.path)
    one_line(str(e.value), cert, kind)
    pub = good.path.with_name("id_ed25519.pub")
    pub.unlink()
    make(pub, kind)
    with pytest.raises(SshKeyError) as e:
        read_public_key(pub)
    one_line(str(e.value), pub, kind)


@pytest.mark.parametrize("kind", list(KINDS))
def test_hugging_face_token_file(kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    path = make(tmp_path / "hf" / "token", kind)
    monkeypatch.setenv("HF_TOKEN_PATH", str(path))
    with pytest.raises(ConfigError) as e:
        discover()
    one_line(str(e.value), path, kind)
    # no Hub is reached: the token is looked for first
    r = podtui("hf", "check", "org/model", "--endpoint", "http://127.0.0.1:9", env={"HF_TOKEN_PATH": str(path)})
    assert_refused_by_the_cli(r, path, kind)


def test_regular_files_still_read(paths: Paths, tmp_path: Path) -> None:
    paths.config_file.parent.mkdir(parents=True)
    paths.config_file.write_text("poll_interval_s = 7\n")
    assert load_config(paths).poll_interval_s == 7.0
    link = tmp_path / "link.toml"
    link.symlink_to(paths.config_file)  # a symlink to a regular file is that file
    assert read_user_file(link) == b"poll_interval_s = 7\n"


@pytest.mark.parametrize("reader", [read_user_file, lambda p: read_user_file(p, max_bytes=10)])
def test_a_file_far_too_big_is_refused(tmp_path: Path, reader: Callable[[Path], bytes]) -> None:
    big = tmp_path / "big"
    big.write_bytes(b"x" * (5 << 20))
    with pytest.raises(NotAFile, match=r"is larger than [\d,]+ bytes"):
        reader(big)


def finishes(fn: Callable[[], object], fifos: list[Path], timeout: float = 10) -> object:
    """fn's result, or a failure if it blocks (then the FIFOs it waits on are opened, so the thread ends)."""
    result: list[object] = []
    worker = threading.Thread(target=lambda: result.append(_outcome(fn)), daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        for fifo in fifos:  # a reader blocked in open() is let go by a writer
            with contextlib.suppress(OSError):
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail(f"blocked on a FIFO swapped in for one of {[str(f) for f in fifos]}")
    return result[0]


def _outcome(fn: Callable[[], object]) -> object:
    try:
        return fn()
    except Exception as e:  # handed to the test, which says what it expected
        return e


def test_a_key_swapped_for_a_fifo_after_it_was_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bytes read are the bytes parsed: nothing opens the key or its certificate by name a second time."""
    good = generate_dedicated_key(tmp_path / "k" / "id_ed25519")
    cert = Path(f"{good.path}-cert.pub")
    cert.write_text(good.path.with_name("id_ed25519.pub").read_text())  # a plain public key: paramiko takes it too
    real_read = keys_module.read_user_file

    def read_then_swap(path: Path, *args: Any, **kwargs: Any) -> bytes:
        data = real_read(path, *args, **kwargs)
        path.unlink()
        os.mkfifo(path)  # what a process of the user's could put there once the file has been checked
        return data

    monkeypatch.setattr(keys_module, "read_user_file", read_then_swap)
    loaded = finishes(lambda: load_key(good.path), [good.path, cert])
    assert isinstance(loaded, KeyFile), loaded
    assert loaded.fingerprint == good.fingerprint and loaded.key.public_blob is not None
    assert stat.S_ISFIFO(os.stat(good.path).st_mode) and stat.S_ISFIFO(os.stat(cert).st_mode)


def test_a_file_swapped_between_the_check_and_the_open(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """read_user_file looks at what it opened (without blocking), not at what the name was a moment before."""
    good = generate_dedicated_key(tmp_path / "k" / "id_ed25519")
    real_stat = os.stat
    swapped: list[Path] = []

    def stat_then_swap(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        st = real_stat(path, *args, **kwargs)
        if Path(path) == good.path and not swapped:
            swapped.append(good.path)
            good.path.unlink()
            os.mkfifo(good.path)
        return st

    monkeypatch.setattr(user_files.os, "stat", stat_then_swap)
    refused = finishes(lambda: load_key(good.path), [good.path])
    assert swapped and isinstance(refused, SshKeyError), refused
    one_line(str(refused), good.path, "fifo")


@pytest.mark.parametrize(
    ("content", "kind", "said"),
    [
        (None, "fifo", "is a FIFO (named pipe), not a regular file"),
        (None, "directory", "is a directory, not a regular file"),
        (b"{not json", None, "it is not JSON"),
        (b"\xff\xfe", None, "it is not JSON"),
        (b"[1, 2]", None, 'it has no "pods" object'),
        (b'{"pods": []}', None, 'it has no "pods" object'),
        (b"x" * 2000, None, "larger than 1,000 bytes"),
    ],
)
def test_a_memory_file_that_cannot_be_used_says_why(
    tmp_path: Path, content: bytes | None, kind: str | None, said: str
) -> None:
    """The one reader the forwards' and the launches' memories share: why in one exception's words, never a hang."""
    path = tmp_path / "memory.json"
    if kind is not None:
        make(path, kind)
    else:
        assert content is not None
        path.write_bytes(content)
    with pytest.raises(user_files.Unusable, match=re.escape(said)):
        user_files.read_json_member(path, "pods", dict, 1000)


def test_a_memory_file_read(tmp_path: Path) -> None:
    path = tmp_path / "memory.json"
    assert user_files.read_json_member(path, "pods", list) is None  # none yet
    path.write_text('{"version": 1, "pods": [{"pod_id": "p1"}]}')
    assert user_files.read_json_member(path, "pods", list) == [{"pod_id": "p1"}]
