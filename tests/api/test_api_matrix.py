"""The API fault matrix, through the real app (Pilot) and the real CLI, against the simulator.

Each case asserts what the user sees (screen text, notifications, CLI output and exit status) and that
nothing is lost: the last good pod list stays on screen, marked stale, and failed actions change nothing.
The API-level behaviour of each fault is in tests/api/test_api_faults.py; this is the layer above.
"""

from __future__ import annotations

import html
import json
import re
import time
from collections.abc import Callable
from dataclasses import replace

import pytest

from podtui.cli.main import main
from podtui.core.api import SdkApi
from podtui.core.api.client import RATE_LIMIT_DEFAULT_S, retry_after_seconds
from podtui.core.feed import STUCK_STARTING_S, PodFeed, status_changed_at
from podtui.core.pod import Account, Pod, PodStatus, Runtime, Snapshot
from podtui.sim.server import SimApiServer
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.confirm import ConfirmScreen
from podtui.ui.screens.pod_detail import PodDetailScreen
from podtui.ui.screens.pod_list import PodListScreen
from podtui.ui.screens.terminate import TerminateScreen
from podtui.ui.widgets.account_bar import AccountBar
from podtui.ui.widgets.pod_table import PodTable
from podtui.ui.widgets.status_line import StatusLine
from tests.helpers.app import build_test_app
from tests.helpers.pilot import loaded, polled, wait_until
from tests.helpers.sim import DEMO_IDS

SIZE = (150, 32)
ALL = ["data-prep-a5000", "eval-a100", "llama-lora-3090", "notebook-4090", "sweep-h100x2"]


@pytest.fixture
def new_app(sim: SimApiServer) -> Callable[..., PodtuiApp]:
    """The app on the simulator, polling only when a test says (the UI tests' make_app, plus the API timeout)."""

    def make(timeout_s: float = 3.0, poll_interval_s: float = 600.0) -> PodtuiApp:
        api = SdkApi(sim.api_key, sim.url, timeout_s=timeout_s, clock=sim.world.clock.now)
        return build_test_app(api, sim.world.clock.now, poll_interval_s=poll_interval_s)

    return make


def names(app: PodtuiApp) -> list[str]:
    table = app.screen.query_one(PodTable)
    return [table._pods[i].name for i in table.visible_ids]


def status(app: PodtuiApp) -> str:
    return str(app.screen.query_one(StatusLine).render())


def bar(app: PodtuiApp) -> str:
    return str(app.screen.query_one(AccountBar).render())


def screen_text(app: PodtuiApp) -> str:
    """The screen as the user sees it: the text of a screenshot, row by row."""
    rows: dict[float, list[str]] = {}
    for m in re.finditer(r'<text[^>]*y="([\d.]+)"[^>]*>(.*?)</text>', app.export_screenshot(), re.S):
        rows.setdefault(float(m.group(1)), []).append(html.unescape(re.sub("<[^>]+>", "", m.group(2))))
    return "\n".join("".join(parts).replace("\xa0", " ") for _, parts in sorted(rows.items()))


def notes(app: PodtuiApp) -> list[str]:
    return [n.message for n in app._notifications]


async def stale_but_kept(app: PodtuiApp, age: str) -> None:
    """The last good list is still there, every pod of it, and marked stale with its age."""
    assert names(app) == ALL
    assert "STALE" in bar(app) and age in bar(app)


# --- 401 mid-session ---------------------------------------------------------------------------------


async def test_401_mid_session_keeps_the_list_says_what_to_do_and_refuses_actions(
    new_app: Callable[..., PodtuiApp], sim: SimApiServer
) -> None:
    app = new_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        await polled(pilot, app)  # good polls first
        sim.faults.add("unauthorized")  # the key is revoked on runpod.io
        sim.world.clock.advance(30)
        await polled(pilot, app)
        await stale_but_kept(app, "30s old")
        assert "refused the API key (401)" in status(app) and "podtui config set-key" in status(app)
        assert sim.api_key not in screen_text(app)
        sent = len(sim.requests)
        await pilot.press("j", "j", "s")  # stop llama-lora-3090: refused at once, not after a question
        await wait_until(
            pilot, lambda: any("stop llama-lora-3090 not sent" in n and "refused the API key" in n for n in notes(app))
        )
        assert not isinstance(app.screen, ConfirmScreen)
        await pilot.press("T")  # terminate likewise
        await wait_until(pilot, lambda: any("terminate llama-lora-3090 not sent" in n for n in notes(app)))
        assert isinstance(app.screen, PodListScreen)
        assert not any("podStop" in d or "podTerminate" in d for d in sim.requests[sent:])  # nothing sent
        assert sim.world.pods[DEMO_IDS["train"]].status == "RUNNING"  # nothing changed
        await wait_until(pilot, lambda: not app.poller.polling)
        await stale_but_kept(app, "30s old")
        assert not any(sim.api_key in n for n in notes(app))
        sim.faults.clear()  # a valid key again: the next refresh clears the refusal, and actions ask as before
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: not app.feed.stale)
        await pilot.press("s")
        assert isinstance(app.screen, ConfirmScreen)


