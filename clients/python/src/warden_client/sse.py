"""A W3C EventSource parser fed line by line (httpx's ``iter_lines``), and the event mapping of a batch."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Tuple

from .errors import HTTP_STATUS, error_of


class SseParser:
    """Collects ``event:`` and ``data:`` lines; a blank line ends an event. Comments (``:``) are ignored."""

    def __init__(self) -> None:
        self._event = "message"
        self._data: List[str] = []

    def feed(self, line: str) -> Optional[Tuple[str, str]]:
        """Feeds one line (without its end); returns ``(event, data)`` when the line ends an event."""
        if line == "":
            if not self._data:
                return None
            done = (self._event, "\n".join(self._data))
            self._event, self._data = "message", []
            return done
        if line.startswith(":"):
            return None
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "event":
            self._event = value
        elif field == "data":
            self._data.append(value)
        return None


def batch_event(event: str, data: str) -> Dict[str, Any]:
    """One event of a streamed batch as a dict with ``type`` (the TypeScript client's ToolCallEvent).

    Raises the WardenApiError of an ``error`` event.
    """
    value = json.loads(data)
    if event == "error":
        code = str(value.get("code", "INTERNAL"))
        raise error_of(code, HTTP_STATUS.get(code, 500), str(value.get("message", "The batch failed.")))
    if event == "approval_requested":
        return {"type": event, "approval": value}
    if event == "results":
        return {"type": event, "results": value["results"]}
    return value
