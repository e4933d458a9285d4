"""WardenClient (sync) and AsyncWardenClient: clients of one tenant on one ``warden serve``.

Both build the same requests (``_Requests``) and differ only in how they send them. Error answers
raise the classes of errors.py; a 429 is retried after the server's Retry-After (at most
``max_retries`` times, each wait at most ``max_retry_delay`` seconds).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, AsyncIterator, Dict, Iterator, List, Optional, Sequence

import httpx

from ._req import Req, json_answer, no_answer, sid
from .errors import RateLimitedError, error_from_response
from .processes import AsyncProcessMethods, ProcessMethods
from .sse import SseParser, batch_event

ToolCall = Dict[str, Any]
"""One tool call: ``{"id": str, "name": str, "arguments": dict}``."""


class _Requests:
    """The requests of every method, shared by the sync and async clients."""

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
    def _create_session(options: Dict[str, Any]) -> Req:
        return Req("POST", "/v1/sessions", {"json": options}, json_answer)

    @staticmethod
    def _create_session_from_tar(tar: bytes, options: Dict[str, Any]) -> Req:
        query = {k: v for k, v in options.items() if v is not None and k != "tools"}
        if options.get("tools"):
            query["tools"] = ",".join(options["tools"])
        kwargs = {"content": tar, "params": query, "headers": {"content-type": "application/x-tar"}}
        return Req("POST", "/v1/sessions", kwargs, json_answer)

    @staticmethod
    def _list_sessions() -> Req:
        return Req("GET", "/v1/sessions", {}, lambda r: r.json()["sessions"])

    @staticmethod
    def _get_session(session_id: str) -> Req:
        return Req("GET", f"/v1/sessions/{sid(session_id)}", {}, json_answer)

    @staticmethod
    def _delete_session(session_id: str) -> Req:
        return Req("DELETE", f"/v1/sessions/{sid(session_id)}", {}, no_answer)

    @staticmethod
    def _tools(session_id: str) -> Req:
        return Req("GET", "/v1/tools", {"params": {"session": session_id}}, lambda r: r.json()["tools"])

    @staticmethod
    def _tool_calls_path(session_id: str) -> str:
        return f"/v1/sessions/{sid(session_id)}/tool-calls"

    @classmethod
    def _run_tool_calls(cls, session_id: str, tool_calls: Sequence[ToolCall]) -> Req:
        kwargs = {"json": {"toolCalls": list(tool_calls)}}
        return Req("POST", cls._tool_calls_path(session_id), kwargs, lambda r: r.json()["results"])

    @staticmethod
    def _list_approvals() -> Req:
        return Req("GET", "/v1/approvals", {}, lambda r: r.json()["approvals"])

    @staticmethod
    def _answer_approval(approval_id: str, decision: str) -> Req:
        return Req("POST", f"/v1/approvals/{sid(approval_id)}", {"json": {"decision": decision}}, no_answer)

    @staticmethod
    def _download_workspace(session_id: str) -> Req:
        return Req("GET", f"/v1/sessions/{sid(session_id)}/workspace", {}, lambda r: r.content)

    @staticmethod
    def _changes(session_id: str) -> Req:
        return Req("GET", f"/v1/sessions/{sid(session_id)}/changes", {}, lambda r: r.text)

    @staticmethod
    def _write_file(session_id: str, path: str, data: bytes) -> Req:
        kwargs = {"params": {"path": path}, "content": data, "headers": {"content-type": "application/octet-stream"}}
        return Req("PUT", f"/v1/sessions/{sid(session_id)}/files", kwargs, json_answer)

    @staticmethod
    def _read_file(session_id: str, path: str) -> Req:
        return Req("GET", f"/v1/sessions/{sid(session_id)}/files", {"params": {"path": path}}, lambda r: r.content)


class WardenClient(_Requests, ProcessMethods):
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

    def _send(self, req: Req) -> Any:
        attempt = 0
        while True:
            response = self._http.request(req.method, req.path, **req.kwargs)
            if response.is_success:
                return req.extract(response)
            error = error_from_response(response)
            wait = self._wait(error, attempt)
            if wait is None:
                raise error
            time.sleep(wait)
            attempt += 1

    def create_session(self, **options: Any) -> Dict[str, Any]:
        """POST /v1/sessions with JSON options (image, workspaceMode, workspacePath, limits, tools)."""
        return self._send(self._create_session(options))

    def create_session_from_tar(self, tar: bytes, **options: Any) -> Dict[str, Any]:
        """A session on a workspace tar (copy mode); options image, cpus, memoryBytes, workspaceBytes, tools."""
        return self._send(self._create_session_from_tar(tar, options))

    def list_sessions(self) -> List[Dict[str, Any]]:
        return self._send(self._list_sessions())

    def get_session(self, session_id: str) -> Dict[str, Any]:
        """One session; NotFoundError for an unknown (or another tenant's) id."""
        return self._send(self._get_session(session_id))

    def delete_session(self, session_id: str) -> None:
        """Closes a session and removes its sandbox."""
        self._send(self._delete_session(session_id))

    def tools(self, session_id: str) -> List[Dict[str, Any]]:
        """The session's enabled tools as OpenAI ``tools[]`` entries."""
        return self._send(self._tools(session_id))

    def run_tool_calls(self, session_id: str, tool_calls: Sequence[ToolCall]) -> List[Dict[str, Any]]:
        """Runs one batch; results in call order. A tool error is a result with isError, not an exception."""
        return self._send(self._run_tool_calls(session_id, tool_calls))

    def stream_tool_calls(self, session_id: str, tool_calls: Sequence[ToolCall]) -> Iterator[Dict[str, Any]]:
        """Runs one batch over SSE, yielding each event (``type`` key); ``results`` comes last.

        Closing the iterator early disconnects, which aborts the calls on the server.
        """
        body = {"toolCalls": list(tool_calls)}
        attempt = 0
        while True:
            with self._http.stream(
                "POST", self._tool_calls_path(session_id), json=body, headers={"accept": "text/event-stream"}
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
        return self._send(self._list_approvals())

    def answer_approval(self, approval_id: str, decision: str) -> None:
        """Answers a pending request: allow, allow-once, allow-session or deny."""
        self._send(self._answer_approval(approval_id, decision))

    def download_workspace(self, session_id: str) -> bytes:
        """The session's workspace as tar bytes."""
        return self._send(self._download_workspace(session_id))

    def changes(self, session_id: str) -> str:
        """The session's changes as a unified patch (empty when nothing changed)."""
        return self._send(self._changes(session_id))

    def write_file(self, session_id: str, path: str, data: bytes) -> Dict[str, Any]:
        """Writes one workspace file (never through a symlink); returns ``{"path", "bytes"}``."""
        return self._send(self._write_file(session_id, path, data))

    def read_file(self, session_id: str, path: str) -> bytes:
        """One workspace file's bytes; NotFoundError when there is none."""
        return self._send(self._read_file(session_id, path))


class AsyncWardenClient(_Requests, AsyncProcessMethods):
    """The asyncio client: the methods of WardenClient as coroutines, and an async iterator for streams."""

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

    async def _send(self, req: Req) -> Any:
        attempt = 0
        while True:
            response = await self._http.request(req.method, req.path, **req.kwargs)
            if response.is_success:
                return req.extract(response)
            error = error_from_response(response)
            wait = self._wait(error, attempt)
            if wait is None:
                raise error
            await asyncio.sleep(wait)
            attempt += 1

    async def create_session(self, **options: Any) -> Dict[str, Any]:
        return await self._send(self._create_session(options))

    async def create_session_from_tar(self, tar: bytes, **options: Any) -> Dict[str, Any]:
        return await self._send(self._create_session_from_tar(tar, options))

    async def list_sessions(self) -> List[Dict[str, Any]]:
        return await self._send(self._list_sessions())

    async def get_session(self, session_id: str) -> Dict[str, Any]:
        return await self._send(self._get_session(session_id))

    async def delete_session(self, session_id: str) -> None:
        await self._send(self._delete_session(session_id))

    async def tools(self, session_id: str) -> List[Dict[str, Any]]:
        return await self._send(self._tools(session_id))

    async def run_tool_calls(self, session_id: str, tool_calls: Sequence[ToolCall]) -> List[Dict[str, Any]]:
        return await self._send(self._run_tool_calls(session_id, tool_calls))

    async def stream_tool_calls(
        self, session_id: str, tool_calls: Sequence[ToolCall]
    ) -> AsyncIterator[Dict[str, Any]]:
        body = {"toolCalls": list(tool_calls)}
        attempt = 0
        while True:
            async with self._http.stream(
                "POST", self._tool_calls_path(session_id), json=body, headers={"accept": "text/event-stream"}
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
        return await self._send(self._list_approvals())

    async def answer_approval(self, approval_id: str, decision: str) -> None:
        await self._send(self._answer_approval(approval_id, decision))

    async def download_workspace(self, session_id: str) -> bytes:
        return await self._send(self._download_workspace(session_id))

    async def changes(self, session_id: str) -> str:
        return await self._send(self._changes(session_id))

    async def write_file(self, session_id: str, path: str, data: bytes) -> Dict[str, Any]:
        return await self._send(self._write_file(session_id, path, data))

    async def read_file(self, session_id: str, path: str) -> bytes:
        return await self._send(self._read_file(session_id, path))
