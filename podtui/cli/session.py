"""What every command needs first: logging that cannot leak secrets, and an API (RunPod's or the demo's)."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from podtui.core import secret
from podtui.core.api import SdkApi
from podtui.core.config import NO_KEY_HELP, Config, load_config, resolve_api_key
from podtui.core.paths import Paths


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
    api: SdkApi
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
        from podtui.sim.demo import start_demo_api

        sim = start_demo_api()
        try:
            api = SdkApi(sim.api_key, sim.url, timeout_s=config.api_timeout_s, clock=sim.world.clock.now)
            yield Session(api, config, paths, True, sim.world.clock.now)
        finally:
            sim.stop()
        return
    key = resolve_api_key(config)
    if key is None:
        raise UsageError(NO_KEY_HELP)
    logging.getLogger(__name__).info("using API key %s", key)
    import time

    yield Session(SdkApi(key.value, timeout_s=config.api_timeout_s), config, paths, False, time.time)
