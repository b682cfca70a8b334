"""Host keys, trusted on first use into podtui's own known-hosts file.

RunPod reuses IP:port pairs across pods (facts: SSH modes), so a direct-SSH key is pinned to the pod id,
not to the address; the gateway's key is pinned to its host and port.
"""

from __future__ import annotations

import threading
from pathlib import Path

import paramiko

from podtui.core.ssh.errors import HostKeyChanged

_lock = threading.Lock()


def gateway_name(host: str, port: int) -> str:
    return host if port == 22 else f"[{host}]:{port}"


def pod_name(pod_id: str) -> str:
    return f"pod:{pod_id}"


class HostKeyStore:
    def __init__(self, path: Path) -> None:
        self.path = path

    def _load(self) -> paramiko.HostKeys:
        keys = paramiko.HostKeys()
        if self.path.exists():
            keys.load(str(self.path))
        return keys

    def check(self, name: str, key: paramiko.PKey, label: str) -> bool:
        """True when the key was already known; False when it was new and is now remembered.

        Raises HostKeyChanged when `name` is pinned to a different key: never connect then.
        """
        with _lock:
            keys = self._load()
            known = keys.lookup(name)
            if known is not None and key.get_name() in known:
                if known[key.get_name()] == key:
                    return True
                raise HostKeyChanged(
                    f"REFUSED: the SSH host key of {label} has changed since podtui first connected "
                    f"(now {key.get_name()} {key.fingerprint}). If the pod was recreated this is expected: "
                    f"run `podtui ssh forget {name.removeprefix('pod:')}` and connect again. Otherwise someone "
                    "may be intercepting the connection."
                )
            if known is not None and len(known):
                # pinned with another key type: treat as a change as well
                raise HostKeyChanged(
                    f"REFUSED: {label} offered a {key.get_name()} host key but podtui pinned a "
                    f"{', '.join(known.keys())} key; run `podtui ssh forget {name.removeprefix('pod:')}` "
                    "if the pod was recreated."
                )
            keys.add(name, key.get_name(), key)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            keys.save(str(self.path))
            self.path.chmod(0o600)
            return False

    def forget(self, name: str) -> bool:
        with _lock:
            keys = self._load()
            if name not in keys:
                return False
            del keys[name]
            keys.save(str(self.path))
            return True
