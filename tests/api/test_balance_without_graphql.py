"""podtui without RunPod's GraphQL: retired (410), unreachable, or refusing the balance query. Only the balance
depends on it (docs/runpod-facts.md#pricing-and-the-balance): the pods, their costs, the burn (the pods' sum) and
every action still work from REST v2; the balance and runway are unknown, with the reason in words; and GraphQL is
asked again only after a rest, not on every poll. Over a whole session, the balance query is the one GraphQL
document podtui sends."""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Callable
from pathlib import Path

import pytest

from podtui.cli.main import main
from podtui.core import units
from podtui.core.api import V2Api
from podtui.core.api.balance import BALANCE_QUERY, FAILED_RECHECK_S, GONE_RECHECK_S, BalanceSource
from podtui.core.api.graphql import GraphqlSdk
from podtui.core.cost import cost_view
from podtui.core.pod_spec import PodSpec
from podtui.core.ssh.keys import generate_dedicated_key
from podtui.core.ssh.setup import setup_key
from podtui.sim.exchange import Exchange
from podtui.sim.server import SimApiServer
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.confirm import ConfirmScreen
from podtui.ui.widgets.account_bar import AccountBar
from podtui.ui.widgets.status_line import StatusLine
from tests.helpers.app import build_test_app
from tests.helpers.pilot import loaded, polled, wait_until
from tests.helpers.sim import DEMO_IDS

SIZE = (150, 32)
ALL = ["data-prep-a5000", "eval-a100", "llama-lora-3090", "notebook-4090", "sweep-h100x2"]
GONE = "RunPod no longer serves its GraphQL API (410 Gone); RunPod's REST API v2 has no balance"
REFUSED = "RunPod did not give it: RunPod refused the request: Something went wrong. Please try again later."
# Ways GraphQL fails while REST v2 works, how the reason reads, and how long podtui leaves it before asking again
WAYS = {
    "retired": (GONE, GONE_RECHECK_S),
    "unreachable": ("cannot reach RunPod's API at http://127.0.0.1:", FAILED_RECHECK_S),
    "refusing": (REFUSED, FAILED_RECHECK_S),
}


def graphql_posts(seen: list[Exchange]) -> int:
    return sum(1 for e in list(seen) if e.path.rstrip("/") == "/graphql")


def closed_port_url() -> str:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}"


def break_graphql(sim: SimApiServer, way: str) -> None:
    """Make the simulator's GraphQL fail as `way` says ("unreachable" is the client's doing: see api_without)."""
    if way == "retired":
        sim.graphql_mode = "retired"
    elif way == "refusing":
        sim.faults.add("graphql_error", "Something went wrong. Please try again later.", only="podtuiBalance")


def mend_graphql(sim: SimApiServer) -> None:
    sim.graphql_mode = "balance-only"
    sim.faults.clear()


def api_without(sim: SimApiServer, way: str) -> V2Api:
    """podtui's API on the simulator, its balance resting on the simulator's clock (so a test can pass the rest)
    and, when unreachable, asked of an address where nothing listens."""
    api = V2Api(sim.api_key, sim.url, timeout_s=3.0, clock=sim.world.clock.now)
    graphql_at = closed_port_url() if way == "unreachable" else sim.url
    api.balance = BalanceSource(GraphqlSdk(sim.api_key, graphql_at, 3.0), clock=sim.world.clock.now)
    break_graphql(sim, way)
    return api


def bar(app: PodtuiApp) -> str:
    return str(app.screen.query_one(AccountBar).render())


def status(app: PodtuiApp) -> str:
    return str(app.screen.query_one(StatusLine).render())


def screen_text(app: PodtuiApp) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def notes(app: PodtuiApp) -> list[str]:
    return [n.message for n in app._notifications]


def running_gpus_per_hr(sim: SimApiServer) -> float:
    return sum(p.cost_per_hr for p in sim.world.pods.values() if p.status == "RUNNING")


