"""What every command needs first: logging that cannot leak secrets, and an API (RunPod's or the demo's)."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from podtui.core import secret
from podtui.core.api import RunPodApi, SdkApi
from podtui.core.api.deferred import DeferredApi
from podtui.core.config import NO_KEY_HELP, Config, load_config, resolve_api_key
from podtui.core.paths import Paths

if TYPE_CHECKING:
    from podtui.sim.server import SimApiServer


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
        paths.log_dir.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(paths.log_file, encoding="utf-8")
        os.chmod(paths.log_file, 0o600)
    except OSError:
        handler = logging.NullHandler()  # a read-only home must not stop the app
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(secret.RedactingFilter())
    _log_handler = handler
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    for noisy in ("urllib3", "paramiko", "asyncio"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


@dataclass
class Session:
    api: RunPodApi
    config: Config
    paths: Paths
    demo: bool
    clock: Callable[[], float]


@contextmanager
def open_session(demo: bool, paths: Paths | None = None) -> Iterator[Session]:
    paths = paths or Paths.default()
    setup_logging(paths)
    config = load_config(paths)
    if demo:
        # The simulator (and its GraphQL library) starts in the first worker that needs it, so the
        # first frame does not wait for it. Its clock runs in real time, like time.time.
        servers: list[SimApiServer] = []

        def build() -> RunPodApi:
            from podtui.sim.demo import start_demo_api

            servers.append(start_demo_api())
            return SdkApi(servers[0].api_key, servers[0].url, timeout_s=config.api_timeout_s)

        try:
            yield Session(DeferredApi(build), config, paths, True, time.time)
        finally:
            for server in servers:
                server.stop()
        return
    key = resolve_api_key(config)
    if key is None:
        raise UsageError(NO_KEY_HELP)
    logging.getLogger(__name__).info("using API key %s", key)
    yield Session(SdkApi(key.value, timeout_s=config.api_timeout_s), config, paths, False, time.time)
