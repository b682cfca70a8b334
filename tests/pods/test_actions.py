from __future__ import annotations

import pytest

from podtui.core import actions
from podtui.core.pod import Pod, PodStatus


def mk(status: PodStatus, **kw: object) -> Pod:
    return Pod(
        id="p1", name="trainer", status=status, gpu_count=1, gpu_name="RTX 3090", cost_per_hr=0.22, volume_gb=50, **kw
    )  # type: ignore[arg-type]


def test_which_actions_apply() -> None:
    actions.check("stop", mk(PodStatus.RUNNING))
    actions.check("resume", mk(PodStatus.EXITED))
    actions.check("terminate", mk(PodStatus.EXITED))
    with pytest.raises(actions.ActionRefused, match="not running"):
        actions.check("stop", mk(PodStatus.EXITED))
    with pytest.raises(actions.ActionRefused, match="only a stopped pod"):
        actions.check("resume", mk(PodStatus.RUNNING))
    with pytest.raises(actions.ActionRefused):
        actions.check("terminate", mk(PodStatus.TERMINATED))


def test_stop_says_what_keeps_billing() -> None:
    c = actions.confirmation("stop", mk(PodStatus.RUNNING))
    assert "50 GB volume keeps billing" in c.body and "$10.00/month" in c.body and not c.danger


def test_terminate_names_the_loss() -> None:
    c = actions.confirmation("terminate", mk(PodStatus.RUNNING))
    assert c.danger and "trainer" in c.title and "deleted" in c.body and "cannot be undone" in c.body
    c2 = actions.confirmation("terminate", mk(PodStatus.RUNNING, network_volume="models"))
    assert "network volume models survives" in c2.body
