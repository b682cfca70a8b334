"""What the app and the CLI need from RunPod, as one protocol (V2Api speaks it; tests use it against the simulator)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from podtui.core.api.errors import ApiError
from podtui.core.pod import Pod, Snapshot

if TYPE_CHECKING:
    from collections.abc import Mapping
    from contextlib import AbstractContextManager

    from podtui.core.api.rest import EventStream
    from podtui.core.billing import AccountBill, Billing, BillingQuery, PodBill, VolumeBill
    from podtui.core.data_centre import DataCentre
    from podtui.core.gpu.catalogue import GpuCatalogue
    from podtui.core.logs import LogRequest
    from podtui.core.pod_spec import CreatedPod, PodSpec
    from podtui.core.template import Template
    from podtui.core.volume import NetworkVolume


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

    def update_pod(self, pod_id: str, body: Mapping[str, object]) -> Pod: ...

    def network_volumes(self) -> tuple[NetworkVolume, ...]: ...

    def create_network_volume(
        self, name: str, size_gb: int, data_centre: str, type_: str | None = None
    ) -> NetworkVolume: ...

    def update_network_volume(
        self, volume_id: str, *, name: str | None = None, size_gb: int | None = None
    ) -> NetworkVolume: ...

    def delete_network_volume(self, volume_id: str) -> None: ...

    def templates(self) -> tuple[Template, ...]: ...

    def public_templates(self, source: str = "official") -> tuple[Template, ...]: ...

    def template(self, template_id: str) -> Template: ...

    def create_template(self, body: Mapping[str, object]) -> Template: ...

    def delete_template(self, template_id: str) -> None: ...

    def data_centres(self) -> tuple[DataCentre, ...]: ...

    def open_pod_logs(
        self, request: LogRequest, last_id: str | None, quiet_s: float = 60.0
    ) -> AbstractContextManager[EventStream]: ...

    def billing(self, query: BillingQuery) -> Billing[AccountBill]: ...

    def pod_billing(self, query: BillingQuery, pod_id: str | None = None) -> Billing[PodBill]: ...

    def volume_billing(self, query: BillingQuery, volume_id: str | None = None) -> Billing[VolumeBill]: ...


def find_pod(api: RunPodApi, ref: str) -> Pod:
    try:
        return api.fetch_snapshot().find(ref)
    except LookupError as e:
        raise ApiError(str(e)) from None
