"""One request of the clients and how its answer becomes a method's value (shared by client.py and processes.py)."""

from __future__ import annotations

from typing import Any, Callable, Dict, NamedTuple
from urllib.parse import quote

import httpx


class Req(NamedTuple):
    """One request and how its answer becomes the method's value."""

    method: str
    path: str
    kwargs: Dict[str, Any]
    extract: Callable[[httpx.Response], Any]


def json_answer(response: httpx.Response) -> Any:
    """The answer's JSON body."""
    return response.json()


def no_answer(_response: httpx.Response) -> None:
    """An answer without a body (204)."""
    return None


def sid(value: str) -> str:
    """A path segment: every character but unreserved ones percent-encoded."""
    return quote(value, safe="")
