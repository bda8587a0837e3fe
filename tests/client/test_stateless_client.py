"""The client speaking 2026-07-28: server/discover, self-contained requests, input rounds
answered with the client's own handlers, and the fallback to the handshake."""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

import pytest

from mcpfast import Context, Server, connect
from mcpfast.client import InvalidResult
from mcpfast.jsonrpc import JSONRPCError
from mcpfast.protocol import meta_keys

NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def make_server(**options: Any) -> Server:
    app = Server("modern", version="3.1", instructions="Ask me.", **options)
    seen: list[dict] = []
    app.seen = seen  # type: ignore[attr-defined]

    @app.tool()
    def whoami(ctx: Context) -> dict:
        seen.append(dict(ctx.params.get("_meta", {})))
        return {"version": ctx.protocol_version, "client": ctx.client_info.get("name"),
                "elicits": "elicitation" in ctx.client_capabilities}

    @app.tool()
    async def greet(ctx: Context) -> str:
        first = await ctx.elicit("Name?", NAME, input_key="first")
        capital = await ctx.sample("Capital of France?")
        roots = await ctx.list_roots()
        return f"{first.content['name']} / {capital.text} / {len(roots)} root(s)"

    @app.tool()
    async def insatiable(ctx: Context) -> str:
        for index in range(100):
            await ctx.elicit(f"Question {index}?", NAME, input_key=f"q{index}")
        return "never"

    @app.tool()
    async def chatty(ctx: Context) -> str:
        ctx.info("hello from the tool")
        return "ok"

    @app.resource("note://a")
    def note() -> str:
        return "a note"

    @app.prompt()
    async def framed(ctx: Context) -> str:
        answer = await ctx.elicit("Topic?", NAME, input_key="topic")
        return f"Talk about {answer.content['name']}"

    return app


@asynccontextmanager
async def serving(app: Server) -> AsyncIterator[str]:
    ready: asyncio.Future = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(app.serve_tcp("127.0.0.1", 0, ready=lambda h, p: ready.set_result(p)))
    try:
        yield f"tcp://127.0.0.1:{await ready}"
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


HANDLERS = {
    "elicitation": lambda params: {"action": "accept", "content": {"name": "Ada"}},
    "sampling": lambda params: {"role": "assistant", "content": {"type": "text", "text": "Paris"},
                                "model": "m"},
    "roots": ["file:///work"],
}


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


@pytest.mark.parametrize("requested", ["2026-07-28", "auto"])
def test_discovery_then_self_contained_requests(requested):
    async def main():
        app = make_server()
        async with serving(app) as url, connect(url, protocol_version=requested, name="me",
                                                  **HANDLERS) as client:
            assert client.protocol_version == "2026-07-28"
            assert client.initialize_result is None and client.discover_result is not None
            assert client.server_info == {"name": "modern", "version": "3.1"}
            assert client.instructions == "Ask me."
            result = await client.call_tool("whoami", {})
            assert result["structuredContent"] == {"version": "2026-07-28", "client": "me",
                                                   "elicits": True}
            meta = app.seen[-1]
            assert meta[meta_keys.PROTOCOL_VERSION] == "2026-07-28"
            assert meta[meta_keys.CLIENT_INFO]["name"] == "me"
            assert "sampling" in meta[meta_keys.CLIENT_CAPABILITIES]
            assert meta_keys.LOG_LEVEL not in meta
            # The caller's own _meta is kept beside the revision's keys.
            await client.call_tool("whoami", {}, meta={"progressToken": "t"})
            assert app.seen[-1]["progressToken"] == "t"

    run(main())


def test_input_rounds_are_answered_by_the_clients_handlers():
    async def main():
        async with serving(make_server()) as url, connect(url, protocol_version="2026-07-28",
                                                          **HANDLERS) as client:
            result = await client.call_tool("greet", {})
            assert result["content"][0]["text"] == "Ada / Paris / 1 root(s)"
            prompt = await client.get_prompt("framed")
            assert prompt["messages"][0]["content"]["text"] == "Talk about Ada"
            # A server that never stops asking is cut off.
            with pytest.raises(InvalidResult, match="rounds"):
                await client.call_tool("insatiable", {})

    run(main())


