"""Parsing RunPod's v2 pods and the GraphQL balance: nulls, unknown statuses and actions, unknown fields, missing
and mistyped fields never crash the list."""

from __future__ import annotations

from typing import Any

import pytest

from podtui.core.pod import Account, PayloadError, PodStatus, Snapshot, parse_account, parse_pods, redact_env


def pod(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": "abc123",
        "name": "trainer",
        "status": "RUNNING",
        "actions": ["stop", "restart", "terminate"],
        "locked": False,
        "cost": 0.22,
        "gpu": {"id": "NVIDIA GeForce RTX 3090", "count": 1},
        "image": "runpod/pytorch",
        "env": {"HF_TOKEN": "hf_secretsecretsecret", "MODE": "train"},
        "disk": 20,
        "mounts": {"persistent": {"size": 50, "path": "/workspace"}},
        "ports": ["8888/http", "22/tcp"],
        "dataCenterId": "EU-RO-1",
        "cudaVersion": "12.4",
        "cloud": "SECURE",
        "createdAt": "2026-11-30T10:00:00Z",
        "startedAt": "2026-12-01T09:00:00+00:00",
        "ssh": {
            "proxy": {"host": "ssh.runpod.io", "port": 22, "username": "abc123-1a2b3c4d", "command": "ssh ..."},
            "direct": {"host": "203.0.113.7", "port": 40022, "username": "root", "command": "ssh ..."},
        },
        "runtime": {
            "uptime": 3600,
            "ports": [{"ip": "203.0.113.7", "private": 22, "public": 40022, "type": "tcp"}],
            "gpus": [{"util": 90, "memoryUtil": 50}, {"util": 70, "memoryUtil": 40}],
            "cpu": {"util": 12},
            "memory": {"util": 30},
        },
        "somethingRunPodAddsLater": {"x": 1},
    }
    base.update(over)
    return base


def snap(*pods: object) -> Snapshot:
    parsed, problems = parse_pods({"pods": list(pods)})
    return Snapshot(Account(10.5, 0.25, 80.0), parsed, 1000.0, problems)


def test_full_pod() -> None:
    s = snap(pod())
    p = s.pods[0]
    assert p.status is PodStatus.RUNNING and p.state == "RUNNING"
    assert p.actions == {"stop", "restart", "terminate"} and p.can("stop") and not p.can("start")
    assert p.gpu_label == "1 x NVIDIA GeForce RTX 3090"
    assert p.gpu_util == 80 and p.gpu_util_max == 90
    assert p.uptime_s == 3600
    assert p.accrued_cost == pytest.approx(0.22)
    assert p.direct_ssh == ("203.0.113.7", 40022)
    assert p.direct_ssh_command == "ssh root@203.0.113.7 -p 40022"
    assert p.proxy_ssh_command == "ssh abc123-1a2b3c4d@ssh.runpod.io"
    assert p.pod_host_id == "abc123-1a2b3c4d"
    assert p.reach == ("proxy", "direct")
    assert (p.location, p.cuda_version, p.cloud) == ("EU-RO-1", "12.4", "SECURE")
    assert (p.container_disk_gb, p.volume_gb, p.volume_mount_path) == (20, 50, "/workspace")
    assert p.ports_spec == "8888/http,22/tcp"
    assert p.created_at == 1796032800.0 and p.started_at == 1796115600.0
    assert s.problems == ()


def test_runtime_null_while_starting() -> None:
    p = snap(pod(status="STARTING", runtime=None, ssh={"proxy": None, "direct": None})).pods[0]
    assert p.state == "STARTING" and p.is_starting
    assert p.gpu_util is None and p.uptime_s is None and p.accrued_cost is None
    assert p.reach == () and p.direct_ssh is None


def test_running_without_runtime_is_still_starting() -> None:
    p = snap(pod(runtime=None)).pods[0]
    assert p.state == "STARTING" and p.is_starting


@pytest.mark.parametrize("status", ["PROVISIONING", "STARTING", "EXITED", "ERROR", "TERMINATED"])
def test_every_v2_status(status: str) -> None:
    p = snap(pod(status=status)).pods[0]
    assert p.status.value == status and p.state == status
    assert p.live_runtime is None  # only a RUNNING pod's runtime is live


def test_unknown_status_is_kept_and_reported() -> None:
    s = snap(pod(status="HIBERNATING"))
    p = s.pods[0]
    assert p.status is PodStatus.UNKNOWN and p.status_raw == "HIBERNATING"
    assert p.state == "? HIBERNATING"
    assert any("unknown status" in x for x in s.problems)


def test_unknown_and_odd_actions() -> None:
    p = snap(pod(actions=["stop", "hibernate", 7, None, "\x1b[2J"])).pods[0]
    assert p.actions == {"stop", "hibernate"}


def test_locked() -> None:
    assert snap(pod(locked=True)).pods[0].locked


