"""config.toml's [alerts]: defaults, every mistake refused in words naming the file, the webhook's URL never shown
whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from podtui.core import secret
from podtui.core.alert_rules import DEFAULT_SINKS, KINDS, AlertRules, parse_alert_rules, shown_url
from podtui.core.config import ConfigError, load_config
from podtui.core.paths import Paths


def test_defaults_app_always_desktop_for_the_serious_webhook_once_set() -> None:
    rules = AlertRules()
    assert all("app" in rules.sinks_for(k) for k in KINDS)
    assert "webhook" not in rules.sinks_for("idle")  # no URL
    assert "desktop" in rules.sinks_for("exited") and "desktop" not in rules.sinks_for("transfer_verified")
    on = parse_alert_rules({"webhook": "https://ntfy.sh/podtui-rules-test-topic-1"})
    assert all("webhook" in on.sinks_for(k) for k in KINDS)
    off = parse_alert_rules({"desktop": False})
    assert all(not {"desktop", "notify-send"} & set(off.sinks_for(k)) for k in KINDS)


def test_events_table_chooses_places_per_event() -> None:
    rules = parse_alert_rules(
        {
            "webhook": "https://hooks.example.com/services/T000/B000/podtuiruletest",
            "webhook_format": "slack",
            "quiet_min": 5,
            "osc": 777,
            "events": {"idle": ["webhook"], "budget": [], "stuck": ["app", "app"]},
        }
    )
    assert rules.sinks_for("idle") == ("webhook",)
    assert rules.sinks_for("budget") == ()
    assert rules.sinks_for("stuck") == ("app",)
    assert rules.sinks_for("exited") == DEFAULT_SINKS["exited"]
    assert (rules.webhook_format, rules.quiet_s, rules.osc) == ("slack", 300.0, "777")


@pytest.mark.parametrize(
    ("table", "said"),
    [
        ([], "alerts must be a table"),
        ({"webhok": "x"}, "no setting 'webhok'"),
        ({"webhook": 5}, "webhook must be a URL"),
        ({"webhook": "ftp://example.com/x"}, "must be an https:// URL"),
        ({"webhook": "http://ntfy.sh/podtui-plain-http-topic"}, "plain http only to this machine"),
        ({"webhook": "https://user:pw@example.com/x"}, "must not hold a user or password"),
        ({"webhook": "https://exa mple.com/x"}, "spaces or control characters"),
        ({"webhook": "https://example.com:port/x"}, "is not a URL"),
        ({"webhook_format": "xml"}, 'webhook_format must be "json", "slack" or "ntfy"'),
        ({"quiet_min": -1}, "quiet_min must be a number"),
        ({"quiet_min": True}, "quiet_min must be a number"),
        ({"desktop": "yes"}, "desktop must be true or false"),
        ({"osc": 52}, "osc must be 9, 777"),
        ({"events": ["idle"]}, "events must be a table"),
        ({"events": {"idel": ["app"]}}, "no event 'idel'"),
        ({"events": {"idle": "app"}}, "idle must be a list"),
        ({"events": {"idle": ["email"]}}, "no place called 'email'"),
    ],
)
def test_mistakes_are_refused_in_words(table: object, said: str) -> None:
    with pytest.raises(ValueError, match=None) as e:
        parse_alert_rules(table)
    assert said in str(e.value)


def test_loopback_http_is_allowed() -> None:
    for url in ("http://127.0.0.1:9/podtuiloopbacktest", "http://localhost/x", "http://[::1]:8080/y"):
        assert parse_alert_rules({"webhook": url}).webhook == url


def test_the_url_is_a_secret_and_shown_masked(paths: Paths) -> None:
    token = "tk_podtuirules_9f8e7d6c5b4a"
    url = f"https://ntfy.example.com/{token}"
    rules = parse_alert_rules({"webhook": url})
    assert url not in repr(rules) and token not in rules.shown_url
    assert rules.shown_url == "https://ntfy.example.com/…"
    assert token not in secret.redact(f"posting to {url} and {token}")
    assert shown_url(None) == "(none)"


def test_a_broken_table_in_the_file_names_the_file_and_keeps_the_token_out(paths: Paths) -> None:
    cfg = paths.config_file
    cfg.parent.mkdir(parents=True, exist_ok=True)
    token = "podtuirules-http-token-77a1"
    cfg.write_text(f'[alerts]\nwebhook = "http://ntfy.sh/{token}"\n')
    with pytest.raises(ConfigError) as e:
        load_config(paths)
    assert str(cfg) in str(e.value) and "https" in str(e.value) and token not in str(e.value)
    cfg.write_text('[alerts]\nquiet_min = 10\n[alerts.events]\nidle = ["app"]\n')
    rules = load_config(paths).alerts
    assert rules.quiet_s == 600 and rules.sinks_for("idle") == ("app",)


def test_missing_section_is_the_defaults(tmp_path: Path, paths: Paths) -> None:
    paths.config_file.parent.mkdir(parents=True, exist_ok=True)
    paths.config_file.write_text("poll_interval_s = 5\n")
    assert load_config(paths).alerts == AlertRules()


def test_shown_url_keeps_the_port() -> None:
    assert shown_url("http://127.0.0.1:18765/podtui-port-test-hook") == "http://127.0.0.1:18765/…"
    assert shown_url("http://[::1]:8080/y") == "http://[::1]:8080/…"
    assert shown_url("https://ntfy.sh/x") == "https://ntfy.sh/…"


def test_every_part_of_the_path_of_six_or_more_is_masked_but_the_common_words() -> None:
    url = "https://hooks.example.com/services/T0PDTUI/B0PDTUI/podtuiXyZ?auth=pdtuiq&v=1"
    parse_alert_rules({"webhook": url})
    shown = secret.redact("T0PDTUI B0PDTUI podtuiXyZ pdtuiq services webhook auth v=1")
    assert not any(token in shown for token in ("T0PDTUI", "B0PDTUI", "podtuiXyZ", "pdtuiq"))
    assert "services webhook auth v=1" in shown  # words every such URL has, and parts under 6: as they are
