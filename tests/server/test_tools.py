"""Tools: registration, definitions per version, the call path, results and errors."""

import asyncio
import dataclasses
import enum
import json
import logging
import types
from typing import Annotated, Any, Optional

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpfast.jsonrpc.errors import INVALID_PARAMS
from mcpfast.server import (
    Audio,
    Context,
    EmbeddedResource,
    Field,
    Image,
    ResourceLink,
    Server,
    Text,
    Tool,
    ToolAnnotations,
    ToolResult,
)

ALL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt " + b"\x00" * 8


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


def tools_server():
    app = Server("tools")

    @app.tool(title="Adder", annotations=ToolAnnotations(read_only=True, idempotent=True),
              icons=[{"src": "https://example.org/add.png", "mimeType": "image/png"}],
              meta={"example.org/cost": 1})
    def add(a: int, b: Annotated[int, Field(description="second term", ge=0)] = 1) -> int:
        """Add two integers.

        Args:
            a: first term
        """
        return a + b

    @app.tool()
    def echo(text: str) -> str:
        return text

    @app.tool()
    def point(x: int, y: int) -> Point:
        """Make a point."""
        return Point(x, y)

    @app.tool()
    def paint(color: Color, times: int = 1) -> str:
        return f"{color.value}x{times}"

    @app.tool()
    async def slow_echo(text: str, ctx: Context) -> str:
        await asyncio.sleep(0)
        return f"{text} ({ctx.request_id})"

    @app.tool()
    def broken() -> str:
        raise ValueError("the widget is jammed")

    @app.tool()
    async def broken_async() -> str:
        await asyncio.sleep(0)
        raise KeyError("gone")

    @app.tool()
    def nothing() -> None:
        return None

    @app.tool()
    def data() -> dict:
        return {"a": [1, 2], "b": None}

    return app


# -- definitions ------------------------------------------------------------------------


def tool_by_name(client, name):
    return {t["name"]: t for t in client.result("tools/list")["tools"]}[name]


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_definitions_carry_only_fields_of_the_negotiated_version(ready_client, version):
    client = ready_client(tools_server(), version)
    add = tool_by_name(client, "add")
    assert add["name"] == "add"
    assert add["description"].startswith("Add two integers.")
    assert add["inputSchema"] == {
        "type": "object",
        "properties": {
            "a": {"type": "integer", "description": "first term"},
            "b": {"type": "integer", "description": "second term", "minimum": 0, "default": 1},
        },
        "required": ["a"],
        "additionalProperties": False,
    }
    has_06 = version >= "2025-06-18"
    assert ("title" in add) == has_06
    assert ("outputSchema" in add) == has_06
    assert ("_meta" in add) == has_06
    assert ("icons" in add) == (version == "2025-11-25")
    if version == "2024-11-05":
        assert "annotations" not in add
    elif version == "2025-03-26":
        # No Tool.title yet: the title travels as annotations.title.
        assert add["annotations"] == {"title": "Adder", "readOnlyHint": True, "idempotentHint": True}
    else:
        assert add["title"] == "Adder"
        assert add["annotations"] == {"readOnlyHint": True, "idempotentHint": True}
        assert add["outputSchema"] == {
            "type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"],
        }


def test_tool_without_docstring_has_no_description(ready_client):
    client = ready_client(tools_server())
    assert "description" not in tool_by_name(client, "echo")


def test_list_results_are_cached_per_version_and_rebuilt_on_change(ready_client):
    app = tools_server()
    client = ready_client(app)
    first = app.tools_catalog.list_result(client.conn.state.features)
    assert app.tools_catalog.list_result(client.conn.state.features) is first

    @app.tool()
    def later() -> str:
        return "x"

    second = app.tools_catalog.list_result(client.conn.state.features)
    assert second is not first
    assert [t["name"] for t in second["tools"]][-1] == "later"


def test_decorator_forms():
    app = Server("forms")

    @app.tool
    def bare() -> str:
        return "a"

    @app.tool("renamed")
    def original() -> str:
        return "b"

    @app.tool(name="kw", description="explicit", title="T")
    def third() -> str:
        """ignored docstring"""
        return "c"

    assert set(app.tools) == {"bare", "renamed", "kw"}
    assert app.tools["kw"].description == "explicit"
    assert bare() == "a" and original() == "b"


