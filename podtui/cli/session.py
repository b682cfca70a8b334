"""What every command needs first: logging that cannot leak secrets, and the services (RunPod's or the demo's)."""

from __future__ import annotations

import functools
import logging
import logging.handlers
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from podtui.core import secret
from podtui.core.api.client import RunPodApi
from podtui.core.api.deferred import DeferredApi
from podtui.core.api.errors import ApiAuthError
from podtui.core.config import NO_KEY_HELP, Config, load_config, resolve_api_key, save_api_key
from podtui.core.log_file import PrivateRotatingFileHandler, SafeLogFilter
from podtui.core.paths import Paths
from podtui.core.services import Services

if TYPE_CHECKING:  # paramiko (under podtui.core.ssh) and the API's HTTP side stay off the path to the first frame
    from podtui.core.hf.token import FoundToken
    from podtui.core.ssh.connect import SshSettings
    from podtui.sim.simulator import Simulator


class UsageError(Exception):
    """Something the user can fix; printed as one line, exit status 2."""


_log_handler: logging.Handler | None = None


def setup_logging(paths: Paths, verbose: bool = False) -> None:
    global _log_handler
    root = logging.getLogger()
    if _log_handler is not None:
        return
    handler: logging.Handler
    try:
        secret.private_dir(paths.log_dir)
        # 0600 from the first byte, and after every rollover too (a plain RotatingFileHandler makes 0644 files)
        handler = PrivateRotatingFileHandler(paths.log_file, maxBytes=2_000_000, backupCount=3, encoding="utf-8")
    except OSError:
        handler = logging.NullHandler()  # a read-only home must not stop the app
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(SafeLogFilter())
    _log_handler = handler
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    for noisy in ("urllib3", "paramiko", "asyncio", "httpx", "httpcore"):  # httpx logs every request at INFO
        logging.getLogger(noisy).setLevel(logging.WARNING)
    threading.excepthook = log_thread_exception


def log_thread_exception(args: threading.ExceptHookArgs) -> None:
    """A library's own thread that dies (paramiko's SFTP prefetch, when a link drops mid-download) would print its
    traceback over the full-screen app. The log keeps it; what the user needs, the failing transfer says itself."""
    if args.exc_type is SystemExit or args.exc_value is None:
        return
    name = args.thread.name if args.thread is not None else "?"
    logging.getLogger("podtui.thread").error("thread %s ended with an error", name, exc_info=args.exc_value)


@contextmanager
def open_session(demo: bool, paths: Paths | None = None, allow_no_key: bool = False) -> Iterator[Services]:
    """The services every command and the TUI work with: RunPod's, or the demo's simulated RunPod (started when
    first asked, stopped when the session ends). allow_no_key: with no key anywhere, an API that finds the key once
    the welcome screen has stored one (until then every call fails with "no API key yet"), instead of the usage
    error."""
    paths = paths or Paths.default()
    setup_logging(paths)
    config = load_config(paths)
    where: dict[str, Any] = {
        "config": config,
        "paths": paths,
        "save_key": functools.partial(save_api_key, paths),
        "transfer_work_dir": paths.data_dir / "transfer-work",
    }
    if demo:
        demo_sim = DemoSimulator(config)
        with _ends_on_hang_up() as ending:
            try:
                yield Services(
                    DeferredApi(demo_sim.api),
                    demo=True,
                    ssh_settings=demo_sim.ssh_settings,
                    key_path=demo_sim.key_path,
                    runpodctl=demo_sim.runpodctl,
                    hf_endpoint=demo_sim.hub_endpoint,
                    hf_token=demo_sim.hub_token,
                    proxy_url=demo_sim.proxy_url,
                    **where,
                )
            finally:
                ending.now = True  # a signal from here on must not cut the clean-up short
                demo_sim.stop()
        return
    where["transfer_history"] = paths.data_dir / "transfers.json"  # the demo's transfers are not remembered
    key = resolve_api_key(config)
    if key is None and allow_no_key:
        yield Services(DeferredApi(lambda: _api_once_a_key_exists(paths)), needs_key=True, **where)
        return
    if key is None:
        raise UsageError(NO_KEY_HELP)
    logging.getLogger(__name__).info("using API key %s", key)
    from podtui.core.api.v2 import V2Api  # httpx and the runpod SDK load on the first request

    yield Services(V2Api(key.value, timeout_s=config.api_timeout_s), **where)


