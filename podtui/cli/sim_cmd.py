"""`podtui sim`: the simulated RunPod on its own, for other processes (another shell's podtui, a script, the runpod
SDK) to use as they would RunPod.

Its first line on stdout is `export RUNPOD_API_BASE_URL=… RUNPOD_API_KEY=… HF_ENDPOINT=…`, flushed as soon as
everything listens, so a shell can take it with `eval`; the lines after it say what runs where. It runs in the
foreground until ctrl+c, SIGTERM or SIGHUP, then stops everything it started (sshds, pods' containers and
processes) and removes its temporary folder. With --state DIR the folder is DIR and stays, and the world is saved
to DIR/world.json as it changes (podtui/sim/state.py), so pods and their files outlive a restart.
Exit status: 0 stopped as asked, 2 a usage error (a taken port, a state folder it cannot use).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import logging
import os
import shlex
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from podtui.cli.session import UsageError
from podtui.core import secret
from podtui.core.paths import Paths

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from podtui.sim.server import SimApiServer
    from podtui.sim.simulator import Simulator
    from podtui.sim.state import StateFolder
    from podtui.sim.world import World


class SimFailed(Exception):
    """Something went wrong the user should hear of, once everything has stopped (exit 1)."""


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a port is a number, not {text!r}") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError("a port is from 1 to 65535")
    return port


def fill_parser(p: argparse.ArgumentParser, common: argparse.ArgumentParser) -> None:
    """`podtui sim`'s parser (its line in `podtui --help` is in podtui.cli.main.READY; it takes neither --demo
    nor --read-only, so not `common`)."""
    p.description = (
        "Run the simulated RunPod in the foreground: its API, SSH gateway, pods (with direct SSH "
        "where this machine has OpenSSH's sshd and root), runpodctl's relay and a Hugging Face Hub. The first "
        'line printed is `export RUNPOD_API_BASE_URL=... RUNPOD_API_KEY=... HF_ENDPOINT=...`: `eval "$(head -1 '
        'FILE)"` in another shell, and every podtui command there works against it as against RunPod.'
    )
    p.add_argument("--port", type=_port, metavar="PORT", help="the API's port (default: a free one)")
    p.add_argument(
        "--host",
        default="127.0.0.1",
        metavar="ADDR",
        help="the address the API listens on (127.0.0.1); the SSH gateway, relay and Hub stay on 127.0.0.1",
    )
    p.add_argument(
        "--state",
        type=Path,
        metavar="DIR",
        help="keep the simulator in DIR: pods' files, the world (DIR/world.json, saved as it changes) and the "
        "API key outlive a restart (default: a temporary folder, removed when it stops)",
    )


def main(args: argparse.Namespace, paths: Paths, demo: bool, read_only: bool) -> int:
    stopping = threading.Event()
    with _stops_on_signals(stopping):
        return run(args.port, args.host, args.state, stopping)


@contextlib.contextmanager
def _stops_on_signals(stopping: threading.Event) -> Iterator[None]:
    """ctrl+c, SIGTERM and a closed terminal ask for the clean stop (set from the start, so none of them can cut
    the start short and leave an sshd or a pod's container behind)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    wanted = [s for s in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)) if s is not None]
    before = {s: signal.signal(s, lambda _signum, _frame: stopping.set()) for s in wanted}
    try:
        yield
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


def run(port: int | None, host: str, state_dir: Path | None, stopping: threading.Event) -> int:
    from podtui.sim.state import StateError, StateFolder

    folder = None
    try:
        if state_dir is not None:
            folder = StateFolder(state_dir.expanduser().absolute()).open()
        world, api_key = _world_and_key(folder)
        api = _api_server(world, api_key, host, port)
        secret.register(api.api_key)
        _serve(world, api, folder, stopping)
    except StateError as e:
        raise UsageError(str(e)) from None
    except SimFailed as e:
        sys.stderr.write(f"podtui: {e}\n")
        return 1
    finally:
        if folder is not None:
            folder.close()
    return 0


def _world_and_key(folder: StateFolder | None) -> tuple[World, str | None]:
    from podtui.sim.demo import demo_world

    if folder is None:
        return _with_your_key(demo_world()), None
    world = folder.load_world()
    return (world or _with_your_key(demo_world())), folder.api_key()


def _with_your_key(world: World) -> World:
    """A new account starts with the user's dedicated key (~/.ssh/id_ed25519_runpod.pub) registered, if they have
    one, so `podtui exec` reaches the pods at once (a real account has it since `podtui keys setup`)."""
    from podtui.core.ssh.keys import DEDICATED_KEY
    from podtui.core.user_files import NotAFile, read_user_file

    public = Path(str(DEDICATED_KEY.expanduser()) + ".pub")
    with contextlib.suppress(OSError, NotAFile, UnicodeDecodeError):
        line = read_user_file(public, 16 << 10).decode("utf-8").strip().splitlines()
        if line and line[0].startswith("ssh-"):
            world.pub_key = line[0]
    return world


def _api_server(world: World, api_key: str | None, host: str, port: int | None) -> SimApiServer:
    from podtui.sim.server import SimApiServer

    try:
        return SimApiServer(world, api_key=api_key, host=host, port=port or 0)
    except OSError as e:
        if e.errno == errno.EADDRINUSE:
            raise UsageError(
                f"port {port} on {host} is taken (another program listens there): choose another --port, "
                "or leave --port out for a free one"
            ) from None
        if e.errno == errno.EACCES:
            raise UsageError(
                f"port {port} on {host} needs privileges podtui does not have: choose one above 1023"
            ) from None
        raise UsageError(f"cannot listen on {host}:{port or 'a free port'}: {e.strerror or e}") from None


def _serve(world: World, api: SimApiServer, folder: StateFolder | None, stopping: threading.Event) -> None:
    from podtui.sim.podshell import kill_leftovers
    from podtui.sim.sim_folder import end_containers
    from podtui.sim.simulator import Simulator
    from podtui.sim.state import WorldKeeper

    if folder is not None:  # what a killed run in this folder left running (a pod's container, its processes)
        end_containers(folder.folder)
        kill_leftovers(folder.folder / "pods")
        # only a world read back knows which pods are gone: a fresh demo world (world.json moved away) must not
        # take the old pods' files with it
        for gone in folder.forget_gone_pods(world) if folder.loaded else ():
            log.info("podtui sim: removed the folder of pod %s, which no longer exists", gone)
    sim = Simulator(world, root=folder.folder if folder is not None else None, api=api)
    keeper = WorldKeeper(world, folder) if folder is not None else None
    wanted_direct = [p.id for p in world.pods.values() if p.direct_ssh_port is not None]
    try:
        if keeper is not None:
            keeper.wanted_direct.update(wanted_direct)
            keeper.start()
        sim.start()  # a signal meanwhile waits for it: stop() needs a started simulator
        log.info("podtui sim: API on %s, folder %s", sim.api.url, sim.root)
        if not stopping.is_set():
            _announce(sim, folder, len(world.pods))
        while not stopping.is_set():  # not stopping.wait(): a signal handler setting it there could deadlock
            time.sleep(0.2)
    finally:
        try:
            sim.stop()
        finally:
            if keeper is not None:
                keeper.stop()
        log.info("podtui sim: stopped")
    if keeper is not None and keeper.error is not None:
        raise SimFailed(f"the world could not be saved to {keeper.folder.world_file}: {keeper.error}")


def _announce(sim: Simulator, folder: StateFolder | None, pods: int) -> None:
    from podtui.sim.relay import install_runpodctl
    from podtui.sim.sshd import SSHD, sshd_available

    runpodctl = install_runpodctl(sim.root / "bin", sim.relay.address)
    exports = {
        "RUNPOD_API_BASE_URL": _reachable(sim.api.url),
        "RUNPOD_API_KEY": sim.api.api_key,
        "HF_ENDPOINT": sim.hub.endpoint,
    }
    _say("export " + " ".join(f"{k}={shlex.quote(v)}" for k, v in exports.items()))
    gateway = "{}:{}".format(*sim.gateway.address)
    if sim.direct_ssh:
        direct = "on: every pod with 22/tcp on a public IP has its own OpenSSH sshd"
    elif not sshd_available():
        direct = f"off: needs root and OpenSSH's sshd ({SSHD}); pods are reached through the gateway"
    else:
        direct = "off"
    where = (
        f"{folder.folder} (the world is saved to {folder.world_file} as it changes; start again with the same "
        "--state to carry on)"
        if folder is not None
        else f"{sim.root}, removed when it stops (--state DIR keeps the pods)"
    )
    count = len(sim.world.pub_key.split("\n")) if sim.world.pub_key.strip() else 0
    keys = (
        f"{count} registered"
        if count
        else "none yet (`podtui keys setup` registers yours; pods take it when they next start)"
    )
    lines = [
        f"podtui sim: a simulated RunPod with the demo account ({pods} pods), process {os.getpid()}",
        f"  API          {exports['RUNPOD_API_BASE_URL']} (REST /v2 and GraphQL /graphql), key in the line above"
        + ("" if sim.api.url == exports["RUNPOD_API_BASE_URL"] else f"; listening on {sim.api.url}"),
        f"  SSH gateway  {gateway} (each pod's ssh.proxy in REST v2 names it; or PODTUI_SSH_GATEWAY={gateway})",
        f"  direct SSH   {direct}",
        "  pods         "
        + ("each in a container of its own" if sim.isolated else "plain shells (no namespaces on this machine)"),
        f"  runpodctl    relay on {sim.relay.address}; for this machine's side: PODTUI_RUNPODCTL={runpodctl}",
        f"  Hub          {sim.hub.endpoint} (a Hugging Face Hub stand-in; the pods reach it too)",
        f"  HTTP proxy   {sim.proxy_url} (RunPod's, for the pods' HTTP ports; for podtui elsewhere: "
        f'proxy_url = "{sim.proxy_url}" in config.toml)',
        f"  account keys {keys}",
        f"  folder       {where}",
        f'Use it from another shell: eval "$(head -1 FILE)" with this output saved in FILE. Stop it with ctrl+c '
        f"or `kill {os.getpid()}`.",
    ]
    for line in lines:
        _say(line)


def _reachable(url: str) -> str:
    """The API's address as a client here dials it (an API listening on every address answers on 127.0.0.1)."""
    for anywhere in ("//0.0.0.0:", "//[::]:", "//:::"):
        url = url.replace(anywhere, "//127.0.0.1:")
    return url


def _say(line: str) -> None:
    """One line, flushed at once: a reader (`head -1`) has it while the simulator runs on. A reader that left
    does not stop the simulator: what it would have printed goes nowhere."""
    try:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
    except OSError:
        with contextlib.suppress(OSError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
