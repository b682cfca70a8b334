"""Creating a pod over REST v2: `POST /v2/pods` for each choice of the spec in turn (docs/runpod-facts.md#rest-v2).

RunPod places one GPU type per request and does not fall back by itself, so the spec's choices are tried in
order, as RunPod's documentation prescribes:
- 400 (this GPU and data centre could not be placed, or the request breaks a rule), 403 (no access to that
  pool) and 5xx (a passing server fault): the next choice;
- 402 (the balance does not cover it): stop, no choice will do;
- 429: wait as long as Retry-After asks (within RATE_LIMIT_BUDGET_S for the whole create), then the same choice;
- anything else RunPod refuses (422: the body breaks the contract; 401, 404, 409): stop, no choice would differ.
A request that went out and got no usable answer (a timeout, a cut-off or unreadable answer) may have created
the pod: it is never repeated, and CreateUncertain says to look the pod up first.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Mapping

from podtui.core import secret
from podtui.core.api.errors import (
    ApiForbidden,
    ApiPaymentRequired,
    ApiQueryError,
    ApiRateLimited,
    ApiResponseError,
    ApiUnavailable,
)
from podtui.core.api.rest import RestV2
from podtui.core.pod import looks_like_credential
from podtui.core.pod_spec import Choice, CreatedPod, PodSpec, create_error_hint, scrub, uncertain
from podtui.core.units import duration

log = logging.getLogger(__name__)

CREATE_PATH = "/v2/pods"
# Longer than a read: RunPod may take a while to place a pod, and giving up early leaves a pod that may exist.
CREATE_TIMEOUT_S = 60.0
RATE_LIMIT_BUDGET_S = 60.0  # the most one create waits on 429s in all; past it the 429 is the answer


def create_body(spec: PodSpec, choice: Choice) -> dict[str, object]:
    """The CreatePodRequest for one choice, with only fields the spec defines: RunPod refuses any other by name.
    Direct SSH is 22/tcp in `ports`; there is no public-IP or spot field in v2. A network volume is a `network`
    mount (a pod has it or a volume of its own, never both); a template's id goes with the values the spec took
    from it, which win over the template's own, and only when `link_template` kept it: a mount left out is then
    the template's choice, never `mounts: {}`, which RunPod reads as "unchanged" (docs/launch.md#templates). The
    template's start command and registry credential go as the spec holds them, so a spec sent without its
    template still starts as the template would."""
    gpu: dict[str, object] = {"id": choice.gpu_type_id, "count": choice.gpu_count}
    if spec.cuda_versions:
        gpu["allowedCudaVersions"] = list(spec.cuda_versions)
    body: dict[str, object] = {
        "name": spec.name,
        "image": spec.image,
        "gpu": gpu,
        "cloud": choice.cloud.value,
        "disk": spec.container_gb,
        "ports": spec.port_list,
        "env": dict(spec.env),
        "startSsh": spec.start_ssh,
    }
    if spec.template_id is not None:
        body["templateId"] = spec.template_id
    if spec.args:
        body["args"] = spec.args
    if spec.registry is not None:
        body["registry"] = spec.registry
    if spec.start_jupyter or spec.template_id is not None:
        body["startJupyter"] = spec.start_jupyter  # explicit: a template's own would apply unseen
    if spec.network_volume_id is not None:
        body["mounts"] = {"network": [{"volumeId": spec.network_volume_id, "path": spec.volume_mount_path}]}
    elif spec.volume_gb:
        body["mounts"] = {"persistent": {"size": spec.volume_gb, "path": spec.volume_mount_path}}
    if centres := spec.data_centres_for(choice):
        body["dataCenterIds"] = list(centres)
    return body


def parse_created(payload: object) -> CreatedPod:
    """The v2 pod RunPod answers a create with. Raises ValueError when it does not say which pod it is."""
    if not isinstance(payload, Mapping) or not isinstance(payload.get("id"), str) or not payload["id"].strip():
        raise ValueError("the answer does not say which pod was created")

    def text(raw: object) -> str | None:
        return raw if isinstance(raw, str) and raw else None

    def obj(raw: object) -> Mapping[str, object]:
        return raw if isinstance(raw, Mapping) else {}

    cost = payload.get("cost")
    gpu = obj(payload.get("gpu"))
    count = gpu.get("count")
    proxy = obj(obj(payload.get("ssh")).get("proxy"))
    return CreatedPod(
        payload["id"].strip(),
        text(payload.get("name")),
        text(payload.get("status")),
        float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost >= 0 else None,
        text(proxy.get("username")),
        text(gpu.get("id")),
        count if isinstance(count, int) and not isinstance(count, bool) else None,
        text(payload.get("cloud")),
        text(payload.get("dataCenterId")),
    )


def _server_fault(e: ApiUnavailable) -> bool:
    """A 5xx RunPod answered itself (its problem body): the request failed, the next choice may be tried. A
    gateway's 502/504/52x page means the answer was lost on the way and the pod may exist: that is uncertain."""
    return e.status is not None and 500 <= e.status < 600 and e.by_runpod


