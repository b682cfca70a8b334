"""API key resolution order, both ~/.runpod layouts, 0600 files, bad TOML left untouched, and the shape of a [keys]
value (its modifiers in any case)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from podtui.core import secret
from podtui.core.config import ApiKey, ConfigError, key_string, load_config, resolve_api_key, save_api_key
from podtui.core.paths import Paths

KEY_A = "rpa_AAAAAAAAAAAAAAAAAAAAAAAAAAAA1111"
KEY_B = "rpa_BBBBBBBBBBBBBBBBBBBBBBBBBBBB2222"
KEY_C = "rpa_CCCCCCCCCCCCCCCCCCCCCCCCCCCC3333"


def runpod_file(home: Path, text: str) -> Path:
    p = home / ".runpod" / "config.toml"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def test_environment_wins(paths: Paths, isolated_home: Path) -> None:
    save_api_key(paths, KEY_B)
    runpod_file(isolated_home, f"apikey = '{KEY_C}'\n")
    key = resolve_api_key(load_config(paths), {"RUNPOD_API_KEY": KEY_A})
    assert key is not None and key.value == KEY_A and key.source == "environment"


def test_podtui_config_second(paths: Paths, isolated_home: Path) -> None:
    save_api_key(paths, KEY_B)
    runpod_file(isolated_home, f"apikey = '{KEY_C}'\n")
    key = resolve_api_key(load_config(paths), {})
    assert key is not None and key.value == KEY_B and key.source == "podtui config"


def test_runpodctl_layout(paths: Paths, isolated_home: Path) -> None:
    runpod_file(isolated_home, f"apikey = '{KEY_C}'\napiurl = 'https://api.runpod.io/graphql'\n")
    key = resolve_api_key(load_config(paths), {})
    assert key is not None and key.value == KEY_C and key.source == "runpod config"


def test_sdk_layout(paths: Paths, isolated_home: Path) -> None:
    runpod_file(isolated_home, f'[default]\napi_key = "{KEY_C}"\n')
    key = resolve_api_key(load_config(paths), {})
    assert key is not None and key.value == KEY_C


def test_no_key_anywhere(paths: Paths) -> None:
    assert resolve_api_key(load_config(paths), {}) is None


def test_broken_runpod_file_is_ignored(paths: Paths, isolated_home: Path) -> None:
    runpod_file(isolated_home, "apikey = 'unterminated\n")
    assert resolve_api_key(load_config(paths), {}) is None


def test_empty_environment_value_falls_through(paths: Paths) -> None:
    save_api_key(paths, KEY_B)
    key = resolve_api_key(load_config(paths), {"RUNPOD_API_KEY": "  "})
    assert key is not None and key.value == KEY_B


def test_saved_file_is_0600_and_keeps_other_settings(paths: Paths) -> None:
    paths.config_dir.mkdir(parents=True)
    paths.config_file.write_text("# my settings\npoll_interval_s = 3\n")
    save_api_key(paths, KEY_A)
    mode = stat.S_IMODE(paths.config_file.stat().st_mode)
    assert mode == 0o600
    text = paths.config_file.read_text()
    assert "# my settings" in text and "poll_interval_s = 3" in text
    cfg = load_config(paths)
    assert cfg.api_key == KEY_A and cfg.poll_interval_s == 3.0


def test_bad_toml_is_a_clear_error_and_untouched(paths: Paths) -> None:
    paths.config_dir.mkdir(parents=True)
    paths.config_file.write_text("api_key = [oops\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(paths)
    with pytest.raises(ConfigError):
        save_api_key(paths, KEY_A)
    assert paths.config_file.read_text() == "api_key = [oops\n"


@pytest.mark.parametrize(
    "text",
    [
        "poll_interval_s = 0\n",
        "poll_interval_s = 'fast'\n",
        "api_key = 5\n",
        "api_timeout_s = true\n",
        "console_scrollback = -1\n",
        "console_scrollback = 2.5\n",
        "console_scrollback = 'lots'\n",
        "idle_threshold_pct = 150\n",
        "idle_window_min = 0\n",
        "daily_budget = -3\n",
        "confirm_terminate = 'maybe'\n",
        "read_only = 'yes'\n",
    ],
)
def test_bad_values(paths: Paths, text: str) -> None:
    paths.config_dir.mkdir(parents=True)
    paths.config_file.write_text(text)
    with pytest.raises(ConfigError):
        load_config(paths)


def test_console_scrollback(paths: Paths) -> None:
    assert load_config(paths).console_scrollback == 10_000
    paths.config_dir.mkdir(parents=True)
    paths.config_file.write_text("console_scrollback = 2000\n")
    assert load_config(paths).console_scrollback == 2000


def test_key_with_spaces_refused(paths: Paths) -> None:
    with pytest.raises(ConfigError):
        save_api_key(paths, "two words")
    assert not paths.config_file.exists()


def test_key_never_in_repr() -> None:
    key = ApiKey(KEY_A, "environment", "RUNPOD_API_KEY")
    assert KEY_A not in repr(key) and KEY_A not in str(key) and KEY_A not in f"{key}"
    assert secret.mask(KEY_A) in repr(key)


def test_cost_settings(paths: Paths) -> None:
    c = load_config(paths)
    assert (c.idle_threshold_pct, c.idle_window_min, c.daily_budget, c.confirm_terminate, c.read_only) == (
        5.0,
        15.0,
        None,
        "name",
        False,
    )
    paths.config_dir.mkdir(parents=True)
    paths.config_file.write_text(
        "idle_threshold_pct = 10\nidle_window_min = 30\ndaily_budget = 25\n"
        "confirm_terminate = 'yn'\nread_only = true\nrunway_warn_h = 12\n"
    )
    c = load_config(paths)
    assert (
        c.idle_threshold_pct,
        c.idle_window_min,
        c.daily_budget,
        c.confirm_terminate,
        c.read_only,
        c.runway_warn_h,
    ) == (10.0, 30.0, 25.0, "yn", True, 12.0)


@pytest.mark.parametrize(
    ("value", "keys"),
    [
        ("x, ctrl+s", "x,ctrl+s"),
        ("Ctrl+x", "ctrl+x"),
        ("ALT+Shift+f2", "alt+shift+f2"),
        ("T", "T"),
        ("ctrl+X", "ctrl+X"),  # the base keeps its case: whether Textual sends it is the UI's to say
        ("esc", "esc"),  # likewise a name: the core knows no key names, only their shape
        ("+", "plus"),  # the plus key, which "+" separates otherwise
        ("ctrl++", "ctrl+plus"),
        (",", "comma"),  # likewise the comma
    ],
)
def test_a_keys_shape_and_its_modifiers_case(value: str, keys: str) -> None:
    assert key_string(value) == keys


@pytest.mark.parametrize("value", ["", "ctrl+", "hyperspace+x", "a b", "x,,y"])
def test_a_value_that_is_no_key(value: str) -> None:
    assert key_string(value) is None
