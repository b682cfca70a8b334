"""Opening a pod in VS Code or Cursor over Remote - SSH, through podtui's ssh config (docs/ssh-out.md#editors).

The editors run OpenSSH with the user's ~/.ssh/config and take a host alias: the pod's `runpod-...` block in
podtui's file, which ~/.ssh/config must include. They need a full SSH server (commands, port forwarding), so
only direct SSH will do: RunPod's gateway gives a shell and nothing else (docs/runpod-facts.md#ssh-gateway).
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from podtui.core.pod import Pod
from podtui.core.ssh.connect import SshSettings, connect_pod
from podtui.core.ssh.ssh_config import USER_CONFIG, includes, render, write_config
from podtui.core.visible import visible

EDITORS = ("code", "cursor")  # the first installed is used when none is named
DEFAULT_FOLDER = "/workspace"
_FOLDER = re.compile(r"/[A-Za-z0-9._/-]{0,200}")


class EditorError(Exception):
    """Why a pod cannot be opened in an editor, in words for the user."""


class NoEditor(EditorError):
    pass


class NeedsDirectSsh(EditorError):
    """The pod is reachable through RunPod's gateway only."""


class ConfigNotIncluded(EditorError):
    """podtui's ssh config is written, but ~/.ssh/config does not include it: the editor cannot find the alias."""


@dataclass(frozen=True)
class EditorLaunch:
    argv: list[str]  # run it with openssh.ssh_env(): the editor's ssh inherits it
    editor: str  # "code" or "cursor"
    alias: str
    config_written: bool  # podtui's ssh config changed on the way


def installed() -> dict[str, str]:
    """The editors on PATH: name -> executable."""
    return {name: path for name in EDITORS if (path := shutil.which(name)) is not None}


def pick_editor(name: str | None = None) -> tuple[str, str]:
    """(name, executable) of the editor asked for, or of the first installed; NoEditor when there is none."""
    found = installed()
    if name is not None and name != "auto":
        if name not in found:
            raise NoEditor(
                f"`{name}` is not on PATH: install it, or from the editor run the command palette's "
                f"'Shell Command: Install '{name}' command in PATH'"
            )
        return name, found[name]
    if not found:
        raise NoEditor("neither VS Code (`code`) nor Cursor (`cursor`) is on PATH")
    first = next(iter(found))
    return first, found[first]


def workspace_folder(pod: Pod) -> str:
    """The folder to open: the pod's volume where RunPod says it is mounted, /workspace otherwise."""
    path = pod.volume_mount_path
    return path if path is not None and _FOLDER.fullmatch(path) and ".." not in path else DEFAULT_FOLDER


def editor_argv(executable: str, alias: str, folder: str = DEFAULT_FOLDER) -> list[str]:
    return [executable, "--remote", f"ssh-remote+{alias}", folder]


def needs_direct_message(pod: Pod) -> str:
    return (
        f"{visible(pod.name)} is reachable only through RunPod's SSH gateway, which gives an interactive shell and "
        "nothing else. VS Code and Cursor need direct SSH: a public IP and 22/tcp exposed. Create the pod with a "
        "public IP (Secure Cloud, or a Community Cloud host with a public IP) and 22/tcp in its ports; "
        "`podtui ssh` still opens a shell through the gateway."
    )


def prepare(
    pod: Pod,
    pods: Sequence[Pod],
    settings: SshSettings,
    config: Path,
    *,
    editor: str | None = None,
    user_config: Path = USER_CONFIG,
    demo: bool = False,
    pin: bool = True,
) -> EditorLaunch:
    """What to run to open `pod` in an editor. Blocking I/O: with pin, one connection over direct SSH (podtui's
    client pins the host key the editor's ssh will insist on); podtui's ssh config (`config`) written for `pods`
    if it changed. Raises an EditorError (NoEditor, NeedsDirectSsh, ConfigNotIncluded: run `podtui ssh-config
    --write`) or, from the connection, an SshError."""
    name, executable = pick_editor(editor)
    if demo:
        raise EditorError(
            "the demo's pods live only while the demo runs and are not in your SSH config: editors open your own pods"
        )
    if pod.state != "RUNNING":
        raise EditorError(f"{visible(pod.name)} is {visible(pod.state)}: open it in an editor once it is RUNNING")
    if pod.ssh_direct is None:
        raise NeedsDirectSsh(needs_direct_message(pod))
    if pin:
        connect_pod(pod, settings, "direct").close()
    rendered = render(pods if any(p.id == pod.id for p in pods) else [*pods, pod], settings)
    written = write_config(config, rendered.text)
    block = rendered.hosts.get(pod.id)
    if block is None or block.mode != "direct":
        raise EditorError(f"podtui could not write an SSH block for {visible(pod.name)}: see `podtui ssh-config`")
    if not includes(user_config, config):
        raise ConfigNotIncluded(
            f"{config} has {block.alias}, but {user_config} does not include it, so {name} cannot find that host: "
            "run `podtui ssh-config --write` (it asks before adding one Include line)"
        )
    return EditorLaunch(editor_argv(executable, block.alias, workspace_folder(pod)), name, block.alias, written)
