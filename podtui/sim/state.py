"""The simulated world kept in a folder across runs of `podtui sim --state DIR`.

DIR/world.json holds the account (balance, spend limit, SSH keys, secrets, network volumes, templates, the GPU
market's free GPUs per cloud and data centre and which pods hold some) and every pod with all its fields;
DIR/api_key the simulator's key, so clients set up once keep working. A world saved before the account had
volumes, templates or secrets, or before the market knew data centres, is read as having none and the usual stock.
It also holds the usage record billing answers from (billing.py); a world saved without one has no billing history
before the run that loads it. Both files are 0600 (pods' environments hold tokens) and written whole: a temporary
file renamed over the old one. The world stands still while no simulator runs: on loading, every pod's times move
on by how long it was off, so uptimes continue where they were and nothing is billed for the gap (the usage record
keeps calendar times, with the gap in it; a clock set back since the save cuts it at the new now). A file that
cannot be read as a saved world is refused in words and never overwritten. One simulator at a time holds DIR (a
lock), so two never write it.
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import logging
import os
import re
import secrets
import shutil
import stat
import threading
import types
from collections.abc import Collection
from pathlib import Path
from typing import Any, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

from podtui.core.secret import write_private
from podtui.sim import billing, datacentres
from podtui.sim.clock import SimClock
from podtui.sim.templates import SimTemplate
from podtui.sim.volumes import SimVolume
from podtui.sim.world import SimPod, World

STATE_FILE = "world.json"
KEY_FILE = "api_key"
LOCK_FILE = "sim.lock"
VERSION = 1
DIRECT = "direct_ssh"  # beside a pod's fields: it gets an sshd of its own when a simulator starts
SAVE_EVERY_S = 5.0  # besides every change the world announces (balance and renames are not announced)
_MAX_BYTES = 64 << 20
_KEY = re.compile(r"[A-Za-z0-9_-]{8,200}")
_POD_HINTS = get_type_hints(SimPod)
_VOLUME_HINTS = get_type_hints(SimVolume)
_TEMPLATE_HINTS = get_type_hints(SimTemplate)
log = logging.getLogger(__name__)


class StateError(Exception):
    """A state folder or file the simulator cannot use; said in words, and nothing in it is overwritten."""


# --- the world as JSON -----------------------------------------------------------------------------


def world_record(world: World, direct: Collection[str] = ()) -> dict[str, Any]:
    """Everything a later run needs, brought up to now first (the balance drained to this moment). direct: pods
    that have direct SSH even if their sshd is not listening now (a simulator clears their port until it is)."""
    with world.lock:
        world.advance()
        return {
            "version": VERSION,
            "saved_at": world.clock.now(),
            "balance": world.balance,
            "spend_limit": world.spend_limit,
            "boot_s": world.boot_s,
            "terminate_s": world.terminate_s,
            "restart_s": world.restart_s,
            "seed": world.seed,
            "user_id": world.user_id,
            "pub_key": world.pub_key,
            # free GPUs per cloud and data centre
            "market": {g.id: {c: dict(free) for c, free in g.stock.items()} for g in world.gpu_types.values()},
            "secrets": dict(world.secrets),
            "volumes": [dataclasses.asdict(v) for v in world.volumes.values()],
            "templates": [dataclasses.asdict(t) for t in world.templates.values()],
            # which pods drew GPUs from the market: a resume after a restart checks them
            "holdings": {pod_id: list(held) for pod_id, held in world.holdings().items()},
            # what every pod and volume was billed, when (terminated and deleted ones too)
            "usage": billing.usage_record(world.usage),
            "pods": [
                {**dataclasses.asdict(pod), DIRECT: pod.direct_ssh_port is not None or pod.id in direct}
                for pod in world.pods.values()
            ],
        }


def world_from_record(record: object, clock: SimClock | None = None) -> World:
    """The world `record` describes, living on `clock` (real time by default), its times moved on to the clock's
    now. Raises StateError saying what is wrong."""
    if not isinstance(record, dict):
        raise StateError("it is not a JSON object")
    if record.get("version") != VERSION:
        raise StateError(f"its version is {record.get('version')!r}, this podtui reads version {VERSION}")
    number = (int, float)
    for name, kind in (
        ("saved_at", number),
        ("balance", number),
        ("spend_limit", number),
        ("boot_s", number),
        ("terminate_s", number),
        ("seed", int),
        ("user_id", str),
        ("pub_key", str),
        ("market", dict),
        ("holdings", dict),
        ("pods", list),
    ):
        value = record.get(name)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise StateError(f"{name!r} is missing or of the wrong type")
    world = World(
        clock=clock,
        balance=float(record["balance"]),
        spend_limit=float(record["spend_limit"]),
        boot_s=float(record["boot_s"]),
        terminate_s=float(record["terminate_s"]),
        seed=int(record["seed"]),
    )
    restart_s = record.get("restart_s", 0.0)
    if not isinstance(restart_s, (int, float)) or isinstance(restart_s, bool) or not 0 <= restart_s < 3600:
        raise StateError("'restart_s' is of the wrong type")
    world.restart_s = float(restart_s)
    world.user_id = record["user_id"]
    world.pub_key = record["pub_key"]
    _restore_account(world, record)
    shift = max(0.0, world.clock.now() - float(record["saved_at"]))  # the world stood still while no simulator ran
    for i, saved in enumerate(record["pods"]):
        pod = _pod(saved, i, shift)
        if pod.id in world.pods:
            raise StateError(f"pod {pod.id!r} is there twice")
        world.add(pod)
    _restore_market(world, record["market"], record["holdings"])
    if "usage" in record:  # a world saved before it kept one has no billing history
        try:
            world.usage = billing.usage_from_record(record["usage"])
        except ValueError as e:
            raise StateError(f"its usage record is unreadable: {e}") from None
        # A clock set back since the save (shift is 0 then) would bill again what the record already holds after
        # now: the record ends at now instead, so no second is counted twice.
        if world.usage.forget_after(world.clock.now()):
            log.warning("the saved world's billing ran past this clock's now (set back?): cut at now")
    return world


_POD_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
LATEST_TIME = 253402300799.0  # 9999-12-31T23:59:59Z, the last instant RFC 3339 writes


def _pod(saved: object, index: int, shift: float) -> SimPod:
    if not isinstance(saved, dict):
        raise StateError(f"pod {index} is not a JSON object")
    known = {f.name for f in dataclasses.fields(SimPod)}
    values = {k: v for k, v in saved.items() if k in known}  # a field a later podtui added is left out
    for name, value in values.items():
        if not _fits(value, _POD_HINTS[name]):
            raise StateError(f"pod {index}'s {name!r} is of the wrong type")
    try:
        pod = SimPod(**values)
    except TypeError as e:  # a field without a default is missing
        raise StateError(f"pod {index} is incomplete ({e})") from None
    if not _POD_ID.fullmatch(pod.id):  # it names the pod's folder: never a path of its own
        raise StateError(f"pod {index}'s id {pod.id[:40]!r} is not letters, digits, '-' and '_'")
    if saved.get(DIRECT) is True and pod.direct_ssh_port is None:
        pod.direct_ssh_port = 22  # a simulator starting gives it its sshd's port
    for name in values:
        value = getattr(pod, name)
        if name.endswith("_at") and isinstance(value, (int, float)) and not isinstance(value, bool):
            if not 0 <= value < LATEST_TIME:  # NaN, inf and a year past 9999 would fail only later, in an answer
                raise StateError(f"pod {index}'s {name!r} is not a time")
            setattr(pod, name, float(value) + shift)
    return pod


def _restore_account(world: World, record: dict[str, Any]) -> None:
    """The account's secrets, network volumes and own templates (none in a world saved before it had them)."""
    secrets_ = record.get("secrets", {})
    if not _fits(secrets_, dict[str, str]):
        raise StateError("'secrets' is of the wrong type")
    world.secrets = dict(secrets_)
    for volume in _records(record, "volumes", SimVolume, _VOLUME_HINTS):
        world.volumes[volume.id] = volume
    for template in _records(record, "templates", SimTemplate, _TEMPLATE_HINTS):
        world.templates[template.id] = template
    for volume in world.volumes.values():
        if datacentres.find(volume.data_centre) is None:
            raise StateError(f"network volume {volume.id!r} is in {volume.data_centre!r}, which is no data center")


