"""Loading the runpod SDK's API half, off the path to the first frame.

`import runpod` runs the package's __init__, which imports its serverless worker (aiohttp, fastapi and a
py-cpuinfo probe that spawns a second Python): about 2 s here, for code podtui never calls. podtui uses the
SDK's API modules only (`runpod.api.graphql.run_graphql_query` and the mutation builders), so it loads
them under a bare `runpod` package object and skips that __init__. If that ever fails (a future SDK
layout), it falls back to the plain, slow `import runpod`.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import logging
import os
import platform
import sys
import threading
import types
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from podtui.core import floors
from podtui.core.api.errors import ApiClientTooOld

log = logging.getLogger(__name__)
_API_MODULES = ("runpod.api.graphql", "runpod.error")  # all podtui uses: the balance query


@dataclass(frozen=True)
class Sdk:
    graphql: ModuleType  # runpod.api.graphql: run_graphql_query
    error: ModuleType  # runpod.error
    requests: ModuleType
    light: bool  # loaded without runpod/__init__

    @property
    def tapped(self) -> bool:
        """The SDK's requests go through _RequestsTap, so run() can send them to a base URL of its own."""
        return isinstance(getattr(self.graphql, "requests", None), _RequestsTap)

    def run(self, query: str, api_key: str, base_url: str | None = None) -> dict[str, Any]:
        """base_url: where this call goes (the SDK itself reads RUNPOD_API_BASE_URL, one value for the process)."""
        _seen.reply = None
        _seen.base_url = base_url
        try:
            result: dict[str, Any] = self.graphql.run_graphql_query(query, api_key=api_key)
        finally:
            _seen.base_url = None
        return result

    @staticmethod
    def last_reply() -> HttpReply | None:
        """The HTTP status and Retry-After of this thread's last run(), None if no answer came."""
        return getattr(_seen, "reply", None)


@dataclass(frozen=True)
class HttpReply:
    status: int
    reason: str
    retry_after: str | None  # the header as sent: seconds, or an HTTP date


_seen = threading.local()


class _RequestsTap:
    """The `requests` the SDK's graphql module sees: the real module, except that post() goes to the caller's
    base URL and notes the reply's status and Retry-After. The SDK hands back only the body (or a JSON error on
    an HTML page), so without this a 429 or a 502 cannot be told from a cut-off answer."""

    def __init__(self, real: ModuleType) -> None:
        self._real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def post(self, *args: Any, **kwargs: Any) -> Any:
        base = getattr(_seen, "base_url", None)
        if base:  # this call's own API, whatever RUNPOD_API_BASE_URL says
            if args:
                args = (f"{base}/graphql", *args[1:])
            else:
                kwargs["url"] = f"{base}/graphql"
        response = self._real.post(*args, **kwargs)
        _seen.reply = HttpReply(
            int(response.status_code), str(response.reason or ""), response.headers.get("Retry-After")
        )
        return response


_lock = threading.Lock()
_sdk: Sdk | None = None


def load() -> Sdk:
    global _sdk
    with _lock:
        if _sdk is not None:
            return _sdk
        try:
            floors.require("runpod")
        except floors.InstallTooOld as e:  # else every call fails later, in words that blame RunPod
            raise ApiClientTooOld(str(e)) from None
        root = logging.getLogger()
        handlers_before = list(root.handlers)
        try:
            _sdk = _load()
        except Exception as e:  # a broken install must surface as one clear line, not a traceback
            raise RuntimeError(f"the runpod SDK could not be loaded: {e}") from e
        finally:
            # runpod's serverless half calls logging.basicConfig() at import, which would print
            # podtui's log lines over the TUI; keep the root logger as podtui set it up.
            for h in list(root.handlers):
                if h not in handlers_before:
                    root.removeHandler(h)
        return _sdk


def _load() -> Sdk:
    import requests

    light = "runpod" not in sys.modules and os.environ.get("PODTUI_SDK_FULL_IMPORT") != "1"
    if light:
        try:
            _install_bare_package()
            return _sdk_from_modules(requests, light=True)
        except Exception as e:
            log.warning("light load of the runpod SDK failed (%s); importing it whole", e)
            for name in [m for m in sys.modules if m == "runpod" or m.startswith("runpod.")]:
                del sys.modules[name]
    with _cheap_cpu_probe():
        import runpod  # noqa: F401  (the whole SDK; slow)

        return _sdk_from_modules(requests, light=False)


def _sdk_from_modules(requests: ModuleType, light: bool) -> Sdk:
    graphql, error = (importlib.import_module(m) for m in _API_MODULES)
    if getattr(graphql, "requests", None) is requests:  # a layout this tap does not know is left alone
        setattr(graphql, "requests", _RequestsTap(requests))  # noqa: B010  (a module attribute mypy cannot see)
    return Sdk(graphql, error, requests, light)


def _install_bare_package() -> None:
    spec = importlib.util.find_spec("runpod")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("runpod is not installed")
    pkg = types.ModuleType("runpod")
    pkg.__path__ = list(spec.submodule_search_locations)
    pkg.__spec__ = spec
    pkg.__file__ = spec.origin
    # run_graphql_query reads runpod.api_key before using the key it is given; podtui always gives one.
    pkg.api_key = None  # type: ignore[attr-defined]

    def complete(name: str) -> Any:
        # A program using podtui as a library may `import runpod` and use the rest of the SDK: the first
        # attribute podtui did not load runs the package's own __init__ in this module, once.
        if name.startswith("__") or pkg.__dict__.get("_podtui_completed"):
            raise AttributeError(name)
        if importlib.util.find_spec(f"runpod.{name}") is not None:
            raise AttributeError(name)  # a submodule: `from runpod import error` imports it as usual
        pkg.__dict__["_podtui_completed"] = True
        del pkg.__dict__["__getattr__"]
        with _cheap_cpu_probe():
            assert spec is not None and spec.loader is not None
            spec.loader.exec_module(pkg)
        return getattr(pkg, name)

    pkg.__dict__["__getattr__"] = complete
    sys.modules["runpod"] = pkg


@contextlib.contextmanager
def _cheap_cpu_probe() -> Any:
    """During a whole-SDK import, answer py-cpuinfo's probe (a ~1.3 s subprocess) cheaply: its only use is
    a CPU name in serverless debug output podtui never produces."""
    try:
        import cpuinfo  # type: ignore[import-untyped]
    except ImportError:
        yield
        return
    probe = cpuinfo.get_cpu_info
    cpuinfo.get_cpu_info = lambda: {"brand_raw": platform.processor() or platform.machine()}
    try:
        yield
    finally:
        cpuinfo.get_cpu_info = probe
