"""Loading the runpod SDK off the path to the first frame.

`import runpod` costs seconds (its serverless half probes the CPU in a subprocess at import time), so
the app starts loading it in a background thread at launch and the first API call waits for it.
"""

from __future__ import annotations

import contextlib
import logging
import platform
import threading
from dataclasses import dataclass
from types import ModuleType
from typing import Any


@dataclass(frozen=True)
class Sdk:
    graphql: ModuleType  # runpod.api.graphql: run_graphql_query
    mutations: ModuleType  # runpod.api.mutations.pods: the SDK's own stop/resume/terminate documents
    user_mutations: ModuleType  # runpod.api.mutations.user
    error: ModuleType  # runpod.error
    requests: ModuleType

    def run(self, query: str, api_key: str) -> dict[str, Any]:
        result: dict[str, Any] = self.graphql.run_graphql_query(query, api_key=api_key)
        return result


_lock = threading.Lock()
_sdk: Sdk | None = None
_failure: BaseException | None = None


def load() -> Sdk:
    global _sdk, _failure
    with _lock:
        if _sdk is not None:
            return _sdk
        root = logging.getLogger()
        handlers_before = list(root.handlers)
        try:
            _skip_cpu_probe()
            import requests
            import runpod.api.graphql as graphql
            import runpod.api.mutations.pods as mutations
            import runpod.api.mutations.user as user_mutations
            import runpod.error as error
        except Exception as e:  # a broken install must surface as one clear line, not a traceback
            _failure = e
            raise RuntimeError(f"the runpod SDK could not be loaded: {e}") from e
        finally:
            _restore_cpu_probe()
            # runpod's serverless half calls logging.basicConfig() at import, which would print
            # podtui's log lines over the TUI; keep the root logger as podtui set it up.
            for h in list(root.handlers):
                if h not in handlers_before:
                    root.removeHandler(h)
        _sdk = Sdk(graphql, mutations, user_mutations, error, requests)
        return _sdk


_cpu_probe: Any = None


def _skip_cpu_probe() -> None:
    """runpod.serverless runs py-cpuinfo at import, which spawns a second Python for ~1.3 s just to name
    the CPU for serverless debug output podtui never produces. Answer it cheaply during the import."""
    global _cpu_probe
    try:
        import cpuinfo  # type: ignore[import-untyped]
    except ImportError:
        return
    _cpu_probe = cpuinfo.get_cpu_info
    cpuinfo.get_cpu_info = lambda: {"brand_raw": platform.processor() or platform.machine()}


def _restore_cpu_probe() -> None:
    global _cpu_probe
    if _cpu_probe is not None:
        import cpuinfo

        cpuinfo.get_cpu_info = _cpu_probe
        _cpu_probe = None


def preload() -> threading.Thread:
    """Start importing the SDK now, in the background; later `load()` calls wait for it."""

    def run() -> None:
        with contextlib.suppress(RuntimeError):  # reported by the first real call
            load()

    t = threading.Thread(target=run, name="runpod-sdk-preload", daemon=True)
    t.start()
    return t
