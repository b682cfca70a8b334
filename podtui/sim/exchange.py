"""Every request the simulated API answered, handed to whoever listens (the tests' REST v2 contract check).

A listener is called on the server's thread just before the answer is sent (so a test that ends on its answer
has had it checked); it cannot change the answer, and one that raises is logged and the others still run. An
exchange holds the request's headers as sent, the Authorization header (an API key) included: a listener must
not log it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Exchange:
    method: str
    path: str  # without the query
    query: dict[str, list[str]]
    route: str | None  # the route's template ("/v2/pods/{id}/action", "/graphql"); None: no route answered it
    request_headers: dict[str, str]
    request_body: bytes
    status: int
    response_headers: dict[str, str]
    response_body: bytes
    fault: bool  # a fault switch shaped the answer (faults.py): it is meant to break the contract


listeners: list[Callable[[Exchange], None]] = []


def publish(exchange: Exchange) -> None:
    for listener in list(listeners):
        try:
            listener(exchange)
        except Exception:  # a listener's bug must not take the simulated API down
            log.exception("an exchange listener failed on %s %s", exchange.method, exchange.path)
