"""Job records written by hand into a simulated pod's /workspace, in the layout docs/jobs.md#layout-on-the-pod
describes, so that a screenshot shows the same jobs at the same times on every run (a job podtui starts gets a
random id and the pod's clock)."""

from __future__ import annotations

import json
from pathlib import Path

from podtui.sim.demo import SCREENSHOT_EPOCH

CHUNK = 262144
T0 = SCREENSHOT_EPOCH - 12 * 3600  # 2026-11-29 21:00 UTC
LOG = (
    "loading model meta-llama/Llama-3.1-8B\n"
    "\x1b[32mtrainable params: 20,971,520\x1b[0m\n"
    "epoch 1/3: 100%|##########| 500/500 [41:02<00:00]\r"
    "epoch 1/3: loss 1.482\n"
    "epoch 2/3: loss 1.207\n"
    "epoch 3/3: loss 1.115\n"
    "saved out/adapter (84 MB)\n"
)


def write_job(
    workspace: Path,
    job_id: str,
    command: str,
    *,
    name: str | None = None,
    started: float,
    end: tuple[int, float] | None = None,
    cancelled: bool = False,
    beat: float | None = None,
    then: str | None = None,
    pulls: tuple[str, ...] = (),
    log: str = "",
) -> None:
    d = workspace / ".podtui" / "jobs" / job_id
    (d / "log").mkdir(parents=True)
    spec = {
        "podtui_job": 1,
        "id": job_id,
        "command": command,
        "name": name,
        "workdir": None,
        "then": then,
        "pulls": [{"remote": p, "local": None} for p in pulls],
        "podtui_started": started - 1,
        "log_max_bytes": CHUNK * 32,
    }
    (d / "spec.json").write_text(json.dumps(spec))
    (d / "settings").write_text(f"{CHUNK} 4 28\n")
    (d / "created").write_text(f"{int(started - 1)}\n")
    (d / "started").write_text(f"{int(started)}\n")
    if end is not None:
        (d / "end").write_text(f"{end[0]} {int(end[1])}\n")
    if cancelled:
        (d / "cancel").write_text(f"{int(started + 60)} 1000\n")
    if beat is not None:
        (d / "beat").write_text(f"{int(beat)}\n")
    (d / "log" / "c.00000000").write_bytes(log.encode())


def four_jobs(workspace: Path) -> None:
    """A finished fine-tune, a failed evaluation, a cancelled run and one lost with its pod."""
    write_job(
        workspace,
        "20261129-210000-tr41",
        "python train.py --config lora.yaml",
        name="finetune",
        started=T0,
        end=(0, T0 + 2 * 3600 + 13 * 60),
        then="stop",
        pulls=("out/adapter",),
        log=LOG,
    )
    write_job(
        workspace,
        "20261129-233500-ev7k",
        "python eval.py --tasks mmlu",
        name="eval",
        started=T0 + 2 * 3600 + 35 * 60,
        end=(3, T0 + 2 * 3600 + 41 * 60),
        log="Traceback (most recent call last):\nKeyError: 'mmlu'\n",
    )
    write_job(
        workspace,
        "20261130-010000-cx0q",
        "python sweep.py --trials 40",
        started=T0 + 4 * 3600,
        end=(143, T0 + 4 * 3600 + 20 * 60),
        cancelled=True,
    )
    write_job(
        workspace,
        "20261130-030000-lo5t",
        "bash run_all.sh",
        name="nightly",
        started=T0 + 6 * 3600,
        beat=T0 + 7 * 3600 + 30 * 60,
    )
