"""warden-client: sync and async clients of ``warden serve`` on httpx."""

from .client import AsyncWardenClient, WardenClient
from .errors import (
    ConflictError,
    InvalidArgumentError,
    NotFoundError,
    PathOutsideWorkspaceError,
    PayloadTooLargeError,
    PermissionDeniedError,
    RateLimitedError,
    ServerError,
    UnauthorizedError,
    WardenApiError,
    retry_after_seconds,
)

__all__ = [
    "AsyncWardenClient",
    "WardenClient",
    "ConflictError",
    "InvalidArgumentError",
    "NotFoundError",
    "PathOutsideWorkspaceError",
    "PayloadTooLargeError",
    "PermissionDeniedError",
    "RateLimitedError",
    "ServerError",
    "UnauthorizedError",
    "WardenApiError",
    "retry_after_seconds",
]
