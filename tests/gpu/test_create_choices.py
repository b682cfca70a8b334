"""The create loop over real HTTP (a scripted REST v2 server, tests/helpers/scripted_api.py): each choice in turn on
400, 403 and 5xx; stop on 402 and on what no choice would change; wait out a 429 within bounds; and a create whose
answer is lost is never sent again (docs/runpod-facts.md#rest-v2)."""

from __future__ import annotations

from typing import Any

import pytest

from podtui.core import secret
from podtui.core.api import (
    ApiAuthError,
    ApiPaymentRequired,
    ApiQueryError,
    ApiRateLimited,
    ApiUnavailable,
)
from podtui.core.api.create import create_pod
from podtui.core.gpu import Cloud
from podtui.core.pod_spec import Choice, CreateUncertain, PodSpec, SpecError
from tests.helpers.scripted_api import Reply, ScriptedApi, problem

R3090 = "NVIDIA GeForce RTX 3090"
A5000 = "NVIDIA RTX A5000"
NO_STOCK = "There are no longer any instances available with the requested specifications"
TOKEN = "hf_LoopTestTokenValue123456789"


def pod(gpu: str = R3090, cloud: str = "COMMUNITY", **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "p1x2y3z4",
        "name": "loop",
        "status": "PROVISIONING",
        "gpu": {"id": gpu, "count": 1},
        "cloud": cloud,
        "dataCenterId": "EU-RO-1",
        "cost": 0.22,
        "ssh": {"proxy": {"host": "ssh.runpod.io", "port": 22, "username": "p1x2y3z4-0a1b2c3d", "command": "x"}},
    }
    body.update(extra)
    return body


SPEC = PodSpec(
    "loop",
    R3090,
    fallbacks=(Choice(R3090, 1, Cloud.SECURE), Choice(A5000, 1, Cloud.COMMUNITY)),
    env=(("HF_TOKEN", TOKEN),),
)


def tried(scripted: ScriptedApi) -> list[tuple[str, str]]:
    return [(s.body["gpu"]["id"], s.body["cloud"]) for s in scripted.sent]


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def test_the_first_choice_placed_is_the_only_request(scripted: ScriptedApi) -> None:
    scripted.answer(Reply(201, pod()))
    created = create_pod(scripted.rest(), SPEC)
    assert tried(scripted) == [(R3090, "COMMUNITY")]
    assert (created.id, created.status, created.cost_per_hr, created.pod_host_id) == (
        "p1x2y3z4",
        "PROVISIONING",
        0.22,
        "p1x2y3z4-0a1b2c3d",
    )
    assert created.refused == () and scripted.sent[0].body["env"] == {"HF_TOKEN": TOKEN}


@pytest.mark.parametrize(
    "refusal",
    [
        Reply(400, problem(400, NO_STOCK)),
        Reply(403, problem(403, "Your account cannot access this pool")),
        Reply(500, problem(500, "upstream failed")),
    ],
    ids=["400", "403", "500"],
)
def test_400_403_and_5xx_move_to_the_next_choice(scripted: ScriptedApi, refusal: Reply) -> None:
    scripted.answer(refusal, refusal, Reply(201, pod(A5000)))
    created = create_pod(scripted.rest(), SPEC)
    assert tried(scripted) == [(R3090, "COMMUNITY"), (R3090, "SECURE"), (A5000, "COMMUNITY")]
    assert created.gpu_type_id == A5000 and len(created.refused) == 2
    assert created.refused[0].startswith(f"1 x {R3090} (community cloud): ")
    assert str(refusal.status) in created.refused[1]


@pytest.mark.parametrize("status", [502, 503, 504, 524])
def test_a_gateways_error_page_leaves_the_pod_uncertain(scripted: ScriptedApi, status: int) -> None:
    """A page from whatever stands in front of RunPod says only that the answer was lost: the pod may exist, and
    asking the next choice could make a second one."""
    page = Reply(status, b"<html>Bad Gateway</html>", {"Content-Type": "text/html"})
    scripted.answer(page, Reply(201, pod(A5000)))
    with pytest.raises(CreateUncertain, match="the pod may have been created"):
        create_pod(scripted.rest(), SPEC)
    assert len(scripted.sent) == 1


def test_402_stops_at_once_and_says_so_in_words(scripted: ScriptedApi) -> None:
    scripted.answer(Reply(402, problem(402, "Insufficient balance")))
    with pytest.raises(ApiPaymentRequired, match=r"pod \(402\): Insufficient balance: the .* does not cover it") as e:
        create_pod(scripted.rest(), SPEC)
    assert len(scripted.sent) == 1 and e.value.status == 402


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        (Reply(422, problem(422, "Validation failed", "$.disk: must be >= 1")), ApiQueryError),
        (Reply(401, problem(401, "Unauthorized")), ApiAuthError),
        (Reply(404, problem(404, "Not Found")), ApiQueryError),
        (Reply(409, problem(409, "Conflict")), ApiQueryError),
    ],
)
def test_what_no_choice_would_change_stops_the_loop(
    scripted: ScriptedApi, reply: Reply, error: type[Exception]
) -> None:
    scripted.answer(reply)
    with pytest.raises(error):
        create_pod(scripted.rest(), SPEC)
    assert len(scripted.sent) == 1


