"""Fixtures used across features: an isolated home for every test, a simulated RunPod reached over real HTTP (and
its SSH gateway, pods and Hub), the app on it, the CLI's environment, and tmux. Helpers that are not fixtures live
in tests/helpers/."""

from __future__ import annotations

import gc
import logging
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

# Every simulator in the suite (in this process and in the podtui processes tests start) answers GraphQL only for
# the balance: a pod operation that still went through GraphQL would fail its test (docs/runpod-facts.md#api-lifecycle).
os.environ["PODTUI_SIM_GRAPHQL"] = "balance-only"  # set, not defaulted: an exported value must not loosen it

from podtui.core.api import V2Api
from podtui.core.config import Config
from podtui.core.paths import Paths
from podtui.core.ssh.connect import SshSettings
from podtui.core.ssh.keys import KeyFile, generate_dedicated_key
from podtui.sim import exchange
from podtui.sim.clock import SimClock
from podtui.sim.demo import SCREENSHOT_EPOCH, demo_world
from podtui.sim.exchange import Exchange
from podtui.sim.hub import SimHub
from podtui.sim.relay import install_runpodctl
from podtui.sim.server import SimApiServer
from podtui.sim.simulator import Simulator
from podtui.transfer.history import TransferHistory
from podtui.transfer.queue import TransferQueue
from podtui.transfer.runner import TransferContext
from tests.helpers.app import build_test_app
from tests.helpers.console import SCROLLBACK
from tests.helpers.contract import ExchangeWatch, watching_exchanges
from tests.helpers.sim import find_pod
from tests.helpers.tmux import Tmux
from tests.helpers.transfer import MakeQueue

if TYPE_CHECKING:
    from podtui.ui.app import PodtuiApp


def pytest_configure(config: pytest.Config) -> None:
    """Python's collector, tuned for a long test run: each worker keeps every module and a growing heap, and with
    the default thresholds a full collection over it ran every few thousand allocations, a fifth of a Pilot test's
    time (bench: tests/pods took 114 s, 72 s tuned). Garbage is still collected, in fewer, larger passes."""
    gc.set_threshold(50_000, 20, 20)


def pytest_collection_finish(session: pytest.Session) -> None:
    """What importing the tests made lives for the whole run: kept out of every collection's scan."""
    gc.collect()
    gc.freeze()