_Saved = TypeVar("_Saved", SimVolume, SimTemplate)


def _records(record: dict[str, Any], kind: str, cls: type[_Saved], hints: dict[str, Any]) -> list[_Saved]:
    saved = record.get(kind, [])
    if not isinstance(saved, list):
        raise StateError(f"{kind!r} is of the wrong type")
    out: list[_Saved] = []
    for i, item in enumerate(saved):
        if not isinstance(item, dict) or not all(k in hints and _fits(v, hints[k]) for k, v in item.items()):
            raise StateError(f"{kind} {i} is not a JSON object of the right fields")
        try:
            made = cls(**item)
        except TypeError as e:  # a field without a default is missing
            raise StateError(f"{kind} {i} is incomplete ({e})") from None
        if any(m.id == made.id for m in out):
            raise StateError(f"{kind} {made.id!r} is there twice")
        out.append(made)
    return out


def _restore_market(world: World, market: dict[str, Any], holdings: dict[str, Any]) -> None:
    for gpu_id, free in market.items():
        gpu = world.gpu_types.get(gpu_id)
        if gpu is None:
            continue  # a GPU type this podtui's market no longer has
        if _fits(free, dict[str, int]):  # saved before the market knew data centres: totals per cloud
            gpu.settle()
            for cloud, total in free.items():
                short = sum(gpu.stock.get(cloud, {}).values()) - total
                for centre in sorted(gpu.centres(cloud), key=lambda c: -gpu.free_in(cloud, c)):
                    took = min(short, gpu.free_in(cloud, centre)) if short > 0 else 0
                    gpu.take(cloud, centre, took)
                    short -= took
            continue
        if not _fits(free, dict[str, dict[str, int]]):
            raise StateError(f"the market's free GPUs of {gpu_id!r} are of the wrong type")
        gpu.stock = {cloud: dict(centres) for cloud, centres in free.items()}
    for pod_id, held in holdings.items():
        if not (
            isinstance(held, list)
            and len(held) == 4
            and _fits(held[:2], list[str])
            and _fits(held[2], int)
            and isinstance(held[3], bool)
        ):
            raise StateError(f"the GPUs pod {pod_id!r} holds are of the wrong type")
        gpu_id, cloud, count, holding = held
        if pod_id in world.pods and gpu_id in world.gpu_types:
            world.restore_holding(pod_id, gpu_id, cloud, count, holding)