class _Ending:
    now = False


@contextmanager
def _ends_on_hang_up() -> Iterator[_Ending]:
    """A closed terminal (SIGHUP) or a SIGTERM would end the process on the spot, with no `finally` run: the demo's
    simulator would leave its sshds' and pods' processes and its temporary folder behind. Here they raise
    SystemExit in the main thread instead (Textual's event loop lets it through), so everything unwinds through
    the clean-up; once that has begun, they are ignored until it is done."""
    ending = _Ending()
    if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
        yield ending
        return

    def end(signum: int, _frame: object) -> None:
        if not ending.now:
            ending.now = True
            raise SystemExit(128 + signum)

    wanted = [s for s in (getattr(signal, "SIGHUP", None), signal.SIGTERM) if s is not None]
    before = {s: signal.signal(s, end) for s in wanted}
    try:
        yield ending
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


def _api_once_a_key_exists(paths: Paths) -> RunPodApi:
    config = load_config(paths)
    key = resolve_api_key(config)
    if key is None:
        raise ApiAuthError("no RunPod API key yet: enter one on the welcome screen, or run `podtui config set-key`")
    from podtui.core.api.v2 import V2Api

    return V2Api(key.value, timeout_s=config.api_timeout_s)


class DemoSimulator:
    """The demo's simulated RunPod, started by whatever needs it first (a poll worker, `podtui exec`),
    so the first frame never waits for it. It has its own SSH key and known-hosts file, in its own
    temporary folder: the demo never touches the user's ~/.ssh."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self._lock = threading.Lock()
        self._sim: Simulator | None = None
        self._stopped = False

    def _start(self) -> Simulator:
        with self._lock:
            if self._stopped:  # a worker asking after the demo ended must not start a simulator nobody stops
                raise RuntimeError("the demo has ended")
            if self._sim is None:
                from podtui.core.ssh.keys import generate_dedicated_key
                from podtui.sim.demo import demo_world
                from podtui.sim.simulator import Simulator

                world = demo_world()
                sim = Simulator(world)
                key = generate_dedicated_key(sim.root / "demo_key", comment="podtui-demo")
                world.pub_key = key.public_line + " podtui-demo"
                self._sim = sim.start(background_ssh=True)
            return self._sim

    def api(self) -> RunPodApi:
        from podtui.core.api.v2 import V2Api

        sim = self._start()
        return V2Api(sim.api.api_key, sim.api.url, timeout_s=self.config.api_timeout_s)

    def ssh_settings(self) -> SshSettings:
        from podtui.core.ssh.connect import SshSettings

        sim = self._start()
        # where the pods take SSH comes from the API (their ssh.proxy and ssh.direct), as with RunPod; the demo
        # keeps only its own key and known-hosts file, so it never touches ~/.ssh
        return SshSettings(
            known_hosts=sim.root / "known_hosts",
            key_path=sim.root / "demo_key",
            use_agent=False,
            search_home=False,
        )

    def key_path(self) -> Path:
        return self._start().root / "id_ed25519_runpod"

    def runpodctl(self) -> str:
        """The demo's runpodctl on this machine: the simulator's stand-in, relaying through its local relay."""
        from podtui.sim.relay import install_runpodctl

        sim = self._start()
        with self._lock:
            path = sim.root / "bin" / "runpodctl"
            if not path.exists():
                install_runpodctl(path.parent, sim.relay.address)
        return str(path)

    def hub_endpoint(self) -> str:
        """The simulated Hugging Face Hub (the demo pods reach the same one)."""
        return self._start().hub.endpoint

    def proxy_url(self) -> str:
        """The simulated proxy in front of the demo pods' HTTP ports: RunPod's proxy.runpod.net cannot reach them."""
        return self._start().proxy_url

    def hub_token(self) -> FoundToken:
        """The demo's token: a read token of a user who accepted the gated repo's license. The user's own token
        never goes to the simulator."""
        from podtui.core.hf.token import found

        return found(self._start().hub.token("read"), "demo")

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            if self._sim is not None:
                self._sim.stop()
