from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from podtui.core import actions
from podtui.core.pod import Pod, PodStatus

# what RunPod offers in each status (its `actions`, docs/runpod-facts.md#rest-v2)
OFFERS = {
    PodStatus.PROVISIONING: frozenset({"stop", "terminate"}),
    PodStatus.RUNNING: frozenset({"stop", "restart", "terminate"}),
    PodStatus.EXITED: frozenset({"start", "terminate"}),
    PodStatus.ERROR: frozenset({"start", "terminate"}),
    PodStatus.TERMINATED: frozenset(),
}


def mk(status: PodStatus, **kw: Any) -> Pod:
    pod = Pod(
        id="p1",
        name="trainer",
        status=status,
        actions=OFFERS.get(status, frozenset()),
        gpu_count=1,
        gpu_name="RTX 3090",
        cost_per_hr=0.22,
        volume_gb=50,
    )
    return replace(pod, **kw)


def test_which_actions_apply() -> None:
    actions.check("stop", mk(PodStatus.RUNNING))
    actions.check("restart", mk(PodStatus.RUNNING))
    actions.check("resume", mk(PodStatus.EXITED))
    actions.check("resume", mk(PodStatus.ERROR))
    actions.check("terminate", mk(PodStatus.EXITED))
    with pytest.raises(actions.ActionRefused, match="EXITED; nothing to stop"):
        actions.check("stop", mk(PodStatus.EXITED))
    with pytest.raises(actions.ActionRefused, match="only a stopped pod"):
        actions.check("resume", mk(PodStatus.RUNNING))
    with pytest.raises(actions.ActionRefused, match="only a running pod"):
        actions.check("restart", mk(PodStatus.EXITED))
    with pytest.raises(actions.ActionRefused, match="does not offer terminate"):
        actions.check("terminate", mk(PodStatus.TERMINATED))


def test_the_pods_actions_decide_not_its_status() -> None:
    # RunPod's list is what counts: a RUNNING pod it will not stop now is refused, whatever its status says
    with pytest.raises(actions.ActionRefused, match="RUNNING; nothing to stop"):
        actions.check("stop", mk(PodStatus.RUNNING, actions=frozenset({"terminate"})))
    with pytest.raises(actions.ActionRefused, match=r"\? HIBERNATING; only a stopped pod"):
        actions.check("resume", mk(PodStatus.UNKNOWN, status_raw="HIBERNATING"))
    actions.check("resume", mk(PodStatus.UNKNOWN, status_raw="HIBERNATING", actions=frozenset({"start"})))


def test_a_locked_pod_is_neither_stopped_nor_restarted() -> None:
    locked = mk(PodStatus.RUNNING, actions=frozenset({"terminate"}), locked=True)
    for verb in ("stop", "restart"):
        with pytest.raises(actions.ActionRefused, match="trainer is locked"):
            actions.check(verb, locked)
        assert actions.offered(verb, locked)  # its key stays live, to say why
    actions.check("terminate", locked)
    assert not actions.offered("resume", locked)


def test_offered_follows_the_pods_actions() -> None:
    assert [v for v in actions.VERBS if actions.offered(v, mk(PodStatus.RUNNING))] == ["stop", "restart", "terminate"]
    assert [v for v in actions.VERBS if actions.offered(v, mk(PodStatus.EXITED))] == ["resume", "terminate"]
    assert not [v for v in actions.VERBS if actions.offered(v, mk(PodStatus.TERMINATED))]
    assert not actions.offered("console", mk(PodStatus.RUNNING))


def test_stop_says_what_keeps_billing() -> None:
    c = actions.confirmation("stop", mk(PodStatus.RUNNING))
    assert "50 GB volume keeps billing" in c.body and "$10.00/month" in c.body and not c.danger


def test_terminate_names_the_loss() -> None:
    c = actions.confirmation("terminate", mk(PodStatus.RUNNING))
    assert c.danger and "trainer" in c.title and "deleted" in c.body and "cannot be undone" in c.body
    c2 = actions.confirmation("terminate", mk(PodStatus.RUNNING, network_volume="models"))
    assert "network volume models survives" in c2.body