def _fits(value: object, hint: Any) -> bool:
    """Whether a JSON value fits a field's annotation (the kinds SimPod uses; any other kind is taken as it is)."""
    origin = get_origin(hint)
    if hint is Any or hint is object:
        return True
    if hint is type(None):
        return value is None
    if origin in (Union, types.UnionType):
        return any(_fits(value, arg) for arg in get_args(hint))
    if origin is Literal:
        return value in get_args(hint)
    if origin is dict:
        key, item = get_args(hint) or (Any, Any)
        return isinstance(value, dict) and all(_fits(k, key) and _fits(v, item) for k, v in value.items())
    if origin is list:
        (item,) = get_args(hint) or (Any,)
        return isinstance(value, list) and all(_fits(v, item) for v in value)
    if isinstance(value, bool):
        return hint is bool
    if hint is float:
        return isinstance(value, (int, float))
    if isinstance(hint, type):
        return isinstance(value, hint)
    return True


# --- the folder ------------------------------------------------------------------------------------


class StateFolder:
    """DIR, held by this simulator (a lock released when it ends, however it ends)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.world_file = folder / STATE_FILE
        self.key_file = folder / KEY_FILE
        self._lock_fd: int | None = None
        self.loaded = False  # a saved world was read: only then do its pods say which folders are gone

    def open(self) -> StateFolder:
        try:
            if not self.folder.exists():
                self.folder.mkdir(mode=0o700, parents=True)
            elif not self.folder.is_dir():
                raise StateError(f"{self.folder} is not a folder")
            fd = os.open(self.folder / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError as e:
            raise StateError(f"cannot use {self.folder} as the simulator's folder: {e.strerror or e}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise StateError(f"another podtui sim is running with {self.folder}") from None
        self._lock_fd = fd
        return self

    def close(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def load_world(self, clock: SimClock | None = None) -> World | None:
        """The saved world, its times moved on to the clock's now; None when none was saved yet."""
        text = self._read(self.world_file)
        if text is None:
            return None
        try:
            world = world_from_record(json.loads(text), clock)
            self.loaded = True
            return world
        except ValueError as e:  # JSONDecodeError; StateError is not one
            raise StateError(self._refusal(f"it is not valid JSON ({e})")) from None
        except StateError as e:
            raise StateError(self._refusal(str(e))) from None

    def _refusal(self, why: str) -> str:
        return (
            f"{self.world_file} is not a simulated world podtui can read: {why}. It was left as it is; "
            "move it away to start afresh with the demo account"
        )

    def save_world(self, world: World, direct: Collection[str] = ()) -> None:
        write_private(self.world_file, json.dumps(world_record(world, direct), indent=1) + "\n")

    def api_key(self) -> str:
        """The key clients were given last time, or a new one (saved)."""
        text = self._read(self.key_file)
        if text is None:
            key = f"sim_{secrets.token_hex(16)}"
            write_private(self.key_file, f"{key}\n")
            return key
        if not _KEY.fullmatch(text.strip()):
            raise StateError(f"{self.key_file} does not hold an API key; it was left as it is")
        return text.strip()

    def forget_gone_pods(self, world: World) -> list[str]:
        """Remove the folders of pods the world no longer has (terminated: RunPod deletes their disks too); only a
        folder laid out as a simulated pod's (pods/ID/workspace and .rootfs) whose owner is gone. Their names."""
        removed = []
        for entry in sorted((self.folder / "pods").glob("*")):  # Simulator keeps every pod's folder in pods/
            pod = world.pods.get(entry.name)
            if (pod is not None and pod.status != "TERMINATED") or entry.is_symlink() or not entry.is_dir():
                continue
            if (entry / "workspace").is_dir() and (entry / ".rootfs").is_dir():
                shutil.rmtree(entry, ignore_errors=True)
                removed.append(entry.name)
        return removed

    def _read(self, path: Path) -> str | None:
        """The file's text; None when it is not there. A FIFO, a device or a link is refused, never opened."""
        try:
            st = path.lstat()
        except FileNotFoundError:
            return None
        except OSError as e:
            raise StateError(f"cannot read {path}: {e.strerror or e}") from None
        if not stat.S_ISREG(st.st_mode):
            raise StateError(f"{path} is not a regular file; it was left as it is")
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
            with os.fdopen(fd, "rb") as f:
                data = f.read(_MAX_BYTES + 1)
        except OSError as e:
            raise StateError(f"cannot read {path}: {e.strerror or e}") from None
        if len(data) > _MAX_BYTES:
            raise StateError(f"{path} is larger than a saved world ever is; it was left as it is")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            why = self._refusal("it is not UTF-8 text") if path == self.world_file else f"{path} is not text"
            raise StateError(why) from None


