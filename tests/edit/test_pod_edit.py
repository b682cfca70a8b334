"""The edit's rules, without a screen: what changes, what is sent, what a restart resets, and every PATCH rule the
spec sets for mounts refused before anything is sent."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from podtui.core import secret
from podtui.core.pod import Pod, PodStatus, redact_env
from podtui.core.pod_edit import (
    CHANGED,
    HIDDEN,
    EditRefused,
    EditRequest,
    PodChanged,
    apply_reviewed,
    check_patch,
    env_from_lines,
    env_lines,
    plan_edit,
)

TOKEN = "hf_" + "q" * 30


def mk(**kw: Any) -> Pod:
    pod = Pod(
        id="p1",
        name="trainer",
        status=PodStatus.RUNNING,
        actions=frozenset({"stop", "restart", "terminate"}),
        image="runpod/pytorch:2.1.0-py3.10-cuda11.8.0-devel-ubuntu22.04",
        gpu_count=1,
        gpu_name="RTX 3090",
        cost_per_hr=0.22,
        container_disk_gb=20,
        volume_gb=50,
        volume_mount_path="/workspace",
        ports_spec="8888/http,22/tcp",
        env=(("HF_TOKEN", TOKEN), ("MODEL", "llama")),
    )
    return replace(pod, **kw)


def test_only_what_changes_is_sent() -> None:
    plan = plan_edit(mk(), EditRequest(name="trainer", image=mk().image, ports="8888/http, 22/tcp", container_gb=20))
    assert plan.empty and not plan.body and not plan.changes  # as the pod has it: nothing to send
    plan = plan_edit(mk(), EditRequest(name="  renamed ", container_gb="30"))
    assert plan.body == {"name": "renamed", "disk": 30}
    assert [c.line() for c in plan.changes] == ["name           trainer -> renamed", "container disk 20 GB -> 30 GB"]


def test_the_env_is_the_pods_own_plus_the_changes() -> None:
    plan = plan_edit(mk(), EditRequest(env_set=(("EPOCHS", "3"),), env_unset=("MODEL",)))
    assert plan.body == {"env": {"HF_TOKEN": TOKEN, "EPOCHS": "3"}}  # PATCH replaces it whole: the token stays
    lines = [c.line() for c in plan.changes]
    assert "env +EPOCHS    (not set) -> 3" in lines and "env -MODEL     llama -> (removed)" in lines


def test_secret_values_are_masked_in_the_diff_and_registered() -> None:
    new = "hf_" + "z" * 30
    plan = plan_edit(mk(), EditRequest(env_set=(("HF_TOKEN", new), ("API_KEY", "s3cr3t-value"))))
    text = "\n".join(plan.lines())
    assert TOKEN not in text and new not in text and "s3cr3t-value" not in text and HIDDEN in text
    assert new not in secret.redact(f"an error quoting {new}")  # masked wherever it turns up later
    # a hidden value replaced by another hidden one says so: both sides masked would read as no change
    assert [(c.old, c.new) for c in plan.changes if c.what == "env HF_TOKEN"] == [(HIDDEN, CHANGED)]


def test_a_touched_stand_in_is_refused_not_sent_as_the_secret() -> None:
    pod = mk()
    for touched in (HIDDEN + "x", HIDDEN[:-1], "•••", HIDDEN.replace("••", ""), "x" + HIDDEN, "(hidden)"):
        with pytest.raises(ValueError, match=r"line 1: HF_TOKEN .*type the whole new value, or put the placeholder"):
            env_from_lines(f"HF_TOKEN={touched}\nMODEL=llama", pod.env)
        with pytest.raises(ValueError, match="whole new value"):  # a new key holding it: not a value typed either
            env_from_lines(f"MODEL=llama\nHF_TOKEN={HIDDEN}\nNEW={touched}", pod.env)
    # a value that is the pod's own, bullets and all, is no stand-in: kept as it is
    bullets = mk(env=(("SEP", "a • b"),))
    assert env_from_lines("SEP=a • b\nX=1", bullets.env) == (("SEP", "a • b"), ("X", "1"))
    new = "hf_" + "n" * 30
    assert dict(env_from_lines(f"HF_TOKEN={new}\nMODEL=llama", pod.env))["HF_TOKEN"] == new  # typed whole


def test_a_restart_is_said_for_a_running_pod_and_not_for_a_stopped_one() -> None:
    plan = plan_edit(mk(), EditRequest(image="runpod/pytorch:2.4.0-py3.11-cuda12.4.1-devel-ubuntu22.04"))
    assert plan.restarts
    warning = plan.restart_warning() or ""
    assert "running processes end" in warning and "container disk" in warning and "50 GB at /workspace" in warning
    stopped = mk(status=PodStatus.EXITED, actions=frozenset({"start", "terminate"}))
    plan = plan_edit(stopped, EditRequest(ports="8888/http"))
    assert not plan.restarts and "next starts" in (plan.restart_warning() or "")
    assert plan_edit(mk(), EditRequest(name="x", locked=True)).restart_warning() is None  # neither restarts


@pytest.mark.parametrize(
    ("request_", "field", "words"),
    [
        (EditRequest(name=""), "name", "give the pod a name"),
        (EditRequest(name="a\nb"), "name", "no newlines"),
        (EditRequest(image="Not An Image"), "image", "not an image reference"),
        (EditRequest(ports="8888"), "ports", "write ports like"),
        (EditRequest(ports="22/tcp,22/http"), "ports", "listed twice"),
        (EditRequest(container_gb="2"), "container_gb", "from 5 to 1000"),
        (EditRequest(container_gb="lots"), "container_gb", "whole number"),
        (EditRequest(env_set=(("1BAD", "x"),)), "env", "not a variable name"),
        (EditRequest(env_set=(("A", "x\0y"),)), "env", "NUL"),
        (EditRequest(env_unset=("NOPE",)), "env", "NOPE is not set on the pod"),
        (EditRequest(env_set=(("MODEL", "x"),), env_unset=("MODEL",)), "env", "both set and unset"),
        (EditRequest(volume_gb="40"), "volume_gb", "cannot shrink"),
        (EditRequest(volume_path="workspace"), "volume_path", "absolute path"),
    ],
)
def test_bad_fields_are_refused_by_name(request_: EditRequest, field: str, words: str) -> None:
    with pytest.raises(EditRefused) as e:
        plan_edit(mk(), request_)
    assert words in e.value.problems[field]


def test_every_bad_field_is_named_at_once() -> None:
    with pytest.raises(EditRefused) as e:
        plan_edit(mk(), EditRequest(name="", ports="x", container_gb="0"))
    assert set(e.value.problems) == {"name", "ports", "container_gb"}


def test_mounts_keep_their_kind() -> None:
    grown = plan_edit(mk(), EditRequest(volume_gb=80))
    assert grown.body == {"mounts": {"persistent": {"size": 80, "path": "/workspace"}}}  # the whole entry
    moved = plan_edit(mk(), EditRequest(volume_path="/data"))
    assert moved.body == {"mounts": {"persistent": {"size": 50, "path": "/data"}}}
    network = mk(volume_gb=None, network_volume="vol_abc")
    assert plan_edit(network, EditRequest(volume_path="/models")).body == {
        "mounts": {"network": [{"volumeId": "vol_abc", "path": "/models"}]}
    }
    with pytest.raises(EditRefused, match="grow it with"):
        plan_edit(network, EditRequest(volume_gb=100))
    with pytest.raises(EditRefused, match="RunPod adds none afterwards"):
        plan_edit(mk(volume_gb=None, volume_mount_path=None), EditRequest(volume_path="/workspace"))


@pytest.mark.parametrize(
    ("pod", "mounts", "words"),
    [
        (mk(), {"network": []}, "empty network mount list"),
        (mk(), {"network": [{"volumeId": "vol_abc", "path": "/w"}]}, "cannot take a network one"),
        (mk(volume_gb=None, network_volume="vol_abc"), {"persistent": {"size": 20, "path": "/w"}}, "persistent one"),
        (mk(volume_gb=None), {"persistent": {"size": 20, "path": "/w"}}, "created with no volume"),
        (mk(volume_gb=None), {"network": [{"volumeId": "vol_abc", "path": "/w"}]}, "created with no volume"),
        (mk(volume_gb=None, network_volume="vol_abc"), {"network": [{"volumeId": "vol_xyz", "path": "/w"}]}, "swapped"),
        (mk(volume_gb=None, network_volume="vol_abc"), {"network": [{"volumeId": "vol_abc"}]}, "volumeId and path"),
        (mk(), {"persistent": {"size": 20, "path": "/w"}}, "cannot shrink"),
        (mk(), {"persistent": {"path": "/w"}}, "size and path"),
        (mk(), {"persistent": {"size": 60, "path": "/w"}, "network": [{"volumeId": "v", "path": "/x"}]}, "not both"),
    ],
)
def test_the_specs_mount_rules_are_checked_on_any_body(pod: Pod, mounts: dict[str, Any], words: str) -> None:
    with pytest.raises(EditRefused, match=words):
        check_patch(pod, {"mounts": mounts})


def test_only_what_changes_is_checked() -> None:
    """A pod RunPod took with values podtui's rules would not write (a key like my.var, a 2 GB container disk, a
    port listed twice, an odd mount path) can still be edited: only what is sent is checked."""
    odd = mk(
        env=(("my.var", "1"), ("HF_TOKEN", TOKEN)),
        container_disk_gb=2,
        ports_spec="8888/http,8888/tcp",
        volume_mount_path="/my data",
        locked=True,
    )
    form = EditRequest(  # what the form sends: every field as it shows it, the lock unticked
        name=odd.name,
        image=odd.image,
        ports=odd.ports_spec,
        container_gb="2",
        volume_gb="50",
        volume_path="/my data",
        env=env_from_lines(env_lines(odd.env), odd.env),
        locked=False,
    )
    assert plan_edit(odd, form).body == {"locked": False}
    plan = plan_edit(odd, replace(form, env=env_from_lines(env_lines(odd.env) + "\nEPOCHS=3", odd.env)))
    assert plan.body == {"env": {"my.var": "1", "HF_TOKEN": TOKEN, "EPOCHS": "3"}, "locked": False}
    assert plan_edit(replace(odd, locked=False), EditRequest(env_set=(("EPOCHS", "3"),))).body == {
        "env": {"my.var": "1", "HF_TOKEN": TOKEN, "EPOCHS": "3"}
    }
    grown = plan_edit(odd, EditRequest(volume_gb="80", volume_path="/my data", locked=False))
    assert grown.body == {"mounts": {"persistent": {"size": 80, "path": "/my data"}}, "locked": False}  # RunPod's path
    # what is changed is checked as before
    for bad, field in (
        (EditRequest(container_gb="3"), "container_gb"),
        (EditRequest(ports="8888/http,8888/udp"), "ports"),
        (EditRequest(volume_path="/other data"), "volume_path"),
        (EditRequest(env=(("my.var", "2"),)), "env"),
        (EditRequest(env=(("other.var", "1"),)), "env"),
        (EditRequest(env=(("A", "1"), ("A", "2"))), "env"),
    ):
        with pytest.raises(EditRefused) as e:
            plan_edit(odd, bad)
        assert field in e.value.problems, bad


def test_a_locked_running_pod_takes_no_restarting_change_unless_unlocked() -> None:
    locked = mk(locked=True)
    image = "runpod/pytorch:2.4.0-py3.11-cuda12.4.1-devel-ubuntu22.04"
    for request_ in (
        EditRequest(image=image),
        EditRequest(env_set=(("EPOCHS", "3"),)),
        EditRequest(ports="8888/http"),
        EditRequest(container_gb=30),
        EditRequest(volume_gb=80),  # a mount change restarts it too (docs/runpod-facts.md#editing-a-pod)
        EditRequest(volume_path="/data"),
    ):
        with pytest.raises(EditRefused) as e:
            plan_edit(locked, request_)
        assert "unlock it in the same edit" in e.value.problems["locked"]
    assert plan_edit(locked, EditRequest(image=image, locked=False)).body == {"image": image, "locked": False}
    assert plan_edit(locked, EditRequest(name="renamed")).body == {"name": "renamed"}  # no restart: fine
    stopped = mk(locked=True, status=PodStatus.EXITED, actions=frozenset({"start", "terminate"}))
    assert plan_edit(stopped, EditRequest(image=image)).body == {"image": image}  # taken at its next start
    with pytest.raises(EditRefused) as e:  # locking it in the same edit: RunPod would refuse it just the same
        plan_edit(mk(), EditRequest(image=image, locked=True))
    assert "lock it in an edit of its own" in e.value.problems["locked"]
    with pytest.raises(EditRefused, match="unlock"):  # on any body about to be sent, too
        check_patch(locked, {"env": {"A": "1"}})


def test_the_lock_toggles_without_a_restart() -> None:
    plan = plan_edit(mk(), EditRequest(locked=True))
    assert plan.body == {"locked": True} and not plan.restarts
    assert plan_edit(mk(locked=True), EditRequest(locked=True)).empty


def test_the_forms_env_keeps_hidden_values() -> None:
    pod = mk(env=(("HF_TOKEN", TOKEN), ("MODEL", "llama"), ("NOTE", "two\nlines")))
    text = env_lines(pod.env)
    assert TOKEN not in text and "two\nlines" not in text
    assert text.splitlines() == [f"HF_TOKEN={HIDDEN}", "MODEL=llama", f"NOTE={HIDDEN}"]
    assert dict(env_from_lines(text, pod.env)) == dict(pod.env)  # untouched: every value kept, in clear
    edited = text.replace("MODEL=llama", "MODEL=mistral") + "\n# a comment\n\nNEW=1"
    assert dict(env_from_lines(edited, pod.env)) == {**dict(pod.env), "MODEL": "mistral", "NEW": "1"}
    with pytest.raises(ValueError, match="line 1: OTHER has no value to keep"):
        env_from_lines(f"OTHER={HIDDEN}", pod.env)
    with pytest.raises(ValueError, match="line 2: write KEY=value"):
        env_from_lines("A=1\njunk", pod.env)
    assert redact_env((("HF_TOKEN", TOKEN),))[0][1] == HIDDEN  # the form's stand-in is redact_env's


class _Api:
    """Answers fetch_pod with a pod that may have changed; records what update_pod was sent."""

    def __init__(self, pod: Pod) -> None:
        self.pod, self.sent = pod, []  # type: list[dict[str, object]]

    def fetch_pod(self, pod_id: str) -> Pod:
        return self.pod

    def update_pod(self, pod_id: str, body: dict[str, object]) -> Pod:
        self.sent.append(dict(body))
        return self.pod


def test_a_pod_changed_since_the_review_is_not_overwritten() -> None:
    request = EditRequest(env_set=(("EPOCHS", "3"),))
    plan = plan_edit(mk(), request)
    api = _Api(mk(env=(("HF_TOKEN", TOKEN), ("MODEL", "llama"), ("ADDED_ELSEWHERE", "1"))))
    with pytest.raises(PodChanged, match="nothing sent") as e:
        apply_reviewed(api, plan, request)  # type: ignore[arg-type]
    assert api.sent == [] and e.value.fresh is api.pod  # the pod as it is now, to review again
    api.pod = mk()
    apply_reviewed(api, plan, request)  # type: ignore[arg-type]
    assert api.sent == [{"env": {"HF_TOKEN": TOKEN, "MODEL": "llama", "EPOCHS": "3"}}]


def test_the_forms_whole_env_does_not_put_back_a_value_changed_elsewhere() -> None:
    """The form sends the whole env, so a plan made before a token was rotated elsewhere gives the same body on the
    pod as it is now: the pods themselves are compared, not the bodies."""
    pod = mk()
    request = EditRequest(name="renamed", env=env_from_lines(env_lines(pod.env) + "\nEPOCHS=3", pod.env))
    plan = plan_edit(pod, request)
    rotated = "hf_" + "r" * 30
    api = _Api(mk(env=(("HF_TOKEN", rotated), ("MODEL", "llama"))))
    with pytest.raises(PodChanged):
        apply_reviewed(api, plan, request)  # type: ignore[arg-type]
    for elsewhere in (
        {"name": "someone-elses"},
        {"locked": True},
        {"image": "other/image:1"},
        {"ports_spec": "8888/http"},
        {"container_disk_gb": 40},
        {"volume_gb": 60},
        {"volume_mount_path": "/data"},
    ):
        api.pod = mk(**elsewhere)
        with pytest.raises(PodChanged):
            apply_reviewed(api, plan, request)  # type: ignore[arg-type]
    assert api.sent == []


def test_a_pod_started_since_the_review_is_not_restarted_unasked() -> None:
    stopped = mk(status=PodStatus.EXITED, actions=frozenset({"start", "terminate"}))
    request = EditRequest(ports="8888/http")
    plan = plan_edit(stopped, request)
    assert not plan.restarts  # the review said: applies at its next start
    api = _Api(mk())  # running now: the same body would restart it
    with pytest.raises(PodChanged):
        apply_reviewed(api, plan, request)  # type: ignore[arg-type]
    assert api.sent == []


def test_variables_whose_names_cannot_be_shown_are_left_out_and_kept() -> None:
    pod = mk(env=(("MODEL", "llama"), ("BAD\x1bNAME", "x")))
    text = env_lines(pod.env)
    assert text == "MODEL=llama" and "\x1b" not in text
    assert dict(env_from_lines(text + "\nNEW=1", pod.env)) == {"MODEL": "llama", "BAD\x1bNAME": "x", "NEW": "1"}