def test_when_every_choice_is_refused_each_reason_is_given(scripted: ScriptedApi) -> None:
    scripted.answer(
        Reply(400, problem(400, NO_STOCK)),
        Reply(403, problem(403, "no access to this pool")),
        Reply(400, problem(400, NO_STOCK)),
    )
    with pytest.raises(ApiQueryError) as e:
        create_pod(scripted.rest(), SPEC)
    text = str(e.value)
    assert text.startswith("RunPod placed none of the 3 choices: ") and "no access to this pool" in text
    assert text.count(NO_STOCK) == 2 and "try the other cloud" in text  # what to do about no capacity
    assert len(scripted.sent) == 3


def test_a_400_on_every_choice_points_at_the_request(scripted: ScriptedApi) -> None:
    scripted.answer(Reply(400, problem(400, "image not found")))
    with pytest.raises(ApiQueryError, match="it is the request, not the capacity"):
        create_pod(scripted.rest(), SPEC)


def test_a_single_choice_refused_says_what_to_try(scripted: ScriptedApi) -> None:
    scripted.answer(Reply(400, problem(400, NO_STOCK)))
    with pytest.raises(ApiQueryError, match=r"\(400\): There are no longer any .* try the other cloud") as e:
        create_pod(scripted.rest(), PodSpec("one", R3090))
    assert e.value.status == 400 and len(scripted.sent) == 1


def test_a_429_is_waited_out_then_the_same_choice_again(scripted: ScriptedApi) -> None:
    limited = Reply(429, problem(429, "Too Many Requests"), {"Retry-After": "3"})
    scripted.answer(limited, Reply(400, problem(400, NO_STOCK)), limited, Reply(201, pod(R3090, "SECURE")))
    sleeps = Sleeps()
    created = create_pod(scripted.rest(), SPEC, sleep=sleeps)
    assert sleeps == [3.0, 3.0]
    assert tried(scripted) == [(R3090, "COMMUNITY"), (R3090, "COMMUNITY"), (R3090, "SECURE"), (R3090, "SECURE")]
    assert created.cloud == "SECURE" and len(created.refused) == 1


def test_the_wait_on_429s_is_bounded(scripted: ScriptedApi) -> None:
    scripted.answer(Reply(429, problem(429, "Too Many Requests"), {"Retry-After": "25"}))
    sleeps = Sleeps()
    with pytest.raises(ApiRateLimited, match="already waited 50s, so it stops: nothing was created") as e:
        create_pod(scripted.rest(), SPEC, sleep=sleeps, rate_limit_budget_s=60)
    assert sleeps == [25.0, 25.0] and len(scripted.sent) == 3 and e.value.retry_after_s == 25


def test_a_create_that_outlives_the_timeout_is_uncertain_and_not_sent_again(scripted: ScriptedApi) -> None:
    scripted.answer(Reply(201, pod(), delay_s=1.0))
    with pytest.raises(CreateUncertain, match="the pod may have been created") as e:
        create_pod(scripted.rest(), SPEC, timeout_s=0.2)
    assert isinstance(e.value, ApiUnavailable) and len(scripted.sent) == 1


@pytest.mark.parametrize(
    "reply",
    [
        Reply(201, pod(), cut=True),
        Reply(201, b'{"id": "p1x2', {"Content-Type": "application/json"}),
        Reply(201, {"pod": {"id": "p1"}}),
        Reply(201, ["p1"]),
    ],
    ids=["cut-off", "half-json", "no-id", "not-an-object"],
)
def test_a_lost_or_unreadable_answer_is_uncertain_and_not_sent_again(scripted: ScriptedApi, reply: Reply) -> None:
    scripted.answer(reply, Reply(201, pod()))
    with pytest.raises(CreateUncertain, match="the pod may have been created"):
        create_pod(scripted.rest(), SPEC)
    assert len(scripted.sent) == 1


def test_a_bad_spec_never_reaches_the_api(scripted: ScriptedApi) -> None:
    with pytest.raises(SpecError, match="env"):
        create_pod(scripted.rest(), PodSpec("n", R3090, env=(("BAD KEY", "x"),)))
    assert scripted.sent == []


def test_env_values_are_secrets_before_the_request_goes_out(scripted: ScriptedApi) -> None:
    value = "wandb_EchoedBackValue98765"
    scripted.answer(Reply(400, problem(400, f"env WANDB_API_KEY={value} is not allowed")))
    with pytest.raises(ApiQueryError) as e:
        create_pod(scripted.rest(), PodSpec("n", R3090, env=(("WANDB_API_KEY", value), ("MODE", "fast"))))
    assert value not in str(e.value) and "WANDB_API_KEY" in str(e.value)
    assert secret.redact(f"x {value} y") != f"x {value} y"  # registered: the log masks it too


def test_a_refused_choice_never_shows_an_env_value(scripted: ScriptedApi) -> None:
    scripted.answer(Reply(403, problem(403, f"denied for {TOKEN}")), Reply(201, pod()))
    created = create_pod(scripted.rest(), SPEC)
    assert created.refused and all(TOKEN not in line for line in created.refused)
