"""Soak: the app against the simulator for a while (10 minutes by default) with 20 pods, 5 consoles streaming
output, a queue of 50 transfers, and faults switched on at random; then a report of the goals below.

The transfers are fed in over the first 80% of the run (ten at once, the rest one by one), so the faults of
every minute meet transfers in flight: API errors, every runpodctl failure the relay acts out, and the gateway
dropping every SSH connection (consoles reconnect, console and SFTP transfers are cut mid-way).

    python bench/soak.py [--minutes 10] [--seed 1]

Goals: 0 transfers lost, 0 wrongly marked verified, 0 crashes. Also printed: peak RSS (this process holds the
app and the whole simulator), the slowest keypress-to-repaint seen (headless: from the key sent until the app
has handled it and refreshed the screen), and CPU use when idle afterwards.

"Verified" is checked independently here: after the run, every verified transfer's file is compared by sha256
with its source on the other side. "Lost" is a transfer that is neither finished nor failed-with-a-reason, or
that is gone from the queue.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import logging
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from textual.pilot import Pilot  # noqa: E402

from podtui.core.api import V2Api  # noqa: E402
from podtui.core.services import Services  # noqa: E402
from podtui.core.ssh.connect import SshSettings  # noqa: E402
from podtui.core.ssh.keys import generate_dedicated_key  # noqa: E402
from podtui.sim.demo import large_world  # noqa: E402
from podtui.sim.relay import FAULT_KINDS, install_runpodctl  # noqa: E402
from podtui.sim.simulator import Simulator  # noqa: E402
from podtui.transfer.job import RouteChoice, TransferJob  # noqa: E402
from podtui.ui.app import PodtuiApp  # noqa: E402
from podtui.ui.build import build_app  # noqa: E402

PODS, CONSOLES, TRANSFERS = 20, 5, 50
STREAM = "while true; do date +%T.%N; seq 1 300; sleep 0.3; done"  # what a training log looks like to a console
API_FAULTS = [
    ("status", 502),
    ("status", 500),
    ("latency", 1.5),
    ("graphql_error", "Something went wrong"),
    ("malformed", None),
    ("hang", 20.0),
]
RELAY_FAULTS = list(FAULT_KINDS)  # every relay fault the simulator has
FIRST_BATCH, FEED_UNTIL = 10, 0.8  # transfers queued at the start; the rest by this fraction of the run
DROP_CHANCE = 0.01  # per tick (about a second): the gateway drops every SSH connection (--drop-chance)


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def build(root: Path, seed: int) -> tuple[Simulator, SshSettings]:
    world = large_world(PODS, seed=seed)
    world.set_balance(1e6)  # twenty pods for ten minutes must not run the account dry
    for i, pod in enumerate(world.pods.values()):
        if pod.status != "RUNNING" and i % 2 == 0:
            pod.status, pod.started_at = "RUNNING", world.clock.now() - 600
        if i % 4 == 0:
            pod.direct_ssh_port = 1  # wanted: the simulator gives it a real sshd, so SFTP has pods to use
    key = generate_dedicated_key(root / "key", comment="soak")
    world.pub_key = key.public_line + " soak"
    sim = Simulator(world, root=root / "sim").start()
    settings = SshSettings(
        known_hosts=root / "known_hosts",
        gateway=sim.gateway.address,
        key_path=key.path,
        use_agent=False,
        search_home=False,
    )
    return sim, settings


def plan_transfers(sim: Simulator, local: Path, rng: random.Random) -> list[tuple[TransferJob, Path, Path]]:
    """(job, the file on this machine, the file on the pod) for each transfer; sources are made here."""
    running = [p for p in sim.world.pods.values() if p.status == "RUNNING"]
    plans = []
    for i in range(TRANSFERS):
        pod = rng.choice(running)
        ws = sim.gateway.machine(pod).workspace
        size = rng.choice([10_000, 200_000, 1_000_000, 3_000_000])
        data = rng.randbytes(size)
        via: RouteChoice = rng.choice(["auto", "auto", "runpodctl", "console"])
        name = f"soak-{i:02d}.bin"
        if rng.random() < 0.5:
            (ws / name).write_bytes(data)
            job = TransferJob(pod.id, "pull", name, str(local / "down"), pod_name=pod.name, route_choice=via)
            plans.append((job, local / "down" / name, ws / name))
        else:
            (local / "up" / name).write_bytes(data)
            job = TransferJob(
                pod.id, "push", str(local / "up" / name), "incoming/", pod_name=pod.name, route_choice=via
            )
            plans.append((job, local / "up" / name, ws / "incoming" / name))
    return plans


async def soak(minutes: float, seed: int, drop_chance: float = DROP_CHANCE) -> dict[str, object]:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="podtui-soak-") as tmp:
        root = Path(tmp)
        for d in ("down", "up", "work"):
            (root / d).mkdir()
        sim, settings = build(root, seed)
        runpodctl = str(install_runpodctl(root / "bin", sim.relay.address))
        api = V2Api(sim.api.api_key, sim.api.url, timeout_s=5.0)
        services = Services(
            api,
            demo=True,
            ssh_settings=lambda: settings,
            runpodctl=lambda: runpodctl,
            transfer_history=root / "transfers.json",
            transfer_work_dir=root / "work",
        )
        app = build_app(services, poll_interval_s=2.0)
        report: dict[str, object] = {}
        crashes = 0
        latencies: list[float] = []
        try:
            async with app.run_test(size=(140, 40)) as pilot:
                while app.feed.snapshot is None:
                    await pilot.pause(0.1)
                latencies += await open_consoles(pilot, app, sim)
                plans = plan_transfers(sim, root, rng)
                queue = app.transfers.queue()
                start = time.monotonic()
                end = start + minutes * 60
                due = [start] * FIRST_BATCH + sorted(
                    start + rng.uniform(0, FEED_UNTIL * minutes * 60) for _ in plans[FIRST_BATCH:]
                )
                fed = 0
                streamed = {id(link): link.gaps for link in app.consoles.links}
                faults_on = drops = 0
                while time.monotonic() < end:
                    while fed < len(plans) and due[fed] <= time.monotonic():
                        queue.add(plans[fed][0])
                        fed += 1
                        report["last transfer queued at"] = f"{(time.monotonic() - start) / 60:.1f} min"
                    if rng.random() < drop_chance:
                        sim.gateway.drop_connections()
                        drops += 1
                    restream(app, streamed)
                    if rng.random() < 0.15:
                        kind, value = rng.choice(API_FAULTS)
                        sim.api.faults.add(kind, value, times=rng.randint(1, 3))  # type: ignore[arg-type]
                        faults_on += 1
                    if rng.random() < 0.15:
                        sim.relay.fail_next(rng.choice(RELAY_FAULTS), rate_bytes_per_s=2_000_000)
                        faults_on += 1
                    latencies.append(await key_to_repaint(app, rng.random() < 0.5))
                    failed = [j for j in app.transfers.queue().jobs() if j.state == "failed" and j.retryable]
                    for j in failed[:2]:  # a person retries what failed, now and then
                        if rng.random() < 0.3:
                            queue.retry(j.id)
                    await pilot.pause(rng.uniform(0.5, 1.5))
                for job, _, _ in plans[fed:]:  # a run too short to feed them all: queue the rest now
                    queue.add(job)
                sim.api.faults.clear()
                sim.relay.clear_faults()
                queue.wait(None, 180)  # let the last attempts finish without new faults
                report.update(classify(app, plans))
                report["faults switched on"] = f"{faults_on} (API and relay), {drops} gateway drops"
                report["idle CPU afterwards"] = await idle_cpu(pilot, app)
                if app._exception is not None:  # what run_test would raise
                    crashes += 1
                app.close_connections()
        except Exception as e:  # the app died under load
            crashes += 1
            report["crash"] = f"{type(e).__name__}: {e}"
        finally:
            sim.stop()
        report["crashes"] = crashes
        report["peak RSS"] = f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB"
        report["slowest keypress to repaint"] = f"{max(latencies) * 1000:.0f} ms" if latencies else "?"
        report["median keypress to repaint"] = (
            f"{sorted(latencies)[len(latencies) // 2] * 1000:.0f} ms" if latencies else "?"
        )
        return report


async def key_to_repaint(app: PodtuiApp, down: bool) -> float:
    """From a key arriving to the screen refreshed after the app handled it (the list's cursor moved)."""
    from podtui.ui.widgets.pod_table import PodTable

    table = app.screen.query_one(PodTable)
    before, last = table.cursor_row, len(table._order) - 1
    down = (down or before == 0) and before != last  # a key that moves the cursor
    loop = asyncio.get_running_loop()
    t0 = time.perf_counter()
    app.simulate_key("j" if down else "k")
    while table.cursor_row == before and time.perf_counter() - t0 < 10:
        await asyncio.sleep(0.002)
    repainted: asyncio.Future[float] = loop.create_future()

    def done() -> None:
        if not repainted.done():
            repainted.set_result(time.perf_counter())

    app.call_after_refresh(done)
    return await repainted - t0


async def open_consoles(pilot: Pilot[None], app: PodtuiApp, sim: Simulator) -> list[float]:
    from podtui.console.widget import TerminalView

    running = [p for p in app.feed.snapshot.pods if p.state == "RUNNING"][:CONSOLES]  # type: ignore[union-attr]
    for pod in running:
        view = await app.navigator.open_console(pod)
        assert isinstance(view, TerminalView)
        deadline = time.monotonic() + 20
        while view.link.state != "connected" and time.monotonic() < deadline:
            await pilot.pause(0.1)
        view.link.send((STREAM + "\r").encode())
    await pilot.press("ctrl+right_square_bracket")
    await pilot.press("escape")  # back to the pod list; the consoles keep streaming
    return []


def restream(app: PodtuiApp, streamed: dict[int, int]) -> None:
    """A console that reconnected has a fresh shell: start its stream again, as a person re-attaches a log."""
    for link in app.consoles.links:
        if link.state == "connected" and link.gaps > streamed.get(id(link), 0) and link.send((STREAM + "\r").encode()):
            streamed[id(link)] = link.gaps


def classify(app: PodtuiApp, plans: list[tuple[TransferJob, Path, Path]]) -> dict[str, object]:
    jobs = {j.id: j for j in app.transfers.queue().jobs()}
    verified = failed = lost = wrong = 0
    reasons: dict[str, int] = {}
    for job, local, remote in plans:
        now = jobs.get(job.id)
        if now is None:
            lost += 1
        elif now.state == "verified":
            verified += 1
            if not (local.exists() and remote.exists() and sha256(local) == sha256(remote)):
                wrong += 1
        elif now.state == "failed" and now.error:
            failed += 1
            reasons[now.error_kind or "other"] = reasons.get(now.error_kind or "other", 0) + 1
        else:
            lost += 1
    return {
        "transfers": len(plans),
        "verified": verified,
        "failed with a reason": failed,
        "failure kinds": reasons,
        "lost": lost,
        "wrongly verified": wrong,
    }


async def idle_cpu(pilot: Pilot[None], app: PodtuiApp, seconds: float = 20.0) -> str:
    rounds, loud = await quiet_consoles(pilot, app)
    before, t0 = resource.getrusage(resource.RUSAGE_SELF), time.monotonic()
    await pilot.pause(seconds)
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return f"{100 * cpu / (time.monotonic() - t0):.1f}% of a core (app and simulator together)" + (
        f"; consoles quiet after {rounds} ctrl+c" if not loud else f"; still printing: {loud}"
    )


async def quiet_consoles(pilot: Pilot[None], app: PodtuiApp, timeout_s: float = 30.0) -> tuple[int, str]:
    """Stop the streams: ctrl+c until no console prints for 2 s (a stream typed again after a reconnect can sit
    queued behind the first one). Idle means nothing to show."""
    end, rounds = time.monotonic() + timeout_s, 0
    while time.monotonic() < end:
        rounds += 1
        for link in app.consoles.links:
            link.send(b"\x03")
        await pilot.pause(1.0)
        fed = [link.emulator.bytes_fed for link in app.consoles.links]
        await pilot.pause(2.0)
        if fed == [link.emulator.bytes_fed for link in app.consoles.links]:
            return rounds, ""
    loud = [link for link, was in zip(app.consoles.links, fed, strict=True) if link.emulator.bytes_fed != was]
    return rounds, "; ".join(
        f"{link.title}: {[x for x in link.emulator.screen_lines() if x.strip()][-3:]}" for link in loud
    )


def main() -> None:
    logging.basicConfig(filename=str(Path(tempfile.gettempdir()) / "podtui-soak.log"), level=logging.WARNING)
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--minutes", type=float, default=10.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--drop-chance", type=float, default=DROP_CHANCE)
    args = p.parse_args()
    report = asyncio.run(soak(args.minutes, args.seed, args.drop_chance))
    width = max(len(k) for k in report)
    print(
        f"soak: {args.minutes:g} min, {PODS} pods, {CONSOLES} consoles streaming, {TRANSFERS} transfers, "
        f"seed {args.seed}"
    )
    for key, value in report.items():
        print(f"  {key:<{width}}  {value}")
    ok = report.get("lost") == 0 and report.get("wrongly verified") == 0 and report.get("crashes") == 0
    print(f"goals (0 lost, 0 wrongly verified, 0 crashes): {'met' if ok else 'NOT met'}")


if __name__ == "__main__":
    main()