@pytest.fixture(autouse=True)
def no_real_desktop(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reaches the real desktop: notify-send is never found, $TMUX is not the test's terminal's (an app
    would wrap its OSC notifications for it)."""
    from podtui.core.notify import desktop

    monkeypatch.setattr(desktop, "find_program", lambda name: None)
    monkeypatch.delenv("TMUX", raising=False)


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test reads or writes the real user's files, keys or RunPod settings."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var, sub in (
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_DATA_HOME", "data"),
        ("XDG_STATE_HOME", "state"),
        ("XDG_CACHE_HOME", "cache"),
    ):
        monkeypatch.setenv(var, str(home / sub))
    monkeypatch.delenv("RUNPOD_API_KEY", raising=False)
    if "RUNPOD_API_BASE_URL" in os.environ:
        monkeypatch.setenv("RUNPOD_API_BASE_URL", os.environ["RUNPOD_API_BASE_URL"])  # restored afterwards
    else:
        monkeypatch.delenv("RUNPOD_API_BASE_URL", raising=False)
    return home


@pytest.fixture(autouse=True)
def log_file_goes_with_the_test() -> Iterator[None]:
    """A command run in-process (main([...])) puts podtui's log file, with its redacting filter, on the root logger
    for the rest of the process: it goes with the test that made it, so later tests see their own logging only."""
    yield
    from podtui.cli import session

    handler, session._log_handler = session._log_handler, None
    if handler is not None:
        logging.getLogger().removeHandler(handler)
        handler.close()


@pytest.fixture(autouse=True)
def rest_v2_contract() -> Iterator[ExchangeWatch]:
    """Every REST v2 request podtui sends, and every answer the simulator gives but for a fault's, keeps RunPod's
    spec (tests/helpers/contract.py): a test whose exchanges break it fails at teardown."""
    with watching_exchanges() as watch:
        yield watch
    if watch.violations:
        pytest.fail(watch.report(), pytrace=False)


@pytest.fixture
def paths(isolated_home: Path) -> Paths:
    return Paths.default()


@pytest.fixture
def clock() -> SimClock:
    """Frozen at a fixed instant: figures on screen do not move unless a test moves them."""
    return SimClock(start=SCREENSHOT_EPOCH, frozen=True)


@pytest.fixture
def sim(clock: SimClock) -> Iterator[SimApiServer]:
    server = SimApiServer(demo_world(clock, boot_s=30.0)).start()
    yield server
    server.stop()


@pytest.fixture
def api(sim: SimApiServer) -> V2Api:
    return V2Api(sim.api_key, sim.url, timeout_s=5.0, clock=sim.world.clock.now)


@pytest.fixture
def user_key(tmp_path: Path) -> KeyFile:
    return generate_dedicated_key(tmp_path / "keys" / "id_ed25519_runpod", comment="tester")


@pytest.fixture
def full_sim(clock: SimClock, tmp_path: Path, user_key: KeyFile) -> Iterator[Simulator]:
    """API, SSH gateway and (where this machine has OpenSSH and runs as root) direct SSH, with the
    user's key registered on the simulated account."""
    world = demo_world(clock, boot_s=30.0)
    world.pub_key = user_key.public_line + " tester"
    sim = Simulator(world, root=tmp_path / "sim").start()
    yield sim
    sim.stop()


@pytest.fixture
def sim_api(full_sim: Simulator) -> V2Api:
    return V2Api(full_sim.api.api_key, full_sim.api.url, timeout_s=5.0, clock=full_sim.world.clock.now)


@pytest.fixture
def ssh_settings(full_sim: Simulator, tmp_path: Path, user_key: KeyFile) -> SshSettings:
    return SshSettings(
        known_hosts=tmp_path / "known_hosts",
        gateway=full_sim.gateway.address,
        key_path=user_key.path,
        use_agent=False,
        connect_timeout_s=5.0,
    )


@pytest.fixture
def make_full_app(full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings) -> Callable[..., PodtuiApp]:
    """The app on the whole simulator (API, SSH gateway, pods with real shells), reaching pods with the test's key;
    `kw` as for make_app."""

    def make(**kw: Any) -> PodtuiApp:
        return build_test_app(sim_api, full_sim.world.clock.now, **{"ssh_settings": lambda: ssh_settings, **kw})

    return make


@pytest.fixture
def make_app(sim: SimApiServer) -> Callable[..., PodtuiApp]:
    """The app on the simulated API, for Pilot tests anywhere in the suite. Its requests wait up to 10 s: on a
    loaded machine (the suite beside a pip install) a local answer can take several seconds, and a timed-out first
    poll is retried only after the poll interval."""

    def make(**kw: Any) -> PodtuiApp:
        return build_test_app(
            V2Api(sim.api_key, sim.url, timeout_s=10.0, clock=sim.world.clock.now), sim.world.clock.now, **kw
        )

    return make


@pytest.fixture
def cli_env(sim: SimApiServer, monkeypatch: pytest.MonkeyPatch) -> SimApiServer:
    """`podtui ...` in this process (main([...])) as a user with a key runs it, against the simulated API."""
    monkeypatch.setenv("RUNPOD_API_KEY", sim.api_key)
    monkeypatch.setenv("RUNPOD_API_BASE_URL", sim.url)
    return sim


@pytest.fixture
def full_cli_env(full_sim: Simulator, ssh_settings: SshSettings) -> dict[str, str]:
    """The environment of a `podtui` process as a user runs it against the whole simulator: the API key and the
    gateway in the environment, the SSH key in the config file."""
    cfg = Path(os.environ["XDG_CONFIG_HOME"]) / "podtui"
    cfg.mkdir(parents=True, exist_ok=True)
    (cfg / "config.toml").write_text(f'ssh_key = "{ssh_settings.key_path}"\n')
    host, port = full_sim.gateway.address
    return {
        **os.environ,
        "RUNPOD_API_KEY": full_sim.api.api_key,
        "RUNPOD_API_BASE_URL": full_sim.api.url,
        "PODTUI_SSH_GATEWAY": f"{host}:{port}",
    }


@pytest.fixture
def console_app(make_full_app: Callable[..., PodtuiApp]) -> Callable[[], PodtuiApp]:
    """The app whose consoles reach the simulated pods' shells."""
    return lambda: make_full_app(config=Config(console_scrollback=SCROLLBACK))


@pytest.fixture
def hub() -> Iterator[SimHub]:
    """A Hugging Face Hub stand-in on its own (the full simulator has one of its own for its pods)."""
    with SimHub() as h:
        yield h


@pytest.fixture
def history_path(tmp_path: Path) -> Path:
    """The transfer history of a queue a test makes."""
    return tmp_path / "data" / "transfers.json"


@pytest.fixture
def context(sim_api: V2Api, ssh_settings: SshSettings, tmp_path: Path) -> TransferContext:
    """What a transfer queue reaches the full simulator's pods with."""
    return TransferContext(lambda ref: find_pod(sim_api, ref), lambda: ssh_settings, tmp_path / "work")


@pytest.fixture
def make_queue(context: TransferContext, history_path: Path) -> Iterator[MakeQueue]:
    """Transfer queues on `context`, retrying quickly, closed after the test; `kw` as for TransferQueue."""
    made: list[TransferQueue] = []

    def make(**kw: object) -> TransferQueue:
        kw.setdefault("backoff_s", (0.2, 0.2, 0.2))
        q = TransferQueue(context, TransferHistory(history_path), **kw)  # type: ignore[arg-type]
        made.append(q)
        return q

    yield make
    for q in made:
        q.close()


@pytest.fixture
def runpodctl(full_sim: Simulator, tmp_path: Path) -> Path:
    """The simulator's runpodctl, in a folder of its own, talking to the simulator's relay."""
    return install_runpodctl(tmp_path / "bin", full_sim.relay.address)


@pytest.fixture
def local_runpodctl(runpodctl: Path, context: TransferContext, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The queue's runpodctl on this machine is the simulator's; quick re-joins keep the tests short."""
    monkeypatch.setattr("podtui.transfer.routes.runpodctl.JOIN_PAUSE_S", 0.1)
    context.runpodctl = str(runpodctl)
    return runpodctl


@pytest.fixture
def tmux(isolated_home: Path) -> Iterator[Tmux]:
    """A tmux server of the test's own, its sessions in the isolated home."""
    if shutil.which("tmux") is None:  # .ci/run installs it; say so rather than skip silently
        pytest.fail("tmux is not installed: run scripts/setup-test-env.sh", pytrace=False)
    t = Tmux(isolated_home)
    yield t
    t.kill()


@pytest.fixture
def exchanges() -> Iterator[list[Exchange]]:
    """Every request a simulator in this process answers during the test, bodies included (GraphQL ones too, whatever
    the mode or fault)."""
    seen: list[Exchange] = []
    exchange.listeners.append(seen.append)
    yield seen
    exchange.listeners.remove(seen.append)
