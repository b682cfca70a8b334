"""What the app and every command work with: the API (RunPod's or the demo's), the config and the user's folders,
the clock, and how to reach pods, runpodctl and the Hugging Face Hub.

The CLI builds one (`podtui.cli.session.open_session`); the tests, the benchmarks and the screenshot script build
their own. The defaults here are podtui's only ones: whatever is not given is found the way a real run finds it.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from podtui.core.api import RunPodApi
from podtui.core.config import Config
from podtui.core.paths import Paths

if TYPE_CHECKING:  # paramiko (under podtui.core.ssh) stays off the path to the first frame
    from podtui.core.hf.token import FoundToken
    from podtui.core.ssh.connect import SshSettings
    from podtui.transfer.runner import TransferContext


def dedicated_key() -> Path:
    """The SSH key podtui sets up for RunPod (`podtui keys setup`)."""
    from podtui.core.ssh.keys import DEDICATED_KEY

    return DEDICATED_KEY.expanduser()


def runpodctl_from_env() -> str | None:
    """PODTUI_RUNPODCTL when set; None: the one on PATH."""
    return os.environ.get("PODTUI_RUNPODCTL") or None


def hf_endpoint_from_env() -> str:
    """HF_ENDPOINT when set, else the Hub (the module that knows loads when first asked, not for the first frame)."""
    from podtui.core.hf.repo import endpoint_from_env

    return endpoint_from_env()


def discovered_hf_token() -> FoundToken | None:
    """The user's Hugging Face token, where huggingface_hub would find it."""
    from podtui.core.hf.token import discover

    return discover()


def no_hf_token() -> FoundToken | None:
    return None


def ssh_settings_for(config: Config, paths: Paths) -> SshSettings:
    """How pods are reached: the gateway and the key the config names, known hosts in podtui's data folder."""
    from podtui.core.ssh.pods import default_settings

    return default_settings(config, paths)


class Services:
    """Built once, before the app or a command starts; nothing changes it afterwards. Every callable is asked when
    the value is needed (the demo starts its simulator for the first one)."""

    def __init__(
        self,
        api: RunPodApi,
        *,
        config: Config | None = None,
        paths: Paths | None = None,
        demo: bool = False,
        clock: Callable[[], float] = time.time,
        ssh_settings: Callable[[], SshSettings] | None = None,
        key_path: Callable[[], Path] = dedicated_key,
        runpodctl: Callable[[], str | None] = runpodctl_from_env,
        hf_endpoint: Callable[[], str] = hf_endpoint_from_env,
        hf_token: Callable[[], FoundToken | None] | None = None,
        needs_key: bool = False,
        save_key: Callable[[str], Path] | None = None,
        transfer_history: Path | None = None,
        transfer_work_dir: Path | None = None,
        proxy_url: Callable[[], str] | None = None,
        profile: str | None = None,
        profiles: Mapping[str, str] | None = None,
        profile_api: Callable[[str], RunPodApi] | None = None,
        key_envs: tuple[str, ...] = (),
        key_help: str | None = None,
    ) -> None:
        self.api = api
        self.config = config or Config()
        self.paths = paths or Paths.default()
        self.demo = demo
        self.clock = clock
        # host keys are pinned per machine, whatever the account: in the data folder every profile shares
        # (docs/profiles.md#what-each-profile-keeps)
        self.ssh_settings: Callable[[], SshSettings] = ssh_settings or functools.partial(
            ssh_settings_for, self.config, self.paths.shared()
        )
        self.key_path = key_path  # the dedicated SSH key (the demo keeps its own, away from ~/.ssh)
        self.runpodctl = runpodctl
        self.hf_endpoint = hf_endpoint
        # a real token must never reach simulated pods: a demo without a token of its own has none
        self.hf_token: Callable[[], FoundToken | None] = hf_token or (no_hf_token if demo else discovered_hf_token)
        self.needs_key = needs_key  # no API key yet: the TUI opens on its welcome screen
        self.save_key = save_key  # stores an API key the welcome screen checked; None: nowhere to store one
        self.transfer_history = transfer_history  # None: transfers are not remembered across runs
        self.transfer_work_dir = transfer_work_dir  # None: a temporary folder
        # where a pod's HTTP port is reached, {pod_id} and {port} to fill in (podtui.core.pod_links.services): the
        # config's (RunPod's proxy unless it says otherwise), or the demo simulator's proxy
        self.proxy_url: Callable[[], str] = proxy_url or (lambda: self.config.proxy_url)
        # the account (docs/profiles.md): the profile in use (None: no profile), every profile by name with where its
        # key comes from, in words, and how to reach one with its own key (for the accounts view; None: no way)
        self.profile = profile
        self.profiles: Mapping[str, str] = profiles or {}
        self.profile_api = profile_api
        # every profile's key variable: none of them goes to ssh or an editor, whatever profile is in use
        # (docs/profiles.md#key-isolation; openssh.ssh_env takes them)
        self.key_envs = key_envs
        # where this account's key is given, in a sentence, when the app cannot store one (save_key None)
        self.key_help = key_help or "`podtui config set-key` stores a key for your account"

    def transfer_context(
        self, hf_token: Callable[[], str | None] | None = None, hf_endpoint: Callable[[], str] | None = None
    ) -> TransferContext:
        """What a transfer runs with, for the TUI's queue and the CLI's alike: pods looked up by id, SSH, the work
        folder (a temporary one when none is set), runpodctl and the Hub (the services' own unless given)."""
        import tempfile

        from podtui.core.api.client import find_pod
        from podtui.transfer.runner import TransferContext

        work = self.transfer_work_dir or Path(tempfile.mkdtemp(prefix="podtui-transfer-"))
        return TransferContext(
            lambda pod_id: find_pod(self.api, pod_id),
            self.ssh_settings,
            work,
            self.runpodctl(),
            hf_token=hf_token or self.hf_token_value,
            hf_endpoint=hf_endpoint or self.hf_endpoint,
        )

    def hf_token_value(self) -> str | None:
        found = self.hf_token()
        return found.value if found is not None else None
