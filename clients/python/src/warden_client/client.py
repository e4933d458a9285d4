"""WardenClient (sync) and AsyncWardenClient: clients of one tenant on one ``warden serve``.

Error answers raise the classes of errors.py; a 429 is retried after the server's Retry-After (at
most ``max_retries`` times, each wait at most ``max_retry_delay`` seconds).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, AsyncIterator, Dict, Iterator, List, Optional, Sequence
from urllib.parse import quote

import httpx

from .errors import RateLimitedError, error_from_response
from .sse import SseParser, batch_event

ToolCall = Dict[str, Any]
"""One tool call: ``{"id": str, "name": str, "arguments": dict}``."""


class _Base:
    def __init__(self, base_url: str, api_key: str, max_retries: int, max_retry_delay: float) -> None:
        self.base_url = base_url.rstrip("/")
        self.max_retries = max_retries
        self.max_retry_delay = max_retry_delay
        self._headers = {"authorization": f"Bearer {api_key}"}

    def _wait(self, error: Exception, attempt: int) -> Optional[float]:
        """Seconds to wait before retrying ``error``, or None to raise it."""
        if isinstance(error, RateLimitedError) and attempt < self.max_retries:
            return min(error.retry_after_seconds, self.max_retry_delay)
        return None

    @staticmethod
    def _tar_query(options: Dict[str, Any]) -> Dict[str, Any]:
        query = {k: v for k, v in options.items() if v is not None and k != "tools"}
        if options.get("tools"):
            query["tools"] = ",".join(options["tools"])
        return query

    @staticmethod
    def _sid(session_id: str) -> str:
        return quote(session_id, safe="")


class WardenClient(_Base):
    """A synchronous client. Use as a context manager, or call ``close()``."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        max_retries: int = 3,
        max_retry_delay: float = 30.0,
        timeout: Optional[float] = 300.0,
        transport: Optional[httpx.BaseTransport] = None,
    ) -> None:
        super().__init__(base_url, api_key, max_retries, max_retry_delay)
        self._http = httpx.Client(base_url=self.base_url, headers=self._headers, timeout=timeout, transport=transport)

    def __enter__(self) -> "WardenClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        attempt = 0
        while True:
            response = self._http.request(method, path, **kwargs)
            if response.is_success:
                return response
            error = error_from_response(response)
            wait = self._wait(error, attempt)
            if wait is None:
                raise error
            time.sleep(wait)
            attempt += 1

    def create_session(self, **options: Any) -> Dict[str, Any]:
        """POST /v1/sessions with JSON options (image, workspaceMode, workspacePath, limits, tools)."""
        return self._request("POST", "/v1/sessions", json=options).json()

    def create_session_from_tar(self, tar: bytes, **options: Any) -> Dict[str, Any]:
        """POST /v1/sessions with a workspace tar (copy mode); options image, cpus, memoryBytes, workspaceBytes, tools."""
        return self._request(
            "POST",
            "/v1/sessions",
            content=tar,
            params=self._tar_query(options),
            headers={"content-type": "application/x-tar"},
        ).json()

    def list_sessions(self) -> List[Dict[str, Any]]:
        return self._request("GET", "/v1/sessions").json()["sessions"]

    def get_session(self, session_id: str) -> Dict[str, Any]:
        """One session; NotFoundError for an unknown (or another tenant's) id."""
        return self._request("GET", f"/v1/sessions/{self._sid(session_id)}").json()

    def delete_session(self, session_id: str) -> None:
        """Closes a session and removes its sandbox."""
        self._request("DELETE", f"/v1/sessions/{self._sid(session_id)}")

    def tools(self, session_id: str) -> List[Dict[str, Any]]:
        """The session's enabled tools as OpenAI ``tools[]`` entries."""
        return self._request("GET", "/v1/tools", params={"session": session_id}).json()["tools"]

    def run_tool_calls(self, session_id: str, tool_calls: Sequence[ToolCall]) -> List[Dict[str, Any]]:
        """Runs one batch; results in call order. A tool error is a result with isError, not an exception."""
        path = f"/v1/sessions/{self._sid(session_id)}/tool-calls"
        return self._request("POST", path, json={"toolCalls": list(tool_calls)}).json()["results"]

    def stream_tool_calls(self, session_id: str, tool_calls: Sequence[ToolCall]) -> Iterator[Dict[str, Any]]:
        """Runs one batch over SSE, yielding each event (``type`` key); ``results`` comes last.

        Closing the iterator early disconnects, which aborts the calls on the server.
        """
        path = f"/v1/sessions/{self._sid(session_id)}/tool-calls"
        attempt = 0
        while True:
            with self._http.stream(
                "POST", path, json={"toolCalls": list(tool_calls)}, headers={"accept": "text/event-stream"}
            ) as response:
                if response.is_success:
                    parser = SseParser()
                    for line in response.iter_lines():
                        event = parser.feed(line)
                        if event is not None:
                            yield batch_event(*event)
                    return
                response.read()
                error = error_from_response(response)
            wait = self._wait(error, attempt)
            if wait is None:
                raise error
            time.sleep(wait)
            attempt += 1

    def list_approvals(self) -> List[Dict[str, Any]]:
        """The tenant's pending approval requests."""
        return self._request("GET", "/v1/approvals").json()["approvals"]

    def answer_approval(self, approval_id: str, decision: str) -> None:
        """Answers a pending request: allow, allow-once, allow-session or deny."""
        self._request("POST", f"/v1/approvals/{self._sid(approval_id)}", json={"decision": decision})

    def download_workspace(self, session_id: str) -> bytes:
        """The session's workspace as tar bytes."""
        return self._request("GET", f"/v1/sessions/{self._sid(session_id)}/workspace").content

    def write_file(self, session_id: str, path: str, data: bytes) -> Dict[str, Any]:
        """Writes one workspace file (never through a symlink); returns ``{"path", "bytes"}``."""
        return self._request(
            "PUT",
            f"/v1/sessions/{self._sid(session_id)}/files",
            params={"path": path},
            content=data,
            headers={"content-type": "application/octet-stream"},
        ).json()

    def read_file(self, session_id: str, path: str) -> bytes:
        """One workspace file's bytes; NotFoundError when there is none."""
        return self._request("GET", f"/v1/sessions/{self._sid(session_id)}/files", params={"path": path}).content

    def changes(self, session_id: str) -> str:
        """The session's changes as a unified patch (empty when nothing changed)."""
        return self._request("GET", f"/v1/sessions/{self._sid(session_id)}/changes").text


