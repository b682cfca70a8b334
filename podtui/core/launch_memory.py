"""How every pod podtui has seen was launched, kept after the pod is gone, so that it can be created again
(docs/storage.md#recreate).

`spec_of(pod)` reads a pod's launch spec (image, GPU, cloud, disks, volume or network volume, ports, env, template,
data centre) from RunPod's record of it. `LaunchMemory` keeps one such spec per pod id in a small JSON file in
podtui's data folder (0600, replaced whole: `secret.write_private`), the last MAX_PODS seen. Env values that look
like credentials (`podtui.core.pod.redact_env`'s rule) are never written: their keys are kept alone, and a
recreate takes each value from this machine's environment (as `podtui create --env KEY` does) or refers to a RunPod
secret of that name (docs/storage.md#secret-references).

The demo's pods are remembered in memory only (`for_services`), for as long as the demo runs. Within one podtui every
caller shares one memory per file (`for_paths`), so the app's poll remembering cannot undo a `forget` in between. A
file that cannot be read is ignored with a warning and replaced at the next change, as the remembered forwards are
(podtui.core.forward_memory); two podtuis remembering at once: the last write wins, and each poll writes again. What
is written is cut to what can be read back (MAX_BYTES), the pods seen longest ago dropped first.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from podtui.core.demo_sandbox import SANDBOX_ENV
from podtui.core.gpu.catalogue import Cloud
from podtui.core.held_files import OnePerFile
from podtui.core.paths import Paths
from podtui.core.pod import Pod
from podtui.core.pod_spec import (
    CONTAINER_GB_RANGE,
    DEFAULT_CONTAINER_GB,
    DEFAULT_MOUNT,
    MAX_ENV_VALUE,
    MIN_VOLUME_GB,
    PodSpec,
    parse_ports,
)
from podtui.core.secret import write_private
from podtui.core.template_spec import is_reference, looks_secret, secret_reference
from podtui.core.user_files import Unusable, read_json_member
from podtui.core.visible import visible

if TYPE_CHECKING:
    from podtui.core.services import Services

log = logging.getLogger(__name__)

FILE_NAME = "launches.json"
MAX_PODS = 200  # the pods seen last; a terminated pod never says it is gone for good
MAX_BYTES = 4 << 20
RESAVE_AFTER_S = 3600.0  # a pod seen again with nothing changed is written at most this often (its "last seen")
# Set by RunPod (or the demo) when the pod starts, never by whoever launched it: not part of a launch spec
NOT_LAUNCHED = frozenset({"PUBLIC_KEY", SANDBOX_ENV})

SecretSource = Literal["env", "reference", "omit"]
SECRET_SOURCES: tuple[SecretSource, ...] = ("env", "reference", "omit")


class NotLaunchable(ValueError):
    """The pod cannot be launched again by podtui (a CPU pod, no image or GPU known); the message says why."""


def spec_of(pod: Pod) -> PodSpec:
    """The spec `pod` was launched with, as RunPod describes it now: env values in clear (a live pod's own, in
    memory; LaunchMemory drops the secret ones before writing). Not validated: `validate()` names what RunPod
    would refuse now. Raises NotLaunchable in words for a pod podtui cannot create."""
    if pod.gpu_count == 0:
        raise NotLaunchable(f"{pod.name} is a CPU pod: podtui creates GPU pods only")
    if not pod.gpu_name:
        raise NotLaunchable(f"RunPod did not say which GPU {pod.name} has")
    if not pod.image:
        raise NotLaunchable(f"RunPod did not say which image {pod.name} runs")
    try:
        cloud = Cloud((pod.cloud or "").upper())
    except ValueError:
        cloud = Cloud.COMMUNITY
    try:
        ports = parse_ports(pod.ports_spec or "")
    except ValueError:  # kept as RunPod wrote it: validate() says what is wrong
        ports = pod.ports_spec or ""
    container = int(pod.container_disk_gb) if pod.container_disk_gb is not None else DEFAULT_CONTAINER_GB
    container = max(container, CONTAINER_GB_RANGE[0])
    network = pod.network_volume
    volume_gb = 0 if network else int(pod.volume_gb or 0)
    if 0 < volume_gb < MIN_VOLUME_GB:
        volume_gb = MIN_VOLUME_GB
    return PodSpec(
        name=pod.name,
        gpu_type_id=pod.gpu_name,
        gpu_count=pod.gpu_count or 1,
        cloud=cloud,
        image=pod.image,
        container_gb=container,
        volume_gb=volume_gb,
        volume_mount_path=pod.volume_mount_path or DEFAULT_MOUNT,
        ports=ports,
        env=tuple((k, v) for k, v in pod.env if k not in NOT_LAUNCHED),
        # a network volume lives in one data centre: the pod must be made there (docs/storage.md#recreate)
        data_centre_ids=(pod.location,) if network and pod.location else (),
        network_volume_id=network,
        template_id=pod.template,
    )


@dataclass(frozen=True)
class LaunchRecord:
    """One pod's launch spec as remembered: env holds only values that are not secret; `secret_keys` the keys whose
    values were left out."""

    pod_id: str
    spec: PodSpec
    secret_keys: tuple[str, ...] = ()
    data_centre: str | None = None  # where the pod was (its spec pins it only for a network volume)
    seen_at: float = 0.0  # epoch s, the last answer that listed it
    status: str = ""  # as it was then

    @property
    def name(self) -> str:
        return self.spec.name

    def secrets_missing(self, environ: Mapping[str, str]) -> tuple[str, ...]:
        return tuple(k for k in self.secret_keys if k not in environ)

    def launch_spec(
        self, source: SecretSource, environ: Mapping[str, str] = os.environ
    ) -> tuple[PodSpec, tuple[str, ...]]:
        """The spec to create, each secret key's value per `source` (this machine's environment, a RunPod secret
        reference, or left out), and a line for each secret saying where its value comes from. With "env", a key
        not set here is left out, and said."""
        env = dict(self.spec.env)
        said: list[str] = []
        for key in self.secret_keys:
            if source == "env" and key in environ:
                env[key] = environ[key]
                said.append(f"{key} from this machine's environment")
            elif source == "reference":
                env[key] = secret_reference(key)
                said.append(f"{key} = {secret_reference(key)} (the RunPod secret must exist on the account)")
            else:
                why = "not set here" if source == "env" else "--secrets omit"
                said.append(f"{key} left out ({why})")
        order = [k for k, _ in self.spec.env] + [k for k in self.secret_keys if k in env]
        return replace(self.spec, env=tuple((k, env[k]) for k in order)), tuple(said)

    def as_json(self) -> dict[str, Any]:
        s = self.spec
        return {
            "pod_id": self.pod_id,
            "name": s.name,
            "seen_at": self.seen_at,
            "status": self.status,
            "data_centre": self.data_centre,
            "secret_keys": list(self.secret_keys),
            "spec": {
                "gpu_type_id": s.gpu_type_id,
                "gpu_count": s.gpu_count,
                "cloud": s.cloud.value,
                "image": s.image,
                "container_gb": s.container_gb,
                "volume_gb": s.volume_gb,
                "volume_mount_path": s.volume_mount_path,
                "network_volume_id": s.network_volume_id,
                "ports": s.ports,
                "env": dict(s.env),
                "template_id": s.template_id,
                "data_centre_ids": list(s.data_centre_ids),
            },
        }


def _storable(key: str, value: str) -> bool:
    """What the file keeps of an env pair and reads back: any key RunPod took (`my.var`, `A-B` too: podtui's own
    rule for new keys is not RunPod's), no NUL, no value longer than podtui sends."""
    return bool(key) and "\0" not in key and "\0" not in value and len(value) <= MAX_ENV_VALUE


def record_of(pod: Pod, seen_at: float) -> LaunchRecord:
    """`pod`'s launch spec with every credential-looking value dropped (its key kept), and every value the file
    cannot keep (`_storable`) treated alike: a recreate takes it as it takes a secret. Raises NotLaunchable."""
    spec = spec_of(pod)
    kept = tuple((k, v) for k, v in spec.env if _storable(k, v) and (is_reference(v) or not looks_secret(k, v)))
    kept_keys = {k for k, _ in kept}
    secret = tuple(k for k, _ in spec.env if k not in kept_keys and k and "\0" not in k)
    return LaunchRecord(
        pod.id, replace(spec, env=kept), secret, pod.location, seen_at, pod.status_raw or pod.status.value
    )


def _record_from_json(raw: object) -> LaunchRecord | None:
    """One remembered pod, or None when it is not one (a hand-edited or older file)."""
    if not isinstance(raw, dict):
        return None
    spec = raw.get("spec")
    if not isinstance(spec, dict):
        return None
    try:
        env = spec.get("env") or {}
        secret_keys = raw.get("secret_keys") or []
        if not isinstance(env, dict) or not isinstance(secret_keys, list):
            return None
        record = LaunchRecord(
            pod_id=_text(raw, "pod_id"),
            spec=PodSpec(
                name=_text(raw, "name"),
                gpu_type_id=_text(spec, "gpu_type_id"),
                gpu_count=_whole(spec, "gpu_count"),
                cloud=Cloud(_text(spec, "cloud")),
                image=_text(spec, "image"),
                container_gb=_whole(spec, "container_gb"),
                volume_gb=_whole(spec, "volume_gb"),
                volume_mount_path=_text(spec, "volume_mount_path"),
                ports=_text(spec, "ports", empty=True),
                env=_env_from_json(env),
                data_centre_ids=tuple(str(d) for d in spec.get("data_centre_ids") or () if isinstance(d, str)),
                network_volume_id=_maybe_text(spec, "network_volume_id"),
                template_id=_maybe_text(spec, "template_id"),
            ),
            secret_keys=tuple(k for k in secret_keys if isinstance(k, str) and k not in env),
            data_centre=_maybe_text(raw, "data_centre"),
            seen_at=float(raw.get("seen_at") or 0.0),
            status=_maybe_text(raw, "status") or "",
        )
    except (ValueError, TypeError):
        return None
    return record


def _env_from_json(env: Mapping[object, object]) -> tuple[tuple[str, str], ...]:
    """The env as written (`_storable`); a value that is not text is passed over. Not `check_env`: that is the
    rule for keys typed here, and RunPod takes others."""
    out = tuple((k, v) for k, v in env.items() if isinstance(k, str) and isinstance(v, str))
    for key, value in out:
        if not _storable(key, value):
            raise ValueError(key)
    return out


def _text(obj: Mapping[str, object], key: str, empty: bool = False) -> str:
    v = obj.get(key)
    if not isinstance(v, str) or not (v or empty):
        raise ValueError(key)
    return v


def _maybe_text(obj: Mapping[str, object], key: str) -> str | None:
    v = obj.get(key)
    return v if isinstance(v, str) and v else None


def _whole(obj: Mapping[str, object], key: str) -> int:
    v = obj.get(key)
    if not isinstance(v, int) or isinstance(v, bool):
        raise ValueError(key)
    return v


def _same(a: LaunchRecord, b: LaunchRecord) -> bool:
    """Nothing worth writing changed (the time it was last seen aside, up to RESAVE_AFTER_S)."""
    return replace(a, seen_at=0.0) == replace(b, seen_at=0.0) and b.seen_at - a.seen_at < RESAVE_AFTER_S


class LaunchMemory:
    """pod id -> its launch record, in `path` (None: in memory only, the demo's)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.warning: str | None = None  # why the file was ignored at the last load, in words
        self._lock = threading.Lock()
        self._records: dict[str, LaunchRecord] | None = None  # oldest first; None: not read yet
        self._stamp: tuple[int, int] | None = None  # the file's (mtime_ns, size) when read: another podtui wrote

    @classmethod
    def for_paths(cls, paths: Paths) -> LaunchMemory:
        """The memory of this data folder, one per file in this process: each has its own lock, so two would let a
        poll's remember write back a pod another caller had just forgotten."""
        return _HELD.for_paths(paths)

    @classmethod
    def for_services(cls, services: Services) -> LaunchMemory:
        """podtui's own file; for the demo, one memory per run that the app and its screens share, never written:
        the demo's pods are not the user's."""
        return _HELD.for_services(services)

    # --- reading ----------------------------------------------------------------------------------------

    def records(self) -> tuple[LaunchRecord, ...]:
        """Every remembered pod, the one seen last first."""
        with self._lock:
            # the last remembered first among those seen at the same moment
            return tuple(sorted(reversed(self._load().values()), key=lambda r: r.seen_at, reverse=True))

    def find(self, ref: str) -> LaunchRecord:
        """By pod id, or by name (the one seen last of that name); LookupError in words."""
        ref = ref.strip()
        records = self.records()
        found = next((r for r in records if r.pod_id == ref), None) or next((r for r in records if r.name == ref), None)
        if found is None:
            raise LookupError(f"podtui remembers no pod called or with the id {visible(ref)!r}")
        return found

    # --- changing ---------------------------------------------------------------------------------------

    def remember(self, pods: Iterable[Pod], seen_at: float) -> bool:
        """Each pod's launch spec as of `seen_at`; whether anything was written. A pod podtui cannot launch (a CPU
        pod) is passed over."""
        with self._lock:
            records = self._load()
            changed = False
            for pod in pods:
                try:
                    record = record_of(pod, seen_at)
                except NotLaunchable:
                    continue
                before = records.get(pod.id)
                if before is not None and _same(before, record):
                    continue
                records.pop(pod.id, None)  # re-added last: the most recently seen are kept past MAX_PODS
                records[pod.id] = record
                changed = True
            if changed:
                self._save(records)
            return changed

    def forget(self, ref: str) -> LaunchRecord:
        """Forget one pod (by id, or the one seen last of that name); LookupError when none is remembered."""
        found = self.find(ref)
        with self._lock:
            records = self._load()
            records.pop(found.pod_id, None)
            self._save(records)
        return found

    # --- the file ---------------------------------------------------------------------------------------

    def _load(self) -> dict[str, LaunchRecord]:
        """Under the lock. The records as the file holds them now, read again only when it changed."""
        if self.path is None:
            if self._records is None:
                self._records = {}
            return self._records
        try:
            st = self.path.stat()
        except FileNotFoundError:
            self._records, self._stamp = {}, None
            return self._records
        except OSError:
            st = None
        stamp = (st.st_mtime_ns, st.st_size) if st is not None else None
        if self._records is not None and stamp is not None and stamp == self._stamp:
            return self._records
        self._records, self._stamp = self._read(), stamp
        return self._records

    def _read(self) -> dict[str, LaunchRecord]:
        assert self.path is not None
        self.warning = None
        try:
            pods = read_json_member(self.path, "pods", list, MAX_BYTES)
        except Unusable as e:
            return self._ignored(str(e))
        if pods is None:
            return {}
        out: dict[str, LaunchRecord] = {}
        skipped = 0
        for raw_record in pods:
            record = _record_from_json(raw_record)
            if record is None:
                skipped += 1
                continue
            out.pop(record.pod_id, None)
            out[record.pod_id] = record
        if skipped:
            self._warn(f"{skipped} entr{'y' if skipped == 1 else 'ies'} in it could not be read and were skipped")
        return out

    def _save(self, records: dict[str, LaunchRecord]) -> None:
        """Under the lock: the last MAX_PODS seen, oldest first, as many as fit in MAX_BYTES (what _read takes)."""
        kept = dict(sorted(records.items(), key=lambda kv: kv[1].seen_at)[-MAX_PODS:])
        text = _file_text(kept)
        if len(text) > MAX_BYTES:
            text = _trimmed(kept)
            log.info(
                "remembered launches: %d pods kept of %d, to stay under %d bytes", len(kept), len(records), MAX_BYTES
            )
        self._records = kept
        if self.path is None:
            return
        write_private(self.path, text)
        try:
            st = self.path.stat()
            self._stamp = (st.st_mtime_ns, st.st_size)
        except OSError:
            self._stamp = None

    def _ignored(self, why: str) -> dict[str, LaunchRecord]:
        self._warn(f"ignored: {why}")
        return {}

    def _warn(self, what: str) -> None:
        assert self.path is not None
        self.warning = f"the remembered launches in {visible(str(self.path))}: {visible(what)}"
        log.warning("%s", self.warning)


def _file_text(records: Mapping[str, LaunchRecord]) -> str:
    """The file's text (ASCII: its length is its size)."""
    data = {"version": 1, "pods": [r.as_json() for r in records.values()]}
    return json.dumps(data, indent=1, ensure_ascii=True) + "\n"


def _trimmed(records: dict[str, LaunchRecord]) -> str:
    """Drop the records seen longest ago (first in `records`, which is changed) until the text fits in MAX_BYTES;
    one record too large alone is dropped whatever its age."""
    base = len(_file_text({}))
    sizes = {k: len(_file_text({k: r})) - base + 2 for k, r in records.items()}  # 2: the comma and line feed
    total = base + sum(sizes.values())
    for key in [k for k, size in sizes.items() if base + size > MAX_BYTES]:
        del records[key]
        total -= sizes[key]
    while total > MAX_BYTES and records:
        key = next(iter(records))
        del records[key]
        total -= sizes[key]
    text = _file_text(records)
    while len(text) > MAX_BYTES and records:  # the sizes are exact; this is only a guard
        del records[next(iter(records))]
        text = _file_text(records)
    return text


def remember_quietly(memory: LaunchMemory, pods: Iterable[Pod], seen_at: float) -> str | None:
    """remember(), for callers that go on whatever happens (the app's poll, `podtui pods`): what went wrong in
    words, or None."""
    try:
        memory.remember(pods, seen_at)
    except OSError as e:
        return f"could not remember how the pods were launched in {visible(str(memory.path))}: {e.strerror or e}"
    return memory.warning


_HELD = OnePerFile(LaunchMemory, FILE_NAME)