def test_a_capability_the_client_lacks_is_refused_by_the_server():
    async def main():
        async with serving(make_server()) as url, connect(
                url, protocol_version="2026-07-28", sampling=HANDLERS["sampling"]) as client:
            with pytest.raises(JSONRPCError) as refused:
                await client.call_tool("greet", {})
            assert refused.value.code == -32021
            assert refused.value.data["requiredCapabilities"] == {"elicitation": {}}

    run(main())


def test_ping_is_not_sent_under_2026_07_28_where_it_does_not_exist():
    async def main():
        async with serving(make_server()) as url, connect(url, protocol_version="2026-07-28") as client:
            # A ping would be answered -32601 (2026-07-28 removed it): server/discover is sent.
            await client.ping()
            await client.ping()

    run(main())


def test_log_level_travels_in_meta():
    async def main():
        logs: list[dict] = []
        app = make_server()
        async with serving(app) as url, connect(url, protocol_version="2026-07-28",
                                                on_log=logs.append) as client:
            await client.call_tool("chatty", {})
            assert logs == []
            await client.set_logging_level("info")
            await client.call_tool("chatty", {})
            await asyncio.sleep(0.05)
            assert [log["data"] for log in logs] == ["hello from the tool"]

    run(main())


def test_auto_falls_back_to_the_handshake_and_strict_2026_does_not():
    async def main():
        old = make_server(stateless=False)
        async with serving(old) as url:
            async with connect(url, protocol_version="auto", **HANDLERS) as client:
                assert client.protocol_version == "2025-11-25"
                assert client.initialize_result is not None and client.discover_result is None
                assert (await client.call_tool("whoami", {}))["structuredContent"]["version"] == "2025-11-25"
            with pytest.raises(JSONRPCError):
                async with connect(url, protocol_version="2026-07-28"):
                    pass

    run(main())


def test_requested_versions_are_checked():
    with pytest.raises(ValueError, match="auto"):
        connect("tcp://127.0.0.1:1", protocol_version="2099-01-01")


def test_listen_streams_list_changes_and_updates_until_left():
    async def main():
        app = make_server()
        async with serving(app) as url, connect(url, protocol_version="2026-07-28") as client:
            async with client.listen(tools=True) as tools_stream, \
                    client.listen(uris=["note://a"]) as note_stream:
                assert tools_stream.acknowledged == {"toolsListChanged": True}
                assert note_stream.acknowledged == {"resourceSubscriptions": ["note://a"]}

                @app.tool()
                def added() -> str:
                    return "new"

                app.notify_resource_updated("note://a")
                tool_note = await asyncio.wait_for(tools_stream.__anext__(), 5)
                assert tool_note["method"] == "notifications/tools/list_changed"
                assert tool_note["params"]["_meta"][meta_keys.SUBSCRIPTION_ID] == tools_stream.id
                update = await asyncio.wait_for(note_stream.__anext__(), 5)
                assert update["params"]["uri"] == "note://a"
            # Left: the server stopped both streams.
            await asyncio.sleep(0.05)
            assert len(app.publisher) == 1
            assert [n async for n in tools_stream] == []

    run(main())


def test_listen_needs_2026():
    async def main():
        async with serving(make_server()) as url, connect(url) as client:
            with pytest.raises(Exception, match="2026-07-28"):
                client.listen(tools=True)
            with pytest.raises(ValueError):
                async with serving(make_server()) as other, connect(
                        other, protocol_version="2026-07-28") as modern:
                    modern.listen()

    run(main())


def test_listen_and_input_rounds_over_streamable_http():
    async def main():
        app = make_server()
        ready: asyncio.Future = asyncio.get_running_loop().create_future()
        server = asyncio.create_task(app.serve_http("127.0.0.1", 0, ready=lambda h, p: ready.set_result(p)))
        url = f"http://127.0.0.1:{await ready}/mcp"
        try:
            async with connect(url, protocol_version="auto", **HANDLERS) as client:
                assert client.protocol_version == "2026-07-28"
                assert (await client.call_tool("greet", {}))["content"][0]["text"] == "Ada / Paris / 1 root(s)"
                async with client.listen(tools=True) as stream:
                    @app.tool()
                    def added_over_http() -> str:
                        return "new"

                    note = await asyncio.wait_for(stream.__anext__(), 5)
                    assert note["method"] == "notifications/tools/list_changed"
                # Leaving closed the listen POST: the server dropped the stream.
                for _ in range(100):
                    if len(app.publisher) == 0:
                        break
                    await asyncio.sleep(0.02)
                assert len(app.publisher) == 0
        finally:
            server.cancel()
            await asyncio.gather(server, return_exceptions=True)

    run(main())


