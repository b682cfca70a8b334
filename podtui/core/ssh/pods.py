"""From a pod id or name to SSH settings and a Pod, the way scripts (run_remote) and the CLI need them."""

from __future__ import annotations

import os

from podtui.core.api.client import RunPodApi, find_pod
from podtui.core.config import Config, load_config, resolve_api_key
from podtui.core.paths import Paths
from podtui.core.pod import Pod
from podtui.core.ssh.connect import SshSettings, parse_gateway
from podtui.core.ssh.errors import SshError


def default_settings(config: Config | None = None, paths: Paths | None = None) -> SshSettings:
    paths = paths or Paths.default()
    config = config or load_config(paths)
    gateway_text = os.environ.get("PODTUI_SSH_GATEWAY") or config.ssh_gateway
    gateway = parse_gateway(gateway_text) if gateway_text else None  # None: where the API says
    return SshSettings(known_hosts=paths.data_dir / "known_hosts", gateway=gateway, key_path=config.ssh_key)


def lookup_pod(ref: str, api: RunPodApi | None = None) -> Pod:
    if api is None:
        from podtui.core.api import V2Api

        config = load_config(Paths.default())
        key = resolve_api_key(config)
        if key is None:
            raise SshError("no RunPod API key: set RUNPOD_API_KEY or run `podtui config set-key`")
        api = V2Api(key.value, timeout_s=config.api_timeout_s)
    return find_pod(api, ref)
