"""An API built on first use, in the thread that first needs it (a worker), not on the way to the first frame."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from podtui.core.api.client import RunPodApi
from podtui.core.pod import Pod, Snapshot

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from podtui.core.api.rest import EventStream
    from podtui.core.billing import AccountBill, Billing, BillingQuery, PodBill, VolumeBill
    from podtui.core.data_centre import DataCentre
    from podtui.core.gpu.catalogue import GpuCatalogue
    from podtui.core.logs import LogRequest
    from podtui.core.pod_spec import CreatedPod, PodSpec
    from podtui.core.template import Template
    from podtui.core.volume import NetworkVolume


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

    def update_pod(self, pod_id: str, body: Mapping[str, object]) -> Pod:
        return self.get().update_pod(pod_id, body)

    def network_volumes(self) -> tuple[NetworkVolume, ...]:
        return self.get().network_volumes()

    def create_network_volume(
        self, name: str, size_gb: int, data_centre: str, type_: str | None = None
    ) -> NetworkVolume:
        return self.get().create_network_volume(name, size_gb, data_centre, type_)

    def update_network_volume(
        self, volume_id: str, *, name: str | None = None, size_gb: int | None = None
    ) -> NetworkVolume:
        return self.get().update_network_volume(volume_id, name=name, size_gb=size_gb)

    def delete_network_volume(self, volume_id: str) -> None:
        self.get().delete_network_volume(volume_id)

    def templates(self) -> tuple[Template, ...]:
        return self.get().templates()

    def public_templates(self, source: str = "official") -> tuple[Template, ...]:
        return self.get().public_templates(source)

    def template(self, template_id: str) -> Template:
        return self.get().template(template_id)

    def create_template(self, body: Mapping[str, object]) -> Template:
        return self.get().create_template(body)

    def delete_template(self, template_id: str) -> None:
        self.get().delete_template(template_id)

    def data_centres(self) -> tuple[DataCentre, ...]:
        return self.get().data_centres()

    def billing(self, query: BillingQuery) -> Billing[AccountBill]:
        return self.get().billing(query)

    def pod_billing(self, query: BillingQuery, pod_id: str | None = None) -> Billing[PodBill]:
        return self.get().pod_billing(query, pod_id)

    def volume_billing(self, query: BillingQuery, volume_id: str | None = None) -> Billing[VolumeBill]:
        return self.get().volume_billing(query, volume_id)