def test_caching_hints_are_honoured_until_expiry_or_a_list_change():
    from mcpfast.client.stateless import ResultCache
    from mcpfast.server.eras.stateless import CachePolicy

    async def main():
        app = make_server(cache=CachePolicy(ttl_ms=60_000, scope="public"))
        calls: list[str] = []
        original = app.router.requests["tools/list"].handler

        def counting(params, ctx):
            calls.append("tools/list")
            return original(params, ctx)

        app.router.add_request_handler("tools/list", counting)
        async with serving(app) as url, connect(url, protocol_version="2026-07-28") as client:
            first = await client.list_tools()
            again = await client.list_tools()
            assert first == again and calls == ["tools/list"]  # the second came from the cache
            async with client.listen(tools=True) as stream:
                @app.tool()
                def fresh() -> str:
                    return "fresh"

                await asyncio.wait_for(stream.__anext__(), 5)
                # The list change made the cached list stale.
                assert "fresh" in {tool["name"] for tool in await client.list_tools()}
                assert calls == ["tools/list", "tools/list"]

    run(main())

    now = [0.0]
    cache = ResultCache(clock=lambda: now[0])
    result = {"tools": [], "resultType": "complete", "ttlMs": 500, "cacheScope": "private"}
    cache.put("tools/list", {"_meta": {"x": 1}}, result)
    assert cache.get("tools/list", {"_meta": {"y": 2}}) is result  # _meta is not part of the key
    now[0] = 0.6
    assert cache.get("tools/list", {}) is None  # expired
    cache.put("tools/list", {}, {**result, "ttlMs": 0})
    assert cache.get("tools/list", {}) is None  # 0: never reused
    cache.put("tools/call", {}, result)
    assert cache.get("tools/call", {}) is None  # not cacheable


def test_x_mcp_header_arguments_are_mirrored_over_http():
    async def main():
        app = make_server()

        @app.tool(input_schema={"type": "object", "required": ["region"], "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "count": {"type": "integer", "x-mcp-header": "Count"}}})
        def where(region: str, count: int = 1) -> str:
            return f"{region} x{count}"

        ready: asyncio.Future = asyncio.get_running_loop().create_future()
        server = asyncio.create_task(app.serve_http("127.0.0.1", 0, ready=lambda h, p: ready.set_result(p)))
        url = f"http://127.0.0.1:{await ready}/mcp"
        try:
            async with connect(url, protocol_version="2026-07-28") as client:
                # Before tools/list the client does not know the annotations: the server refuses.
                with pytest.raises(JSONRPCError) as refused:
                    await client.call_tool("where", {"region": "Zürich", "count": 3})
                assert refused.value.code == -32020
                names = {tool["name"] for tool in await client.list_tools()}
                assert "where" in names
                result = await client.call_tool("where", {"region": "Zürich", "count": 3})
                assert result["content"][0]["text"] == "Zürich x3"
        finally:
            server.cancel()
            await asyncio.gather(server, return_exceptions=True)

    run(main())


def test_tools_with_malformed_x_mcp_header_are_left_out(caplog):
    from mcpfast.protocol.header_params import header_params_of

    client_tools = [{"name": "ok", "inputSchema": {"type": "object"}},
                    {"name": "bad", "inputSchema": {"type": "object", "properties": {
                        "a": {"type": "number", "x-mcp-header": "A"}}}}]
    from mcpfast.client import Client

    client = Client()
    assert [t["name"] for t in client._learn_header_params(client_tools)] == ["ok"]
    assert "bad" in caplog.text
    assert header_params_of({"type": "object"}) == ()
