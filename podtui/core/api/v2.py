"""podtui's RunPod API: REST v2 for every pod operation, GraphQL for the balance alone (docs/runpod-facts.md#rest-v2).

RunPod retired REST v1 and retires GraphQL in early 2027; nothing here but BalanceSource touches GraphQL, and a
GraphQL that is gone leaves the balance unknown and everything else working.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Literal, TypeVar

from podtui.core import secret
from podtui.core.api.balance import BalanceSource
from podtui.core.api.errors import ApiResponseError, InvalidInput
from podtui.core.api.graphql import GraphqlSdk
from podtui.core.api.rest import RestV2, path_id
from podtui.core.pod import PayloadError, Pod, Snapshot, parse_pod, parse_pods

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

log = logging.getLogger(__name__)

PodAction = Literal["start", "stop", "restart"]
T = TypeVar("T")


class V2Api:
    def __init__(
        self,
        api_key: str,
        base_url: str | None = None,
        timeout_s: float = 15.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        secret.register(api_key)
        self.rest = RestV2(api_key, base_url, timeout_s)
        self.balance = BalanceSource(GraphqlSdk(api_key, self.rest.base_url, timeout_s))
        self.clock = clock
        self._last_problems: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return f"V2Api({self.rest!r})"

    @property
    def base_url(self) -> str:
        return self.rest.base_url

    def close(self) -> None:
        self.rest.close()

    def fetch_snapshot(self) -> Snapshot:
        """The pods (v2; its failure is the poll's failure) and the balance (GraphQL; never fails the poll)."""
        answer = self.rest.call("GET", "/v2/pods")
        fetched_at = self.clock()
        try:
            pods, problems = parse_pods(answer, fetched_at)
        except PayloadError as e:
            raise ApiResponseError(f"RunPod's answer was incomplete: {e}") from None
        if problems and problems != self._last_problems:  # once, not on every poll
            for problem in problems:
                log.warning("payload: %s", problem)
        self._last_problems = problems
        account, odd = self.balance.fetch_noted()  # an implausible amount is said with the pods' notes
        return Snapshot(account=account, pods=pods, fetched_at=fetched_at, problems=problems + odd)

    def fetch_pod(self, pod_id: str) -> Pod:
        return self._pod_answer(self.rest.call("GET", f"/v2/pods/{path_id(pod_id)}"), pod_id)

    def _act(self, pod_id: str, action: PodAction) -> None:
        answer = self.rest.call("POST", f"/v2/pods/{path_id(pod_id)}/action", body={"action": action})
        if answer is not None and not isinstance(answer, dict):
            raise ApiResponseError(f"RunPod's answer to {action} was not a pod record")

    def stop_pod(self, pod_id: str) -> None:
        self._act(pod_id, "stop")

    def start_pod(self, pod_id: str) -> None:
        self._act(pod_id, "start")

    def restart_pod(self, pod_id: str) -> None:
        self._act(pod_id, "restart")

    def terminate_pod(self, pod_id: str) -> None:
        """DELETE: irreversible, 204 (docs/runpod-facts.md#rest-v2)."""
        self.rest.call("DELETE", f"/v2/pods/{path_id(pod_id)}")

    def open_pod_logs(
        self, request: LogRequest, last_id: str | None, quiet_s: float = 60.0
    ) -> AbstractContextManager[EventStream]:
        """One connection to the pod's log stream (docs/architecture.md#logs): the backfill RunPod is asked for
        (tail, since), or everything after `last_id`, which takes precedence; then live lines."""
        params: dict[str, str | int] = {"tail": request.tail}
        if request.source != "all":
            params["source"] = request.source
        if request.since is not None:
            params["since"] = request.since
        headers = {"Last-Event-ID": last_id} if last_id else None
        return self.rest.events(
            f"/v2/pods/{path_id(request.pod_id)}/logs", params=params, headers=headers, quiet_s=quiet_s
        )

    def account_keys(self) -> str:
        """The account's SSH public keys, one per line ("" when there are none).

        Asked on its own right before a change, and refused when the answer lacks the list: treating a missing
        list as "no keys" would make key setup overwrite every key on the account.
        """
        answer = self.rest.call("GET", "/v2/account/ssh-keys")
        keys = answer.get("keys") if isinstance(answer, dict) else None
        if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
            raise ApiResponseError("RunPod's answer did not include the account's SSH keys")
        return "\n".join(k.strip() for k in keys if k.strip())

    def set_account_keys(self, pub_key: str) -> None:
        """Replace the account's SSH keys: PUT replaces the whole set. Callers read and merge first
        (keys.merge_account_keys) so no key is dropped, and write once."""
        from podtui.core.ssh.keys import valid_public_line

        lines = [line.strip() for line in pub_key.split("\n") if line.strip()]
        if not all(valid_public_line(line) for line in lines):
            raise InvalidInput("refused to send an account key list with a line that is not an SSH public key")
        self.rest.call("PUT", "/v2/account/ssh-keys", body={"keys": lines})

    def gpu_types(self) -> GpuCatalogue:
        from podtui.core.api.catalog import fetch_catalogue

        return fetch_catalogue(self.rest)

    def create_pod(self, spec: PodSpec) -> CreatedPod:
        from podtui.core.api.create import create_pod

        return create_pod(self.rest, spec)

    def update_pod(self, pod_id: str, body: Mapping[str, object]) -> Pod:
        """PATCH /v2/pods/{id}: only the fields in `body` change (docs/runpod-facts.md#editing-a-pod); the pod as it
        is now."""
        return self._pod_answer(self.rest.call("PATCH", f"/v2/pods/{path_id(pod_id)}", body=dict(body)), pod_id)

    def _pod_answer(self, answer: object, pod_id: str) -> Pod:
        problems: list[str] = []
        pod = parse_pod(answer, problems, self.clock())
        if pod is None:
            raise ApiResponseError(f"RunPod's answer about pod {pod_id} was unreadable: {'; '.join(problems)}")
        return pod

    # --- network volumes (docs/runpod-facts.md#network-volumes) ------------------------------------------

    def network_volumes(self) -> tuple[NetworkVolume, ...]:
        from podtui.core.volume import parse_volumes

        return _listed(lambda: parse_volumes(self.rest.call("GET", "/v2/network-volumes")), "network volumes")

    def create_network_volume(
        self, name: str, size_gb: int, data_centre: str, type_: str | None = None
    ) -> NetworkVolume:
        body: dict[str, object] = {"name": name, "size": size_gb, "dataCenter": data_centre}
        if type_ is not None:
            body["type"] = type_
        return self._volume_answer(self.rest.call("POST", "/v2/network-volumes", body=body))

    def update_network_volume(
        self, volume_id: str, *, name: str | None = None, size_gb: int | None = None
    ) -> NetworkVolume:
        """Rename or grow (a network volume never shrinks); at least one of the two."""
        body: dict[str, object] = {}
        if name is not None:
            body["name"] = name
        if size_gb is not None:
            body["size"] = size_gb
        if not body:
            raise InvalidInput("nothing to change: give a new name or a larger size")
        return self._volume_answer(self.rest.call("PATCH", f"/v2/network-volumes/{path_id(volume_id)}", body=body))

    def delete_network_volume(self, volume_id: str) -> None:
        """DELETE: the volume and its data are gone (204)."""
        self.rest.call("DELETE", f"/v2/network-volumes/{path_id(volume_id)}")

    @staticmethod
    def _volume_answer(answer: object) -> NetworkVolume:
        from podtui.core.volume import parse_volume

        problems: list[str] = []
        volume = parse_volume(answer, problems)
        if volume is None:
            raise ApiResponseError(f"RunPod's answer was not a network volume: {'; '.join(problems)}")
        return volume

    # --- templates (docs/runpod-facts.md#templates) -------------------------------------------------------

    def templates(self) -> tuple[Template, ...]:
        """The account's own templates, public or private."""
        from podtui.core.template import parse_templates

        return _listed(lambda: parse_templates(self.rest.call("GET", "/v2/templates")), "templates")

    def public_templates(self, source: str = "official") -> tuple[Template, ...]:
        """RunPod's public catalogue: `official`, `verified` or `community` (at most 100)."""
        from podtui.core.template import parse_templates

        def fetch() -> tuple[tuple[Template, ...], tuple[str, ...]]:
            return parse_templates(self.rest.call("GET", "/v2/catalog/templates", params={"source": source}))

        return _listed(fetch, "public templates")

    def template(self, template_id: str) -> Template:
        from podtui.core.template import parse_template

        problems: list[str] = []
        found = parse_template(self.rest.call("GET", f"/v2/templates/{path_id(template_id)}"), problems)
        if found is None:
            raise ApiResponseError(f"RunPod's answer was not a template: {'; '.join(problems)}")
        return found

    def create_template(self, body: Mapping[str, object]) -> Template:
        """POST /v2/templates with a CreateTemplateRequest (core/template_spec builds it)."""
        from podtui.core.template import parse_template

        problems: list[str] = []
        found = parse_template(self.rest.call("POST", "/v2/templates", body=dict(body)), problems)
        if found is None:
            raise ApiResponseError(f"RunPod's answer was not a template: {'; '.join(problems)}")
        return found

    def delete_template(self, template_id: str) -> None:
        self.rest.call("DELETE", f"/v2/templates/{path_id(template_id)}")

    # --- the catalogue's data centres (docs/runpod-facts.md#data-centres-and-stock) ------------------------

    def data_centres(self) -> tuple[DataCentre, ...]:
        from podtui.core.data_centre import parse_data_centres

        return _listed(lambda: parse_data_centres(self.rest.call("GET", "/v2/catalog/datacenters")), "data centres")

    # --- billing history (docs/spend.md#podtui-spend) -----------------------------------------------------

    def billing(self, query: BillingQuery) -> Billing[AccountBill]:
        """The whole account's spend per bucket."""
        from podtui.core.billing import parse_account_billing

        return _billed(lambda: parse_account_billing(self.rest.call("GET", "/v2/billing", params=query.params())))

    def pod_billing(self, query: BillingQuery, pod_id: str | None = None) -> Billing[PodBill]:
        """Each pod's spend per bucket (one pod's with `pod_id`); terminated pods too."""
        from podtui.core.billing import parse_pod_billing

        params = query.params()
        if pod_id is not None:
            params["podId"] = path_id(pod_id)
        return _billed(lambda: parse_pod_billing(self.rest.call("GET", "/v2/billing/pods", params=params)))

    def volume_billing(self, query: BillingQuery, volume_id: str | None = None) -> Billing[VolumeBill]:
        """Each network volume's spend per bucket (one volume's with `volume_id`)."""
        from podtui.core.billing import parse_volume_billing

        params = query.params()
        if volume_id is not None:
            params["networkVolumeId"] = path_id(volume_id)
        return _billed(
            lambda: parse_volume_billing(self.rest.call("GET", "/v2/billing/network-volumes", params=params))
        )


def _billed(fetch: Callable[[], T]) -> T:
    """A billing answer parsed; one that is not a list of records an error in words (its notes go with it)."""
    try:
        answer = fetch()
    except PayloadError as e:
        raise ApiResponseError(f"RunPod's billing answer was unreadable: {e}") from None
    for problem in getattr(answer, "problems", ()):
        log.warning("payload: %s", problem)
    return answer


def _listed(fetch: Callable[[], tuple[tuple[T, ...], tuple[str, ...]]], what: str) -> tuple[T, ...]:
    """A list answer parsed: its malformed records skipped and noted in the log, a missing list an error in words."""
    try:
        items, problems = fetch()
    except PayloadError as e:
        raise ApiResponseError(f"RunPod's answer listing {what} was incomplete: {e}") from None
    for problem in problems:
        log.warning("payload: %s", problem)
    return items
