"""An API built on first use, in the thread that first needs it (a worker), not on the way to the first frame."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from podtui.core.api.client import RunPodApi
from podtui.core.pod import Pod, Snapshot

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from podtui.core.api.rest import EventStream
    from podtui.core.gpu.catalogue import GpuCatalogue
    from podtui.core.logs import LogRequest
    from podtui.core.pod_spec import CreatedPod, PodSpec


class DeferredApi:
    def __init__(self, build: Callable[[], RunPodApi]) -> None:
        self._build = build
        self._lock = threading.Lock()
        self._api: RunPodApi | None = None

    def get(self) -> RunPodApi:
        with self._lock:
            if self._api is None:
                self._api = self._build()
            return self._api

    def fetch_snapshot(self) -> Snapshot:
        return self.get().fetch_snapshot()

    def stop_pod(self, pod_id: str) -> None:
        self.get().stop_pod(pod_id)

    def fetch_pod(self, pod_id: str) -> Pod:
        return self.get().fetch_pod(pod_id)

    def start_pod(self, pod_id: str) -> None:
        self.get().start_pod(pod_id)

    def restart_pod(self, pod_id: str) -> None:
        self.get().restart_pod(pod_id)

    def terminate_pod(self, pod_id: str) -> None:
        self.get().terminate_pod(pod_id)

    def set_account_keys(self, pub_key: str) -> None:
        self.get().set_account_keys(pub_key)

    def account_keys(self) -> str:
        return self.get().account_keys()

    def gpu_types(self) -> GpuCatalogue:
        return self.get().gpu_types()

    def create_pod(self, spec: PodSpec) -> CreatedPod:
        return self.get().create_pod(spec)

    def open_pod_logs(
        self, request: LogRequest, last_id: str | None, quiet_s: float = 60.0
    ) -> AbstractContextManager[EventStream]:
        return self.get().open_pod_logs(request, last_id, quiet_s)