# --- the TUI ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("way", list(WAYS))
async def test_the_tui_works_without_the_balance(sim: SimApiServer, exchanges: list[Exchange], way: str) -> None:
    why, rest_s = WAYS[way]
    api = api_without(sim, way)
    app = build_test_app(api, sim.world.clock.now)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        # the pods and what they cost, from v2
        snap = app.feed.snapshot
        assert snap is not None and sorted(p.name for p in snap.pods) == ALL
        assert not app.feed.stale and "live" in bar(app)
        view = cost_view(snap, snap.fetched_at)
        assert view.burn_per_hr == view.pods_burn_per_hr  # the burn is the pods' sum
        assert view.pods_burn_per_hr == pytest.approx(running_gpus_per_hr(sim), abs=0.1)
        assert f"burn {units.rate(view.pods_burn_per_hr)}" in bar(app)
        assert "$0.220" in screen_text(app) and "$1.640" in screen_text(app)  # each pod's $/hr
        # the balance and runway unknown, and why, in words on screen
        assert "balance —" in bar(app) and "runway ?" in bar(app)
        line = status(app)
        assert f"balance and runway unknown: {why}" in line and "the burn is the pods' sum" in line
        assert f"balance and runway unknown: {why}" in screen_text(app)
        # polls go on from v2; GraphQL rests
        for _ in range(3):
            sim.world.clock.advance(5)
            await polled(pilot, app)
        assert "live" in bar(app) and "balance —" in bar(app)
        # stop and start work
        await pilot.press("s")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await wait_until(pilot, lambda: "data-prep-a5000: stopping" in notes(app))
        assert sim.world.pods[DEMO_IDS["bursty"]].status == "EXITED"
        await wait_until(pilot, lambda: app.screen.check_action("pod", ("resume",)) is True)
        await pilot.press("r", "y")
        await wait_until(pilot, lambda: "data-prep-a5000: resuming" in notes(app))
        assert sim.world.pods[DEMO_IDS["bursty"]].status == "CREATED"
        await wait_until(pilot, lambda: not app.poller.polling)
        assert not any("failed" in n for n in notes(app))
        assert graphql_posts(exchanges) <= 1  # asked once at the start, not on each of the polls since
        if way != "unreachable":
            await wait_until(pilot, lambda: graphql_posts(exchanges) == 1)
        # after the rest, asked again: once
        sim.world.clock.advance(rest_s + 1)
        await polled(pilot, app)
        await polled(pilot, app)
        if way != "unreachable":
            await wait_until(pilot, lambda: graphql_posts(exchanges) == 2)
        assert f"balance and runway unknown: {why}" in status(app)
        if way == "unreachable":
            return
        mend_graphql(sim)  # GraphQL answers again: after the next rest, the balance is back
        await polled(pilot, app)
        assert "balance —" in bar(app)  # still resting
        sim.world.clock.advance(rest_s + 1)
        await polled(pilot, app)
        assert re.search(r"balance \$\d+\.\d\d", bar(app)) and "runway ?" not in bar(app)
        assert "unknown" not in status(app)


# --- the CLI ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("way", ["retired", "refusing"])
def test_the_cli_works_without_the_balance(cli_env: SimApiServer, capsys: pytest.CaptureFixture[str], way: str) -> None:
    why, _ = WAYS[way]
    break_graphql(cli_env, way)
    assert main(["cost", "--json"]) == 0
    out, err = capsys.readouterr()
    cost = json.loads(out)
    assert cost["balance"] is None and cost["runway_s"] is None and cost["balance_unknown_why"] == why
    assert cost["burn_per_hr"] == cost["burn_per_hr_pods"] == pytest.approx(running_gpus_per_hr(cli_env), abs=0.1)
    assert sorted(p["name"] for p in cost["pods"]) == ALL and err == ""
    assert main(["cost"]) == 0
    out = capsys.readouterr().out
    assert "· balance — · runway —" in out and f"balance and runway unknown: {why}\n" in out
    assert main(["pods"]) == 0
    out, err = capsys.readouterr()
    assert all(f"\n{name} " in out for name in ALL) and "balance — ·" in out
    assert f"balance unknown: {why}\n" in out and err == ""
    assert main(["pods", "--json"]) == 0
    assert sorted(p["name"] for p in json.loads(capsys.readouterr().out)) == ALL
    assert main(["stop", "llama-lora-3090", "--yes"]) == 0
    assert cli_env.world.pods[DEMO_IDS["train"]].status == "EXITED"


# --- every API path with GraphQL retired ---------------------------------------------------------------------------


def test_every_api_path_works_with_graphql_retired(sim: SimApiServer, tmp_path: Path) -> None:
    sim.graphql_mode = "retired"
    api = V2Api(sim.api_key, sim.url, timeout_s=5.0, clock=sim.world.clock.now)
    snap = api.fetch_snapshot()
    assert len(snap.pods) == 5 and snap.account.balance is None and snap.account.unknown_why == GONE
    train, stopped, idle = DEMO_IDS["train"], DEMO_IDS["stopped"], DEMO_IDS["idle"]
    assert api.fetch_pod(train).name == "llama-lora-3090"
    api.stop_pod(train)
    assert api.fetch_pod(train).status.value == "EXITED"
    api.start_pod(stopped)
    assert api.fetch_pod(stopped).status.value == "PROVISIONING"
    api.restart_pod(idle)
    assert api.fetch_pod(idle).uptime_s == 0
    api.terminate_pod(idle)
    assert idle not in {p.id for p in api.fetch_snapshot().pods}
    # the account's SSH keys: read, merged with a new one, written back whole
    other = generate_dedicated_key(tmp_path / "other", comment="other")
    sim.world.set_pub_key(other.public_line)
    done = setup_key(api, tmp_path / "mine")
    assert done.registered and done.account_keys == 2
    assert sim.world.pub_key.splitlines()[0] == other.public_line
    assert api.account_keys() == sim.world.pub_key
    # the GPU catalogue, and a new pod
    catalogue = api.gpu_types()
    gpu = catalogue.find("RTX 3090")
    created = api.create_pod(PodSpec(name="made-without-graphql", gpu_type_id=gpu.id))
    assert sim.world.pods[created.id].name == "made-without-graphql"
    assert api.fetch_pod(created.id).name == "made-without-graphql"