def _hint(spec: PodSpec, message: str, status: int | None) -> str | None:
    """What to do about a refusal; a 400 on a spec that allows only some CUDA versions may come from that."""
    hint = create_error_hint(message)
    if spec.cuda_versions and status == 400:
        cuda = (
            f"the pod may only go to a machine with CUDA {' or '.join(spec.cuda_versions)} (the template's "
            "constraint): RunPod says no machine is available when none with that version has the GPU free; "
            "try another GPU type, or a template without the constraint"
        )
        hint = f"{hint}; {cuda}" if hint else cuda
    return hint


def _refusal(choice: Choice, e: Exception) -> str:
    return f"{choice.label}: {str(e).removeprefix(f'RunPod refused POST {CREATE_PATH} ')}"


def create_pod(
    rest: RestV2,
    spec: PodSpec,
    *,
    timeout_s: float | None = None,
    sleep: Callable[[float], None] = time.sleep,
    rate_limit_budget_s: float = RATE_LIMIT_BUDGET_S,
) -> CreatedPod:
    """Create the pod on the first of the spec's choices RunPod places. The spec is validated again here,
    whoever built it. Raises ApiPaymentRequired (402), CreateUncertain (the pod may exist), ApiRateLimited (the
    wait would be too long), or the last refusal when no choice was placed; `refused` lists the choices before."""
    spec.validate()
    timeout_s = CREATE_TIMEOUT_S if timeout_s is None else timeout_s
    for key, value in spec.env:
        # a credential quoted back in RunPod's error text is masked wherever it goes; not every value, or a
        # WANDB_PROJECT named like a pod would mask that pod's name in every message from then on
        if looks_like_credential(key, value):
            secret.register(value)
    refused: list[str] = []
    statuses: list[int | None] = []
    last: ApiQueryError | ApiUnavailable | None = None
    waited = 0.0
    for choice in spec.choices:
        body = create_body(spec, choice)
        while True:
            try:
                answer = rest.call("POST", CREATE_PATH, body=body, timeout_s=timeout_s)
            except ApiRateLimited as e:
                if waited + e.retry_after_s > rate_limit_budget_s:
                    already = (
                        f"podtui already waited {duration(waited)}" if waited else "that is longer than podtui waits"
                    )
                    raise ApiRateLimited(f"{e}; {already}, so it stops: nothing was created", e.retry_after_s) from None
                log.info("create: rate limited, waiting %s", duration(e.retry_after_s))
                sleep(e.retry_after_s)
                waited += e.retry_after_s
                continue
            except ApiPaymentRequired as e:
                said = str(e).removeprefix(f"RunPod refused POST {CREATE_PATH} ")
                raise ApiPaymentRequired(
                    f"RunPod did not create the pod {said}: the account's balance does not cover it. Add credit "
                    "(Billing in RunPod's console), then try again",
                    e.status,
                    e.errors,
                ) from None
            except ApiQueryError as e:
                if e.status != 400 and not isinstance(e, ApiForbidden):
                    hint = create_error_hint(str(e))
                    raise type(e)(scrub(f"{e}" + (f" ({hint})" if hint else ""), spec), e.status, e.errors) from None
                refused.append(scrub(_refusal(choice, e), spec))
                statuses.append(e.status)
                last = e
                break
            except ApiUnavailable as e:
                if e.not_sent:  # the connection was refused: RunPod never saw the request
                    raise ApiUnavailable(f"{e}; nothing was created", e.retry_after_s, not_sent=True) from None
                if not _server_fault(e):  # the request went out and its outcome is unknown
                    raise uncertain(e) from None
                refused.append(scrub(_refusal(choice, e), spec))
                statuses.append(e.status)
                last = e
                break
            except ApiResponseError as e:  # cut off or unreadable: the pod may exist
                raise uncertain(e) from None
            try:
                created = parse_created(answer)
            except ValueError as e:
                raise uncertain(ApiResponseError(f"RunPod's answer to the create: {e}")) from None
            for line in refused:
                log.info("create: not placed: %s", line)
            return dataclasses.replace(created, refused=tuple(refused), candidate=choice)
    raise _none_placed(spec, refused, statuses, last)


def _none_placed(
    spec: PodSpec, refused: list[str], statuses: list[int | None], last: ApiQueryError | ApiUnavailable | None
) -> Exception:
    if last is None:  # no choices: validate() refuses that, so this is a bug
        return ApiQueryError("RunPod was not asked: the spec has no GPU choice")
    hint = _hint(spec, str(last), last.status)
    if len(refused) == 1:
        text = f"{last}" + (f" ({hint})" if hint else "")
    else:
        text = f"RunPod placed none of the {len(refused)} choices: " + "; ".join(refused)
        if all(s == 400 for s in statuses):
            # a rule the request breaks fails the same on every choice; no capacity differs from one to the next
            text += ". Every one was refused with 400: if the reasons match, it is the request, not the capacity"
            if spec.cuda_versions and hint:
                text += f" ({hint})"
        elif hint:
            text += f" ({hint})"
    text = scrub(text, spec)
    if isinstance(last, ApiQueryError):
        return type(last)(text, last.status, last.errors)
    return ApiUnavailable(text, last.retry_after_s)
