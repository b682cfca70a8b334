"""`podtui keys setup`: a dedicated key, registered at the account level, keeping every key already there."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from podtui.core.api.client import RunPodApi
from podtui.core.ssh.keys import DEDICATED_KEY, KeyFile, generate_dedicated_key, merge_account_keys


@dataclass(frozen=True)
class KeySetup:
    key: KeyFile
    created: bool  # the key file was generated now
    registered: bool  # the account did not have it and now does
    account_keys: int  # how many keys the account has afterwards


def public_line(key: KeyFile) -> str:
    pub = key.path.with_name(key.path.name + ".pub")
    if pub.exists():
        line = pub.read_text(encoding="utf-8").strip()
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


def key_status(api: RunPodApi, path: Path | None = None) -> tuple[KeyFile | None, bool]:
    """The dedicated key (None when it does not exist yet) and whether the account has it."""
    from podtui.core.ssh.errors import SshKeyError
    from podtui.core.ssh.keys import load_key

    path = (path or DEDICATED_KEY).expanduser()
    if not path.exists():
        return None, False
    try:
        key = load_key(path)
    except SshKeyError:
        return None, False
    body = key.key.get_base64()
    current = api.account_keys()
    return key, any(len(p) >= 2 and p[1] == body for p in (ln.split() for ln in current.splitlines()))
