"""What every command needs first: logging that cannot leak secrets, and the services (RunPod's or the demo's)."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import logging.handlers
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from podtui.core import profiles, secret
from podtui.core.api.client import RunPodApi
from podtui.core.api.deferred import DeferredApi
from podtui.core.api.errors import ApiAuthError
from podtui.core.config import (
    NO_KEY_HELP,
    Config,
    ConfigError,
    load_config,
    replace_hint,
    resolve_api_key,
    save_api_key,
)
from podtui.core.log_file import PrivateRotatingFileHandler, SafeLogFilter
from podtui.core.paths import Paths
from podtui.core.services import Services

if TYPE_CHECKING:  # paramiko (under podtui.core.ssh) and the API's HTTP side stay off the path to the first frame
    from podtui.core.api.v2 import V2Api
    from podtui.core.hf.token import FoundToken
    from podtui.core.ssh.connect import SshSettings
    from podtui.sim.server import SimApiServer
    from podtui.sim.simulator import Simulator


# the demo's accounts, as profiles: its own first (the default), then the team's (podtui.sim.demo_team); here, not
# there, so choosing one does not load the simulator before the first frame
DEMO_PROFILES = ("main", "team")


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


def profile_paths(paths: Paths, asked: str | None, demo: bool) -> Paths:
    """`paths` on the profile asked for (--profile, PODTUI_PROFILE), else on config.toml's default_profile; as they
    are when no profile is in use. An unknown name is a ConfigError listing the profiles. The demo's profiles are
    its own two accounts, and keep nothing of the user's (docs/profiles.md#the-demo)."""
    if demo:
        name = asked or paths.profile or DEMO_PROFILES[0]
        if name not in DEMO_PROFILES:
            raise ConfigError(f"no profile named {name!r} in the demo; its profiles: {', '.join(DEMO_PROFILES)}")
        return dataclasses.replace(paths, profile=name)
    _config, found = profiles.load(paths)
    chosen = found.choose(asked if asked is not None else paths.profile)
    if chosen is None:
        return paths
    return paths.for_profile(chosen.name, found.is_default(chosen.name))


@contextmanager
def open_session(
    demo: bool,
    paths: Paths | None = None,
    allow_no_key: bool = False,
    demo_sim: DemoSimulator | None = None,
) -> Iterator[Services]:
    """The services every command and the TUI work with: RunPod's, or the demo's simulated RunPod (started when
    first asked, stopped when the session ends, unless `demo_sim` is given: its owner stops it). allow_no_key: with
    no key anywhere, an API that finds the key once the welcome screen has stored one (until then every call fails
    with "no API key yet"), instead of the usage error.

    On a profile (`paths.profile`, or config.toml's default_profile) the key comes from that profile's source alone
    (docs/profiles.md#key-isolation); without one, as it always has."""
    paths = paths or Paths.default()
    setup_logging(paths)
    paths = profile_paths(paths, paths.profile, demo)
    where: dict[str, Any] = {"paths": paths, "transfer_work_dir": paths.data_dir / "transfer-work"}
    if demo:
        # the demo never reads config.toml's profiles (docs/profiles.md#the-demo), and has no key to store: the
        # welcome screen must not write one of the user's
        config = load_config(paths.unprofiled())
        name = paths.profile or DEMO_PROFILES[0]
        with contextlib.ExitStack() as stack:
            if demo_sim is None:
                demo_sim = stack.enter_context(demo_simulator(config))
            yield Services(
                DeferredApi(functools.partial(demo_sim.api_for, name)),
                demo=True,
                ssh_settings=demo_sim.ssh_settings,
                key_path=demo_sim.key_path,
                runpodctl=demo_sim.runpodctl,
                hf_endpoint=demo_sim.hub_endpoint,
                hf_token=demo_sim.hub_token,
                proxy_url=demo_sim.proxy_url,
                config=config,
                profile=name,
                profiles={n: "the demo's simulated account" for n in DEMO_PROFILES},
                profile_api=demo_sim.api_for,
                save_key=None,
                key_help="the demo needs no key; `podtui config set-key` stores one for your account",
                **where,
            )
        return
    config, found = profiles.load(paths)
    where["transfer_history"] = paths.data_dir / "transfers.json"  # the demo's transfers are not remembered
    where["profiles"] = {p.name: p.source for p in found.by_name.values()}
    where["profile_api"] = functools.partial(_profile_api, paths, found, config)
    # every profile's key variable, kept from ssh and editors whatever profile is in use (openssh.ssh_env)
    where["key_envs"] = tuple(p.key_env for p in found.by_name.values() if p.key_env is not None)
    profile = found.choose(paths.profile) if paths.profile is not None else None
    if profile is not None:
        yield _profile_services(paths, profile, profiles.config_for(config, profile), allow_no_key, where)
        return
    where["config"] = config
    where["save_key"] = functools.partial(save_api_key, paths)
    key = resolve_api_key(config)
    if key is None and allow_no_key:
        yield Services(DeferredApi(lambda: _api_once_a_key_exists(paths)), needs_key=True, **where)
        return
    if key is None:
        raise UsageError(NO_KEY_HELP)
    logging.getLogger(__name__).info("using API key %s", key)
    yield Services(_v2(key.value, config, replace_hint(key)), **where)


