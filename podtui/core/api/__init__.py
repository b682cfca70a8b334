"""RunPod's API as podtui speaks it: REST v2 for everything, GraphQL for the balance alone."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from podtui.core.api.v2 import V2Api
else:  # hidden from mypy, which would take any misspelt name for this __getattr__'s Any

    def __getattr__(name: str) -> Any:
        # V2Api is loaded when first named: its REST, GraphQL and SDK modules stay off the path to the first
        # frame (the errors and the protocol above are what most importers want, and they are light)
        if name == "V2Api":
            from podtui.core.api.v2 import V2Api

            return V2Api
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