def test_401_cli(sim: SimApiServer, cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]) -> None:
    sim.faults.add("unauthorized")
    assert main(["pods"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("podtui: error: RunPod refused the API key (401)") and "podtui config set-key" in err
    assert len(err.strip().splitlines()) == 1 and sim.api_key not in err
    assert main(["stop", "llama-lora-3090", "--yes"]) == 1
    assert "401" in capsys.readouterr().err
    assert sim.world.pods[DEMO_IDS["train"]].status == "RUNNING"


# --- 429 with Retry-After ----------------------------------------------------------------------------


async def test_429_retry_after_is_honoured_and_said(new_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = new_app(poll_interval_s=5.0)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        sim.faults.add("retry_after", 30, times=1)
        sim.world.clock.advance(12)
        await polled(pilot, app)
        await stale_but_kept(app, "12s old")
        line = status(app)
        assert "429 Too Many Requests" in line and "next try in 30s" in line
        assert app.poller.next_in_s is not None and app.poller.next_in_s >= 30  # not the 5 s interval
        sent, done = len(sim.requests), app.poller.done
        await pilot.press("ctrl+r")  # refresh by hand: still not before RunPod said
        await pilot.pause(0.2)
        assert len(sim.requests) == sent and app.poller.done == done
        assert app.poller.next_in_s is not None and 25 < app.poller.next_in_s <= 30
        assert "next try in 30s" in status(app)


async def test_429_short_wait_then_recovers(new_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        sim.faults.add("status", 429, times=1)  # a gateway's HTML page, with Retry-After: 2
        await polled(pilot, app)
        assert "asks to wait 2s" in status(app) and "next try in 2s" in status(app)
        assert names(app) == ALL
        done = app.poller.done
        app.poll_now()  # held: re-armed for what is left of the 2 s, then it polls by itself
        await wait_until(pilot, lambda: app.poller.done > done, timeout=10)
        await pilot.pause()
        assert "live" in bar(app) and "429" not in status(app)


def test_retry_after_forms() -> None:
    assert retry_after_seconds("30") == 30
    assert retry_after_seconds("Wed, 21 Oct 2026 07:28:45 GMT", now=lambda: 1792567680.0) == 45
    assert retry_after_seconds(None) == RATE_LIMIT_DEFAULT_S == retry_after_seconds("soon")
    assert retry_after_seconds("0") == 1 and retry_after_seconds("99999999") == 3600


def test_429_cli(sim: SimApiServer, cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]) -> None:
    sim.faults.add("retry_after", 30, times=2)
    assert main(["pods"]) == 1
    assert "429 Too Many Requests) and asks to wait 30s" in capsys.readouterr().err
    assert main(["stop", "llama-lora-3090", "--yes"]) == 1
    assert "429" in capsys.readouterr().err
    assert sim.world.pods[DEMO_IDS["train"]].status == "RUNNING"


def test_429_on_create_is_not_uncertain(sim: SimApiServer) -> None:
    """A 429 was not carried out: podtui must not say the pod "may have been created" (and hunt for it)."""
    from podtui.core.api.errors import ApiRateLimited
    from podtui.core.pod_spec import CreateUncertain, PodSpec

    api = SdkApi(sim.api_key, sim.url, timeout_s=5.0)
    sim.faults.add("retry_after", 5, times=1)
    spec = PodSpec(name="x", gpu_type_id="NVIDIA GeForce RTX 3090")
    with pytest.raises(ApiRateLimited) as e:
        api.create_pod(spec)
    assert not isinstance(e.value, CreateUncertain) and e.value.retry_after_s == 5


# --- 500/502 bursts ------------------------------------------------------------------------------------


async def test_5xx_burst_backoff_grows_then_resets(new_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = new_app(poll_interval_s=2.0)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        assert app.poller.next_in_s == 2.0
        sim.faults.add("status", 502)
        for n, (wait, age) in enumerate([(2.0, "10s"), (4.0, "20s"), (8.0, "30s"), (16.0, "40s")], start=1):
            sim.world.clock.advance(10)
            await polled(pilot, app)
            assert app.poller.next_in_s == wait
            await stale_but_kept(app, f"{age} old")
            assert "not JSON" in status(app)
            if n > 1:
                assert f"{n} failed polls in a row" in status(app)
        sim.faults.clear()
        sim.faults.add("status", 500, times=1)
        await polled(pilot, app)
        assert app.poller.next_in_s == 32.0 and names(app) == ALL
        await polled(pilot, app)  # recovered by itself: live, and the backoff is back to the interval
        assert "live" in bar(app) and "not JSON" not in status(app) and "failed polls" not in status(app)
        assert app.feed.failures == 0 and app.poller.next_in_s == 2.0 and names(app) == ALL


def test_backoff_never_polls_faster_than_the_interval(new_app: Callable[..., PodtuiApp]) -> None:
    """It was min(interval x 2^n, 60 s): with poll_interval_s = 600 a failing API was asked every minute."""
    app = new_app(poll_interval_s=600.0)
    for failures in range(1, 8):
        app.feed.failures = failures
        assert app.poller.backoff() >= 600.0
    app = new_app(poll_interval_s=5.0)
    waits = []
    for failures in range(1, 8):
        app.feed.failures = failures
        waits.append(app.poller.backoff())
    assert waits == [5, 10, 20, 40, 60, 60, 60]


# --- timeouts, GraphQL errors, truncated JSON ------------------------------------------------------------


async def test_timeout_keeps_the_list(new_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = new_app(timeout_s=1.0)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        sim.faults.add("hang", 1.6, times=1)
        sim.world.clock.advance(20)
        await polled(pilot, app)
        await stale_but_kept(app, "20s old")
        assert "did not answer within 1 s" in status(app)
        await polled(pilot, app)
        assert "live" in bar(app) and "did not answer" not in status(app)


@pytest.mark.parametrize(
    ("kind", "value", "shown"),
    [
        (
            "graphql_error",
            "Something went wrong. Please try again later.",
            "RunPod refused the request: Something went wrong. Please try again later.",
        ),
        ("malformed", None, "not JSON (a server error page or a cut-off answer)"),
        ("raw", '{"errors": []}', "malformed error"),
        ("raw", '{"data": {"myself": {"pods": {"id": 1}}}}', "pod list is not a list"),
    ],
)
async def test_unusable_answers_keep_the_list(
    new_app: Callable[..., PodtuiApp], sim: SimApiServer, kind: str, value: str | None, shown: str
) -> None:
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        sim.faults.add(kind, value, times=1)  # type: ignore[arg-type]
        sim.world.clock.advance(7)
        await polled(pilot, app)
        await stale_but_kept(app, "7s old")
        assert shown in status(app)
        await polled(pilot, app)
        assert "live" in bar(app) and shown not in status(app)


@pytest.mark.parametrize(
    ("kind", "value", "shown"),
    [
        ("graphql_error", "Something went wrong.", "RunPod refused the request: Something went wrong."),
        ("malformed", None, "not JSON"),
        ("status", 502, "not JSON"),
    ],
)
def test_unusable_answers_cli(
    sim: SimApiServer, cli_env: SimApiServer, capsys: pytest.CaptureFixture[str], kind: str, value: object, shown: str
) -> None:
    sim.faults.add(kind, value, times=1)  # type: ignore[arg-type]
    assert main(["pods", "--json"]) == 1
    out = capsys.readouterr()
    assert out.out == "" and shown in out.err and len(out.err.strip().splitlines()) == 1


def test_timeout_cli(
    sim: SimApiServer, cli_env: SimApiServer, capsys: pytest.CaptureFixture[str], paths: object
) -> None:
    from podtui.core.paths import Paths

    config = Paths.default().config_file
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("api_timeout_s = 1.0\n")
    sim.faults.add("hang", 1.6, times=1)
    assert main(["pods"]) == 1
    assert "did not answer within 1 s" in capsys.readouterr().err
    assert config.read_text() == "api_timeout_s = 1.0\n"


# --- fields of the wrong type ---------------------------------------------------------------------------


async def test_wrong_field_types(new_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        app.navigator.open_details(DEMO_IDS["stopped"])  # the pod whose record loses its id below
        await pilot.pause()
        sim.faults.add("partial", times=1)
        await polled(pilot, app)
        text = screen_text(app)
        assert "notebook-4090" in text and "may still exist" in text and "terminated" not in text
        await pilot.press("escape")
        assert "notebook-4090" not in names(app) and len(names(app)) == 4  # nothing else dropped
        assert "odd field(s) in RunPod's answer, shown as '—'" in status(app)
        # eval-a100 lost its runtime in this answer: it reads as starting, but not as starting for 5 hours
        assert "stuck" not in status(app) and "STARTING 5h" not in screen_text(app)
        table = app.screen.query_one(PodTable)
        row = next(r for r in table._cells.values() if r[0].plain == "llama-lora-3090")
        assert row[5].plain.strip() == "—"  # costPerHr "cheap"
        await polled(pilot, app)
        assert names(app) == ALL and "odd field" not in status(app)


def test_wrong_field_types_cli(sim: SimApiServer, cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]) -> None:
    sim.faults.add("partial", times=1)
    assert main(["pods"]) == 0
    out = capsys.readouterr().out
    assert "llama-lora-3090" in out and "balance — ·" in out


# --- amounts that cannot be money ----------------------------------------------------------------------------

ABSURD = ["-5", "-0.001", "NaN", "Infinity", "-Infinity", "1e308", "123456789012"]


def _absurd_answer(value: str, field: str) -> str:
    """An answer whose account (or first pod) holds `value` in `field`, everything else plausible."""
    account = {"clientBalance": "23.87", "currentSpendPerHr": "0.22", "spendLimit": "80"}
    pod = {
        "id": "abc123",
        "name": "odd-money",
        "desiredStatus": "RUNNING",
        "costPerHr": "0.22",
        "gpuCount": 1,
        "machine": {"gpuDisplayName": "RTX 3090", "podHostId": "abc123-1"},
        "runtime": {"uptimeInSeconds": 3600, "ports": [], "gpus": [], "container": {}},
    }
    (pod if field == "costPerHr" else account)[field] = value
    fields = ", ".join(f'"{k}": {v}' for k, v in account.items())
    pod_json = json.dumps(pod).replace(f'"{field}": "{value}"', f'"{field}": {value}')
    return f'{{"data": {{"myself": {{{fields}, "pods": [{pod_json}]}}}}}}'


@pytest.mark.parametrize("field", ["clientBalance", "currentSpendPerHr", "costPerHr"])
@pytest.mark.parametrize("value", ABSURD)
def test_absurd_amounts_are_unknown_in_the_cli(
    sim: SimApiServer, cli_env: SimApiServer, capsys: pytest.CaptureFixture[str], value: str, field: str
) -> None:
    sim.faults.add("raw", _absurd_answer(value, field), times=2)
    assert main(["pods"]) == 0
    pods, pods_err = capsys.readouterr()
    assert main(["cost"]) == 0
    cost, cost_err = capsys.readouterr()
    for out in (pods, cost):
        assert "$-" not in out and "inf" not in out.lower() and "nan" not in out.lower(), out
        assert "123,456,789,012" not in out and "e+" not in out
    balance = re.search(r"balance (\S+)", pods)
    assert balance and f"balance {balance.group(1)} " in cost  # both say the same of the balance
    if field == "clientBalance":
        assert balance.group(1) == "—"
    for err in (pods_err, cost_err):  # and both say why, on stderr
        assert f"note: account: {field}" in err or f"note: pod abc123: {field}" in err, err
        assert "not a plausible amount" in err
    if field == "costPerHr":  # unknown, not $0: the sums say they leave it out
        row = next(line for line in cost.splitlines() if line.startswith("odd-money"))
        assert row.split()[2] == "—" and "$0.000" not in row
        assert "$/hr unknown for odd-money" in cost


@pytest.mark.parametrize("value", ["-5", "NaN", "1e308"])
async def test_absurd_amounts_are_unknown_on_screen(
    new_app: Callable[..., PodtuiApp], sim: SimApiServer, value: str
) -> None:
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        sim.faults.add(
            "raw",
            _absurd_answer(value, "clientBalance").replace('"costPerHr": "0.22"', f'"costPerHr": {value}'),
            times=1,
        )
        await polled(pilot, app)
        text = screen_text(app)
        assert "$-" not in text and "inf" not in text.lower() and "nan" not in text.lower()
        assert "odd-money" in names(app)
        assert "not a plausible amount" in status(app)


# --- a pod vanishing between two polls -------------------------------------------------------------------


async def test_pod_vanishing_under_its_detail_screen(new_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = new_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        app.navigator.open_details(DEMO_IDS["idle"])
        await pilot.pause()
        assert "Cost this run" in screen_text(app)
        sim.world.terminate(DEMO_IDS["idle"])  # on runpod.io, not here
        sim.world.clock.advance(5)
        await polled(pilot, app)
        text = screen_text(app)
        assert f"eval-a100 ({DEMO_IDS['idle']}) is no longer on your account" in text
        assert "Cost this run" not in text and "$1.640" not in text  # no old figures shown as live
        await pilot.press("s")
        assert isinstance(app.screen, PodDetailScreen)
        assert any("eval-a100 is no longer on the account" in n for n in notes(app))
        await pilot.press("escape")
        assert names(app) == [n for n in ALL if n != "eval-a100"]


async def test_terminate_question_for_a_pod_that_vanished(new_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = new_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        await pilot.press("j", "T")  # eval-a100
        assert isinstance(app.screen, TerminateScreen)
        sim.world.terminate(DEMO_IDS["idle"])  # gone while the question is open
        sim.world.clock.advance(5)
        await pilot.press(*"eval-a100", "enter")
        await wait_until(pilot, lambda: any("terminate eval-a100 failed" in n for n in notes(app)))
        assert any("pod not found" in n for n in notes(app))
        await wait_until(pilot, lambda: "eval-a100" not in names(app))
        assert len(names(app)) == 4 and "live" in bar(app)


# --- a pod stuck in CREATED --------------------------------------------------------------------------------


async def test_pod_stuck_starting(new_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    sim.world.pods[DEMO_IDS["starting"]].ready_at = None  # no machine ever comes: CREATED for good
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        assert "STARTING" in screen_text(app) and "STARTING 0m" not in screen_text(app)
        sim.world.clock.advance(5 * 60)
        await polled(pilot, app)
        assert "STARTING 5m" in screen_text(app) and "stuck" not in status(app)
        sim.world.clock.advance(7 * 60)
        await polled(pilot, app)
        text = screen_text(app)
        assert "STARTING 12m ⚠" in text
        line = status(app)
        assert "sweep-h100x2 has been starting for 12m 00s and may be stuck" in line
        assert "stop and resume it, or terminate it" in line
        app.navigator.open_details(DEMO_IDS["starting"])
        await pilot.pause()
        text = screen_text(app)
        assert "starting for 12m 00s: no runtime yet" in text and "it may be stuck" in text
        await pilot.press("escape")
        sim.world.pods[DEMO_IDS["starting"]].ready_at = sim.world.clock.now()  # a machine at last
        await polled(pilot, app)
        assert "STARTING" not in screen_text(app) and "stuck" not in status(app)


def test_pod_stuck_starting_in_the_cli(
    sim: SimApiServer, cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]
) -> None:
    pod = sim.world.pods[DEMO_IDS["starting"]]
    pod.ready_at = None
    pod.last_status_change = "Rented by User: " + time.strftime(
        "%a %b %d %Y %H:%M:%S GMT+0000 (Coordinated Universal Time)", time.gmtime(time.time() - 12 * 60 - 5)
    )
    assert main(["pods"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("sweep-h100x2"))
    assert "STARTING 12m ⚠" in line, line
    assert main(["pods", "--json"]) == 0
    listed = {p["name"]: p for p in json.loads(capsys.readouterr().out)}
    assert 12 * 60 <= listed["sweep-h100x2"]["starting_s"] < 13 * 60
    assert listed["eval-a100"]["starting_s"] is None  # not starting


def test_starting_since_reads_runpods_date_else_first_sight() -> None:
    at = status_changed_at("Rented by User: Sat Nov 28 2026 22:14:03 GMT+0000 (Coordinated Universal Time)")
    assert at == 1795904043.0
    assert status_changed_at("Rented by User: Sat Nov 28 2026 23:14:03 GMT+0100 (CET)") == at
    assert status_changed_at("no date here") is None and status_changed_at(None) is None
    pod = Pod(id="p1", name="p", status=PodStatus.CREATED)  # no lastStatusChange at all
    feed = PodFeed()
    feed.succeeded(Snapshot(Account(), (pod,), fetched_at=1000.0))
    feed.succeeded(Snapshot(Account(), (pod,), fetched_at=1000.0 + STUCK_STARTING_S))
    assert feed.starting_for("p1", 1000.0 + STUCK_STARTING_S) == STUCK_STARTING_S
    assert [p.id for p, _ in feed.stuck()] == ["p1"]
    # a pod podtui saw up, whose runtime is then missing: its lastStatusChange dates the old run, not a start
    old = "Rented by User: Sat Nov 28 2026 22:14:03 GMT+0000 (Coordinated Universal Time)"
    up = Pod(id="p2", name="q", status=PodStatus.RUNNING, last_status_change=old, runtime=Runtime(uptime_s=3600))
    feed.succeeded(Snapshot(Account(), (up,), fetched_at=at + 7200))
    feed.succeeded(Snapshot(Account(), (replace(up, runtime=None),), fetched_at=at + 7260))
    assert feed.starting_for("p2", at + 7260) == 0 and feed.stuck() == []


# --- an unknown status --------------------------------------------------------------------------------------


async def test_unknown_status(new_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = new_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        sim.faults.add("unknown_status", "HIBERNATING")
        await polled(pilot, app)
        assert "? HIBERNATING" in screen_text(app) and names(app) == ALL
        assert "unknown status 'HIBERNATING'" in status(app)
        await pilot.press("j", "j", "enter")  # llama-lora-3090, the pod the fault renames
        assert isinstance(app.screen, PodDetailScreen)
        await pilot.pause()
        assert "? HIBERNATING" in screen_text(app)
        await pilot.press("s")  # refused, with a reason, rather than guessed at
        assert any("llama-lora-3090 is not running" in n for n in notes(app))
        assert sim.world.pods[DEMO_IDS["train"]].status == "RUNNING"


def test_unknown_status_cli(sim: SimApiServer, cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]) -> None:
    sim.faults.add("unknown_status", "HIBERNATING", times=2)
    assert main(["pods"]) == 0
    assert "? HIBERNATING" in capsys.readouterr().out
    assert main(["pods", "--json"]) == 0
    assert '"status": "HIBERNATING"' in capsys.readouterr().out


# --- actions RunPod refuses ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("verb", "keys", "pod", "before"),
    [
        ("stop", ("j", "j", "s", "y"), "train", "RUNNING"),
        ("resume", ("j", "j", "j", "r", "y"), "stopped", "EXITED"),
        ("terminate", ("j", "T", *"eval-a100", "enter"), "idle", "RUNNING"),
    ],
)
async def test_refused_actions_change_nothing(
    new_app: Callable[..., PodtuiApp], sim: SimApiServer, verb: str, keys: tuple[str, ...], pod: str, before: str
) -> None:
    app = new_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        sim.faults.add("graphql_error", "Something went wrong. Please try again later.", times=1)
        await pilot.press(*keys)
        await wait_until(pilot, lambda: any(f"{verb} " in n and "failed" in n for n in notes(app)))
        note = next(n for n in notes(app) if "failed" in n)
        assert "Something went wrong. Please try again later." in note
        await wait_until(pilot, lambda: not app.poller.polling and app.feed.snapshot is not None)
        await polled(pilot, app)
        assert sim.world.pods[DEMO_IDS[pod]].status == before and names(app) == ALL
        shown = app.feed.snapshot.find(DEMO_IDS[pod]) if app.feed.snapshot else None
        assert shown is not None and shown.status.value == before


MUTATION = {"stop": "podStop", "resume": "podResume", "terminate": "podTerminate"}


@pytest.mark.parametrize(
    ("verb", "pod", "before"),
    [("stop", "train", "RUNNING"), ("resume", "stopped", "EXITED"), ("terminate", "idle", "RUNNING")],
)
def test_refused_actions_cli(
    sim: SimApiServer, cli_env: SimApiServer, capsys: pytest.CaptureFixture[str], verb: str, pod: str, before: str
) -> None:
    # the lookup before it goes through; the action itself is refused
    sim.faults.add("graphql_error", "Something went wrong.", times=1, only=MUTATION[verb])
    assert main([verb, DEMO_IDS[pod], "--yes"]) == 1
    out = capsys.readouterr()
    assert out.out == "" and out.err == "podtui: error: RunPod refused the request: Something went wrong.\n"
    assert sim.world.pods[DEMO_IDS[pod]].status == before