def test_annotation_forms():
    from_dict = ToolAnnotations.from_value({"readOnlyHint": True, "destructive": False, "title": "x"})
    assert from_dict == ToolAnnotations(title="x", read_only=True, destructive=False)
    assert from_dict.to_dict() == {"title": "x", "readOnlyHint": True, "destructiveHint": False}
    with pytest.raises(ValueError):
        ToolAnnotations.from_value({"fastHint": True})
    with pytest.raises(TypeError):
        ToolAnnotations(read_only="yes")
    with pytest.raises(TypeError):
        ToolAnnotations.from_value(["readOnlyHint"])


def test_input_schema_override_is_advertised_and_the_signature_still_validates(ready_client):
    app = Server("override")
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
              "properties": {"n": {"type": "integer"}}, "additionalProperties": False}

    @app.tool(input_schema=schema)
    def count(n: int = 0) -> str:
        return str(n)

    client = ready_client(app)
    assert tool_by_name(client, "count")["inputSchema"] == schema
    assert client.call_tool("count", {"n": "x"})["isError"] is True
    with pytest.raises(ValueError):
        app.add_tool(count, name="bad", input_schema={"type": "array"})


def test_unconventional_names_are_accepted_with_a_warning(caplog):
    app = Server("names")
    with caplog.at_level(logging.WARNING, logger="mcpfast.server"):
        app.add_tool(lambda: "x", name="has space")
    assert "has space" in app.tools
    assert "naming guidance" in caplog.text
    with pytest.raises(ValueError):
        app.add_tool(lambda: "x", name="")


def test_unsupported_signatures_fail_at_registration():
    app = Server("bad")
    with pytest.raises(TypeError):
        app.add_tool(lambda *args: None, name="star")
    with pytest.raises(TypeError):
        app.add_tool(5)


# -- calls ------------------------------------------------------------------------------


def test_sync_call_is_answered_inline(ready_client):
    client = ready_client(tools_server(), "2025-03-26")
    assert client.call_tool("add", {"a": 2, "b": 3}) == {"content": [{"type": "text", "text": "5"}]}
    assert client.call_tool("add", {"a": 2}) == {"content": [{"type": "text", "text": "3"}]}
    assert client.call_tool("echo", {"text": "héllo"}) == {"content": [{"type": "text", "text": "héllo"}]}


def test_arguments_are_converted_to_annotated_types(ready_client):
    client = ready_client(tools_server())
    assert client.call_tool("paint", {"color": "blue", "times": 2.0})["content"][0]["text"] == "bluex2"


@pytest.mark.parametrize("arguments, fragment", [
    ({}, "arguments.a: missing required argument"),
    ({"a": "1"}, "arguments.a: expected integer, got string"),
    ({"a": True}, "arguments.a: expected integer, got boolean"),
    ({"a": 1, "b": -1}, "arguments.b"),
    ({"a": 1, "c": 2}, "arguments.c: unexpected argument"),
    ([1, 2], "expected object, got array"),
])
def test_invalid_arguments_give_an_error_result(ready_client, arguments, fragment):
    client = ready_client(tools_server())
    result = client.call_tool("add", arguments)
    assert result["isError"] is True
    (block,) = result["content"]
    assert block["text"].startswith("Invalid arguments for tool 'add': ")
    assert fragment in block["text"]


def test_missing_arguments_member_counts_as_no_arguments(ready_client):
    client = ready_client(tools_server())
    assert client.call_tool("nothing") == {"content": []}
    assert client.call_tool("add")["isError"] is True


def test_unknown_tool_is_invalid_params(ready_client):
    client = ready_client(tools_server())
    error = client.error("tools/call", {"name": "nope", "arguments": {}})
    assert error == {"code": INVALID_PARAMS, "message": "Unknown tool: nope", "data": {"tool": "nope"}}


@pytest.mark.parametrize("params", [None, [], {"arguments": {}}, {"name": 5}])
def test_malformed_tools_call_params_are_invalid_params(ready_client, params):
    client = ready_client(tools_server())
    assert client.error("tools/call", params)["code"] == INVALID_PARAMS


def test_params_that_are_not_structured_are_an_invalid_request(ready_client):
    # JSON-RPC: params is an object or an array; the codec refuses the message itself.
    client = ready_client(tools_server())
    assert client.error("tools/call", "add")["code"] == -32600


