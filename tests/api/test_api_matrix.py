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
from podtui.core.api import V2Api
from podtui.core.feed import STUCK_STARTING_S, PodFeed, starting_since
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

SIZE = (150, 29)  # the one-screen flow: Enter opens the details screen (docs/architecture.md#panes)
ALL = ["data-prep-a5000", "eval-a100", "llama-lora-3090", "notebook-4090", "sweep-h100x2"]


@pytest.fixture
def new_app(sim: SimApiServer) -> Callable[..., PodtuiApp]:
    """The app on the simulator, polling only when a test says (the UI tests' make_app, plus the API timeout)."""

    def make(timeout_s: float = 3.0, poll_interval_s: float = 600.0) -> PodtuiApp:
        api = V2Api(sim.api_key, sim.url, timeout_s=timeout_s, clock=sim.world.clock.now)
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
        sent = len(sim.rest_requests)
        await pilot.press("j", "j", "s")  # stop llama-lora-3090: refused at once, not after a question
        await wait_until(
            pilot, lambda: any("stop llama-lora-3090 not sent" in n and "refused the API key" in n for n in notes(app))
        )
        assert not isinstance(app.screen, ConfirmScreen)
        await pilot.press("T")  # terminate likewise
        await wait_until(pilot, lambda: any("terminate llama-lora-3090 not sent" in n for n in notes(app)))
        assert isinstance(app.screen, PodListScreen)
        assert not any(r.startswith(CHANGES) for r in sim.rest_requests[sent:])  # nothing sent
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
        sent, asked, done = len(sim.rest_requests), len(sim.requests), app.poller.done
        await pilot.press("ctrl+r")  # refresh by hand: still not before RunPod said
        await pilot.pause(0.2)
        assert (len(sim.rest_requests), len(sim.requests), app.poller.done) == (sent, asked, done)
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


def test_429_cli(sim: SimApiServer, cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]) -> None:
    sim.faults.add("retry_after", 30, times=2)
    assert main(["pods"]) == 1
    assert "429 Too Many Requests) and asks to wait 30s" in capsys.readouterr().err
    assert main(["stop", "llama-lora-3090", "--yes"]) == 1
    assert "429" in capsys.readouterr().err
    assert sim.world.pods[DEMO_IDS["train"]].status == "RUNNING"


def test_429_on_create_with_a_short_wait_is_waited_out(sim: SimApiServer) -> None:
    """A 429 was not carried out: the create waits as long as Retry-After asks, then sends the same request once
    more, and one pod is made."""
    from podtui.core.pod_spec import PodSpec

    api = V2Api(sim.api_key, sim.url, timeout_s=5.0)
    sim.faults.add("retry_after", 1, times=1, only="POST /v2/pods")
    created = api.create_pod(PodSpec(name="waited", gpu_type_id="NVIDIA GeForce RTX 3090"))
    assert sim.rest_requests.count("POST /v2/pods") == 2
    assert [p.id for p in sim.world.pods.values() if p.name == "waited"] == [created.id]


def test_429_on_create_with_a_long_wait_is_not_uncertain(sim: SimApiServer) -> None:
    """Past the create's budget for waiting, the 429 is the answer: nothing was created, and podtui must not say
    the pod "may have been created" (and hunt for it)."""
    from podtui.core.api.errors import ApiRateLimited
    from podtui.core.pod_spec import CreateUncertain, PodSpec

    api = V2Api(sim.api_key, sim.url, timeout_s=5.0)
    sim.faults.add("retry_after", 120, times=1, only="POST /v2/pods")
    with pytest.raises(ApiRateLimited) as e:
        api.create_pod(PodSpec(name="x", gpu_type_id="NVIDIA GeForce RTX 3090"))
    assert not isinstance(e.value, CreateUncertain) and e.value.retry_after_s == 120
    assert "uncertain" not in str(e.value) and "may have been created" not in str(e.value)
    assert "nothing was created" in str(e.value) and "wait 2m" in str(e.value)
    assert sim.rest_requests.count("POST /v2/pods") == 1  # not sent again
    assert not any(p.name == "x" for p in sim.world.pods.values())


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
            assert "RunPod's API had a server error (502)" in status(app)
            if n > 1:
                assert f"{n} failed polls in a row" in status(app)
        sim.faults.clear()
        sim.faults.add("status", 500, times=1)
        await polled(pilot, app)
        assert app.poller.next_in_s == 32.0 and names(app) == ALL
        await polled(pilot, app)  # recovered by itself: live, and the backoff is back to the interval
        assert "live" in bar(app) and "server error" not in status(app) and "failed polls" not in status(app)
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


# --- timeouts, problem answers, truncated JSON ------------------------------------------------------------


