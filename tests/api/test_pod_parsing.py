"""Parsing RunPod's payload: nulls, unknown statuses, missing and mistyped fields never crash the list."""

from __future__ import annotations

from typing import Any

import pytest

from podtui.core.pod import PayloadError, PodStatus, parse_snapshot, redact_env


def pod(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": "abc123",
        "name": "trainer",
        "desiredStatus": "RUNNING",
        "costPerHr": 0.22,
        "gpuCount": 1,
        "imageName": "runpod/pytorch",
        "env": ["HF_TOKEN=hf_secretsecretsecret", "MODE=train"],
        "machine": {"gpuDisplayName": "RTX 3090", "podHostId": "abc123-1a2b3c4d", "location": "CA"},
        "runtime": {
            "uptimeInSeconds": 3600,
            "ports": [{"ip": "203.0.113.7", "isIpPublic": True, "privatePort": 22, "publicPort": 40022, "type": "tcp"}],
            "gpus": [
                {"id": "g0", "gpuUtilPercent": 90, "memoryUtilPercent": 50},
                {"id": "g1", "gpuUtilPercent": 70, "memoryUtilPercent": 40},
            ],
            "container": {"cpuPercent": 12, "memoryPercent": 30},
        },
    }
    base.update(over)
    return base


def snap(*pods: object, **account: Any) -> Any:
    myself = {"clientBalance": 10.5, "currentSpendPerHr": 0.25, "spendLimit": 80, "pods": list(pods)}
    myself.update(account)
    return parse_snapshot({"data": {"myself": myself}}, fetched_at=1000.0)


def test_full_pod() -> None:
    s = snap(pod())
    p = s.pods[0]
    assert p.status is PodStatus.RUNNING and p.state == "RUNNING"
    assert p.gpu_label == "1 x RTX 3090"
    assert p.gpu_util == 80
    assert p.uptime_s == 3600
    assert p.accrued_cost == pytest.approx(0.22)
    assert p.direct_ssh == ("203.0.113.7", 40022)
    assert p.direct_ssh_command == "ssh root@203.0.113.7 -p 40022"
    assert p.proxy_ssh_command == "ssh abc123-1a2b3c4d@ssh.runpod.io"
    assert p.reach == ("proxy", "direct")
    assert s.account.balance == 10.5 and s.account.spend_per_hr == 0.25
    assert s.problems == ()


def test_runtime_null_while_starting() -> None:
    p = snap(pod(runtime=None)).pods[0]
    assert p.state == "STARTING" and p.is_starting
    assert p.gpu_util is None and p.uptime_s is None and p.accrued_cost is None
    assert p.reach == () and p.direct_ssh is None


def test_stale_runtime_of_exited_pod_is_ignored() -> None:
    # runtime can be stale for EXITED pods; never show its numbers as live (docs/runpod-facts.md#graphql)
    p = snap(pod(desiredStatus="EXITED")).pods[0]
    assert p.runtime is not None
    assert p.live_runtime is None and p.gpu_util is None and p.accrued_cost is None and p.direct_ssh is None


def test_created_is_starting() -> None:
    assert snap(pod(desiredStatus="CREATED", runtime=None)).pods[0].state == "STARTING"


def test_unknown_status_is_kept_and_reported() -> None:
    s = snap(pod(desiredStatus="HIBERNATING"))
    p = s.pods[0]
    assert p.status is PodStatus.UNKNOWN and p.status_raw == "HIBERNATING"
    assert p.state == "? HIBERNATING"
    assert any("unknown status" in x for x in s.problems)


def test_every_field_null() -> None:
    keys = ["name", "desiredStatus", "costPerHr", "gpuCount", "imageName", "env", "machine", "runtime"]
    p = snap(pod(**dict.fromkeys(keys))).pods[0]
    assert p.name == "abc123"  # falls back to the id
    assert p.status is PodStatus.UNKNOWN
    assert p.gpu_label == "?" and p.cost_per_hr is None and p.accrued_cost is None
    assert p.env == () and p.pod_host_id is None


def test_missing_fields() -> None:
    s = parse_snapshot({"data": {"myself": {"pods": [{"id": "only-id"}]}}}, fetched_at=0)
    p = s.pods[0]
    assert p.name == "only-id" and s.account.balance is None
    assert s.account.spend_per_hr is None


def test_wrong_types_become_none_with_a_note() -> None:
    s = snap(
        pod(costPerHr="cheap", gpuCount=[1], machine="x", runtime={"uptimeInSeconds": "soon", "gpus": "many"}),
        clientBalance={"v": 1},
    )
    p = s.pods[0]
    assert p.cost_per_hr is None and p.gpu_count is None and p.gpu_name is None
    assert p.uptime_s is None and p.gpu_util is None
    assert s.account.balance is None
    assert len(s.problems) >= 5


def test_numbers_as_strings_are_read() -> None:
    p = snap(pod(costPerHr="0.44")).pods[0]
    assert p.cost_per_hr == 0.44


def test_records_without_id_or_not_objects_are_skipped() -> None:
    s = snap(pod(), {"name": "no id"}, "junk", None, pod(id="abc123"))
    assert [p.id for p in s.pods] == ["abc123"]
    assert len(s.problems) == 4  # no id, junk, None, duplicate


@pytest.mark.parametrize(
    "payload",
    [None, [], "text", {}, {"data": None}, {"data": {"myself": None}}, {"data": {"myself": {"pods": "many"}}}],
)
def test_unusable_payload_raises(payload: object) -> None:
    with pytest.raises(PayloadError):
        parse_snapshot(payload, fetched_at=0)


def test_pods_null_is_an_empty_account() -> None:
    assert snap(pods=None).pods == ()


def test_env_layouts_and_redaction() -> None:
    p = snap(pod(env=[{"key": "WANDB_API_KEY", "value": "abc"}, "PLAIN=1", "bad line"])).pods[0]
    assert p.env == (("WANDB_API_KEY", "abc"), ("PLAIN", "1"))
    red = dict(redact_env((*p.env, ("NOTE", "hf_abcdefabcdefabcdef"), ("HOME_DIR", "/workspace"))))
    assert "abc" not in red["WANDB_API_KEY"] and "hf_" not in red["NOTE"]
    assert red["PLAIN"] == "1" and red["HOME_DIR"] == "/workspace"


def test_find_by_id_name_and_prefix() -> None:
    s = snap(pod(id="aaa111", name="alpha"), pod(id="bbb222", name="beta"), pod(id="bbc333", name="alpha"))
    assert s.find("bbb222").name == "beta"
    assert s.find("beta").id == "bbb222"
    with pytest.raises(LookupError, match="2 pods are called"):
        s.find("alpha")
    with pytest.raises(LookupError, match="matches several"):
        s.find("bb")
    with pytest.raises(LookupError, match="no pod"):
        s.find("zzz")


def test_cpu_pod_label() -> None:
    assert snap(pod(gpuCount=0)).pods[0].gpu_label == "CPU"
