"""A key is one word from every source, and is never quoted back; ssh and editors get no profile's key variable;
a refused key says how to replace it where it came from (docs/profiles.md#key-sources,
docs/profiles.md#key-isolation)."""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from podtui.cli.main import main
from podtui.cli.session import open_session
from podtui.core import profiles, secret
from podtui.core.api.errors import ApiError
from podtui.core.api.rest import RestV2
from podtui.core.paths import Paths
from podtui.core.ssh.openssh import ssh_env
from tests.profiles.conftest import TwoAccounts

# two made-up keys joined by a line break: what a careless `export KEY=$(cat two-lines)` gives
TWO_LINES = "rpa_HYGIENEAAAA1111\nrpa_HYGIENEBBBB2222"


def _quoted(text: str) -> bool:
    return "HYGIENEAAAA" in text or "HYGIENEBBBB" in text


@pytest.mark.parametrize(
    ("config", "variable"),
    [
        ("", "RUNPOD_API_KEY"),  # no profile: as it always was, but checked too
        ('default_profile = "a"\n[profiles.a]\nkey_env = "KEY_A"\n', "KEY_A"),
    ],
)
def test_a_key_that_is_not_one_word_is_refused_in_words_never_quoted(
    write_config: Callable[[str], Paths],
    sent_keys: Callable[[], list[str]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    accounts: TwoAccounts,
    config: str,
    variable: str,
) -> None:
    write_config(config)
    monkeypatch.setenv("RUNPOD_API_BASE_URL", accounts.url)
    for value in (TWO_LINES, "rpa_HYGIENEAAAA1111\x1b[2J", "rpa_HYGIENEAAAA1111 rpa_HYGIENEBBBB2222"):
        monkeypatch.setenv(variable, value)
        assert main(["pods"]) == 1
        err = capsys.readouterr().err
        assert f"the API key in the environment variable {variable}" in err and "not one word" in err
        assert not _quoted(err)
    assert sent_keys() == []  # refused before any request


def test_runpodctls_and_config_tomls_keys_are_checked_too(
    write_config: Callable[[str], Paths], isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ctl = isolated_home / ".runpod" / "config.toml"
    ctl.parent.mkdir()
    ctl.write_text('apikey = "rpa_HYGIENEAAAA1111\\trpa_HYGIENEBBBB2222"\n')
    write_config('default_profile = "m"\n[profiles.m]\nkey_source = "runpodctl"\n')
    assert main(["pods"]) == 1
    assert f"the API key in {ctl} (profile m) is not one word" in (err := capsys.readouterr().err)
    assert not _quoted(err)
    write_config("")  # no profile: runpodctl's file is the last place looked
    assert main(["pods"]) == 1
    assert f"the API key in {ctl} is not one word" in (err := capsys.readouterr().err) and not _quoted(err)
    paths = write_config('api_key = "rpa_HYGIENEAAAA1111\\nrpa_HYGIENEBBBB2222"\n')
    assert main(["pods"]) == 1
    assert f"the API key in {paths.config_file} is not one word" in (err := capsys.readouterr().err)
    assert not _quoted(err)


@pytest.fixture
def listening() -> Iterator[str]:
    """An address that accepts connections and never answers: the request is made, whatever is sent."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(4)
        yield f"http://127.0.0.1:{s.getsockname()[1]}"


def test_a_header_httpx_refuses_is_not_quoted(listening: str) -> None:
    """Whatever reaches the HTTP layer, its error never quotes a header: httpx shows the value as bytes, which
    masking of the key as it is does not catch."""
    rest = RestV2(TWO_LINES, listening, timeout_s=5)  # registers it, as every API does: it has a line break
    with pytest.raises(ApiError) as e:
        rest.call("GET", "/v2/pods")
    assert "request header could not be sent" in str(e.value) and not _quoted(str(e.value))
    rest.close()


def test_ssh_and_editors_get_no_profiles_key_variable(
    write_config: Callable[[str], Paths], monkeypatch: pytest.MonkeyPatch
) -> None:
    """On profile a, b's variable (a working key of another account) is not passed on, nor read to be known."""
    write_config(
        'default_profile = "a"\n[profiles.a]\nkey_env = "KEY_A"\n[profiles.b]\nkey_env = "KEY_B"\n'
        "[profiles.c]\nkey_file = true\n"
    )
    monkeypatch.setenv("KEY_A", "rpa_profileAkey000000000000")
    environ = {"KEY_B": "rpa_profileBkey000000000000", "KEY_A": "x", "PATH": "/usr/bin", "LANG": "C"}
    with open_session(False, Paths.default()) as services:
        assert services.profile == "a" and set(services.key_envs) == {"KEY_A", "KEY_B"}
        assert ssh_env(environ, services.key_envs) == {"PATH": "/usr/bin", "LANG": "C"}
        assert ssh_env(environ) == {"PATH": "/usr/bin", "LANG": "C"}  # known from config.toml itself
    assert secret.redact("rpa_profileBkey000000000000") == "rpa_profileBkey000000000000"  # b's value not read


def test_a_refused_key_says_how_to_replace_it_where_it_came_from(
    two_profiles: TwoAccounts, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KEY_A", "rpa_notakeyanyaccounthas0000000000")
    assert main(["pods"]) == 1
    err = capsys.readouterr().err
    assert "refused the API key (401)" in err and "set KEY_A to a working key" in err and "set-key" not in err
    profiles.store_key(Paths.default(), "b", "rpa_notakeyanyaccounthas0000000000")
    assert main(["pods", "--profile", "b"]) == 1
    assert "then `podtui config set-key --profile b`" in capsys.readouterr().err


def test_a_key_file_others_can_read_is_said_in_the_log(
    two_profiles: TwoAccounts, caplog: pytest.LogCaptureFixture
) -> None:
    paths = Paths.default()
    path = profiles.key_file(paths, "b")
    lab = profiles.load(paths)[1].by_name["b"]
    with caplog.at_level(logging.WARNING, logger="podtui.core.profiles"):
        profiles.key_of(lab, paths)
        assert not caplog.records
        path.chmod(0o644)
        profiles.key_of(lab, paths)
    assert "can be read by others (mode 644)" in caplog.text


def test_config_show_says_a_key_is_unusable_without_quoting_it(
    write_config: Callable[[str], Paths], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write_config('[profiles.a]\nkey_env = "KEY_A"\n')
    monkeypatch.setenv("RUNPOD_API_KEY", TWO_LINES)
    monkeypatch.setenv("KEY_A", TWO_LINES)
    assert main(["config", "show"]) == 0
    out = capsys.readouterr().out
    assert "API key       unusable: the API key in the environment variable RUNPOD_API_KEY is not one word" in out
    assert "profile       a: key none (the API key in the environment variable KEY_A (profile a)" in out
    assert not _quoted(out)
