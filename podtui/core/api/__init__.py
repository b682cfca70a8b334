"""RunPod's GraphQL API, through the official runpod SDK."""

from podtui.core.api.client import RunPodApi, SdkApi
from podtui.core.api.errors import (
    ApiAuthError,
    ApiError,
    ApiQueryError,
    ApiRateLimited,
    ApiResponseError,
    ApiUnavailable,
    InvalidInput,
)

__all__ = [
    "ApiAuthError",
    "ApiError",
    "ApiQueryError",
    "ApiRateLimited",
    "ApiResponseError",
    "ApiUnavailable",
    "InvalidInput",
    "RunPodApi",
    "SdkApi",
]
