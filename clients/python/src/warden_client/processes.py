"""A session's background processes through ``warden serve`` (``/v1/sessions/{id}/processes``).

The requests are built once (``_process_req``); ``ProcessMethods`` and ``AsyncProcessMethods`` are
the sync and async clients' methods over them. Output comes back as bytes (the API carries them in
base64) with the offset to read next.
"""

from __future__ import annotations

import base64
from typing import Any, Dict, List, Optional, Union

import httpx

from ._req import Req, json_answer, no_answer, sid


def _path(session_id: str, pid: Optional[str] = None, tail: str = "") -> str:
    base = f"/v1/sessions/{sid(session_id)}/processes"
    return base if pid is None else f"{base}/{sid(pid)}{tail}"


def _output(response: httpx.Response) -> Dict[str, Any]:
    answer = response.json()
    answer["data"] = base64.b64decode(answer["data"])
    return answer


def _start(session_id: str, command: Union[str, List[str]], options: Dict[str, Any]) -> Req:
    body = {"command": command if isinstance(command, str) else {"argv": list(command)}, **options}
    return Req("POST", _path(session_id), {"json": body}, json_answer)


def _input(session_id: str, pid: str, data: Union[str, bytes], close: bool) -> Req:
    body: Dict[str, Any] = (
        {"text": data} if isinstance(data, str) else {"base64": base64.b64encode(data).decode("ascii")}
    )
    if close:
        body["close"] = True
    return Req("POST", _path(session_id, pid, "/input"), {"json": body}, no_answer)


def _output_req(session_id: str, pid: str, offset: int, max_bytes: Optional[int]) -> Req:
    params: Dict[str, Any] = {"offset": offset}
    if max_bytes is not None:
        params["maxBytes"] = max_bytes
    return Req("GET", _path(session_id, pid, "/output"), {"params": params}, _output)


def _wait(session_id: str, pid: str, timeout_ms: int) -> Req:
    return Req("POST", _path(session_id, pid, "/wait"), {"params": {"timeoutMs": timeout_ms}}, json_answer)


class ProcessMethods:
    """The sync client's process methods (``self._send`` sends one request)."""

    def _send(self, req: Req) -> Any:  # pragma: no cover - the client defines it
        raise NotImplementedError

    def start_process(self, session_id: str, command: Union[str, List[str]], **options: Any) -> Dict[str, Any]:
        """Starts a script (``bash -c``) or an argv list; ``cwd``, ``env``, ``pty={"cols", "rows"}``."""
        return self._send(_start(session_id, command, options))

    def list_processes(self, session_id: str) -> List[Dict[str, Any]]:
        """Every process the session still knows, in start order."""
        return self._send(Req("GET", _path(session_id), {}, lambda r: r.json()["processes"]))

    def get_process(self, session_id: str, pid: str) -> Dict[str, Any]:
        """One process; NotFoundError for an unknown id."""
        return self._send(Req("GET", _path(session_id, pid), {}, json_answer))

    def process_output(self, session_id: str, pid: str, offset: int = 0, max_bytes: Optional[int] = None) -> Dict[str, Any]:
        """Output from ``offset``: ``{"offset", "nextOffset", "skipped", "data": bytes, "process"}``."""
        return self._send(_output_req(session_id, pid, offset, max_bytes))

    def process_input(self, session_id: str, pid: str, data: Union[str, bytes], close: bool = False) -> None:
        """Sends input (str as UTF-8); ``close`` then closes stdin. ConflictError once it has exited."""
        self._send(_input(session_id, pid, data, close))

    def signal_process(self, session_id: str, pid: str, signal: str = "TERM") -> None:
        """Sends a signal (name without SIG) to its process group."""
        self._send(Req("POST", _path(session_id, pid, "/signal"), {"json": {"signal": signal}}, no_answer))

    def resize_process(self, session_id: str, pid: str, cols: int, rows: int) -> None:
        """Changes a terminal process's size."""
        self._send(Req("POST", _path(session_id, pid, "/resize"), {"json": {"cols": cols, "rows": rows}}, no_answer))

    def wait_process(self, session_id: str, pid: str, timeout_ms: int = 30_000) -> Dict[str, Any]:
        """Waits at most ``timeout_ms`` (up to 60 000) for it to exit; returns its state either way."""
        return self._send(_wait(session_id, pid, timeout_ms))


class AsyncProcessMethods:
    """The async client's process methods: those of ProcessMethods as coroutines."""

    async def _send(self, req: Req) -> Any:  # pragma: no cover - the client defines it
        raise NotImplementedError

    async def start_process(self, session_id: str, command: Union[str, List[str]], **options: Any) -> Dict[str, Any]:
        return await self._send(_start(session_id, command, options))

    async def list_processes(self, session_id: str) -> List[Dict[str, Any]]:
        return await self._send(Req("GET", _path(session_id), {}, lambda r: r.json()["processes"]))

    async def get_process(self, session_id: str, pid: str) -> Dict[str, Any]:
        return await self._send(Req("GET", _path(session_id, pid), {}, json_answer))

    async def process_output(
        self, session_id: str, pid: str, offset: int = 0, max_bytes: Optional[int] = None
    ) -> Dict[str, Any]:
        return await self._send(_output_req(session_id, pid, offset, max_bytes))

    async def process_input(self, session_id: str, pid: str, data: Union[str, bytes], close: bool = False) -> None:
        await self._send(_input(session_id, pid, data, close))

    async def signal_process(self, session_id: str, pid: str, signal: str = "TERM") -> None:
        await self._send(Req("POST", _path(session_id, pid, "/signal"), {"json": {"signal": signal}}, no_answer))

    async def resize_process(self, session_id: str, pid: str, cols: int, rows: int) -> None:
        await self._send(
            Req("POST", _path(session_id, pid, "/resize"), {"json": {"cols": cols, "rows": rows}}, no_answer)
        )

    async def wait_process(self, session_id: str, pid: str, timeout_ms: int = 30_000) -> Dict[str, Any]:
        return await self._send(_wait(session_id, pid, timeout_ms))
