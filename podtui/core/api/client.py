"""What the app and the CLI need from RunPod, as one protocol (V2Api speaks it; tests use it against the simulator)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from podtui.core.api.errors import ApiError
from podtui.core.pod import Pod, Snapshot

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from podtui.core.api.rest import EventStream
    from podtui.core.gpu.catalogue import GpuCatalogue
    from podtui.core.logs import LogRequest
    from podtui.core.pod_spec import CreatedPod, PodSpec


class RunPodApi(Protocol):
    def fetch_snapshot(self) -> Snapshot: ...

    def fetch_pod(self, pod_id: str) -> Pod: ...

    def stop_pod(self, pod_id: str) -> None: ...

    def start_pod(self, pod_id: str) -> None: ...

    def restart_pod(self, pod_id: str) -> None: ...

    def terminate_pod(self, pod_id: str) -> None: ...

    def account_keys(self) -> str: ...

    def set_account_keys(self, pub_key: str) -> None: ...

    def gpu_types(self) -> GpuCatalogue: ...

    def create_pod(self, spec: PodSpec) -> CreatedPod: ...

    def open_pod_logs(
        self, request: LogRequest, last_id: str | None, quiet_s: float = 60.0
    ) -> AbstractContextManager[EventStream]: ...


def find_pod(api: RunPodApi, ref: str) -> Pod:
    try:
        return api.fetch_snapshot().find(ref)
    except LookupError as e:
        raise ApiError(str(e)) from None