async def test_timeout_keeps_the_list(new_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = new_app(timeout_s=1.0)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        sim.faults.add("hang", 1.6, times=1)
        sim.world.clock.advance(20)
        await polled(pilot, app)
        await stale_but_kept(app, "20s old")
        assert "did not answer GET /v2/pods within 1 s" in status(app)
        await polled(pilot, app)
        assert "live" in bar(app) and "did not answer" not in status(app)


@pytest.mark.parametrize(
    ("kind", "value", "shown"),
    [
        (
            "conflict",
            "Something went wrong. Please try again later.",
            "RunPod refused GET /v2/pods (409): Something went wrong. Please try again later",
        ),
        ("malformed", None, "not JSON (a server error page or a cut-off answer)"),
        ("raw", '{"errors": []}', "has no pod list ('pods') in it"),
        ("raw", '{"pods": {"id": 1}}', "pod list is not a list"),
        ("raw", "[]", "answered with list, not a JSON object"),
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
        ("conflict", "Something went wrong.", "RunPod refused GET /v2/pods (409): Something went wrong"),
        ("malformed", None, "not JSON"),
        ("status", 502, "RunPod's API had a server error (502)"),
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
    assert "did not answer GET /v2/pods within 1 s" in capsys.readouterr().err
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
    sim.faults.add("partial", times=1, only="GET /v2/pods")
    assert main(["pods"]) == 0
    out, err = capsys.readouterr()
    # the pods' odd fields are notes; the balance comes from elsewhere and is still known
    assert "llama-lora-3090" in out and "notebook-4090" not in out and "balance $23.87 ·" in out
    assert "note: pod q7x2m9fk4r8t1a: cost is not a number (str)" in err and "a pod record has no id" in err
    sim.faults.add("partial", times=1, only="podtuiBalance")  # now the balance answer lacks the balance
    assert main(["pods"]) == 0
    out = capsys.readouterr().out
    assert "notebook-4090" in out and "balance — ·" in out
    assert "balance unknown: RunPod's answer had no usable balance" in out


# --- amounts that cannot be money ----------------------------------------------------------------------------

ABSURD = ["-5", "-0.001", "NaN", "Infinity", "-Infinity", "1e308", "123456789012"]


def _absurd_answers(value: str, field: str) -> tuple[str, str]:
    """GET /v2/pods and the balance answers, the first pod or the account holding `value` (JSON as written, NaN
    and Infinity included) in `field`, everything else plausible."""
    account = {"clientBalance": "23.87", "currentSpendPerHr": "0.22", "spendLimit": "80"}
    pod = {
        "id": "abc123",
        "name": "odd-money",
        "status": "RUNNING",
        "actions": ["stop", "restart", "terminate"],
        "cost": "0.22",
        "gpu": {"id": "NVIDIA GeForce RTX 3090", "count": 1},
        "runtime": {"uptime": 3600, "ports": [], "gpus": []},
    }
    (pod if field == "cost" else account)[field] = value
    fields = ", ".join(f'"{k}": {v}' for k, v in account.items())
    balance = f'{{"data": {{"myself": {{"id": "user_sim", {fields}}}}}}}'
    pods = '{"pods": [' + json.dumps(pod).replace('"cost": "0.22"', '"cost": 0.22').replace(f'"{value}"', value) + "]}"
    return pods, balance


def absurd(sim: SimApiServer, value: str, field: str, times: int) -> None:
    pods, balance = _absurd_answers(value, field)
    sim.faults.add("raw", pods, times=times, only="GET /v2/pods")
    sim.faults.add("raw", balance, times=times, only="podtuiBalance")


@pytest.mark.parametrize("field", ["clientBalance", "currentSpendPerHr", "cost"])
@pytest.mark.parametrize("value", ABSURD)
def test_absurd_amounts_are_unknown_in_the_cli(
    sim: SimApiServer, cli_env: SimApiServer, capsys: pytest.CaptureFixture[str], value: str, field: str
) -> None:
    absurd(sim, value, field, times=2)
    assert main(["pods"]) == 0
    pods, pods_err = capsys.readouterr()
    assert main(["cost"]) == 0
    cost, cost_err = capsys.readouterr()
    for out in (pods, cost):
        assert "$-" not in out and "inf" not in out.lower() and "nan" not in out.lower(), out
        assert "123,456,789,012" not in out and "e+" not in out
    balance = re.search(r"balance (\S+)", pods)
    assert balance and f"balance {balance.group(1)}" in cost  # both say the same of the balance
    if field == "clientBalance":
        assert balance.group(1) == "—"
    for err in (pods_err, cost_err):  # and both say why, on stderr
        assert f"note: account: {field}" in err or f"note: pod abc123: {field}" in err, err
        assert "not a plausible amount" in err
    if field == "cost":  # unknown, not $0: the sums say they leave it out
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
        pods, _ = _absurd_answers(value, "cost")
        _, balance = _absurd_answers(value, "clientBalance")
        sim.faults.add("raw", pods, times=2, only="GET /v2/pods")
        sim.faults.add("raw", balance, times=1, only="podtuiBalance")
        await polled(pilot, app)
        text = screen_text(app)
        assert "$-" not in text and "inf" not in text.lower() and "nan" not in text.lower()
        assert names(app) == ["odd-money"]
        assert "balance —" in bar(app) and "runway ?" in bar(app)
        # the odd fields come first (the balance's among them), and the line says the balance is unknown
        assert "odd field(s) in RunPod's answer" in status(app) and "; balance unknown" in status(app)
        await polled(pilot, app)  # the balance is plausible again, the pod's $/hr still is not
        assert "balance $23.87" in bar(app)
        assert "pod abc123: cost" in status(app) and "not a plausible amount" in status(app)
        assert "$-" not in screen_text(app) and "nan" not in screen_text(app).lower()


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


# --- a pod stuck in PROVISIONING ----------------------------------------------------------------------------


async def test_pod_stuck_starting(new_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    sim.world.pods[DEMO_IDS["starting"]].ready_at = None  # no machine ever comes: PROVISIONING for good
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        assert "PROVISIONING" in screen_text(app) and "PROVISIONING 0m" not in screen_text(app)
        sim.world.clock.advance(5 * 60)
        await polled(pilot, app)
        assert "PROVISIONING 5m" in screen_text(app) and "stuck" not in status(app)
        sim.world.clock.advance(7 * 60)
        await polled(pilot, app)
        text = screen_text(app)
        assert "PROVISIONING 12m ⚠" in text
        line = status(app)
        assert "sweep-h100x2 has been starting for 12m 00s and may be stuck" in line
        assert "stop and resume it (unless it is locked), or terminate it" in line
        app.navigator.open_details(DEMO_IDS["starting"])
        await pilot.pause()
        text = screen_text(app)
        assert "starting for 12m 00s: no runtime yet" in text and "it may be stuck" in text
        await pilot.press("escape")
        sim.world.pods[DEMO_IDS["starting"]].ready_at = sim.world.clock.now()  # a machine at last
        await polled(pilot, app)
        text = screen_text(app)
        assert "PROVISIONING" not in text and "STARTING" not in text and "stuck" not in status(app)


def test_pod_stuck_starting_in_the_cli(
    sim: SimApiServer, cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]
) -> None:
    pod = sim.world.pods[DEMO_IDS["starting"]]
    pod.ready_at = None  # PROVISIONING, since RunPod's createdAt: 12 minutes ago by this machine's clock
    pod.created_at = time.time() - 12 * 60 - 5
    assert main(["pods"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("sweep-h100x2"))
    assert "PROVISIONING 12m ⚠" in line, line
    assert main(["pods", "--json"]) == 0
    listed = {p["name"]: p for p in json.loads(capsys.readouterr().out)}
    assert 12 * 60 <= listed["sweep-h100x2"]["starting_s"] < 13 * 60
    assert listed["eval-a100"]["starting_s"] is None  # not starting


def test_starting_since_reads_runpods_times_else_first_sight() -> None:
    at = 1795904043.0
    # a pod that has never run: since it was created
    made = Pod(id="p0", name="m", status=PodStatus.PROVISIONING, created_at=at - 120, started_at=None)
    assert starting_since(made, at, {}) == at - 120
    # one that ran before keeps both times through a resume: neither dates this start, podtui's first sight does
    resumed = Pod(id="p3", name="b", status=PodStatus.PROVISIONING, created_at=at - 259200, started_at=at - 86400)
    assert starting_since(resumed, at, {}) == at
    future = Pod(id="p4", name="f", status=PodStatus.STARTING, created_at=at + 999)
    assert starting_since(future, at, {}) == at  # a time in the future is not believed
    pod = Pod(id="p1", name="p", status=PodStatus.STARTING)  # no times at all
    feed = PodFeed()
    feed.succeeded(Snapshot(Account(), (pod,), fetched_at=1000.0))
    feed.succeeded(Snapshot(Account(), (pod,), fetched_at=1000.0 + STUCK_STARTING_S))
    assert feed.starting_for("p1", 1000.0 + STUCK_STARTING_S) == STUCK_STARTING_S
    assert [p.id for p, _ in feed.stuck()] == ["p1"]
    # a pod podtui saw up, whose runtime is then missing: its startedAt dates the old run, not a start
    up = Pod(id="p2", name="q", status=PodStatus.RUNNING, started_at=at, runtime=Runtime(uptime_s=3600))
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
        # what it may do is not guessed from the status: RunPod's `actions` for it still say stop, not resume
        assert app.screen.check_action("pod", ("resume",)) is None
        assert app.screen.check_action("pod", ("stop",)) is True
        sent = len(sim.rest_requests)
        await pilot.press("s")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("escape")
        assert not any(r.startswith(CHANGES) for r in sim.rest_requests[sent:])
        assert sim.world.pods[DEMO_IDS["train"]].status == "RUNNING"


def test_unknown_status_cli(sim: SimApiServer, cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]) -> None:
    sim.faults.add("unknown_status", "HIBERNATING", times=2, only="GET /v2/pods")
    assert main(["pods"]) == 0
    assert "? HIBERNATING" in capsys.readouterr().out
    assert main(["pods", "--json"]) == 0
    assert '"status": "HIBERNATING"' in capsys.readouterr().out


# --- actions RunPod refuses ---------------------------------------------------------------------------------

# the requests that change a pod: an action, or a terminate
CHANGES = ("POST /v2/pods/", "DELETE /v2/pods/")


def sent_for(verb: str, pod_id: str) -> str:
    return f"DELETE /v2/pods/{pod_id}" if verb == "terminate" else f"POST /v2/pods/{pod_id}/action"


@pytest.mark.parametrize(
    ("verb", "keys", "pod", "before"),
    [
        ("stop", ("j", "j", "s", "y"), "train", "RUNNING"),
        ("resume", ("j", "j", "j", "r", "y"), "stopped", "EXITED"),
        ("restart", ("j", "j", "R", "y"), "train", "RUNNING"),
        ("terminate", ("j", "T", *"eval-a100", "enter"), "idle", "RUNNING"),
    ],
)
async def test_refused_actions_change_nothing(
    new_app: Callable[..., PodtuiApp], sim: SimApiServer, verb: str, keys: tuple[str, ...], pod: str, before: str
) -> None:
    app = new_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        started = sim.world.pods[DEMO_IDS[pod]].started_at
        # RunPod's 409 problem answer, to the action only
        sim.faults.add(
            "conflict", "Something went wrong. Please try again later.", times=1, only=sent_for(verb, DEMO_IDS[pod])
        )
        await pilot.press(*keys)
        await wait_until(pilot, lambda: any(f"{verb} " in n and "failed" in n for n in notes(app)))
        note = next(n for n in notes(app) if "failed" in n)
        assert f"RunPod refused {sent_for(verb, DEMO_IDS[pod])} (409): Something went wrong" in note
        await wait_until(pilot, lambda: not app.poller.polling and app.feed.snapshot is not None)
        await polled(pilot, app)
        assert sim.world.pods[DEMO_IDS[pod]].status == before and names(app) == ALL
        assert sim.world.pods[DEMO_IDS[pod]].started_at == started  # not restarted either
        shown = app.feed.snapshot.find(DEMO_IDS[pod]) if app.feed.snapshot else None
        assert shown is not None and shown.status.value == before


@pytest.mark.parametrize(
    ("verb", "pod", "before"),
    [
        ("stop", "train", "RUNNING"),
        ("resume", "stopped", "EXITED"),
        ("restart", "train", "RUNNING"),
        ("terminate", "idle", "RUNNING"),
    ],
)
def test_refused_actions_cli(
    sim: SimApiServer, cli_env: SimApiServer, capsys: pytest.CaptureFixture[str], verb: str, pod: str, before: str
) -> None:
    # the lookup before it goes through; the action itself is refused
    target = sent_for(verb, DEMO_IDS[pod])
    sim.faults.add("conflict", "Something went wrong.", times=1, only=target)
    assert main([verb, DEMO_IDS[pod], "--yes"]) == 1
    out = capsys.readouterr()
    assert out.out == "" and out.err == f"podtui: error: RunPod refused {target} (409): Something went wrong\n"
    assert sim.world.pods[DEMO_IDS[pod]].status == before


def test_a_pods_own_key_is_refused_the_list_in_the_cli(
    sim: SimApiServer, cli_env: SimApiServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pod's own key (RUNPOD_API_KEY inside a pod) may not list the account's pods: RunPod's 403, in words."""
    own_key = sim.world.pods[DEMO_IDS["train"]].api_key
    monkeypatch.setenv("RUNPOD_API_KEY", own_key)
    assert main(["stop", DEMO_IDS["idle"], "--yes"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("podtui: error: RunPod refused GET /v2/pods (403): ") and err.count("\n") == 1
    assert "this key belongs to a pod" in err and own_key not in err
    assert not any(r.startswith(CHANGES) for r in sim.rest_requests)
    assert sim.world.pods[DEMO_IDS["idle"]].status == "RUNNING"
