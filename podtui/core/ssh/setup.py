"""`podtui keys setup`: a dedicated key, registered at the account level, keeping every key already there."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from podtui.core.api.client import RunPodApi
from podtui.core.pod import Pod, PodStatus
from podtui.core.ssh.keys import DEDICATED_KEY, KeyFile, generate_dedicated_key, merge_account_keys, read_public_key


@dataclass(frozen=True)
class KeySetup:
    key: KeyFile
    created: bool  # the key file was generated now
    registered: bool  # the account did not have it and now does
    account_keys: int  # how many keys the account has afterwards


def public_line(key: KeyFile) -> str:
    pub = key.path.with_name(key.path.name + ".pub")
    if pub.exists():
        line = read_public_key(pub)
        if line.split()[:2] == key.public_line.split()[:2]:
            return line
    return key.public_line


def setup_key(api: RunPodApi, path: Path | None = None) -> KeySetup:
    path = (path or DEDICATED_KEY).expanduser()
    created = not path.exists()
    key = generate_dedicated_key(path)
    current = api.account_keys()
    merged = merge_account_keys(current, public_line(key))
    if merged is not None:
        api.set_account_keys(merged)
        count = len(merged.split("\n"))
    else:
        count = len([ln for ln in (current or "").splitlines() if ln.strip()])
    return KeySetup(key, created, merged is not None, count)


def restart_note(pods: Iterable[Pod]) -> str:
    """After a key is registered: which pods will not accept it yet. RunPod hands a pod the account's keys when
    its container starts (docs/runpod-facts.md#ssh-keys), so a pod running now needs a restart first."""
    running = [p.name for p in pods if p.status is PodStatus.RUNNING]
    if not running:
        return "new pods get the key when they start"
    names = ", ".join(running[:6]) + (f" and {len(running) - 6} more" if len(running) > 6 else "")
    return (
        f"new pods get the key when they start; {'this pod' if len(running) == 1 else 'these pods'}, running "
        f"now, accept it only after a restart (R, or `podtui restart`): {names}"
    )


def key_status(api: RunPodApi, path: Path | None = None) -> tuple[KeyFile | None, bool]:
    """The dedicated key (None when it does not exist yet) and whether the account has it. SshKeyError when the
    path holds something that is not a usable key (a FIFO, a passphrase-protected key): said, not hidden."""
    from podtui.core.ssh.keys import load_key

    path = (path or DEDICATED_KEY).expanduser()
    if not path.exists() and not path.is_symlink():
        return None, False
    key = load_key(path)
    body = key.key.get_base64()
    current = api.account_keys()
    return key, any(len(p) >= 2 and p[1] == body for p in (ln.split() for ln in current.splitlines()))
