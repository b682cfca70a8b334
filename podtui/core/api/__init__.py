"""RunPod's API as podtui speaks it: REST v2 for everything, GraphQL for the balance alone."""

from podtui.core.api.client import RunPodApi
from podtui.core.api.errors import (
    ApiAuthError,
    ApiConflict,
    ApiError,
    ApiForbidden,
    ApiNotFound,
    ApiPaymentRequired,
    ApiQueryError,
    ApiRateLimited,
    ApiResponseError,
    ApiUnavailable,
    InvalidInput,
)
from podtui.core.api.v2 import V2Api

__all__ = [
    "ApiAuthError",
    "ApiConflict",
    "ApiError",
    "ApiForbidden",
    "ApiNotFound",
    "ApiPaymentRequired",
    "ApiQueryError",
    "ApiRateLimited",
    "ApiResponseError",
    "ApiUnavailable",
    "InvalidInput",
    "RunPodApi",
    "V2Api",
]