class AsyncWardenClient(_Base):
    """The asyncio client: the same methods as WardenClient, as coroutines and async iterators."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        max_retries: int = 3,
        max_retry_delay: float = 30.0,
        timeout: Optional[float] = 300.0,
        transport: Optional[httpx.AsyncBaseTransport] = None,
    ) -> None:
        super().__init__(base_url, api_key, max_retries, max_retry_delay)
        self._http = httpx.AsyncClient(
            base_url=self.base_url, headers=self._headers, timeout=timeout, transport=transport
        )

    async def __aenter__(self) -> "AsyncWardenClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        attempt = 0
        while True:
            response = await self._http.request(method, path, **kwargs)
            if response.is_success:
                return response
            error = error_from_response(response)
            wait = self._wait(error, attempt)
            if wait is None:
                raise error
            await asyncio.sleep(wait)
            attempt += 1

    async def create_session(self, **options: Any) -> Dict[str, Any]:
        return (await self._request("POST", "/v1/sessions", json=options)).json()

    async def create_session_from_tar(self, tar: bytes, **options: Any) -> Dict[str, Any]:
        response = await self._request(
            "POST",
            "/v1/sessions",
            content=tar,
            params=self._tar_query(options),
            headers={"content-type": "application/x-tar"},
        )
        return response.json()

    async def list_sessions(self) -> List[Dict[str, Any]]:
        return (await self._request("GET", "/v1/sessions")).json()["sessions"]

    async def get_session(self, session_id: str) -> Dict[str, Any]:
        return (await self._request("GET", f"/v1/sessions/{self._sid(session_id)}")).json()

    async def delete_session(self, session_id: str) -> None:
        await self._request("DELETE", f"/v1/sessions/{self._sid(session_id)}")

    async def tools(self, session_id: str) -> List[Dict[str, Any]]:
        return (await self._request("GET", "/v1/tools", params={"session": session_id})).json()["tools"]

    async def run_tool_calls(self, session_id: str, tool_calls: Sequence[ToolCall]) -> List[Dict[str, Any]]:
        path = f"/v1/sessions/{self._sid(session_id)}/tool-calls"
        return (await self._request("POST", path, json={"toolCalls": list(tool_calls)})).json()["results"]

    async def stream_tool_calls(
        self, session_id: str, tool_calls: Sequence[ToolCall]
    ) -> AsyncIterator[Dict[str, Any]]:
        path = f"/v1/sessions/{self._sid(session_id)}/tool-calls"
        attempt = 0
        while True:
            async with self._http.stream(
                "POST", path, json={"toolCalls": list(tool_calls)}, headers={"accept": "text/event-stream"}
            ) as response:
                if response.is_success:
                    parser = SseParser()
                    async for line in response.aiter_lines():
                        event = parser.feed(line)
                        if event is not None:
                            yield batch_event(*event)
                    return
                await response.aread()
                error = error_from_response(response)
            wait = self._wait(error, attempt)
            if wait is None:
                raise error
            await asyncio.sleep(wait)
            attempt += 1

    async def list_approvals(self) -> List[Dict[str, Any]]:
        return (await self._request("GET", "/v1/approvals")).json()["approvals"]

    async def answer_approval(self, approval_id: str, decision: str) -> None:
        await self._request("POST", f"/v1/approvals/{self._sid(approval_id)}", json={"decision": decision})

    async def download_workspace(self, session_id: str) -> bytes:
        return (await self._request("GET", f"/v1/sessions/{self._sid(session_id)}/workspace")).content

    async def write_file(self, session_id: str, path: str, data: bytes) -> Dict[str, Any]:
        response = await self._request(
            "PUT",
            f"/v1/sessions/{self._sid(session_id)}/files",
            params={"path": path},
            content=data,
            headers={"content-type": "application/octet-stream"},
        )
        return response.json()

    async def read_file(self, session_id: str, path: str) -> bytes:
        path_ = f"/v1/sessions/{self._sid(session_id)}/files"
        return (await self._request("GET", path_, params={"path": path})).content

    async def changes(self, session_id: str) -> str:
        return (await self._request("GET", f"/v1/sessions/{self._sid(session_id)}/changes")).text
