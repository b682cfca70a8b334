"""A simulated pod accepts the keys its container started with, as a RunPod pod does: the account's keys reach a
pod through PUBLIC_KEY when it starts (create, resume, restart), and its start script writes them into
authorized_keys once. A key registered later opens a running pod only after it restarts; a key removed from the
account keeps opening it until then. The gateway and the pod's own sshd both go by the pod's keys."""

from __future__ import annotations

from pathlib import Path

import pytest

from podtui.core.api import V2Api
from podtui.core.pod import Pod
from podtui.core.ssh.connect import SshSettings
from podtui.core.ssh.errors import AuthFailed
from podtui.core.ssh.keys import KeyFile, generate_dedicated_key
from podtui.core.ssh.remote import open_remote
from podtui.sim.simulator import Simulator
from tests.helpers.sim import DEMO_IDS, needs_sshd

ROUTES = [
    pytest.param(("idle", "gateway"), id="gateway"),
    pytest.param(("train", "exec"), id="direct", marks=needs_sshd),
]


@pytest.fixture(params=ROUTES)
def route(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def new_key(tmp_path: Path) -> KeyFile:
    return generate_dedicated_key(tmp_path / "keys" / "new", comment="new-laptop")


def pod_of(api: V2Api, key: str) -> Pod:
    pod = api.fetch_snapshot().find(DEMO_IDS[key])
    assert pod is not None
    return pod


def opens(pod: Pod, settings: SshSettings, key: KeyFile, via: str) -> bool:
    """Whether `key` opens `pod` (by `via`), and the shell there answers."""
    with_key = SshSettings(
        known_hosts=settings.known_hosts,
        gateway=settings.gateway,
        key_path=key.path,
        use_agent=False,
        connect_timeout_s=5.0,
    )
    try:
        with open_remote(pod, with_key, via=via) as sh:  # type: ignore[arg-type]
            return sh.run("echo in").output == "in\n"
    except AuthFailed:
        return False


def register(sim: Simulator, *keys: KeyFile) -> None:
    sim.world.set_pub_key("\n".join(f"{k.public_line} {k.path.name}" for k in keys))


def public_key(pod: Pod, settings: SshSettings, via: str) -> str:
    with open_remote(pod, settings, via=via) as sh:  # type: ignore[arg-type]
        return sh.run('printf %s "$PUBLIC_KEY"').output


def test_a_key_registered_later_opens_a_pod_only_after_it_restarts(
    route: tuple[str, str],
    full_sim: Simulator,
    sim_api: V2Api,
    ssh_settings: SshSettings,
    user_key: KeyFile,
    new_key: KeyFile,
) -> None:
    which, via = route
    pod = pod_of(sim_api, which)
    other = pod_of(sim_api, "bursty")  # running too, not restarted
    register(full_sim, user_key, new_key)
    assert not opens(pod, ssh_settings, new_key, via) and not opens(other, ssh_settings, new_key, "gateway")
    assert new_key.public_line not in public_key(pod, ssh_settings, via)
    full_sim.world.restart(pod.id)
    assert opens(pod, ssh_settings, new_key, via) and opens(pod, ssh_settings, user_key, via)
    assert public_key(pod, ssh_settings, via).split("\n") == [
        f"{user_key.public_line} {user_key.path.name}",
        f"{new_key.public_line} {new_key.path.name}",
    ]
    assert not opens(other, ssh_settings, new_key, "gateway")  # a pod that did not restart still refuses it


def test_a_key_removed_from_the_account_opens_a_running_pod_until_it_restarts(
    route: tuple[str, str],
    full_sim: Simulator,
    sim_api: V2Api,
    ssh_settings: SshSettings,
    user_key: KeyFile,
    new_key: KeyFile,
) -> None:
    which, via = route
    pod = pod_of(sim_api, which)
    register(full_sim, new_key)  # the user's key is gone from the account
    assert opens(pod, ssh_settings, user_key, via) and not opens(pod, ssh_settings, new_key, via)
    full_sim.world.restart(pod.id)
    assert not opens(pod, ssh_settings, user_key, via) and opens(pod, ssh_settings, new_key, via)


def test_a_stopped_pod_takes_the_accounts_keys_when_it_resumes(
    route: tuple[str, str],
    full_sim: Simulator,
    sim_api: V2Api,
    ssh_settings: SshSettings,
    user_key: KeyFile,
    new_key: KeyFile,
) -> None:
    which, via = route
    pod = pod_of(sim_api, which)
    sim_api.stop_pod(pod.id)
    register(full_sim, user_key, new_key)  # while it is stopped
    sim_api.start_pod(pod.id)
    full_sim.world.clock.advance(full_sim.world.boot_s + 1)  # it boots
    pod = pod_of(sim_api, which)
    assert pod.status == "RUNNING"
    assert opens(pod, ssh_settings, new_key, via) and opens(pod, ssh_settings, user_key, via)


def test_a_pod_created_after_a_key_was_registered_takes_it(
    full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings, user_key: KeyFile, new_key: KeyFile
) -> None:
    register(full_sim, user_key, new_key)
    made = full_sim.world.create(
        {
            "gpuTypeId": next(iter(full_sim.world.gpu_types)),
            "gpuCount": 1,
            "cloudType": "ALL",
            "imageName": "runpod/pytorch:2.4.0-py3.11-cuda12.4.1-devel-ubuntu22.04",
            "name": "fresh",
        }
    )
    full_sim.world.clock.advance(full_sim.world.boot_s + 1)
    pod = sim_api.fetch_snapshot().find(made.id)
    assert pod is not None and pod.status == "RUNNING"
    assert opens(pod, ssh_settings, new_key, "gateway")
    assert public_key(pod, ssh_settings, "gateway").endswith(f"{new_key.public_line} {new_key.path.name}")
