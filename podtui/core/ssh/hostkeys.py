"""Host keys, trusted on first use into podtui's own known-hosts file.

RunPod reuses IP:port pairs across pods (facts: SSH modes), so a direct-SSH key is pinned to the pod id,
not to the address; the gateway's key is pinned to its host and port. A pod's container disk is wiped
when it stops, and its sshd makes new host keys on the next start, so a pin belongs to one run of the pod:
when the API says the pod started again since, the old pin is dropped and the new key trusted.
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

import paramiko

from podtui.core.ssh.errors import HostKeyChanged

_lock = threading.Lock()
log = logging.getLogger(__name__)
RUN_TOLERANCE_S = 600.0  # start times computed from polled uptimes drift by a poll interval or so


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

    @property
    def _runs_path(self) -> Path:
        return self.path.with_name(self.path.name + ".runs.json")

    def _runs(self) -> dict[str, float]:
        try:
            data = json.loads(self._runs_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return {k: float(v) for k, v in data.items() if isinstance(v, (int, float))} if isinstance(data, dict) else {}

    def check(self, name: str, key: paramiko.PKey, label: str, run_started: float | None = None) -> bool:
        """True when the key was already known; False when it was new and is now remembered.

        Raises HostKeyChanged when `name` is pinned to a different key: never connect then. `run_started`
        (direct SSH: when the pod's current run began, from the API) lets a restarted pod present new keys.
        """
        with _lock:
            keys = self._load()
            if run_started is not None:
                runs = self._runs()
                before = runs.get(name)
                if before is not None and abs(before - run_started) > RUN_TOLERANCE_S and name in keys:
                    log.info("%s restarted since its host key was pinned; trusting its new key", label)
                    del keys[name]
                runs[name] = run_started if before is None or name not in keys else before
                self._runs_path.parent.mkdir(parents=True, exist_ok=True)
                self._runs_path.write_text(json.dumps(runs), encoding="utf-8")
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
            if run_started is not None:
                runs = self._runs()
                runs[name] = run_started
                self._runs_path.write_text(json.dumps(runs), encoding="utf-8")
            return False

    def forget(self, name: str) -> bool:
        with _lock:
            keys = self._load()
            if name not in keys:
                return False
            del keys[name]
            keys.save(str(self.path))
            return True
