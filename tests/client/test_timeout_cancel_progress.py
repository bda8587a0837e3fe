"""Per-call timeouts, cancellation and progress callbacks."""

import asyncio
import math

import pytest

from mcpfast.jsonrpc import RequestTimeout


def _slow_tool(server, started=None, cancelled=None):
    async def call(params, ctx):
        if started is not None:
            started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            if cancelled is not None:
                cancelled.append(ctx.cancel_reason)
            raise
        return {"content": []}

    server.router.add_request_handler("tools/call", call)


def test_timeout_raises_and_sends_cancelled(fake, arun, mcp_schema):
    server = fake()
    cancelled = []
    _slow_tool(server, cancelled=cancelled)

    async def main():
        client = await server.connect()
        with pytest.raises(RequestTimeout) as info:
            await client.call_tool("slow", timeout=0.05)
        assert info.value.method == "tools/call" and info.value.timeout == 0.05
        await server.settle()
        request = server.sent("tools/call")[0]
        (note,) = server.sent("notifications/cancelled")
        assert note["params"] == {"requestId": request["id"], "reason": "Request timed out"}
        assert cancelled == ["Request timed out"]
        server.check_schema(mcp_schema)

    arun(main())


def test_default_timeout_applies_and_per_call_timeout_overrides_it(fake, arun):
    server = fake()
    _slow_tool(server)

    async def main():
        client = await server.connect(timeout=0.05)
        with pytest.raises(RequestTimeout):
            await client.call_tool("slow")
        with pytest.raises(RequestTimeout) as info:
            await client.call_tool("slow", timeout=0.08)
        assert info.value.timeout == 0.08
        # math.inf: no deadline at all, so the request waits for its answer.
        task = asyncio.ensure_future(client.call_tool("slow", timeout=math.inf))
        await asyncio.sleep(0.15)
        assert not task.done()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    arun(main())


def test_bad_timeouts_are_refused(fake, arun):
    server = fake()

    async def main():
        client = await server.connect()
        with pytest.raises(ValueError):
            await client.call_tool("x", timeout=0)
        with pytest.raises(TypeError):
            await client.call_tool("x", timeout="1")

    arun(main())


@pytest.mark.parametrize("bad", [0, -1, "5", True, float("nan")])
def test_a_bad_default_timeout_is_refused_at_once(bad):
    from mcpfast.client import Client

    with pytest.raises(ValueError, match="timeout"):
        Client(timeout=bad)


def test_many_timeouts_share_one_timer(fake, arun):
    server = fake()
    _slow_tool(server)

    async def main():
        client = await server.connect()
        session = client.session
        tasks = [asyncio.ensure_future(client.call_tool("slow", timeout=0.05 + i / 1000))
                 for i in range(50)]
        await asyncio.sleep(0)
        assert session.pending == 50
        # One TimerHandle armed for the earliest deadline, not one per request.
        assert session.outgoing.timer_deadline is not None
        results = await asyncio.gather(*tasks, return_exceptions=True)
        assert all(isinstance(r, RequestTimeout) for r in results)
        await server.settle()
        assert len(server.sent("notifications/cancelled")) == 50
        assert session.pending == 0

    arun(main())


def test_cancelling_the_await_sends_cancelled(fake, arun, mcp_schema):
    server = fake()
    started = asyncio.Event()
    cancelled = []
    _slow_tool(server, started=started, cancelled=cancelled)

    async def main():
        client = await server.connect()
        task = asyncio.ensure_future(client.call_tool("slow", {"x": 1}))
        await started.wait()
        task.cancel("user pressed stop")
        with pytest.raises(asyncio.CancelledError):
            await task
        await server.settle()
        request = server.sent("tools/call")[0]
        (note,) = server.sent("notifications/cancelled")
        assert note["params"] == {"requestId": request["id"], "reason": "user pressed stop"}
        assert cancelled == ["user pressed stop"]
        assert client.session.pending == 0
        server.check_schema(mcp_schema)

    arun(main())