def test_every_field_null() -> None:
    keys = ["name", "status", "actions", "cost", "gpu", "image", "env", "ssh", "runtime", "mounts", "locked"]
    p = snap(pod(**dict.fromkeys(keys))).pods[0]
    assert p.name == "abc123"  # falls back to the id
    assert p.status is PodStatus.UNKNOWN and p.actions == frozenset() and not p.locked
    assert p.gpu_label == "?" and p.cost_per_hr is None and p.accrued_cost is None
    assert p.env == () and p.pod_host_id is None and p.ssh_direct is None


def test_missing_fields() -> None:
    pods, _ = parse_pods({"pods": [{"id": "only-id"}]})
    assert pods[0].name == "only-id" and pods[0].status is PodStatus.UNKNOWN


def test_wrong_types_become_none_with_a_note() -> None:
    s = snap(
        pod(
            cost="cheap",
            gpu=[1],
            ssh={"proxy": "x", "direct": {"host": "h", "port": "nope", "username": "root"}},
            runtime={"uptime": "soon", "gpus": "many"},
            env=["A=1"],
            createdAt="yesterday",
            actions="stop",
        )
    )
    p = s.pods[0]
    assert p.cost_per_hr is None and p.gpu_count is None and p.gpu_name is None
    assert p.uptime_s is None and p.gpu_util is None and p.ssh_proxy is None and p.ssh_direct is None
    assert p.env == () and p.created_at is None and p.actions == frozenset()
    assert len(s.problems) >= 8


@pytest.mark.parametrize("port", [0, 70000, -1])
def test_an_ssh_endpoint_without_a_usable_port_is_not_used(port: int) -> None:
    direct = {"host": "203.0.113.7", "port": port, "username": "root", "command": ""}
    p = snap(pod(ssh={"proxy": None, "direct": direct})).pods[0]
    assert p.ssh_direct is None


def test_numbers_as_strings_are_read() -> None:
    assert snap(pod(cost="0.44")).pods[0].cost_per_hr == 0.44


@pytest.mark.parametrize("cost", [-5, float("inf"), 1e9])
def test_absurd_costs_are_unknown(cost: float) -> None:
    s = snap(pod(cost=cost))
    assert s.pods[0].cost_per_hr is None and s.problems


def test_records_without_id_or_not_objects_are_skipped() -> None:
    s = snap(pod(), {"name": "no id"}, "junk", None, pod(id="abc123"))
    assert [p.id for p in s.pods] == ["abc123"]
    assert len(s.problems) == 4  # no id, junk, None, duplicate


@pytest.mark.parametrize("payload", [None, [], "text", {}, {"pods": "many"}, {"pods": {"a": 1}}])
def test_unusable_payload_raises(payload: object) -> None:
    with pytest.raises(PayloadError):
        parse_pods(payload)


def test_pods_null_is_an_empty_account() -> None:
    assert parse_pods({"pods": None}) == ((), ())


def test_env_and_redaction() -> None:
    p = snap(pod(env={"WANDB_API_KEY": "abc", "PLAIN": "1", "N": 5})).pods[0]
    assert p.env == (("WANDB_API_KEY", "abc"), ("PLAIN", "1"), ("N", "5"))
    red = dict(redact_env((*p.env, ("NOTE", "hf_abcdefabcdefabcdef"), ("HOME_DIR", "/workspace"))))
    assert "abc" not in red["WANDB_API_KEY"] and "hf_" not in red["NOTE"]
    assert red["PLAIN"] == "1" and red["HOME_DIR"] == "/workspace"


def test_network_volume_mount() -> None:
    p = snap(pod(mounts={"network": [{"volumeId": "vol_abc", "path": "/data"}]})).pods[0]
    assert p.network_volume == "vol_abc" and p.volume_mount_path == "/data" and p.volume_gb is None


def test_cpu_pod() -> None:
    p = snap(pod(gpu=None, cpu={"id": "cpu3c", "vcpuCount": 4, "memory": 8})).pods[0]
    assert p.gpu_label == "CPU" and p.gpu_count == 0 and (p.vcpu_count, p.memory_gb) == (4, 8)


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


def test_balance_answer() -> None:
    account, problems = parse_account(
        {"data": {"myself": {"clientBalance": 10.5, "currentSpendPerHr": 0.25, "spendLimit": 80}}}
    )
    assert account == Account(10.5, 0.25, 80.0) and problems == ()


def test_balance_unusable_values_are_unknown_with_a_reason() -> None:
    account, problems = parse_account({"data": {"myself": {"clientBalance": {"v": 1}, "currentSpendPerHr": -3}}})
    assert account.balance is None and account.spend_per_hr is None and account.unknown_why
    assert len(problems) == 2


@pytest.mark.parametrize("payload", [None, [], {}, {"data": None}, {"data": {"myself": None}}])
def test_balance_answer_without_an_account_raises(payload: object) -> None:
    with pytest.raises(PayloadError):
        parse_account(payload)