def test_exceptions_become_error_results_without_traceback(ready_client, caplog):
    client = ready_client(tools_server())
    with caplog.at_level(logging.DEBUG, logger="mcpfast.server"):
        result = client.call_tool("broken", {})
    assert result == {"content": [{"type": "text", "text": "the widget is jammed"}], "isError": True}
    assert "Traceback" not in json.dumps(result)
    # The traceback stays on the server side, at debug level.
    assert any(record.exc_info for record in caplog.records)


def test_async_tools_run_as_tasks(ready_client):
    client = ready_client(tools_server())

    async def main():
        id = client.send_request("tools/call", {"name": "slow_echo", "arguments": {"text": "hi"}})
        assert client.response(id) is None  # not answered inline
        response = await client.wait_response(id)
        assert response["result"] == {"content": [{"type": "text", "text": f"hi ({id})"}]}
        failed = await client.acall_tool("broken_async", {})
        assert failed == {"content": [{"type": "text", "text": "'gone'"}], "isError": True}
        invalid = await client.acall_tool("slow_echo", {"text": 1})
        assert invalid["isError"] is True

    asyncio.run(main())


def test_sync_tool_returning_an_awaitable_is_awaited(ready_client):
    app = Server("aw")

    async def later():
        await asyncio.sleep(0)
        return "done"

    @app.tool()
    def kick() -> Any:
        return later()

    client = ready_client(app)

    async def main():
        assert await client.acall_tool("kick", {}) == {"content": [{"type": "text", "text": "done"}]}

    asyncio.run(main())


# -- results ----------------------------------------------------------------------------


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_structured_output_only_where_the_version_has_it(ready_client, version):
    client = ready_client(tools_server(), version)
    result = client.call_tool("point", {"x": 1, "y": 2})
    assert json.loads(result["content"][0]["text"]) == {"x": 1, "y": 2}
    if version >= "2025-06-18":
        assert result["structuredContent"] == {"x": 1, "y": 2}
    else:
        assert "structuredContent" not in result
    wrapped = client.call_tool("add", {"a": 1})
    assert ("structuredContent" in wrapped) == (version >= "2025-06-18")
    if "structuredContent" in wrapped:
        assert wrapped["structuredContent"] == {"result": 2}


def test_output_that_breaks_the_output_schema_is_an_error_result(ready_client):
    app = Server("liar")

    @app.tool()
    def count() -> int:
        return "many"  # type: ignore[return-value]

    result = ready_client(app).call_tool("count", {})
    assert result["isError"] is True
    assert "returned an invalid result" in result["content"][0]["text"]


def test_values_without_json_form_are_error_results(ready_client):
    app = Server("raw")

    @app.tool()
    def raw():
        return b"\x00\x01"

    @app.tool()
    def nan():
        return float("nan")

    client = ready_client(app)
    assert client.call_tool("raw", {})["isError"] is True
    assert client.call_tool("nan", {})["isError"] is True


def test_plain_data_becomes_json_text(ready_client):
    client = ready_client(tools_server(), "2025-03-26")
    assert client.call_tool("data", {}) == {"content": [{"type": "text", "text": '{"a":[1,2],"b":null}'}]}


def content_server():
    app = Server("content")

    @app.tool()
    def image() -> Image:
        return Image(PNG, "image/png")

    @app.tool()
    def audio() -> Audio:
        return Audio(WAV, "audio/wav")

    @app.tool()
    def embedded() -> EmbeddedResource:
        return EmbeddedResource("mem://e", "embedded text", "text/plain", meta={"k": 1})

    @app.tool()
    def link() -> ResourceLink:
        return ResourceLink("mem://l", "l", title="L", mime_type="text/plain",
                            icons=({"src": "https://example.org/l.png"},))

    @app.tool()
    def mixed() -> list:
        return ["one", Text("two", annotations={"audience": ["user"], "priority": 0.5}),
                Image(PNG, "image/png"), {"type": "text", "text": "three"}]

    return app


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_content_types_downgraded_per_version(ready_client, version):
    client = ready_client(content_server(), version)
    image = client.call_tool("image", {})["content"][0]
    assert image["type"] == "image" and image["mimeType"] == "image/png"

    audio = client.call_tool("audio", {})["content"][0]
    if version >= "2025-03-26":
        assert audio["type"] == "audio"
    else:
        assert audio == {"type": "text", "text": f"[audio content omitted: audio/wav, {len(WAV)} bytes]"}

    embedded = client.call_tool("embedded", {})["content"][0]
    assert embedded["resource"]["text"] == "embedded text"
    assert ("_meta" in embedded) == (version >= "2025-06-18")

    link = client.call_tool("link", {})["content"][0]
    if version >= "2025-06-18":
        assert link["type"] == "resource_link"
        assert ("icons" in link) == (version == "2025-11-25")
    else:
        assert link == {"type": "text", "text": "Resource: L <mem://l> (text/plain)"}

    mixed = client.call_tool("mixed", {})["content"]
    assert [block["type"] for block in mixed] == ["text", "text", "image", "text"]
    assert mixed[1]["annotations"] == {"audience": ["user"], "priority": 0.5}


