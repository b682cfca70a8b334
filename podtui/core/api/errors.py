"""What can go wrong talking to RunPod, each with a message fit to show a person."""


class ApiError(Exception):
    """Base for every API failure. str(e) is one plain sentence, never containing the key."""


class ApiAuthError(ApiError):
    """401: the key is wrong, revoked or missing."""


class ApiUnavailable(ApiError):
    """No usable answer: connection refused, timeout, a 5xx page instead of JSON.

    retry_after_s: how long RunPod asked podtui to wait before the next request (None: podtui's own backoff).
    """

    def __init__(self, message: str, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class ApiRateLimited(ApiUnavailable):
    """429 Too Many Requests: the request was not carried out; wait retry_after_s before the next one."""

    def __init__(self, message: str, retry_after_s: float) -> None:
        super().__init__(message, retry_after_s)
        self.retry_after_s: float = retry_after_s


class ApiResponseError(ApiError):
    """An answer came but is not the JSON podtui asked for (truncated, malformed, partial)."""


class ApiQueryError(ApiError):
    """RunPod answered with GraphQL `errors` (HTTP 200): it understood and refused."""


class InvalidInput(ApiError, ValueError):
    """Refused before sending: the value would not be safe inside a GraphQL string."""


class ApiClientTooOld(ApiError):
    """The runpod SDK installed is older than podtui's floor: nothing was sent; str(e) says what to upgrade."""
