"""The account's balance: the one thing podtui still asks GraphQL, because REST v2 has no balance.

It never fails a poll. When GraphQL is gone (404/410, an HTML page, refused) or refuses, the balance is unknown
with the reason in words, and it is asked again only after a while, not on every poll; the pods, costs and
everything else come from v2 (docs/runpod-facts.md#pricing-and-the-balance).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from podtui.core.api.errors import ApiAuthError, ApiError, ApiQueryError, ApiRateLimited
from podtui.core.api.graphql import GraphqlGone
from podtui.core.pod import Account, PayloadError, parse_account

log = logging.getLogger(__name__)

BALANCE_QUERY = "query podtuiBalance { myself { id clientBalance currentSpendPerHr spendLimit } }"
GONE_RECHECK_S = 1800.0  # GraphQL retired: ask again now and then (it may have been a misrouted answer)
FAILED_RECHECK_S = 60.0  # any other failure: not on every poll


class GraphqlRunner(Protocol):
    def run(self, query: str) -> dict[str, Any]: ...


class BalanceSource:
    def __init__(self, graphql: GraphqlRunner, clock: Callable[[], float] = time.monotonic) -> None:
        self._graphql = graphql
        self._clock = clock
        self._lock = threading.Lock()
        self._last = Account(unknown_why="not asked yet")
        self._last_problems: tuple[str, ...] = ()
        self._next_try = 0.0

    @property
    def graphql(self) -> GraphqlRunner:
        """What it asks (the session tells it how a refused key is replaced)."""
        return self._graphql

    def fetch(self) -> Account:
        """The balance now, or the last answer while a failed source rests. Never raises an ApiError."""
        return self.fetch_noted()[0]

    def fetch_noted(self) -> tuple[Account, tuple[str, ...]]:
        """fetch(), and what was odd in the answer (an implausible amount): notes for the user, as the pods' are."""
        with self._lock:
            if self._clock() < self._next_try:
                return self._last, self._last_problems
        account, problems, rest_s = self._ask()
        with self._lock:
            if account.unknown_why and self._last.unknown_why != account.unknown_why:
                log.warning("balance unknown: %s", account.unknown_why)
            if problems != self._last_problems:  # once, not on every poll
                for problem in problems:
                    log.warning("balance: %s", problem)
            self._last, self._last_problems = account, problems
            self._next_try = self._clock() + rest_s
        return account, problems

    def _ask(self) -> tuple[Account, tuple[str, ...], float]:
        try:
            account, problems = parse_account(self._graphql.run(BALANCE_QUERY))
        except GraphqlGone as e:
            return Account(unknown_why=f"{e}; RunPod's REST API v2 has no balance"), (), GONE_RECHECK_S
        except ApiRateLimited as e:
            return Account(unknown_why=str(e)), (), e.retry_after_s
        except ApiAuthError:
            return Account(unknown_why="RunPod refused the key when asked for it (401)"), (), FAILED_RECHECK_S
        except ApiQueryError as e:
            return Account(unknown_why=f"RunPod did not give it: {e}"), (), FAILED_RECHECK_S
        except (ApiError, PayloadError) as e:
            return Account(unknown_why=str(e)), (), FAILED_RECHECK_S
        except Exception as e:  # the SDK broken or changed under podtui: the balance is lost, never the pods
            log.warning("asking GraphQL for the balance failed", exc_info=True)
            why = f"the runpod SDK failed ({type(e).__name__}); see the log"
            return Account(unknown_why=why), (), FAILED_RECHECK_S
        return account, problems, 0.0
