"""One refresh of 1,000 pods through REST v2 against the GraphQL path podtui had before, in the same run.

Goal (README.md#benchmarks): parse plus table update, fetch excluded, under 100 ms on the event loop. The
baseline is the GraphQL path as it was in commit BASELINE: its parser, loaded from git, reading the simulator's
GraphQL answer for the same world. The table update is the same widget for both (it is fed v2 pods), so the
difference is the parse; both totals are printed with their ratio.

Run: python bench/pod_refresh.py [--rounds 7]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from types import ModuleType

from textual.geometry import Region

from podtui.core.api import V2Api
from podtui.core.pod import parse_pods
from podtui.core.services import Services
from podtui.sim.clock import SimClock
from podtui.sim.demo import SCREENSHOT_EPOCH, large_world
from podtui.sim.server import SimApiServer
from podtui.ui.build import build_app
from podtui.ui.pod_view import row_cells
from podtui.ui.screens.pod_list import PodListScreen
from podtui.ui.widgets.pod_table import PodTable

PODS = 1000
BASELINE = "f8fc224"  # the last commit whose pods came from GraphQL
ROOT = Path(__file__).resolve().parent.parent
# the pods query the GraphQL path sent (its fields; the balance part is the same on both paths and left out)
GRAPHQL_PODS = (
    "query podtuiPods { myself { id pods { id name desiredStatus lastStatusChange imageName gpuCount costPerHr "
    "vcpuCount memoryInGb containerDiskInGb volumeInGb volumeMountPath ports env machineId uptimeSeconds "
    "networkVolume { id name } machine { gpuDisplayName location podHostId } runtime { uptimeInSeconds "
    "ports { ip isIpPublic privatePort publicPort type } gpus { id gpuUtilPercent memoryUtilPercent } "
    "container { cpuPercent memoryPercent } } } } }"
)


def baseline_parser() -> ModuleType:
    """podtui.core.pod as it was at BASELINE, loaded under its own name."""
    text = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{BASELINE}:podtui/core/pod.py"], capture_output=True, text=True, check=True
    ).stdout
    path = Path(tempfile.mkdtemp(prefix="podtui-bench-")) / "graphql_pod.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("graphql_pod_baseline", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def raw(sim: SimApiServer, path: str, body: object = None) -> bytes:
    request = urllib.request.Request(
        sim.url + path,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {sim.api_key}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        data: bytes = answer.read()
        return data


async def measure(rounds: int) -> dict[str, list[float]]:
    old = baseline_parser()
    clock = SimClock(start=SCREENSHOT_EPOCH, frozen=True)
    sim = SimApiServer(large_world(PODS, clock))
    sim.graphql_mode = "full"  # the baseline needs GraphQL's pod list
    sim.start()
    api = V2Api(sim.api_key, sim.url, clock=clock.now)
    app = build_app(Services(api, clock=clock.now), poll_interval_s=3600)
    out: dict[str, list[float]] = {k: [] for k in ("v2 parse", "graphql parse", "table update")}
    async with app.run_test(size=(160, 50)) as pilot:
        while app.feed.snapshot is None:
            await pilot.pause(0.05)
        screen = app.screen
        assert isinstance(screen, PodListScreen)
        table = screen.query_one(PodTable)
        region = Region(0, 0, table.size.width, table.size.height)
        for _ in range(rounds):
            clock.advance(5)  # every uptime, cost and utilisation cell changes
            v2_body = raw(sim, "/v2/pods")
            gql_body = raw(sim, "/graphql", {"query": GRAPHQL_PODS})
            t = time.perf_counter()
            pods, _ = parse_pods(json.loads(v2_body))
            out["v2 parse"].append(time.perf_counter() - t)
            t = time.perf_counter()
            old.parse_snapshot(json.loads(gql_body), fetched_at=clock.now())
            out["graphql parse"].append(time.perf_counter() - t)
            snap = app.feed.snapshot
            assert snap is not None
            app.rows = {p.id: row_cells(p) for p in pods}
            app.feed.succeeded(type(snap)(snap.account, pods, clock.now(), ()))
            t = time.perf_counter()
            screen.show_feed(app.pod_data())
            table.render_lines(region)
            out["table update"].append(time.perf_counter() - t)
            await pilot.pause()
    sim.stop()
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    results = asyncio.run(measure(args.rounds))
    med = {k: statistics.median(v) * 1000 for k, v in results.items()}
    v2_total = med["v2 parse"] + med["table update"]
    gql_total = med["graphql parse"] + med["table update"]
    print(f"{PODS} pods, {args.rounds} rounds, medians (the parse runs in the poll worker, the table: event loop)")
    for k, v in med.items():
        print(f"  {k:<16} {v:7.1f} ms")
    print(f"  v2 refresh       {v2_total:7.1f} ms  (goal < 100 ms: {v2_total / 100:.2f}x the goal)")
    print(f"  GraphQL refresh  {gql_total:7.1f} ms  (baseline, commit {BASELINE})")
    print(f"  v2 / GraphQL     {v2_total / gql_total:.2f}x")


if __name__ == "__main__":
    main()
