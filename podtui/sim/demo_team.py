"""The demo's second account, "team": a shared account with its own key, balance and a few pods, so the demo shows
profiles, the switcher and the accounts view (docs/profiles.md#the-demo). Its API only: its pods have no SSH."""

from __future__ import annotations

from podtui.sim.billing_history import PastPod, give_past
from podtui.sim.clock import SimClock
from podtui.sim.demo import add_pods
from podtui.sim.sim_pod import SimPod
from podtui.sim.world import World

TEAM = "team"  # its profile in the demo (podtui.cli.session.DEMO_PROFILES)
NOTEBOOK_RAN_S = 33 * 3600 + 2 * 60 + 11  # how long team-notebook-4090 ran on its last start
# A smaller month than the demo account's, of a team's kind: a few fine-tunes, an eval or two, shared notebooks
# (its past comes from its own seed, docs/spend.md#the-simulators-billing).
TEAM_DAYS = 21
TEAM_PAST_PODS = (
    PastPod("team-llama3-70b-sft", "A100 80GB PCIe", 2, 3.28, "long", 60, 200),
    PastPod("team-rerank-ft-l40s", "L40S", 1, 0.86, "long", 40, 100),
    PastPod("team-notebook-3090", "RTX 3090", 1, 0.22, "sessions"),
    PastPod("team-eval-h100", "H100 80GB HBM3", 1, 2.99, "short", 40, 100),
    PastPod("team-demo-4090", "RTX 4090", 1, 0.40, "overnight"),
)


def team_pods() -> list[tuple[SimPod, float]]:
    """(pod, how long ago it started, in seconds)."""
    return [
        (
            SimPod(
                id="t4m8r2x6c0v9ka",
                name="team-finetune-a100",
                gpu_type="A100 80GB PCIe",
                gpu_count=2,
                cost_per_hr=3.28,
                pattern="training",
                host_suffix="3e8d21f0",
                location="US-TX-3",
                public_ip=None,
            ),
            9 * 3600 + 12 * 60,
        ),
        (
            SimPod(
                id="t7n1p5w3z8q2lb",
                name="team-inference-l40s",
                gpu_type="L40S",
                gpu_count=1,
                cost_per_hr=0.86,
                pattern="bursty",
                host_suffix="9a7c5e31",
                location="EU-RO-1",
                public_ip=None,
            ),
            26 * 60,
        ),
        (
            SimPod(
                id="t2k9d4s7f1h6mc",
                name="team-notebook-4090",
                gpu_type="RTX 4090",
                gpu_count=1,
                cost_per_hr=0.40,
                pattern="idle",
                status="EXITED",
                host_suffix="c2b4d6e8",
                location="EU-RO-1",
                public_ip=None,
            ),
            0,
        ),
    ]


def team_world(clock: SimClock | None = None, boot_s: float = 20.0) -> World:
    """The team account, on the demo's clock when given one."""
    world = World(clock=clock, balance=412.50, spend_limit=200.0, boot_s=boot_s, seed=11)
    world.user_id = "user_team"
    # the stopped pod stopped the day after its last start (on the demo's screenshot clock: Fri Nov 27 at 18:02:11)
    add_pods(world, team_pods(), made_days_ago=5, started_days_ago=4, ran_s=NOTEBOOK_RAN_S)
    give_past(world, TEAM_DAYS, TEAM_PAST_PODS)
    return world
