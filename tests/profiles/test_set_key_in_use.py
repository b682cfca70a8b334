"""`podtui config set-key` on the profile in use, config.toml edited before the key file is written, names that
differ only in case refused, and the demo, which has no profiles of the user's and stores no key
(docs/profiles.md#key-sources, docs/profiles.md#the-demo)."""

from __future__ import annotations

import io
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from podtui.cli import main as cli_main
from podtui.cli.main import main
from podtui.cli.session import DemoSimulator, open_session
from podtui.core import profiles
from podtui.core.config import Config, ConfigError
from podtui.core.paths import Paths

KEY = "rpa_SETKEYINUSE0123456789abcdef"
TWO_FILES = "[profiles.lab]\nkey_file = true\n[profiles.other]\nkey_file = true\n"


def _set_key(monkeypatch: pytest.MonkeyPatch, *argv: str) -> int:
    monkeypatch.setattr("sys.stdin", io.StringIO(KEY + "\n"))
    return main(["config", "set-key", *argv])


def test_set_key_stores_the_key_of_the_profile_in_use(
    write_config: Callable[[str], Paths], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = write_config(TWO_FILES)
    monkeypatch.setenv("PODTUI_PROFILE", "lab")
    assert _set_key(monkeypatch) == 0
    assert "for profile lab" in capsys.readouterr().out
    assert profiles.key_file(paths, "lab").read_text().strip() == KEY
    assert not profiles.key_file(paths, "other").exists() and "api_key" not in paths.config_file.read_text()
    monkeypatch.delenv("PODTUI_PROFILE")
    paths = write_config('default_profile = "other"\n' + TWO_FILES)
    assert _set_key(monkeypatch) == 0
    assert profiles.key_file(paths, "other").read_text().strip() == KEY
    assert "api_key" not in paths.config_file.read_text()


def test_set_key_on_a_profile_whose_key_comes_from_elsewhere_says_where(
    write_config: Callable[[str], Paths], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = 'default_profile = "a"\n[profiles.a]\nkey_env = "KEY_A"\n'
    paths = write_config(text)
    assert _set_key(monkeypatch) == 1
    err = capsys.readouterr().err
    assert "takes its key from env KEY_A" in err and "read -rs KEY_A" in err
    assert paths.config_file.read_text() == text  # no top-level api_key


def test_a_profile_is_added_to_an_inline_profiles_table(
    write_config: Callable[[str], Paths], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = write_config('profiles = { a = { key_env = "KEY_A" } }\n')
    assert _set_key(monkeypatch, "--profile", "lab") == 0
    _config, found = profiles.load(paths)
    assert found.names == ("a", "lab") and found.by_name["lab"].key_file
    assert profiles.key_file(paths, "lab").read_text().strip() == KEY


def test_a_config_that_cannot_take_the_profile_leaves_no_key_file(
    write_config: Callable[[str], Paths], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """tomlkit refusing (here: any error it raises) is said in podtui's words, and the key is not stored."""
    paths = write_config("poll_interval_s = 7\n")

    def refuse(*_a: Any, **_kw: Any) -> None:
        raise ValueError("tomlkit's own words")

    monkeypatch.setattr("tomlkit.inline_table", refuse)
    monkeypatch.setattr("tomlkit.table", refuse)
    assert _set_key(monkeypatch, "--profile", "lab") == 1
    err = capsys.readouterr().err
    assert "could not be edited (ValueError); podtui has not changed it" in err and "tomlkit's own" not in err
    assert not profiles.key_file(paths, "lab").exists()
    assert paths.config_file.read_text() == "poll_interval_s = 7\n"


def test_names_that_differ_only_in_case_are_refused(
    write_config: Callable[[str], Paths], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = write_config('[profiles.Work]\nkey_env = "K1"\n[profiles.work]\nkey_env = "K2"\n')
    with pytest.raises(ConfigError, match="profiles Work and work differ only in case"):
        profiles.load(paths)
    write_config("[profiles.Work]\nkey_file = true\n")
    assert _set_key(monkeypatch, "--profile", "work") == 1
    assert "would share its key file with profile Work" in capsys.readouterr().err
    assert not profiles.key_file(paths, "work").exists() and not profiles.key_file(paths, "Work").exists()


BROKEN = '[profiles.a]\nkey_evn = "K"\n'


def test_a_command_with_no_account_ignores_profiles(
    write_config: Callable[[str], Paths], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`podtui sim` takes no account: neither PODTUI_PROFILE nor a broken [profiles] table stops it."""
    write_config(BROKEN)
    monkeypatch.setenv("PODTUI_PROFILE", "nope")
    ran: list[Paths] = []
    real = cli_main.ready_command("sim")

    def main_of_sim(_args: object, paths: Paths, _demo: bool, _read_only: bool) -> int:
        ran.append(paths)
        return 0

    fake = types.SimpleNamespace(fill_parser=real.fill_parser, main=main_of_sim)
    monkeypatch.setattr(cli_main, "ready_command", lambda _name: fake)
    assert main(["sim"]) == 0
    assert ran and ran[0].profile is None


def test_the_demo_reads_no_profiles_and_stores_no_key(
    write_config: Callable[[str], Paths], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """PODTUI_PROFILE, set for the user's accounts, and a broken [profiles] table do not reach the demo."""
    paths = write_config(BROKEN)
    monkeypatch.setenv("PODTUI_PROFILE", "nope")
    assert main(["pods", "--demo", "--json"]) == 0, capsys.readouterr().err
    assert "llama-lora-3090" in capsys.readouterr().out
    with open_session(True, paths) as services:
        assert services.save_key is None and "the demo needs no key" in services.key_help
    with pytest.raises(ConfigError, match="no profile named 'nope' in the demo"):
        DemoSimulator(Config()).api_for("nope")  # never the demo's main account


def test_the_welcome_key_check_is_one_word(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="one word"):
        profiles.store_key(Paths(tmp_path, tmp_path, tmp_path), "lab", "rpa_a\nrpa_b")
