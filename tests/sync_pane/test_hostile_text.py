"""Words from outside in the Sync tab, its form and the alert a sync's end makes: pod names, the pod's folder and
paths, the reasons files failed, the notes, a local folder pulled from a pod. None reaches the terminal as something
it acts on (docs/architecture.md#text-from-outside)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual.widgets import Static

from podtui.sim.server import SimApiServer
from podtui.transfer.sync.plan import Copy, Plan
from podtui.transfer.sync.state import SyncResult, SyncSpec
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.sync_form import SyncFormScreen
from tests.helpers.hostile import HOSTILE, unsafe_chars
from tests.helpers.pilot import wait_until
from tests.helpers.sim import DEMO_IDS
from tests.sync_pane.conftest import open_form, shown_result, sync_panel

POD = DEMO_IDS["idle"]


def hostile_result(home: Path, error: str | None = None) -> SyncResult:
    h = HOSTILE
    spec = SyncSpec(POD, home / f"proj-{h[0]}", f"out-{h[1]}", delete=True, excludes=(f"x{h[2]}",))
    plan = Plan(
        False,
        True,
        copies=[Copy(f"new-{h[i]}", 10, 0, False, "new") for i in range(3, 8)],
        deletes=[f"gone-{h[8]}"],
        skipped=[(f"link-{h[i]}", f"why-{h[i + 1]}") for i in range(9, 13)],
        unchanged=3,
    )
    return SyncResult(
        spec,
        pod_name=f"pod-{h[13]}",
        remote_root=f"/workspace/out-{h[1]}",
        route="console",
        plan=plan,
        verified=[(f"new-{h[3]}", "a" * 64)],
        deleted=[f"gone-{h[8]}"],
        failed=[(f"new-{h[i]}", f"failed-{h[i + 10]}") for i in range(4, 8)],
        notes=[f"note-{h[14]}", f"note-{h[15]}"],
        error=error,
        started=1.0,
        ended=2.0,
    )


async def test_every_word_from_outside_is_shown_not_acted_on(
    sim: SimApiServer, make_app: Callable[..., PodtuiApp], isolated_home: Path
) -> None:
    for i, pod in enumerate(sim.world.pods.values()):
        pod.name = f"pod{i}-{HOSTILE[i % len(HOSTILE)]}"
    app = make_app()
    seen: dict[str, list[str]] = {}

    def scan(name: str) -> None:
        text = "".join(seg.text for strip in app.screen._compositor.render_strips() for seg in strip)
        seen[name] = unsafe_chars(text)

    async with app.run_test(size=(130, 40), notifications=True) as pilot:
        await sync_panel(pilot, app, POD)
        scan("before any sync")
        await shown_result(pilot, app, hostile_result(isolated_home), toast=True)
        scan("failures, and their alert")
        await shown_result(pilot, app, hostile_result(isolated_home, error=f"error-{HOSTILE[16]}"), toast=True)
        scan("an error, and its alert")
        form = await open_form(pilot, app)  # filled in with the last sync: its folders are not clean
        assert isinstance(form, SyncFormScreen)
        scan("the form")
        typed = form.typed()
        assert (typed.local, typed.remote, typed.excludes) == (".", "", "")  # a box draws its words raw
        await pilot.press("ctrl+s")  # the pod's folder left empty: refused in words
        await wait_until(pilot, lambda: "fix the fields" in str(form.query_one("#error", Static).render()))
        scan("the form, refused")
    assert {name: "".join(sorted(set(bad))) for name, bad in seen.items() if bad} == {}
    assert len(seen) == 5
