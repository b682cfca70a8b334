"""What can go wrong talking to RunPod, each with a message fit to show a person."""


class ApiError(Exception):
    """Base for every API failure. str(e) is one plain sentence, never containing the key."""


class ApiAuthError(ApiError):
    """401: the key is wrong, revoked or missing."""


class ApiUnavailable(ApiError):
    """No usable answer: connection refused, timeout, a 5xx page instead of JSON.

    retry_after_s: how long RunPod asked podtui to wait before the next request (None: podtui's own backoff).
    status: the HTTP status of a server error (None when no answer came). not_sent: the request never reached
    RunPod (the connection was refused), so nothing it asked for can have happened. by_runpod: the 5xx came with
    RunPod's own problem body: it says the request failed, where a gateway's page only says the answer was lost.
    """

    def __init__(
        self,
        message: str,
        retry_after_s: float | None = None,
        status: int | None = None,
        not_sent: bool = False,
        by_runpod: bool = False,
    ) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s
        self.status = status
        self.not_sent = not_sent
        self.by_runpod = by_runpod  # a 5xx with RunPod's own problem body, not a gateway's page


class ApiRateLimited(ApiUnavailable):
    """429 Too Many Requests: the request was not carried out; wait retry_after_s before the next one."""

    def __init__(self, message: str, retry_after_s: float) -> None:
        super().__init__(message, retry_after_s, status=429, not_sent=True)
        self.retry_after_s: float = retry_after_s


class ApiResponseError(ApiError):
    """An answer came but is not the JSON podtui asked for (truncated, malformed, partial)."""


class ApiQueryError(ApiError):
    """RunPod understood the request and refused it: a REST v2 problem answer (400, 422, ...) or GraphQL `errors`.

    status: the HTTP status (None for a GraphQL error, which comes with 200); errors: the problem's `errors[]`.
    """

    def __init__(self, message: str, status: int | None = None, errors: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.status = status
        self.errors = errors


class ApiPaymentRequired(ApiQueryError):
    """402: the balance does not cover what was asked (creating a pod)."""


class ApiForbidden(ApiQueryError):
    """403: the key may not do this (a read-only or pod-scoped key, or an account restriction)."""


class ApiNotFound(ApiQueryError):
    """404: no such pod (or route) for this account."""


class ApiConflict(ApiQueryError):
    """409: the action is not valid in the pod's current status (stopping an exited pod, a locked pod)."""


class InvalidInput(ApiError, ValueError):
    """Refused before sending: the value would not be safe in a request (an id with a '/' or a quote)."""


class ApiClientTooOld(ApiError):
    """The runpod SDK installed is older than podtui's floor: nothing was sent; str(e) says what to upgrade."""