def test_cancelling_other_requests_sends_cancelled_without_reason(fake, arun):
    server = fake()
    started = asyncio.Event()

    async def read(params, ctx):
        started.set()
        await asyncio.sleep(30)

    server.router.add_request_handler("resources/read", read)

    async def main():
        client = await server.connect()
        task = asyncio.ensure_future(client.read_resource("file:///x"))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await server.settle()
        (note,) = server.sent("notifications/cancelled")
        assert note["params"] == {"requestId": server.sent("resources/read")[0]["id"]}

    arun(main())


def test_a_response_after_cancellation_is_dropped(fake, arun):
    server = fake()
    started = asyncio.Event()

    async def call(params, ctx):
        if params["name"] == "first":
            started.set()
            await asyncio.sleep(30)
        return {"content": [{"type": "text", "text": params["name"]}]}

    server.router.add_request_handler("tools/call", call)

    async def main():
        client = await server.connect()
        task = asyncio.ensure_future(client.call_tool("first"))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # A server that answered before it saw the cancellation: the late response is
        # dropped and the connection goes on.
        first_id = server.sent("tools/call")[0]["id"]
        server._server_send(
            b'{"jsonrpc":"2.0","id":%d,"result":{"content":[]}}' % first_id)
        await server.settle()
        result = await client.call_tool("second")
        assert result["content"][0]["text"] == "second"
        assert client.session.pending == 0

    arun(main())


def test_progress_token_only_with_a_callback(fake, arun, mcp_schema):
    server = fake()

    async def call(params, ctx):
        if ctx.progress is not None:
            ctx.report_progress(1, 3, "one")
            await asyncio.sleep(0)
            ctx.report_progress(2, 3)
            await asyncio.sleep(0)
            ctx.report_progress(3)
        return {"content": []}

    server.router.add_request_handler("tools/call", call)

    async def main():
        client = await server.connect()
        await client.call_tool("quiet", {"a": 1})
        seen = []
        await client.call_tool("loud", {"a": 1}, progress=lambda *args: seen.append(args))
        assert seen == [(1, 3, "one"), (2, 3, None), (3, None, None)]
        quiet, loud = server.sent("tools/call")
        assert "_meta" not in quiet["params"]
        assert loud["params"]["_meta"] == {"progressToken": loud["id"]}
        assert loud["params"]["arguments"] == {"a": 1}
        server.check_schema(mcp_schema)

    arun(main())


def test_progress_keeps_other_meta_and_accepts_async_callbacks(fake, arun):
    server = fake()

    async def call(params, ctx):
        ctx.report_progress(0.5)
        await asyncio.sleep(0)
        return {"content": []}

    server.router.add_request_handler("tools/call", call)

    async def main():
        client = await server.connect()
        seen = []

        async def on_progress(progress, total, message):
            await asyncio.sleep(0)
            seen.append(progress)

        await client.call_tool("t", meta={"trace": "abc"}, progress=on_progress)
        await server.settle()
        assert seen == [0.5]
        (request,) = server.sent("tools/call")
        assert request["params"]["_meta"] == {"trace": "abc", "progressToken": request["id"]}

    arun(main())


def test_progress_on_other_requests(fake, arun):
    server = fake()

    async def read(params, ctx):
        ctx.report_progress(10, 10)
        await asyncio.sleep(0)
        return {"contents": []}

    server.router.add_request_handler("resources/read", read)
    server.router.add_request_handler("prompts/get", lambda p, c: {"messages": []})

    async def main():
        client = await server.connect()
        seen = []
        await client.read_resource("file:///x", progress=lambda *a: seen.append(a))
        assert seen == [(10, 10, None)]
        await client.get_prompt("p", progress=lambda *a: None)
        assert "progressToken" in server.sent("prompts/get")[0]["params"]["_meta"]

    arun(main())


def test_progress_must_be_callable(fake, arun):
    server = fake()

    async def main():
        client = await server.connect()
        with pytest.raises(TypeError, match="progress"):
            await client.call_tool("t", progress="nope")

    arun(main())
