"""Errors of the client: one class per server error code, all subclasses of WardenApiError."""

from __future__ import annotations

import email.utils
import json
import time
from typing import Optional

import httpx


class WardenApiError(Exception):
    """Any error answer of ``warden serve``: ``code`` is the server's stable code, ``status`` the HTTP status."""

    def __init__(self, code: str, status: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.status = status
        self.message = message


class InvalidArgumentError(WardenApiError):
    """400 INVALID_ARGUMENT / POLICY_INVALID: the message names the field."""


class UnauthorizedError(WardenApiError):
    """401 UNAUTHORIZED: missing or unknown bearer key."""


class PathOutsideWorkspaceError(WardenApiError):
    """403 PATH_OUTSIDE_WORKSPACE."""


class PermissionDeniedError(WardenApiError):
    """403 PERMISSION_DENIED: the sandbox refused the path to its user (unreadable file, read-only directory)."""


class NotFoundError(WardenApiError):
    """404 NOT_FOUND: unknown id, or another tenant's."""


class ConflictError(WardenApiError):
    """409 CONFLICT / SANDBOX_NOT_RUNNING."""


class PayloadTooLargeError(WardenApiError):
    """413 PAYLOAD_TOO_LARGE: a body over the server's limit."""


class ServerError(WardenApiError):
    """5xx: the server or its engine failed."""


class RateLimitedError(WardenApiError):
    """429 RATE_LIMITED: over a quota; ``retry_after_seconds`` is the server's Retry-After."""

    def __init__(self, code: str, status: int, message: str, retry_after_seconds: float) -> None:
        super().__init__(code, status, message)
        self.retry_after_seconds = retry_after_seconds


_BY_CODE = {
    "INVALID_ARGUMENT": InvalidArgumentError,
    "POLICY_INVALID": InvalidArgumentError,
    "UNAUTHORIZED": UnauthorizedError,
    "PATH_OUTSIDE_WORKSPACE": PathOutsideWorkspaceError,
    "PERMISSION_DENIED": PermissionDeniedError,
    "NOT_FOUND": NotFoundError,
    "CONFLICT": ConflictError,
    "SANDBOX_NOT_RUNNING": ConflictError,
    "PAYLOAD_TOO_LARGE": PayloadTooLargeError,
}

#: HTTP status of each server code, for errors that arrive inside an SSE stream (src/errors.ts).
HTTP_STATUS = {
    "ENGINE_UNREACHABLE": 503,
    "IMAGE_MISSING": 500,
    "INVALID_ARGUMENT": 400,
    "NOT_FOUND": 404,
    "SANDBOX_NOT_RUNNING": 409,
    "SANDBOX_ERROR": 500,
    "PATH_OUTSIDE_WORKSPACE": 403,
    "PERMISSION_DENIED": 403,
    "TIMEOUT": 504,
    "ABORTED": 499,
    "POLICY_INVALID": 400,
    "CONFLICT": 409,
    "RATE_LIMITED": 429,
    "UNAUTHORIZED": 401,
    "COMMAND_FAILED": 422,
    "PROVIDER_ERROR": 502,
}


def retry_after_seconds(header: Optional[str], fallback: float = 1.0, now: Optional[float] = None) -> float:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date); ``fallback`` otherwise."""
    if header is None:
        return fallback
    try:
        seconds = float(header)
        if seconds >= 0:
            return seconds
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(header).timestamp()
    except (TypeError, ValueError):
        return fallback
    return max(0.0, when - (time.time() if now is None else now))


def error_of(code: str, status: int, message: str) -> WardenApiError:
    """The error class for ``code`` (5xx statuses without a class of their own are ServerError)."""
    cls = _BY_CODE.get(code) or (ServerError if status >= 500 else WardenApiError)
    return cls(code, status, message)


def error_from_response(response: httpx.Response) -> WardenApiError:
    """The error for a non-2xx response (its body must have been read)."""
    text = response.text
    code, message = f"HTTP_{response.status_code}", text or response.reason_phrase
    try:
        body = json.loads(text)
        if isinstance(body, dict):
            code = body.get("code", code) if isinstance(body.get("code"), str) else code
            message = body.get("message", message) if isinstance(body.get("message"), str) else message
    except ValueError:
        pass
    if response.status_code == 429:
        return RateLimitedError(code, 429, message, retry_after_seconds(response.headers.get("retry-after")))
    return error_of(code, response.status_code, message)
