"""Host keys, trusted on first use into podtui's own known-hosts file.

RunPod reuses IP:port pairs across pods (docs/runpod-facts.md#ssh-direct), so a direct-SSH key is pinned to the pod id,
not to the address; the gateway's key is pinned to its host and port. A pod's container disk is wiped
when it stops, and its sshd makes new host keys on the next start, so a pin belongs to one run of the pod:
when the API says the pod started again since, the old pin is dropped and the new key trusted.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import quote

import paramiko

from podtui.core.secret import write_private
from podtui.core.ssh.errors import HostKeyChanged, SshError
from podtui.core.user_files import NotAFile, read_user_file

_lock = threading.Lock()
log = logging.getLogger(__name__)
RUN_TOLERANCE_S = 600.0  # a start computed from a fetched uptime is off by the request's time and a second's rounding


def _safe(text: str) -> str:
    # A known-hosts line lists its host names separated by commas and ends at a line feed: a pod id or host from
    # the API holding either would write extra names, or extra lines. Anything but plain name characters is
    # percent-encoded (ids and host names as RunPod makes them come out unchanged).
    return quote(text, safe="-._~:[]")


def gateway_name(host: str, port: int) -> str:
    host = _safe(host)
    return host if port == 22 else f"[{host}]:{port}"


def pod_name(pod_id: str) -> str:
    return f"pod:{_safe(pod_id)}"


def is_pod_name(name: str) -> bool:
    return name.startswith("pod:")


class HostKeyStore:
    def __init__(self, path: Path) -> None:
        self.path = path

    def _load(self) -> paramiko.HostKeys:
        keys = paramiko.HostKeys()
        # read once, as a regular file (a FIFO put there would hang every connection), then parsed from memory
        for number, line in enumerate(self._read(self.path).splitlines(), 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            try:
                entry = paramiko.hostkeys.HostKeyEntry.from_line(line, number)
            except (paramiko.SSHException, paramiko.hostkeys.InvalidHostKey) as e:
                # as OpenSSH and paramiko's own loader do: a damaged line is skipped, never fatal to every connect
                log.warning("%s line %d is not a host key line, skipped: %s", self.path, number, e)
                continue
            if entry is not None and entry.key is not None:
                for name in entry.hostnames:
                    keys.add(name, entry.key.get_name(), entry.key)
        return keys

    @staticmethod
    def _read(path: Path) -> str:
        try:
            return read_user_file(path).decode("utf-8", errors="replace")
        except FileNotFoundError:
            return ""
        except NotAFile as e:
            raise SshError(str(e)) from None

    @property
    def _runs_path(self) -> Path:
        return self.path.with_name(self.path.name + ".runs.json")

    def _runs(self) -> dict[str, float]:
        try:
            data = json.loads(self._read(self._runs_path) or "{}")
        except (OSError, ValueError):
            return {}
        return {k: float(v) for k, v in data.items() if isinstance(v, (int, float))} if isinstance(data, dict) else {}

    def check(self, name: str, key: paramiko.PKey, label: str, run_started: float | None = None) -> bool:
        """True when the key was already known; False when it was new and is now remembered.

        Raises HostKeyChanged when `name` is pinned to a different key: never connect then. `run_started`
        (direct SSH: when the pod's current run began, from the API) lets a restarted pod present new keys: only a
        run later than the pinned key's, never an earlier one (an old look at the pod, not a restart).
        """
        with _lock:
            keys = self._load()
            runs = self._runs()
            before = runs.get(name)
            later = run_started is not None and before is not None and run_started - before > RUN_TOLERANCE_S
            if later and name in keys:
                log.info("%s restarted since its host key was pinned; trusting its new key", label)
                del keys[name]
            known = keys.lookup(name)
            if known is not None and key.get_name() in known and known[key.get_name()] == key:
                if run_started is not None and before is None:  # pinned before its runs were kept
                    runs[name] = run_started
                    write_private(self._runs_path, json.dumps(runs))
                return True
            if known is not None and len(known):
                raise HostKeyChanged(_changed(name, label, key, known))
            keys.add(name, key.get_name(), key)
            self._save(keys)
            if run_started is not None:
                runs[name] = run_started if before is None else max(before, run_started)
                write_private(self._runs_path, json.dumps(runs))
            return False

    def _save(self, keys: paramiko.HostKeys) -> None:
        # the owner's only from the first byte (paramiko's own save writes with the umask's mode)
        write_private(
            self.path,
            "".join(
                f"{host} {kind} {pkey.get_base64()}\n"
                for host, by_kind in keys.items()
                for kind, pkey in by_kind.items()
            ),
        )

    def forget(self, name: str) -> list[str]:
        """Drop the keys pinned for `name`; returns what they were ("ssh-ed25519 SHA256:..."), none if none."""
        with _lock:
            keys = self._load()
            if name not in keys:
                return []
            gone = [f"{kind} {pkey.fingerprint}" for kind, pkey in keys[name].items()]
            del keys[name]
            self._save(keys)
            return gone


def _changed(name: str, label: str, key: paramiko.PKey, known: Mapping[str, paramiko.PKey]) -> str:
    """Why the connection was refused, and what to do: which depends on what changed its key."""
    pinned = ", ".join(known.keys())
    offered = f"{key.get_name()} {key.fingerprint}"
    if is_pod_name(name):
        # A pod's sshd makes new host keys when its container is recreated (a new pod reusing the id's address)
        return (
            f"REFUSED: the SSH host key of {label} has changed since podtui first connected (pinned: "
            f"{pinned}; now {offered}). If the pod was recreated or reset this is expected: run "
            f"`podtui ssh forget {name.removeprefix('pod:')}` and connect again. Otherwise someone may be "
            "intercepting the connection."
        )
    # RunPod's gateway keeps its key whatever happens to pods: a change is never routine
    return (
        f"REFUSED: the host key of RunPod's SSH gateway {label} has changed since podtui first connected "
        f"(pinned: {pinned}; now {offered}). Recreating or restarting pods never changes it, so someone may "
        "be intercepting the connection: do not connect. Only if RunPod has announced a new gateway key, "
        "run `podtui ssh forget --gateway` and compare the fingerprint it shows with RunPod's."
    )
