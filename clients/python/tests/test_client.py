"""The Python client, sync and async, against a real ``warden serve``."""

from __future__ import annotations

import asyncio
import threading

import httpx
import pytest

from warden_client import (
    AsyncWardenClient,
    ConflictError,
    InvalidArgumentError,
    NotFoundError,
    RateLimitedError,
    UnauthorizedError,
    WardenClient,
    retry_after_seconds,
)
from warden_client.sse import SseParser


def text(result):
    return "".join(c.get("text", "") for c in result["content"])


def test_sessions_tools_and_delete(served):
    with WardenClient(served["url"], served["keys"]["main"]) as client:
        session = client.create_session(tools={"tools": ["read", "bash", "write"]})
        assert session["enabledTools"] == ["read", "bash", "write"]
        assert session["id"] in [s["id"] for s in client.list_sessions()]
        assert client.get_session(session["id"])["id"] == session["id"]
        assert [t["function"]["name"] for t in client.tools(session["id"])] == ["read", "bash", "write"]
        client.delete_session(session["id"])
        with pytest.raises(NotFoundError):
            client.get_session(session["id"])


def test_stream_write_patch_and_workspace(served):
    with WardenClient(served["url"], served["keys"]["main"]) as client:
        session = client.create_session()
        events = list(
            client.stream_tool_calls(
                session["id"],
                [{"id": "c1", "name": "bash", "arguments": {"command": "for i in 1 2 3; do echo l$i; sleep 0.4; done"}}],
            )
        )
        types = [e["type"] for e in events]
        assert types[0] == "tool_execution_start"
        assert "tool_execution_update" in types
        assert types[-2:] == ["tool_execution_end", "results"]
        assert text(events[-1]["results"][0]) == "l1\nl2\nl3\n"
        [written] = client.run_tool_calls(
            session["id"], [{"id": "w", "name": "write", "arguments": {"path": "hello.txt", "content": "hello py\n"}}]
        )
        assert written["isError"] is False
        assert "+hello py" in client.changes(session["id"])
        assert b"hello py\n" in client.download_workspace(session["id"])
        assert client.write_file(session["id"], "put/b.txt", b"put by python\n") == {"path": "/workspace/put/b.txt", "bytes": 14}
        assert client.read_file(session["id"], "put/b.txt") == b"put by python\n"
        with pytest.raises(NotFoundError):
            client.read_file(session["id"], "nope.txt")
        client.delete_session(session["id"])


def test_approval_announced_on_the_stream(served):
    with WardenClient(served["url"], served["keys"]["policy"]) as client:
        session = client.create_session()
        last = None
        for event in client.stream_tool_calls(
            session["id"], [{"id": "a", "name": "bash", "arguments": {"command": "sleep 0; echo approved"}}]
        ):
            if event["type"] == "approval_requested":
                assert event["approval"]["toolCallId"] == "a"
                assert [a["id"] for a in client.list_approvals()] == [event["approval"]["id"]]
                client.answer_approval(event["approval"]["id"], "allow-once")
            last = event
        assert last["type"] == "results"
        assert text(last["results"][0]) == "approved\n"
        client.delete_session(session["id"])


def test_errors_carry_the_server_codes(served):
    with WardenClient(served["url"], served["keys"]["main"]) as client:
        with pytest.raises(NotFoundError) as missing:
            client.get_session("no-such-session")
        assert (missing.value.code, missing.value.status) == ("NOT_FOUND", 404)
        with pytest.raises(InvalidArgumentError) as bad:
            client.create_session(limits={"cpus": 64})
        assert (bad.value.code, bad.value.status) == ("INVALID_ARGUMENT", 400)
        assert "cpus" in str(bad.value)
    with WardenClient(served["url"], "not-a-key") as stranger:
        with pytest.raises(UnauthorizedError):
            stranger.list_sessions()


def test_429_retry_after(served):
    statuses = []

    class Counting(httpx.HTTPTransport):
        def handle_request(self, request):
            response = super().handle_request(request)
            statuses.append(response.status_code)
            return response

    with WardenClient(served["url"], served["keys"]["limited"], max_retries=0) as no_retry:
        first = no_retry.create_session()
        with pytest.raises(RateLimitedError) as refused:
            no_retry.create_session()
        assert (refused.value.code, refused.value.status, refused.value.retry_after_seconds) == ("RATE_LIMITED", 429, 1)
        with WardenClient(served["url"], served["keys"]["limited"], max_retries=20, transport=Counting()) as retrying:
            created = {}
            worker = threading.Thread(target=lambda: created.update(retrying.create_session()))
            worker.start()
            while 429 not in statuses:
                threading.Event().wait(0.05)
            no_retry.delete_session(first["id"])
            worker.join(60)
            assert statuses[0] == 429 and statuses[-1] == 201
            retrying.delete_session(created["id"])


def test_async_client(served):
    async def main():
        async with AsyncWardenClient(served["url"], served["keys"]["main"]) as client:
            session = await client.create_session()
            events = [
                e
                async for e in client.stream_tool_calls(
                    session["id"], [{"id": "c", "name": "bash", "arguments": {"command": "echo async"}}]
                )
            ]
            assert events[-1]["type"] == "results"
            assert text(events[-1]["results"][0]) == "async\n"
            await client.write_file(session["id"], "a.txt", b"async file")
            assert await client.read_file(session["id"], "a.txt") == b"async file"
            [listed] = await client.run_tool_calls(session["id"], [{"id": "l", "name": "ls", "arguments": {}}])
            assert listed["isError"] is False
            assert (await client.get_session(session["id"]))["id"] == session["id"]
            await client.delete_session(session["id"])
            with pytest.raises(NotFoundError):
                await client.get_session(session["id"])

    asyncio.run(main())


def test_sse_parser_and_retry_after():
    parser = SseParser()
    fed = [parser.feed(line) for line in ["event: a", "data: l1", ": comment", "data: l2", ""]]
    assert fed[-1] == ("a", "l1\nl2")
    assert retry_after_seconds("3") == 3
    assert retry_after_seconds(None, 2) == 2
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:05 GMT", 1, now=1445412480) == 5


def test_background_process_input_output_and_wait(served):
    with WardenClient(served["url"], served["keys"]["main"]) as client:
        session = client.create_session()
        sid = session["id"]
        proc = client.start_process(sid, ["cat"])
        assert (proc["id"], proc["state"], proc["commandLine"]) == ("p1", "running", "cat")
        client.process_input(sid, "p1", "hello ")
        client.process_input(sid, "p1", b"\x00\xffpy\n", close=True)
        done = client.wait_process(sid, "p1", timeout_ms=20_000)
        assert (done["state"], done["exitCode"]) == ("exited", 0)
        out = client.process_output(sid, "p1", offset=6)
        assert (out["offset"], out["nextOffset"], out["skipped"], out["data"]) == (6, 11, 0, b"\x00\xffpy\n")
        assert [p["id"] for p in client.list_processes(sid)] == ["p1"]
        with pytest.raises(ConflictError):
            client.process_input(sid, "p1", "late")
        client.delete_session(sid)


def test_async_background_process_signal(served):
    async def main():
        async with AsyncWardenClient(served["url"], served["keys"]["main"]) as client:
            session = await client.create_session()
            sid = session["id"]
            proc = await client.start_process(sid, "sleep 600")
            await client.signal_process(sid, proc["id"], "INT")
            done = await client.wait_process(sid, proc["id"], timeout_ms=20_000)
            assert (done["exitCode"], done["exitSignal"]) == (130, 2)
            await client.delete_session(sid)

    asyncio.run(main())