def test_the_balance_query_is_the_only_graphql_podtui_sends(
    sim: SimApiServer, cli_env: SimApiServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With the whole schema served (as before REST v2), anything podtui still asked of GraphQL would work, and show
    here: a session of the API, the CLI and the TUI sends the balance query and nothing else."""
    sim.graphql_mode = "full"
    api = V2Api(sim.api_key, sim.url, timeout_s=5.0, clock=sim.world.clock.now)
    api.fetch_snapshot()
    api.fetch_pod(DEMO_IDS["train"])
    api.stop_pod(DEMO_IDS["train"])
    api.start_pod(DEMO_IDS["train"])
    api.restart_pod(DEMO_IDS["bursty"])
    api.terminate_pod(DEMO_IDS["bursty"])
    setup_key(api, tmp_path / "mine")
    gpu = api.gpu_types().find("RTX 4090")
    api.create_pod(PodSpec(name="graphql-free", gpu_type_id=gpu.id))
    for args in (
        ["pods"],
        ["pods", "--json"],
        ["cost", "--json"],
        ["stop", "eval-a100", "--yes"],
        ["resume", "eval-a100", "--yes"],
        ["gpus"],
        ["keys", "show", "--key", str(tmp_path / "mine")],
    ):
        assert main(args) == 0, (args, capsys.readouterr().err)
    capsys.readouterr()
    assert sim.requests and set(sim.requests) == {BALANCE_QUERY}


async def test_a_tui_session_sends_only_the_balance_query(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer
) -> None:
    sim.graphql_mode = "full"
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        await pilot.press("j", "j", "R", "y")  # restart llama-lora-3090
        await wait_until(pilot, lambda: "llama-lora-3090: restarting" in notes(app))
        await pilot.press("s", "y")
        await wait_until(pilot, lambda: "llama-lora-3090: stopping" in notes(app))
        await wait_until(pilot, lambda: app.screen.check_action("pod", ("resume",)) is True)
        await pilot.press("enter")  # its details
        await pilot.pause()
        await pilot.press("escape", "P")  # the GPUs: RunPod's catalogue
        await wait_until(pilot, lambda: any(r.startswith("GET /v2/catalog/gpus") for r in sim.rest_requests))
        await wait_until(pilot, lambda: not any(w.is_running for w in app.workers))
        await pilot.press("escape")
        for _ in range(3):
            sim.world.clock.advance(5)
            await polled(pilot, app)
    assert sim.requests and set(sim.requests) == {BALANCE_QUERY}
    assert len(sim.requests) >= 5  # asked on every poll while it answers


def test_a_broken_runpod_sdk_loses_the_balance_never_the_pods(
    sim: SimApiServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An SDK that cannot load, or raises something of its own, is the balance's problem alone."""
    from podtui.core.api import sdk

    def broken() -> object:
        raise RuntimeError("the runpod SDK could not be loaded: No module named 'runpod.api.graphql'")

    monkeypatch.setattr(sdk, "load", broken)
    snap = V2Api(sim.api_key, sim.url, timeout_s=5.0).fetch_snapshot()
    assert sorted(p.name for p in snap.pods) == ALL
    assert snap.account.balance is None
    assert snap.account.unknown_why == "the runpod SDK failed (RuntimeError); see the log"


async def test_odd_fields_are_still_said_while_the_balance_is_unknown(sim: SimApiServer) -> None:
    """With GraphQL gone the balance notice is permanent: it must not hide what is wrong with the pods' answer."""
    sim.graphql_mode = "retired"
    del sim.world.pods[DEMO_IDS["starting"]]  # a pod that may be stuck would be said first
    sim.faults.add("partial", only="GET /v2/pods")
    app = build_test_app(V2Api(sim.api_key, sim.url, timeout_s=5.0), sim.world.clock.now, poll_interval_s=600)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.feed.snapshot is not None)
        line = str(app.screen.query_one(StatusLine).render())
        assert "odd field(s) in RunPod's answer" in line and "balance unknown" in line