def test_mixed_content_annotated_as_list_has_no_output_schema(ready_client):
    client = ready_client(content_server())
    assert "outputSchema" not in tool_by_name(client, "mixed")
    app = Server("x")

    def forced() -> list:
        return [1]

    # Asked for explicitly, an untyped array still gets its (wrapped) output schema.
    app.add_tool(forced, structured_output=True)
    assert app.tools["forced"].output_schema["properties"]["result"] == {"type": "array"}
    with pytest.raises(TypeError):
        app.add_tool(lambda: [], name="unannotated", structured_output=True)


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_explicit_tool_results(ready_client, version):
    app = Server("explicit")

    @app.tool()
    def custom() -> ToolResult:
        return ToolResult(content=[{"type": "text", "text": "partial"}],
                          structured_content={"done": False}, is_error=True, meta={"k": "v"})

    @app.tool()
    def simple() -> ToolResult:
        return ToolResult("plain")

    client = ready_client(app, version)
    # A ToolResult spells out the whole result: its fields are not structured content, so
    # no output schema (one made of them made every official client refuse the calls).
    assert "outputSchema" not in tool_by_name(client, "custom")
    result = client.call_tool("custom", {})
    assert result["content"] == [{"type": "text", "text": "partial"}]
    assert result["isError"] is True and result["_meta"] == {"k": "v"}
    assert ("structuredContent" in result) == (version >= "2025-06-18")
    assert client.call_tool("simple", {}) == {"content": [{"type": "text", "text": "plain"}]}


def test_a_tool_result_annotation_cannot_force_structured_output():
    app = Server("x")

    def forced() -> ToolResult:
        return ToolResult("x")

    with pytest.raises(TypeError, match="no structured output possible, the function returns MCP content"):
        app.add_tool(forced, structured_output=True)

    def maybe() -> Optional[ToolResult]:
        return None

    assert app.add_tool(maybe).output_schema is None


# -- context ----------------------------------------------------------------------------


def test_context_parameter_is_injected_and_hidden_from_the_schema(ready_client):
    app = Server("ctx")
    seen = {}

    @app.tool()
    def who(ctx: Context, greeting: str = "hi") -> str:
        seen["ctx"] = ctx
        return f"{greeting} {ctx.client_info['name']} on {ctx.protocol_version}"

    @app.tool()
    def maybe(ctx: Optional[Context] = None) -> str:
        return "yes" if ctx is not None else "no"

    client = ready_client(app, "2025-06-18", name="probe")
    assert tool_by_name(client, "who")["inputSchema"]["properties"] == {
        "greeting": {"type": "string", "default": "hi"},
    }
    assert client.call_tool("who", {})["content"][0]["text"] == "hi probe on 2025-06-18"
    ctx = seen["ctx"]
    assert ctx.method == "tools/call"
    assert ctx.features.version == "2025-06-18"
    assert ctx.server is app and ctx.connection is client.conn
    assert ctx.log_level == "info"
    assert client.call_tool("maybe", {})["content"][0]["text"] == "yes"


# -- run-time changes ---------------------------------------------------------------------


