"""A worker's unexpected error never shows a secret: the notification and the screen's status line quote the
error's text with every registered secret masked. Forced here in the doctor of the pod whose environment holds a
token, with the token in the error's text."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from textual.widgets import Static

import podtui.ui.screens.doctor
from podtui.core import secret
from podtui.core.pod import Pod
from podtui.sim.demo import demo_pods
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.doctor import DoctorScreen
from tests.helpers.pilot import loaded, wait_until

TOKEN = next(p.env["HF_TOKEN"] for p, _ in demo_pods() if "HF_TOKEN" in p.env)  # in the demo's training pod
POD = "q7x2m9fk4r8t1a"  # llama-lora-3090: HF_TOKEN in its environment


async def test_no_secret_in_the_note_or_on_the_screen(
    make_app: Callable[..., PodtuiApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    def examining(pod: Pod, settings: object) -> object:
        env = dict(pod.env)
        raise RuntimeError(f"the pod answered with its environment: HF_TOKEN={env['HF_TOKEN']}")

    monkeypatch.setattr(podtui.ui.screens.doctor, "doctor_pod", examining)
    app = make_app(ssh_settings=lambda: None)
    async with app.run_test(size=(130, 36)) as pilot:
        await loaded(pilot, app)
        app.clear_notifications()
        pod = app.feed.snapshot.find(POD)  # type: ignore[union-attr]
        app.navigator.open_doctor(pod)

        def summary() -> str:
            found = app.screen.query("#summary").results(Static) if isinstance(app.screen, DoctorScreen) else []
            return next((str(s.render()) for s in found), "")

        await wait_until(pilot, lambda: "unexpected error" in summary())
        await pilot.pause(0.2)
        notes = [n.message for n in app._notifications]
        assert len(notes) == 1 and "the doctor failed: unexpected error: RuntimeError" in notes[0]
        for shown in (notes[0], summary()):
            assert TOKEN not in shown and f"HF_TOKEN={secret.mask(TOKEN)}" in shown
