"""The doctor against simulated pods over real SSH: a healthy image, the python/python3 trap, and
the broken image (transformers 5 on torch 2.1, a full volume); its fix, run on the pod, makes the check pass."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from podtui.cli.main import main
from podtui.console.widget import TerminalView
from podtui.core.api import V2Api
from podtui.core.doctor import Check, DoctorReport, PodNotReady, doctor_pod, run_doctor
from podtui.core.ssh.connect import SshSettings
from podtui.core.ssh.remote import open_remote
from podtui.sim.simulator import Simulator
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.console import ConsoleScreen
from podtui.ui.screens.doctor import DoctorScreen
from tests.helpers.pilot import loaded, wait_until


def by_id(report: DoctorReport) -> dict[str, Check]:
    return {c.id: c for c in report.checks}


def test_a_healthy_image_passes_every_hard_check(sim_api: V2Api, ssh_settings: SshSettings) -> None:
    pod = sim_api.fetch_snapshot().find("eval-a100")  # runpod/pytorch:2.4.0-py3.11-cuda12.4.1
    checks = by_id(doctor_pod(pod, ssh_settings))
    assert {k: c.status for k, c in checks.items() if k != "hf"} == {
        "python": "pass",
        "torch": "pass",
        "cuda": "pass",
        "gpu": "pass",
        "transformers": "pass",
        "disk": "pass",
        "runpodctl": "pass",
    }
    assert "torch 2.4.0+cu124 (built for CUDA 12.4)" in checks["torch"].finding
    assert "NVIDIA A100 80GB PCIe, 80 GB" in checks["gpu"].finding and "CUDA 12.4" in checks["gpu"].finding
    assert "v2.7.2" in checks["runpodctl"].finding


def test_the_python_trap_is_a_warning_with_the_way_out(sim_api: V2Api, ssh_settings: SshSettings) -> None:
    pod = sim_api.fetch_snapshot().find("llama-lora-3090")  # runpod/pytorch:2.1.0-py3.10-cuda11.8.0
    check = by_id(doctor_pod(pod, ssh_settings))["python"]
    assert check.status == "warn"
    assert "`python3` 3.10.12 has torch" in check.finding and "`python` 3.10.12 has no torch" in check.finding
    assert "python3" in check.remedy


def test_the_broken_image_fails_and_its_fix_works_on_the_pod(sim_api: V2Api, ssh_settings: SshSettings) -> None:
    pod = sim_api.fetch_snapshot().find("data-prep-a5000")
    with open_remote(pod, ssh_settings, "gateway") as shell:  # RunPod's PTY-only gateway is enough
        before = by_id(run_doctor(shell))
        assert before["transformers"].status == "fail"
        assert "transformers 5.9.0 needs torch 2.4" in before["transformers"].finding
        assert before["transformers"].command == (
            "python3 -m pip install --upgrade torch==2.5.1 torchvision==0.20.1 torchaudio==2.5.1 "
            "--index-url https://download.pytorch.org/whl/cu118"
        )
        assert before["disk"].status == "fail" and "95% used" in before["disk"].finding
        result = shell.run(before["transformers"].command, 60)
        assert result.exit_code == 0 and "Successfully installed torch-2.5.1+cu118" in result.output
        assert "torchaudio-2.5.1+cu118" in result.output and "conflict" not in result.output
        after = by_id(run_doctor(shell))
    assert after["transformers"].status == "pass" and "torch 2.5.1+cu118" in after["transformers"].finding
    assert after["cuda"].status == "pass"


def test_a_torch_newer_than_the_driver_is_caught(sim_api: V2Api, ssh_settings: SshSettings) -> None:
    pod = sim_api.fetch_snapshot().find("eval-a100")
    with open_remote(pod, ssh_settings, "gateway") as shell:
        # PyPI's default torch 2.9.1 wheel is built for CUDA 12.8; the simulated driver runs 12.4
        assert shell.run("python3 -m pip install -U torch -q", 60).exit_code == 0
        cuda = by_id(run_doctor(shell))["cuda"]
    assert cuda.status == "fail" and "built for CUDA 12.8" in cuda.finding and "12.4" in cuda.finding
    assert cuda.command.endswith("--index-url https://download.pytorch.org/whl/cu124")


def test_a_stopped_pod_is_refused_with_what_to_do(sim_api: V2Api, ssh_settings: SshSettings) -> None:
    pod = sim_api.fetch_snapshot().find("notebook-4090")
    with pytest.raises(PodNotReady, match="is stopped: resume it first"):
        doctor_pod(pod, ssh_settings)


def test_cli_doctor_text_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", "--demo", "data-prep-a5000"]) == 1  # a failing check: exit status 1
    out = capsys.readouterr().out
    assert "FAIL  transformers" in out and "python3 -m pip install --upgrade torch==2.5.1" in out
    assert main(["doctor", "--demo", "eval-a100", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["pod"]["name"] == "eval-a100" and data["worst"] in ("pass", "warn")
    assert [c["id"] for c in data["checks"]] == [
        "python",
        "torch",
        "cuda",
        "gpu",
        "transformers",
        "disk",
        "runpodctl",
        "hf",
    ]
    assert main(["doctor", "--demo", "notebook-4090"]) == 1
    assert "resume it first" in capsys.readouterr().err


@pytest.fixture
def doctor_app(make_full_app: Callable[..., PodtuiApp]) -> Callable[[], PodtuiApp]:
    return make_full_app


async def test_the_panel_shows_the_checks_and_types_a_fix_without_running_it(
    doctor_app: Callable[[], PodtuiApp], full_sim: Simulator
) -> None:
    app = doctor_app()
    async with app.run_test(size=(130, 36)) as pilot:
        await loaded(pilot, app)
        pod = app.feed.snapshot.find("data-prep-a5000")  # type: ignore[union-attr]
        app.navigator.open_doctor(pod)
        await wait_until(pilot, lambda: isinstance(app.screen, DoctorScreen) and app.screen.report is not None, 20)
        screen = app.screen
        assert isinstance(screen, DoctorScreen)
        assert screen.highlighted_check() is not None
        assert screen.highlighted_check().id == "transformers"  # type: ignore[union-attr]  # first failure
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ConsoleScreen), 10)
        view = app.screen.current  # type: ignore[attr-defined]
        assert isinstance(view, TerminalView)
        await wait_until(pilot, lambda: "torch==2.5.1" in "\n".join(view.link.emulator.screen_lines()), 15)
        await pilot.pause(0.5)
        text = "\n".join(view.link.emulator.screen_lines())
        assert "Successfully installed" not in text  # typed, never run: the person presses enter
    site = Path(full_sim.root / "pods" / pod.id / "image" / "python3-site")
    assert (site / "torch-2.1.0+cu118.dist-info").exists()


async def test_the_panel_says_why_it_cannot_examine_a_stopped_pod(doctor_app: Callable[[], PodtuiApp]) -> None:
    app = doctor_app()
    async with app.run_test(size=(120, 30)) as pilot:
        await loaded(pilot, app)
        app.navigator.open_doctor(app.feed.snapshot.find("notebook-4090"))  # type: ignore[union-attr]
        await wait_until(pilot, lambda: isinstance(app.screen, DoctorScreen) and bool(app.screen.query("#summary")), 5)
        await wait_until(pilot, lambda: "resume it first" in str(app.screen.query_one("#summary").render()), 10)


def test_doctor_snapshot(snap_compare: Any, doctor_app: Callable[[], PodtuiApp]) -> None:
    app = doctor_app()

    async def ready(pilot: Pilot[None]) -> None:
        await loaded(pilot, app)
        app.navigator.open_doctor(app.feed.snapshot.find("data-prep-a5000"))  # type: ignore[union-attr]
        await wait_until(pilot, lambda: isinstance(app.screen, DoctorScreen) and app.screen.report is not None, 20)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(130, 30), run_before=ready)
