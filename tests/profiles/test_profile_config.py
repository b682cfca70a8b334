"""config.toml's [profiles]: every bad shape refused in words, each profile's key from its own source only, the key
file 0600 and never echoed, `podtui config show` masked, the folders each profile keeps (docs/profiles.md)."""

from __future__ import annotations

import io
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from podtui.cli.main import main
from podtui.cli.session import open_session, profile_paths
from podtui.core import profiles
from podtui.core.config import ConfigError
from podtui.core.paths import Paths

OK = '[profiles.a]\nkey_env = "KEY_A"\n'


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("[profiles.a]\n", "needs exactly one key source, not none"),
        ('[profiles.a]\nkey_env = "K"\nkey_file = true\n', "not key_env and key_file"),
        ("[profiles.a]\nkey_file = false\n", "key_file must be true"),
        ('[profiles.a]\nkey_source = "vault"\n', 'key_source must be "runpodctl"'),
        ('[profiles.a]\nkey_env = "not a var"\n', "key_env must name an environment variable"),
        ("[profiles.a]\nkey_env = 3\n", "key_env must name an environment variable"),
        ('[profiles.a]\nkey_evn = "K"\n', "has key_evn, which podtui does not know"),
        ('[profiles.a]\nkey_env = "K"\ndaily_budget = "lots"\n', "daily_budget must be a number"),
        ('[profiles.a]\nkey_env = "K"\ndaily_budget = true\n', "daily_budget must be a number"),
        ('[profiles.a]\nkey_env = "K"\nread_only = "yes"\n', "read_only must be true or false"),
        ('[profiles."../etc"]\nkey_env = "K"\n', "profile name '../etc' must be"),
        ('[profiles."a\\u001b]52"]\nkey_env = "K"\n', "must be 1 to 32 letters"),
        ('profiles = "a"\n', "profiles must be tables"),
        ('[profiles]\na = "K"\n', "profiles.a must be a table"),
        (OK + 'default_profile = "a"\n', "default_profile goes above the first [table]"),
        ('default_profile = "b"\n' + OK, "default_profile 'b' is not a profile; the profiles: a"),
        ("default_profile = 1\n" + OK, "default_profile must be a profile's name"),
    ],
)
def test_every_bad_shape_is_refused_in_words(
    write_config: Callable[[str], Paths], text: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = write_config(text)
    with pytest.raises(ConfigError, match="profile") as e:
        profiles.load(paths)
    assert said in str(e.value) and str(paths.config_file) in str(e.value)
    assert "\x1b" not in str(e.value)
    assert main(["pods"]) == 1  # every command refuses, the file as it was
    assert said in capsys.readouterr().err
    assert paths.config_file.read_text() == text


def test_an_unknown_profile_lists_the_profiles(
    write_config: Callable[[str], Paths], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(OK + '[profiles.b]\nkey_source = "runpodctl"\n')
    assert main(["pods", "--profile", "c"]) == 1
    assert "no profile named 'c'" in (err := capsys.readouterr().err) and "the profiles: a, b" in err
    monkeypatch.setenv("PODTUI_PROFILE", "d")
    assert main(["cost"]) == 1
    assert "no profile named 'd'" in capsys.readouterr().err


def test_a_profiles_key_comes_from_its_own_source_only(
    write_config: Callable[[str], Paths], monkeypatch: pytest.MonkeyPatch, isolated_home: Path
) -> None:
    """RUNPOD_API_KEY, config.toml's api_key and runpodctl's file all hold keys: a profile whose own source is empty
    says so, and uses none of them."""
    paths = write_config(
        'api_key = "top_level_key"\n'
        '[profiles.env]\nkey_env = "KEY_ENV"\n'
        "[profiles.file]\nkey_file = true\n"
        '[profiles.ctl]\nkey_source = "runpodctl"\n'
    )
    monkeypatch.setenv("RUNPOD_API_KEY", "environment_key")
    _config, found = profiles.load(paths)
    missing = {
        "env": "environment variable KEY_ENV, which is not set",
        "file": "which does not exist yet: `podtui config set-key --profile file` stores it",
        "ctl": "holds none",
    }
    for name, said in missing.items():
        with pytest.raises(profiles.NoProfileKey, match=said):
            profiles.key_of(found.by_name[name], paths)
    # each source, once it has a key, gives that key and no other
    monkeypatch.setenv("KEY_ENV", "env_key")
    profiles.store_key(paths, "file", "file_key")
    ctl = isolated_home / ".runpod" / "config.toml"
    ctl.parent.mkdir()
    ctl.write_text("apikey = 'runpodctl_key'\n")
    got = {name: profiles.key_of(p, paths).value for name, p in found.by_name.items()}
    assert got == {"env": "env_key", "file": "file_key", "ctl": "runpodctl_key"}


def test_runpod_api_key_is_not_used_by_a_key_file_profile(
    write_config: Callable[[str], Paths], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write_config('default_profile = "lab"\n[profiles.lab]\nkey_file = true\n')
    monkeypatch.setenv("RUNPOD_API_KEY", "environment_key")
    monkeypatch.setenv("RUNPOD_API_BASE_URL", "http://127.0.0.1:9")  # nothing may be asked anyway
    assert main(["pods"]) == 1
    err = capsys.readouterr().err
    assert "profile lab takes its key from" in err and "does not exist yet" in err
    with pytest.raises(profiles.NoProfileKey), open_session(False, Paths.default()):
        pass
    # the TUI opens on the welcome screen, whose key goes to the profile's file
    with open_session(False, Paths.default(), allow_no_key=True) as services:
        assert services.needs_key and services.profile == "lab"
        assert services.config.api_key is None
        assert services.save_key is not None
        assert services.save_key("welcome_key") == profiles.key_file(Paths.default(), "lab")


def test_without_profiles_nothing_changes(
    write_config: Callable[[str], Paths], monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = write_config('api_key = "top_level_key"\n')
    assert profile_paths(paths, None, False) == paths
    with open_session(False, paths) as services:
        assert services.profile is None and not services.profiles
        assert "top_lev" not in repr(services.api)  # masked; the key is config.toml's
    monkeypatch.setenv("RUNPOD_API_KEY", "environment_key")
    with open_session(False, paths) as services:
        assert services.api.rest._api_key == "environment_key"  # type: ignore[attr-defined]


def test_profiles_but_none_chosen_is_todays_behaviour(
    write_config: Callable[[str], Paths], monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = write_config(OK)
    monkeypatch.setenv("RUNPOD_API_KEY", "environment_key")
    with open_session(False, paths) as services:
        assert services.profile is None and list(services.profiles) == ["a"]
        assert services.api.rest._api_key == "environment_key"  # type: ignore[attr-defined]


def test_set_key_for_a_profile_writes_its_file_0600_and_never_echoes(
    write_config: Callable[[str], Paths], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = write_config("# mine\npoll_interval_s = 7\n")
    monkeypatch.setattr("sys.stdin", io.StringIO("rpa_PROFILEKEY0123456789abcdef\n"))
    assert main(["config", "set-key", "--profile", "lab"]) == 0
    out = capsys.readouterr()
    assert "rpa_PROFILEKEY0123456789abcdef" not in out.out + out.err
    key = profiles.key_file(paths, "lab")
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and stat.S_IMODE(key.parent.stat().st_mode) == 0o700
    assert key.read_text().strip() == "rpa_PROFILEKEY0123456789abcdef"
    text = paths.config_file.read_text()
    assert text.startswith("# mine\npoll_interval_s = 7\n") and "[profiles.lab]\nkey_file = true" in text
    assert "added profile lab" in out.out
    # a profile whose key comes from elsewhere is refused, before anything is asked
    write_config(OK)
    assert main(["config", "set-key", "--profile", "a"]) == 1
    assert "takes its key from env KEY_A" in capsys.readouterr().err
    assert main(["config", "set-key", "--profile", "../x"]) == 1
    assert "must be 1 to 32 letters" in capsys.readouterr().err


def test_a_key_file_that_is_not_one_key_is_refused(write_config: Callable[[str], Paths]) -> None:
    paths = write_config("[profiles.lab]\nkey_file = true\n")
    lab = profiles.load(paths)[1].by_name["lab"]
    key = profiles.key_file(paths, "lab")
    key.parent.mkdir(parents=True)
    not_one = f"profile lab: {key} does not hold one key; `podtui config set-key --profile lab` replaces it"
    for bad in (b"", b"two words\n", b"\xff\xfe", b"rpa_a\nrpa_b\n", b"rpa_\x1b[2J\n"):
        key.write_bytes(bad)
        with pytest.raises(profiles.NoProfileKey) as e:
            profiles.key_of(lab, paths)
        assert str(e.value) == not_one
    key.write_bytes(b"k" * 5000)
    with pytest.raises(ConfigError, match=r"is larger than 4,096 bytes.*podtui did not read it"):
        profiles.key_of(lab, paths)
    key.unlink()
    os.mkfifo(key)  # never read: it would block
    with pytest.raises(ConfigError):
        profiles.key_of(lab, paths)


def test_config_show_lists_the_profiles_masked(
    write_config: Callable[[str], Paths], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write_config('default_profile = "a"\n' + OK + "[profiles.b]\nkey_file = true\nread_only = true\n")
    monkeypatch.setenv("KEY_A", "rpa_SHOWNKEY0123456789abcdefghij")
    assert main(["config", "show"]) == 0
    out = capsys.readouterr().out
    assert "rpa_SHOWNKEY0123456789abcdefghij" not in out
    assert "profile       a (in use, default): key rpa_" in out and "from env KEY_A" in out
    assert "profile       b: key none (profile b takes its key from" in out and "read-only True" in out


def test_each_profile_keeps_its_own_folders(write_config: Callable[[str], Paths]) -> None:
    """The default profile keeps podtui's folders; another gets its own; the host keys stay shared."""
    paths = write_config('default_profile = "a"\n' + OK + "[profiles.b]\nkey_file = true\n")
    a, b = profile_paths(paths, None, False), profile_paths(paths, "b", False)
    assert a.profile == "a" and a.data_dir == paths.data_dir and a.account_config_dir == paths.config_dir
    assert (
        b.data_dir == paths.data_dir / "profiles" / "b" and b.account_config_dir == paths.config_dir / "profiles" / "b"
    )
    assert b.config_file == a.config_file == paths.config_file and b.shared().data_dir == paths.data_dir
    assert profile_paths(b, None, False) == b  # resolving again changes nothing
    assert profile_paths(b.unprofiled(), None, False) == a and profile_paths(a.unprofiled(), "b", False) == b


def test_the_demos_profiles_are_its_own(
    write_config: Callable[[str], Paths], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The demo has main and team whatever config.toml says; PODTUI_PROFILE, set for real accounts, is not its."""
    paths = write_config('default_profile = "a"\n' + OK)
    assert profile_paths(paths, None, True).profile == "main"
    assert profile_paths(paths, "team", True).profile == "team"
    assert profile_paths(paths, "team", True).data_dir == paths.data_dir  # nothing of the demo's is kept
    with pytest.raises(ConfigError, match="its profiles: main, team"):
        profile_paths(paths, "a", True)
    assert main(["pods", "--demo", "--profile", "a"]) == 1
    assert "in the demo; its profiles: main, team" in capsys.readouterr().err
    monkeypatch.setenv("PODTUI_PROFILE", "a")
    assert main(["config", "show"]) == 0  # outside the demo, the variable chooses the profile
    assert "profile       a (in use, default)" in capsys.readouterr().out
