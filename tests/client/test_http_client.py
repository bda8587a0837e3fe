"""mcpfast's client over Streamable HTTP against mcpfast's server (in-process, loopback)."""

from __future__ import annotations

import asyncio

import pytest

import mcpfast
from loop import eventually
from mcpfast import Context, Server
from mcpfast.client import with_request
from mcpfast.jsonrpc import JSONRPCError


def make_app() -> Server:
    app = Server("http-client-test")

    @app.tool()
    def echo(text: str) -> str:
        return text

    @app.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.sample("question?")
        return answer.text or ""

    @app.resource("mem://doc")
    def doc() -> str:
        return "v1"

    return app


async def serve(app: Server, **options):
    bound = asyncio.get_running_loop().create_future()
    task = asyncio.ensure_future(app.serve_http("127.0.0.1", 0, ready=lambda h, p: bound.set_result(p),
                                                **options))
    port = await bound
    return task, f"http://127.0.0.1:{port}/mcp"


async def stop(task):
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


def test_calls_sampling_subscriptions_and_session_end():
    async def main():
        app = make_app()
        task, url = await serve(app)
        updates = []

        def sample(params):
            return {"role": "assistant", "model": "m",
                    "content": {"type": "text", "text": "answered over HTTP"}}

        async with mcpfast.connect(url, sampling=sample) as client:
            assert client.protocol_version == "2025-11-25"
            assert (await client.call_tool("echo", {"text": "hi"}))["content"][0]["text"] == "hi"
            many = await asyncio.gather(*(client.call_tool("echo", {"text": str(n)}) for n in range(100)))
            assert [r["content"][0]["text"] for r in many] == [str(n) for n in range(100)]
            # A server-to-client request rides on the tool call's SSE answer.
            assert (await client.call_tool("ask"))["content"][0]["text"] == "answered over HTTP"
            # resources/updated arrives on the GET stream.
            client.on_resource_updated(updates.append)
            await client.subscribe("mem://doc")
            for _ in range(200):
                if app.notify_resource_updated("mem://doc"):
                    break
                await asyncio.sleep(0.01)  # the GET stream is opened in the background
            for _ in range(200):
                if updates:
                    break
                await asyncio.sleep(0.01)
            assert updates and updates[0]["uri"] == "mem://doc"
            endpoint_sessions = len(app.connections)
            assert endpoint_sessions == 1
        # Closing the client sent DELETE: the session is gone on the server.
        for _ in range(100):
            if not app.connections:
                break
            await asyncio.sleep(0.01)
        assert app.connections == ()
        await stop(task)

    asyncio.run(main())


def test_a_server_that_is_gone_fails_calls_instead_of_hanging():
    async def main():
        app = make_app()
        task, url = await serve(app)
        client = await mcpfast.connect(url)
        await stop(task)
        with pytest.raises(JSONRPCError) as info:
            await asyncio.wait_for(client.call_tool("echo", {"text": "x"}), 30)
        assert "cannot reach" in info.value.message or "HTTP" in info.value.message
        await client.aclose()

    asyncio.run(main())


def test_nothing_listening_fails_the_handshake():
    async def main():
        with pytest.raises(JSONRPCError, match="cannot reach"):
            await mcpfast.connect("http://127.0.0.1:1/mcp", initialize_timeout=30)

    asyncio.run(main())


def test_a_servers_request_names_the_call_whose_post_stream_it_came_on():
    async def main():
        app = Server("related")
        later = asyncio.Event()
        asked_later: list = []

        @app.tool()
        async def ask(ctx: Context) -> str:
            answer = await ctx.sample("question?")
            return answer.text or ""

        @app.tool()
        def ask_later(ctx: Context) -> str:
            async def afterwards():
                await later.wait()
                # The call has been answered: this goes on the GET stream, tied to no call.
                asked_later.append(await ctx.list_roots())

            asyncio.ensure_future(afterwards())
            return "asked later"

        task, url = await serve(app)
        seen: list = []

        def sample(params, request):
            seen.append((request.method, request.related_request_id))
            return {"role": "assistant", "model": "m", "content": {"type": "text", "text": "ok"}}

        def roots(request):
            seen.append((request.method, request.related_request_id))
            return ["file:///w"]

        try:
            async with mcpfast.connect(url, sampling=with_request(sample),
                                       roots=with_request(roots)) as client:
                session = client.session
                calls = [session.send_request("tools/call", {"name": "ask", "arguments": {}}) for _ in range(3)]
                answers = [await call.wait() for call in calls]
                assert [answer["content"][0]["text"] for answer in answers] == ["ok"] * 3
                assert sorted(seen) == sorted(("sampling/createMessage", call.id) for call in calls)
                seen.clear()
                assert (await client.call_tool("ask_later"))["content"][0]["text"] == "asked later"
                later.set()
                await eventually(lambda: bool(asked_later))  # another stream, read by another task
                assert seen == [("roots/list", None)]
        finally:
            await stop(task)

    asyncio.run(main())
