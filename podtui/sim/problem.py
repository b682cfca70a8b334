"""The simulated API's answers: JSON, RFC 9457 problems, and the HTML pages a gateway in front of an API sends.

REST v2 says every error as `application/problem+json` with `title`, `status`, `detail` and, for a request that
breaks the contract, `errors` (docs/runpod-facts.md#rest-v2).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from http import HTTPStatus

JSON = "application/json"
PROBLEM = "application/problem+json"
HTML = "text/html"


@dataclass
class Answer:
    status: int
    value: object = None  # a JSON answer, encoded when sent; None with no `raw`: no body
    raw: bytes | None = None  # or exactly these bytes
    content_type: str = JSON
    headers: dict[str, str] = field(default_factory=dict)
    route: str | None = None  # the route template that answered
    fault: bool = False  # shaped by a fault switch
    stream: Iterator[bytes] | None = None  # an answer sent as it is made (Server-Sent Events), chunk by chunk

    def body(self) -> bytes:
        if self.raw is not None:
            return self.raw
        if self.value is None:
            return b""
        return json.dumps(self.value).encode()


def reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def json_answer(status: int, value: object) -> Answer:
    return Answer(status, value)


def no_content() -> Answer:
    return Answer(204)


def problem(status: int, detail: str, errors: list[str] | None = None, headers: dict[str, str] | None = None) -> Answer:
    body: dict[str, object] = {"title": reason(status), "status": status, "detail": detail}
    if errors:
        body["errors"] = errors
    return Answer(status, body, content_type=PROBLEM, headers=dict(headers or {}))


_PAGE = "<html><head><title>{code}</title></head><body><center><h1>{code} {reason}</h1></center>{extra}</body></html>"


def html_page(status: int, extra: str = "") -> Answer:
    """The page a proxy in front of the API answers with (an nginx or Cloudflare error), not the API's JSON."""
    page = _PAGE.format(code=status, reason=reason(status), extra=extra)
    headers = {"Retry-After": "2"} if status == 429 else {}
    return Answer(status, raw=page.encode(), content_type=HTML, headers=headers)


def graphql_gone() -> Answer:
    """GraphQL retired (docs/runpod-facts.md#api-lifecycle): 410 with a small page, as a retired endpoint answers."""
    return html_page(410, "<p>The GraphQL API has been retired. Use the REST API v2 at /v2.</p>")