def _v2(key: str, config: Config, hint: str) -> V2Api:
    """RunPod's API with `key`; a refused key's message says how to replace it where it came from (`hint`)."""
    from podtui.core.api.graphql import GraphqlSdk
    from podtui.core.api.v2 import V2Api  # httpx and the runpod SDK load on the first request

    api = V2Api(key, timeout_s=config.api_timeout_s)
    api.rest.key_hint = hint
    graphql = api.balance.graphql
    if isinstance(graphql, GraphqlSdk):
        graphql.key_hint = hint
    return api


def _profile_services(
    paths: Paths, profile: profiles.Profile, config: Config, allow_no_key: bool, where: dict[str, Any]
) -> Services:
    """A profile's services: its key from its own source, its config, its folders. A key file not written yet opens
    the TUI on the welcome screen, which stores the key there; any other missing key is said by every request."""
    where = {**where, "config": config, "profile": profile.name, "key_help": profiles.key_help(profile)}
    where["save_key"] = functools.partial(profiles.store_key, paths, profile.name) if profile.key_file else None
    try:
        key = profiles.key_of(profile, paths)
    except profiles.NoProfileKey as e:
        if not allow_no_key:
            raise
        why = str(e)
        api = DeferredApi(lambda: _profile_api_once_a_key_exists(paths, profile, config, why))
        return Services(api, needs_key=profile.key_file, **where)
    logging.getLogger(__name__).info("profile %s: using API key %s", profile.name, key)
    return Services(_v2(key.value, config, profiles.replace_hint_for(profile)), **where)


def _profile_api_once_a_key_exists(paths: Paths, profile: profiles.Profile, config: Config, why: str) -> RunPodApi:
    try:
        key = profiles.key_of(profile, paths)
    except ConfigError as e:  # NoProfileKey too
        raise ApiAuthError(str(e) or why) from None
    return _v2(key.value, config, profiles.replace_hint_for(profile))


def _profile_api(paths: Paths, found: profiles.Profiles, config: Config, name: str) -> RunPodApi:
    """Profile `name`'s own API, from its own key (the accounts view asks for each): NoProfileKey when it has none."""
    profile = found.choose(name)
    assert profile is not None
    key = profiles.key_of(profile, paths)
    return _v2(key.value, config, profiles.replace_hint_for(profile))


@contextmanager
def demo_simulator(config: Config) -> Iterator[DemoSimulator]:
    """The demo's simulator for as long as the block runs (the TUI keeps one across a switch of profile), stopped
    at its end, a hang-up or a SIGTERM included."""
    sim = DemoSimulator(config)
    with _ends_on_hang_up() as ending:
        try:
            yield sim
        finally:
            ending.now = True  # a signal from here on must not cut the clean-up short
            sim.stop()


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
    try:
        config = load_config(paths)
        key = resolve_api_key(config)
    except ConfigError as e:  # said by every request, as a missing key is
        raise ApiAuthError(str(e)) from None
    if key is None:
        raise ApiAuthError("no RunPod API key yet: enter one on the welcome screen, or run `podtui config set-key`")
    return _v2(key.value, config, replace_hint(key))


class DemoSimulator:
    """The demo's simulated RunPod, started by whatever needs it first (a poll worker, `podtui exec`),
    so the first frame never waits for it. It has its own SSH key and known-hosts file, in its own
    temporary folder: the demo never touches the user's ~/.ssh."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self._lock = threading.Lock()
        self._sim: Simulator | None = None
        self._accounts: dict[str, SimApiServer] = {}  # the demo's other accounts, by profile
        self._stopped = False

    def _start(self) -> Simulator:
        with self._lock:
            if self._stopped:  # a worker asking after the demo ended must not start a simulator nobody stops
                raise RuntimeError("the demo has ended")
            if self._sim is None:
                from podtui.core.ssh.keys import generate_dedicated_key
                from podtui.sim.demo import demo_world
                from podtui.sim.demo_team import TEAM, team_world
                from podtui.sim.simulator import Simulator

                world = demo_world()
                sim = Simulator(world)
                key = generate_dedicated_key(sim.root / "demo_key", comment="podtui-demo")
                world.pub_key = key.public_line + " podtui-demo"
                # the demo's second account, on the same address and clock, answering its own key only
                self._accounts = {TEAM: sim.serve_account(team_world(world.clock))}
                self._sim = sim.start(background_ssh=True)
            return self._sim

    def api(self) -> RunPodApi:
        """The demo's own account's API."""
        return self.api_for(DEMO_PROFILES[0])

    def api_for(self, profile: str) -> RunPodApi:
        """The API of one of the demo's accounts, with that account's key alone."""
        from podtui.core.api.v2 import V2Api

        if profile not in DEMO_PROFILES:  # a name the demo does not have is a mistake, never its main account
            raise ConfigError(f"no profile named {profile!r} in the demo; its profiles: {', '.join(DEMO_PROFILES)}")
        sim = self._start()
        account = sim.api if profile == DEMO_PROFILES[0] else self._accounts[profile]
        return V2Api(account.api_key, account.url, timeout_s=self.config.api_timeout_s)

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
