"""RunPod's GPU catalogue over REST v2: prices, and stock per cloud and GPU count (docs/runpod-facts.md#rest-v2).

`GET /v2/catalog/gpus?include=AVAILABILITY&product=POD` says how available each type is for one cloud and one
count only (`cloud` defaults to secure, `count` to 1), so podtui asks once per cloud and count it shows: 1, 2,
4 and 8 GPUs on one machine, at most eight requests. They go one after another rather than all at once: a
burst of eight would eat into the account's rate limit, which the poll loop and pod actions share. A count that
no type offers on a cloud (every maxCount below it) is not asked. When the first answer for a cloud fails the
error is raised (there is nothing to show); a later one that fails leaves that stock unknown, with a note, and
a 429 or an unreachable API stops the remaining requests.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from podtui.core.api.errors import ApiQueryError, ApiResponseError, ApiUnavailable
from podtui.core.api.rest import RestV2
from podtui.core.gpu.catalogue import STOCK_COUNTS, Answer, Cloud, GpuCatalogue, merge_answers, parse_answer

log = logging.getLogger(__name__)

CATALOG_PATH = "/v2/catalog/gpus"


def catalog_params(cloud: Cloud, count: int) -> dict[str, str | int]:
    # product is required with include=AVAILABILITY: stock differs between pods and serverless
    return {"include": "AVAILABILITY", "product": "POD", "cloud": cloud.value, "count": count}


def _ask(rest: RestV2, cloud: Cloud, count: int) -> Answer:
    payload = rest.call("GET", CATALOG_PATH, params=catalog_params(cloud, count))
    try:
        return parse_answer(payload)
    except ValueError as e:
        raise ApiResponseError(f"RunPod's list of GPU types was unreadable: {e}") from None


def _worth_asking(answers: dict[tuple[Cloud, int], Answer], cloud: Cloud, count: int) -> bool:
    first = answers.get((cloud, 1)) or next(iter(answers.values()), None)
    if first is None:
        return True
    most = [e.gpu.max_counts.get(cloud) for e in first.entries]
    return any(n is None or n >= count for n in most)


def fetch_catalogue(rest: RestV2, counts: Sequence[int] = STOCK_COUNTS) -> GpuCatalogue:
    """Every GPU type with its prices and stock for each cloud and count. Malformed entries are skipped and
    listed in .problems, with the counts whose stock could not be read."""
    answers: dict[tuple[Cloud, int], Answer] = {}
    failed: list[tuple[Cloud, int]] = []
    notes: list[str] = []
    wanted = sorted({1, *(n for n in counts if n in STOCK_COUNTS)})
    plan = [(cloud, n) for n in wanted for cloud in Cloud]  # both clouds' single GPUs first: prices, maxCount
    for i, (cloud, n) in enumerate(plan):
        if n > 1 and not _worth_asking(answers, cloud, n):
            continue
        try:
            answers[(cloud, n)] = _ask(rest, cloud, n)
        except (ApiQueryError, ApiResponseError, ApiUnavailable) as e:  # a refused key (401) is raised as is
            if not answers:
                raise  # nothing read yet: the error is the answer
            what = f"stock of {n} GPU{'s' if n > 1 else ''} on {cloud.label} cloud"
            if isinstance(e, ApiUnavailable):  # a 429 included: asking on would make it worse
                failed.extend(plan[i:])
                notes.append(f"{what} and after it not known: {e}")
                break
            failed.append((cloud, n))
            notes.append(f"{what} not known: {e}")
    catalogue = merge_answers(answers, failed, notes)
    for problem in catalogue.problems:
        log.warning("GPU catalogue: %s", problem)
    return catalogue
