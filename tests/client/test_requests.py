"""The request methods: params on the wire, results handed back, errors raised."""

import pytest

from mcpfast.client import ClientError, NotInitialized
from mcpfast.jsonrpc import RESOURCE_NOT_FOUND, InvalidParams, JSONRPCError, MethodNotFound


def _echo_params(result_key):
    """A handler answering with the params it got, under result_key."""
    return lambda params, ctx: {result_key: params}


def test_call_tool_params_and_result(fake, arun, mcp_schema):
    server = fake()
    calls = []

    def call(params, ctx):
        calls.append(params)
        return {"content": [{"type": "text", "text": "ok"}], "structuredContent": {"n": 1}}

    server.router.add_request_handler("tools/call", call)

    async def main():
        client = await server.connect()
        result = await client.call_tool("add", {"a": 1, "b": [2]})
        assert result == {"content": [{"type": "text", "text": "ok"}], "structuredContent": {"n": 1}}
        await client.call_tool("noargs")
        await client.call_tool("meta", {}, meta={"trace": "t1"})
        assert calls == [
            {"name": "add", "arguments": {"a": 1, "b": [2]}},
            {"name": "noargs"},
            {"name": "meta", "arguments": {}, "_meta": {"trace": "t1"}},
        ]
        server.check_schema(mcp_schema)

    arun(main())


def test_call_tool_accepts_mappings_and_checks_types(fake, arun):
    from types import MappingProxyType

    server = fake()
    server.router.add_request_handler("tools/call", _echo_params("got"))

    async def main():
        client = await server.connect()
        result = await client.call_tool("t", MappingProxyType({"x": 1}))
        assert result == {"got": {"name": "t", "arguments": {"x": 1}}}
        with pytest.raises(TypeError, match="tool name"):
            await client.call_tool(3)
        with pytest.raises(TypeError, match="arguments"):
            await client.call_tool("t", [1, 2])
        with pytest.raises(TypeError, match="meta"):
            await client.call_tool("t", {}, meta="x")

    arun(main())


def test_tool_errors_are_results_and_protocol_errors_raise(fake, arun):
    server = fake()

    def call(params, ctx):
        if params["name"] == "fails":
            return {"content": [{"type": "text", "text": "boom"}], "isError": True}
        raise InvalidParams("Unknown tool: nope", {"tool": "nope"})

    server.router.add_request_handler("tools/call", call)

    async def main():
        client = await server.connect()
        result = await client.call_tool("fails")
        assert result["isError"] is True
        with pytest.raises(InvalidParams) as info:
            await client.call_tool("nope")
        assert info.value.code == -32602 and info.value.data == {"tool": "nope"}

    arun(main())


def test_read_resource(fake, arun, mcp_schema):
    server = fake()

    def read(params, ctx):
        if params["uri"] == "file:///missing":
            raise JSONRPCError(RESOURCE_NOT_FOUND, "Resource not found", {"uri": params["uri"]})
        return {"contents": [{"uri": params["uri"], "text": "hello"}]}

    server.router.add_request_handler("resources/read", read)

    async def main():
        client = await server.connect()
        result = await client.read_resource("file:///a.txt")
        assert result == {"contents": [{"uri": "file:///a.txt", "text": "hello"}]}
        with pytest.raises(JSONRPCError) as info:
            await client.read_resource("file:///missing")
        assert info.value.code == -32002
        with pytest.raises(TypeError):
            await client.read_resource(b"file:///x")
        server.check_schema(mcp_schema)

    arun(main())


def test_get_prompt(fake, arun, mcp_schema):
    server = fake()
    server.router.add_request_handler("prompts/get", lambda p, c: {
        "messages": [{"role": "user", "content": {"type": "text", "text": repr(p)}}],
    })

    async def main():
        client = await server.connect()
        result = await client.get_prompt("review", {"code": "x = 1", "language": "py"})
        text = result["messages"][0]["content"]["text"]
        assert "'code': 'x = 1'" in text and "'name': 'review'" in text
        await client.get_prompt("plain")
        assert server.sent("prompts/get")[1]["params"] == {"name": "plain"}
        with pytest.raises(TypeError, match="str to str"):
            await client.get_prompt("review", {"n": 3})
        with pytest.raises(TypeError):
            await client.get_prompt(None)
        server.check_schema(mcp_schema)

    arun(main())


def test_complete_builds_prompt_and_resource_refs(fake, arun, mcp_schema):
    server = fake()
    server.router.add_request_handler("completion/complete", lambda p, c: {
        "completion": {"values": ["python"], "total": 1, "hasMore": False},
    })

    async def main():
        client = await server.connect()
        result = await client.complete("language", "py", prompt="review")
        assert result == {"completion": {"values": ["python"], "total": 1, "hasMore": False}}
        await client.complete("id", "1", resource="users://{id}", context={"org": "x"})
        first, second = server.sent("completion/complete")
        assert first["params"] == {
            "ref": {"type": "ref/prompt", "name": "review"},
            "argument": {"name": "language", "value": "py"},
        }
        assert second["params"] == {
            "ref": {"type": "ref/resource", "uri": "users://{id}"},
            "argument": {"name": "id", "value": "1"},
            "context": {"arguments": {"org": "x"}},
        }
        with pytest.raises(TypeError, match="exactly one"):
            await client.complete("a", "b")
        with pytest.raises(TypeError, match="exactly one"):
            await client.complete("a", "b", prompt="p", resource="r")
        with pytest.raises(TypeError):
            await client.complete("a", 5, prompt="p")
        server.check_schema(mcp_schema)

    arun(main())


def test_completion_context_needs_2025_06_18(fake, arun, mcp_schema):
    server = fake(answer_version="2025-03-26")
    server.router.add_request_handler(
        "completion/complete", lambda p, c: {"completion": {"values": []}})

    async def main():
        client = await server.connect()
        with pytest.raises(ClientError, match="2025-06-18"):
            await client.complete("id", "1", prompt="p", context={"a": "b"})
        await client.complete("id", "1", prompt="p")
        server.check_schema(mcp_schema)

    arun(main())


def test_set_logging_level(fake, arun, mcp_schema):
    server = fake()
    levels = []
    server.router.add_request_handler(
        "logging/setLevel", lambda p, c: levels.append(p["level"]) or {})

    async def main():
        client = await server.connect()
        assert await client.set_logging_level("warning") is None
        assert levels == ["warning"]
        with pytest.raises(ValueError, match="level"):
            await client.set_logging_level("verbose")
        server.check_schema(mcp_schema)

    arun(main())


def test_ping_generic_request_and_notify(fake, arun):
    server = fake()
    seen = []
    server.router.add_request_handler("custom/thing", lambda p, c: {"echo": p})
    server.router.add_notification_handler("custom/note", lambda p, c: seen.append(p))

    async def main():
        client = await server.connect()
        assert await client.ping() is None
        assert await client.request("custom/thing", {"a": 1}) == {"echo": {"a": 1}}
        client.notify("custom/note", {"b": 2})
        await server.settle()
        assert seen == [{"b": 2}]
        with pytest.raises(MethodNotFound):
            await client.request("custom/unknown")

    arun(main())


def test_notify_before_bind_is_refused():
    from mcpfast.client import Client

    with pytest.raises(NotInitialized):
        Client().notify("x")