# --- saving as the world changes -------------------------------------------------------------------


class WorldKeeper:
    """Saves the world to its folder soon after every change the world announces (a pod created, started,
    stopped or terminated; the account's keys), every SAVE_EVERY_S besides, and once more when stopped."""

    def __init__(self, world: World, folder: StateFolder, every_s: float = SAVE_EVERY_S) -> None:
        self.world = world
        self.folder = folder
        self.every_s = every_s
        self.error: OSError | None = None  # the last save's failure (a full disk), None once one succeeds
        self._changed = threading.Event()
        self._ending = threading.Event()
        self._thread: threading.Thread | None = None
        self._save_lock = threading.Lock()
        self._last = ""
        self.wanted_direct: set[str] = set()  # pods with direct SSH whose sshd may not be listening yet

    def start(self) -> WorldKeeper:
        w = self.world
        for listeners in (w.pod_created_listeners, w.pod_started_listeners, w.pod_stopped_listeners):
            listeners.append(self._on_change)
        w.pub_key_listeners.append(self._on_change)
        w.changed_listeners.append(lambda: self._on_change(None))
        self.save()
        self._thread = threading.Thread(target=self._run, name="sim-state", daemon=True)
        self._thread.start()
        return self

    def _on_change(self, _what: object) -> None:
        self._changed.set()  # the world's lock may be held here (a stop): the saving thread saves

    def _run(self) -> None:
        while not self._ending.is_set():
            self._changed.wait(self.every_s)
            self._changed.clear()
            if not self._ending.is_set():
                self.save()

    def save(self, always: bool = False) -> None:
        """Write the world unless only the time moved since the last write (always: the last save, whose time is
        when the world stops standing)."""
        with self._save_lock:
            record = world_record(self.world, self.wanted_direct)
            text = json.dumps(record, indent=1)
            same = json.dumps({**record, "saved_at": None}, indent=1)
            if same == self._last and not always:
                return
            try:
                write_private(self.folder.world_file, text + "\n")
            except OSError as e:
                if self.error is None or str(e) != str(self.error):
                    log.warning("cannot save the simulated world to %s: %s", self.folder.world_file, e)
                self.error = e
                return
            self.error = None
            self._last = same

    def stop(self) -> None:
        self._ending.set()
        self._changed.set()
        if self._thread is not None:
            self._thread.join(10)
        self.save(always=True)