def test_adding_and_removing_tools_notifies_initialized_clients(make_client, ready_client):
    app = tools_server()
    ready = ready_client(app)
    handshaking = make_client(app)
    handshaking.initialize(initialized=False)
    fresh = make_client(app)

    app.add_tool(lambda: "new", name="new_tool")
    assert ready.notifications("notifications/tools/list_changed") == [
        {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    ]
    assert handshaking.take() == [] and fresh.take() == []
    assert "new_tool" in [t["name"] for t in ready.result("tools/list")["tools"]]

    removed = app.remove_tool("new_tool")
    assert isinstance(removed, Tool) and removed.name == "new_tool"
    assert len(ready.notifications("notifications/tools/list_changed")) == 1
    assert "new_tool" not in [t["name"] for t in ready.result("tools/list")["tools"]]
    assert ready.error("tools/call", {"name": "new_tool"})["code"] == INVALID_PARAMS
    with pytest.raises(KeyError):
        app.remove_tool("new_tool")


def test_no_list_changed_where_the_capability_was_not_advertised(ready_client):
    app = Server("late")
    client = ready_client(app)  # no tools at initialize: no tools capability
    app.add_tool(lambda: "x", name="late_tool")
    assert client.take() == []
    assert client.result("tools/list")["tools"][0]["name"] == "late_tool"


def test_replacing_a_tool_keeps_one_entry(ready_client):
    app = tools_server()
    client = ready_client(app)
    app.add_tool(lambda text: text.upper(), name="echo")
    names = [t["name"] for t in client.result("tools/list")["tools"]]
    assert names.count("echo") == 1
    assert client.call_tool("echo", {"text": "a"})["content"][0]["text"] == "A"


def test_closed_connections_get_no_notifications(ready_client):
    app = tools_server()
    client = ready_client(app)
    client.conn.close()
    app.add_tool(lambda: "x", name="after_close")
    assert client.take() == []


# -- robustness ----------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**53, 2**53) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)


@given(arguments=json_values, name=st.sampled_from(["add", "echo", "point", "paint", "data"]))
@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
def test_any_arguments_give_a_valid_result(ready_client, arguments, name):
    client = ready_client(tools_server())
    result = client.call_tool(name, arguments)
    # The fake client validated it as a CallToolResult; it is a result, never a crash.
    assert isinstance(result["content"], list)
    client.conn.close()


def test_async_functions_that_never_await_are_told_apart():
    from mcpfast.server.request.invocation import never_suspends

    async def plain(text: str) -> str:
        return text.upper()

    async def awaits() -> None:
        await asyncio.sleep(0)

    async def iterates(items: Any) -> list:
        return [item async for item in items]

    async def enters(lock: Any) -> None:
        async with lock:
            pass

    async def loops(items: Any) -> None:
        async for _ in items:
            pass

    def sync() -> None:
        pass

    class Holder:
        async def method(self) -> int:
            return 1

    assert never_suspends(plain) and never_suspends(Holder().method)
    assert not any(never_suspends(fn) for fn in (awaits, iterates, enters, loops, sync))


def test_an_async_tool_that_never_awaits_is_answered_at_once_and_one_that_awaits_in_a_task(ready_client):
    app = Server("at-once")

    @app.tool()
    async def shout(text: str) -> str:
        return text.upper()

    @app.tool()
    async def broken() -> str:
        raise ValueError("no way")

    @app.tool()
    async def waits() -> str:
        await asyncio.sleep(0)
        return "waited"

    async def main() -> None:
        client = ready_client(app)
        # Answered while the request was fed: no task ran.
        assert client.call_tool("shout", {"text": "hi"})["content"][0]["text"] == "HI"
        failed = client.call_tool("broken")
        assert failed["isError"] is True and "no way" in failed["content"][0]["text"]
        pending = client.send_request("tools/call", {"name": "waits", "arguments": {}})
        assert client.response(pending) is None
        answered = await client.wait_response(pending)
        assert answered["result"]["content"][0]["text"] == "waited"

    asyncio.run(main())


def test_an_async_tool_run_at_once_that_suspends_fails_and_is_closed(ready_client, monkeypatch):
    # Code without await cannot suspend; were never_suspends ever wrong, the tool fails
    # (isError) and its coroutine is closed rather than left half run.
    from mcpfast.server.request import invocation

    monkeypatch.setattr(invocation, "never_suspends", lambda fn: True)
    closed: list[bool] = []
    app = Server("wrong")

    @app.tool()
    async def waits() -> str:
        try:
            await asyncio.sleep(0)
        finally:
            closed.append(True)
        return "never"

    client = ready_client(app)
    result = client.call_tool("waits")
    assert result["isError"] is True
    assert result["content"][0]["text"].endswith("suspended although its code never awaits")
    assert closed == [True]


def test_a_sync_tool_returning_a_generator_based_awaitable_is_answered_by_a_task(ready_client):
    @types.coroutine
    def later() -> Any:
        yield  # one pass of the loop
        return "later"

    app = Server("awaitable")

    @app.tool()
    def deferred() -> Any:
        return later()

    async def main() -> None:
        client = ready_client(app)
        pending = client.send_request("tools/call", {"name": "deferred", "arguments": {}})
        assert client.response(pending) is None
        answered = await client.wait_response(pending)
        assert answered["result"]["content"][0]["text"] == "later"

    asyncio.run(main())


def test_tools_call_runs_a_plain_tool_directly_as_tool_call_would(ready_client):
    # tools/call runs a tool needing no header checks and no task through its compiled
    # call (Tool._direct), with the answers Tool.call gives: arguments refused, the
    # context passed, structured output, tool errors; other tools go through Tool.call.
    from mcpfast.server import Context
    from mcpfast.server.features.tools import Tool

    app = Server("direct")

    @app.tool()
    def plain(text: str, times: int = 1) -> str:
        return text * times

    @app.tool()
    async def at_once(text: str) -> str:
        return text.upper()

    @app.tool()
    async def waits(text: str) -> str:
        await asyncio.sleep(0)
        return text[::-1]

    @app.tool()
    def with_context(ctx: Context) -> dict:
        return {"version": ctx.protocol_version}

    @app.tool()
    def fails() -> str:
        raise RuntimeError("broken")

    @app.tool(task_support="optional")
    def taskable() -> str:
        return "task?"

    headed = app.add_tool(lambda region: region, name="headed",
                          input_schema={"type": "object", "properties": {
                              "region": {"type": "string", "x-mcp-header": "Region"}}})

    class Counted(Tool):
        __slots__ = ("calls",)

        def call(self, arguments: Any, ctx: Any, as_task: bool = False) -> Any:
            self.calls += 1
            return super().call(arguments, ctx, as_task)

    counted = Counted(lambda: "counted", name="counted", context_type=Context)
    counted.calls = 0
    app.tools_catalog.add("counted", counted)
    catalog = app.tools_catalog.items
    for name in ("plain", "at_once", "waits", "with_context", "fails"):
        assert catalog[name]._direct is not None, name
    for name in ("taskable", "headed", "counted"):
        assert catalog[name]._direct is None, name
    assert headed._direct is None

    client = ready_client(app)
    assert client.call_tool("plain", {"text": "ab", "times": 2})["content"] == [{"type": "text", "text": "abab"}]
    refused = client.call_tool("plain", {"times": 2})
    assert refused["isError"] is True and "missing required argument" in refused["content"][0]["text"]
    assert client.call_tool("at_once", {"text": "ab"})["content"][0]["text"] == "AB"
    assert asyncio.run(_call_async(client, "waits", {"text": "ab"}))["content"][0]["text"] == "ba"
    assert client.call_tool("with_context")["structuredContent"] == {"version": client.version}
    failed = client.call_tool("fails")
    assert failed["isError"] is True and "broken" in failed["content"][0]["text"]
    assert client.call_tool("taskable")["content"][0]["text"] == "task?"
    assert client.call_tool("counted")["content"][0]["text"] == "counted" and counted.calls == 1
    # A task-augmented call of a plain tool is refused, as before.
    refused_task = client.request("tools/call", {"name": "plain", "arguments": {"text": "x"}, "task": {}})
    assert refused_task["error"]["code"] == -32601


async def _call_async(client: Any, name: str, arguments: Any) -> dict:
    return await client.acall_tool(name, arguments)


def test_a_str_result_built_compiled_is_what_finish_builds():
    # A str returned by a tool without output schema is made one text block on the
    # compiled path, as Tool._finish makes it: a new result every time.
    from mcpfast.protocol.features import features_for
    from mcpfast.server.features.tools import Tool

    features = features_for("2025-11-25")

    def shout(text: str) -> str:
        return text.upper()

    async def quiet(text: str) -> str:
        return text.lower()

    def typed(text: str) -> str:
        return text

    for fn in (shout, quiet):
        tool = Tool(fn)
        first = tool._invoke((), {"text": "Ab"}, None, features)
        assert first == tool._finish(fn("Ab") if fn is shout else "ab", features)
        first["content"].append("x")
        assert tool._invoke((), {"text": "Ab"}, None, features)["content"] == first["content"][:1]
        assert tool._invoke_task((), {"text": "Ab"}, None, features) == tool._finish(
            "AB" if fn is shout else "ab", features)
    structured = Tool(typed, structured_output=True)
    assert structured._invoke((), {"text": "x"}, None, features) == structured._finish("x", features)
    assert "structuredContent" in structured._invoke((), {"text": "x"}, None, features)
