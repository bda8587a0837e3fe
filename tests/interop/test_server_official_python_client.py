"""The official MCP Python SDK's client (mcp 2.3.0) against mcpfast's everything server.

Each test runs once per transport: ``examples/everything_server.py`` over stdio with
``mcp.client.stdio``, and over Streamable HTTP (mcpfast's own HTTP server, sessions and
SSE answers) with ``mcp.client.streamable_http``, and drives it through
``mcp.ClientSession`` -- which validates every result against the
negotiated version's types -- covering initialize, tools (list, call, structured output,
errors, content types), resources (list, templates, read, subscribe + updated), prompts,
completion, logging, progress, cancellation, ping both ways, and the client's sampling,
elicitation and roots callbacks.
"""

from __future__ import annotations

import json
import os
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator, Iterator

import anyio
import mcp_types as types
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from everything_http import http_server

pytestmark = pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "examples" / "everything_server.py"


def server_parameters() -> StdioServerParameters:
    env = {"PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return StdioServerParameters(command=sys.executable, args=[str(SERVER)], env=env, cwd=str(ROOT))


TRANSPORT = "stdio"


@pytest.fixture(autouse=True, params=["stdio", "http"])
def transport(request: Any) -> Iterator[str]:
    """Every test of this module runs over stdio and over Streamable HTTP."""
    global TRANSPORT
    TRANSPORT = request.param
    yield request.param
    TRANSPORT = "stdio"


@asynccontextmanager
async def connected(**callbacks: Any) -> AsyncIterator[ClientSession]:
    """An initialized ClientSession to a fresh everything server."""
    if TRANSPORT == "http":
        async with http_server() as url, streamable_http_client(url) as (read, write):
            async with ClientSession(read, write, **callbacks) as session:
                await session.initialize()
                yield session
        return
    with open(os.devnull, "w") as devnull:
        async with stdio_client(server_parameters(), errlog=devnull) as (read, write):
            async with ClientSession(read, write, **callbacks) as session:
                await session.initialize()
                yield session


def texts(result: Any) -> list[str]:
    return [block.text for block in result.content if block.type == "text"]


def test_initialize_negotiates_latest_handshake_version():
    async def main() -> None:
        async with connected() as session:
            result = session.initialize_result
            assert result.protocol_version == "2025-11-25"
            assert result.server_info.name == "mcpfast-everything"
            assert result.server_info.title == "mcpfast everything server"
            assert result.instructions.startswith("A test server")
            caps = result.capabilities
            assert caps.tools is not None and caps.tools.list_changed is True
            assert caps.resources is not None and caps.resources.subscribe is True
            assert caps.prompts is not None and caps.logging is not None
            assert caps.completions is not None

    anyio.run(main)


def test_tools_list_and_calls():
    async def main() -> None:
        async with connected() as session:
            listed = await session.list_tools()
            by_name = {tool.name: tool for tool in listed.tools}
            for name in ("test_simple_text", "test_image_content", "test_audio_content",
                         "test_embedded_resource", "test_multiple_content_types",
                         "test_tool_with_logging", "test_tool_with_progress",
                         "test_error_handling", "test_sampling", "test_elicitation",
                         "json_schema_2020_12_tool"):
                assert name in by_name, name
            simple = by_name["test_simple_text"]
            assert simple.description == "Returns a simple text response."
            assert simple.annotations.read_only_hint is True
            schema = by_name["json_schema_2020_12_tool"].input_schema
            assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
            assert "address" in schema["$defs"] and schema["additionalProperties"] is False

            result = await session.call_tool("test_simple_text", {})
            assert texts(result) == ["This is a simple text response for testing."]
            assert not result.is_error

            image = (await session.call_tool("test_image_content", {})).content[0]
            assert image.type == "image" and image.mime_type == "image/png" and image.data
            audio = (await session.call_tool("test_audio_content", {})).content[0]
            assert audio.type == "audio" and audio.mime_type == "audio/wav"
            embedded = (await session.call_tool("test_embedded_resource", {})).content[0]
            assert embedded.type == "resource"
            assert embedded.resource.text == "This is an embedded resource content."
            mixed = await session.call_tool("test_multiple_content_types", {})
            assert [block.type for block in mixed.content] == ["text", "image", "resource"]
            link = (await session.call_tool("test_resource_link", {})).content[0]
            assert link.type == "resource_link" and str(link.uri) == "test://static-text"

    anyio.run(main)


def test_structured_output_and_errors():
    async def main() -> None:
        async with connected() as session:
            await session.list_tools()  # the client validates structuredContent against outputSchema
            result = await session.call_tool("test_structured_output", {"city": "Oslo"})
            assert result.structured_content == {
                "city": "Oslo", "temperature_c": 21.5, "conditions": "sunny", "humidity": 40,
            }
            assert json.loads(texts(result)[0]) == result.structured_content

            failed = await session.call_tool("test_error_handling", {})
            assert failed.is_error is True
            assert texts(failed) == ["This tool intentionally returns an error for testing"]

            invalid = await session.call_tool("test_structured_output", {"city": 5})
            assert invalid.is_error is True
            assert "arguments.city" in texts(invalid)[0]

            with pytest.raises(MCPError) as caught:
                await session.call_tool("no_such_tool", {})
            assert caught.value.error.code == -32602

    anyio.run(main)


def test_resources_templates_read_and_subscribe():
    updates: list[str] = []
    got_update = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updates.append(str(message.params.uri))
            got_update.set()

    async def main() -> None:
        async with connected(message_handler=on_message) as session:
            listed = await session.list_resources()
            uris = {str(resource.uri) for resource in listed.resources}
            assert {"test://static-text", "test://static-binary", "test://watched-resource"} <= uris
            templates = await session.list_resource_templates()
            assert [t.uri_template for t in templates.resource_templates] == ["test://template/{id}/data"]

            text = await session.read_resource("test://static-text")
            assert text.contents[0].text == "This is the content of the static text resource."
            assert text.contents[0].mime_type == "text/plain"
            binary = await session.read_resource("test://static-binary")
            assert binary.contents[0].mime_type == "image/png" and binary.contents[0].blob
            templated = await session.read_resource("test://template/123/data")
            assert json.loads(templated.contents[0].text) == {
                "id": "123", "templateTest": True, "data": "Data for ID: 123",
            }
            with pytest.raises(MCPError) as caught:
                await session.read_resource("test://missing")
            assert caught.value.error.code == -32002

            await session.subscribe_resource("test://watched-resource")
            await session.call_tool("test_notify_resource_updated", {})
            with anyio.fail_after(5):
                await got_update.wait()
            assert updates == ["test://watched-resource"]
            await session.unsubscribe_resource("test://watched-resource")
            result = await session.call_tool("test_notify_resource_updated", {})
            assert texts(result) == ["notified 0 subscriber(s) of test://watched-resource"]

    anyio.run(main)


def test_prompts_and_completion():
    async def main() -> None:
        async with connected() as session:
            listed = await session.list_prompts()
            by_name = {prompt.name: prompt for prompt in listed.prompts}
            args = by_name["test_prompt_with_arguments"].arguments
            assert [(a.name, a.required) for a in args] == [("arg1", True), ("arg2", True)]
            simple = await session.get_prompt("test_simple_prompt")
            assert simple.messages[0].content.text == "This is a simple prompt for testing."
            with_args = await session.get_prompt("test_prompt_with_arguments", {"arg1": "hello", "arg2": "world"})
            assert with_args.messages[0].content.text == "Prompt with arguments: arg1='hello', arg2='world'"
            embedded = await session.get_prompt("test_prompt_with_embedded_resource", {"resourceUri": "test://x"})
            assert embedded.messages[0].content.type == "resource"
            assert str(embedded.messages[0].content.resource.uri) == "test://x"
            image = await session.get_prompt("test_prompt_with_image")
            assert image.messages[0].content.type == "image"
            with pytest.raises(MCPError) as caught:
                await session.get_prompt("test_prompt_with_arguments", {"arg1": "only one"})
            assert caught.value.error.code == -32602

            completion = await session.complete(
                types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
                {"name": "arg1", "value": "par"},
            )
            assert completion.completion.values == ["paris", "park", "party"]
            templated = await session.complete(
                types.ResourceTemplateReference(type="ref/resource", uri="test://template/{id}/data"),
                {"name": "id", "value": "1"}, context_arguments={},
            )
            assert templated.completion.values == ["1", "123"]

    anyio.run(main)


def test_logging_progress_and_ping():
    logs: list[Any] = []
    progress: list[tuple] = []

    async def on_log(params: Any) -> None:
        logs.append((params.level, params.data, params.logger))

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    async def main() -> None:
        async with connected(logging_callback=on_log) as session:
            await session.set_logging_level("debug")
            result = await session.call_tool("test_tool_with_logging", {})
            assert texts(result) == ["Tool with logging executed successfully"]
            assert [entry[1] for entry in logs] == [
                "Tool execution started", "Tool processing data", "Tool execution completed",
            ]
            assert {entry[0] for entry in logs} == {"info"}

            logs.clear()
            await session.call_tool("test_python_logging", {"message": "from python", "level": "warning"})
            with anyio.fail_after(5):
                while not logs:
                    await anyio.sleep(0.01)
            assert logs == [("warning", "from python", "everything")]
            await session.set_logging_level("error")
            logs.clear()
            await session.call_tool("test_python_logging", {"message": "filtered", "level": "warning"})
            await session.call_tool("test_tool_with_logging", {})
            await session.send_ping()
            assert logs == []

            await session.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
            with anyio.fail_after(5):
                while len(progress) < 3:
                    await anyio.sleep(0.01)
            assert progress == [(0, 100, None), (50, 100, "halfway"), (100, 100, "done")]

            assert isinstance(await session.send_ping(), types.EmptyResult)

    anyio.run(main)


def test_cancellation_leaves_the_connection_usable():
    async def main() -> None:
        async with connected() as session:
            with anyio.move_on_after(0.3) as scope:
                await session.call_tool("test_slow_operation", {"seconds": 30})
            assert scope.cancel_called
            # The client sent notifications/cancelled; the server cancelled the tool's task.
            with anyio.fail_after(5):
                while True:
                    reasons = json.loads(texts(await session.call_tool("test_cancellations", {}))[0])
                    if reasons:
                        break
                    await anyio.sleep(0.01)
            assert len(reasons) == 1
            # The server dropped the cancelled call and still answers.
            result = await session.call_tool("test_simple_text", {})
            assert texts(result) == ["This is a simple text response for testing."]
            assert isinstance(await session.send_ping(), types.EmptyResult)

    anyio.run(main)


def test_sampling_elicitation_roots_and_server_ping():
    seen: dict[str, Any] = {}

    async def sampling(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        seen["sampling"] = params
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="42"), model="test-model",
            stop_reason="endTurn",
        )

    async def elicitation(context: Any, params: Any) -> types.ElicitResult:
        seen.setdefault("elicitation", []).append(params)
        if "email" in params.requested_schema["properties"]:
            return types.ElicitResult(action="accept", content={"username": "ada", "email": "ada@example.org"})
        return types.ElicitResult(action="accept", content={"username": "bob", "age": 7})

    async def roots(context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri="file:///work", name="work")])

    async def main() -> None:
        async with connected(sampling_callback=sampling, elicitation_callback=elicitation,
                             list_roots_callback=roots) as session:
            result = await session.call_tool("test_sampling", {"prompt": "What is 6*7?"})
            assert texts(result) == ["LLM response: 42"]
            params = seen["sampling"]
            assert params.max_tokens == 100
            assert params.messages[0].content.text == "What is 6*7?"

            result = await session.call_tool("test_elicitation", {"message": "Who are you?"})
            assert texts(result) == [
                'User response: action=accept, content={"username": "ada", "email": "ada@example.org"}'
            ]
            assert seen["elicitation"][0].message == "Who are you?"

            result = await session.call_tool("test_elicitation_dataclass", {})
            assert texts(result) == ["signed up bob (age 7, newsletter False)"]

            result = await session.call_tool("test_list_roots", {})
            assert json.loads(texts(result)[0]) == [{"uri": "file:///work", "name": "work"}]

            result = await session.call_tool("test_ping_client", {})
            assert texts(result) == ["client answered ping"]

    anyio.run(main)


def test_sampling_refused_without_the_client_capability():
    async def main() -> None:
        async with connected() as session:
            result = await session.call_tool("test_sampling", {"prompt": "hi"})
            assert result.is_error is True
            assert "did not declare the 'sampling' capability" in texts(result)[0]
            result = await session.call_tool("test_list_roots", {})
            assert result.is_error is True and "'roots'" in texts(result)[0]

    anyio.run(main)


def test_tools_added_at_run_time_reach_the_client():
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async def main() -> None:
        async with connected(message_handler=on_message) as session:
            before = {tool.name for tool in (await session.list_tools()).tools}
            assert "dynamic_tool" not in before
            await session.call_tool("test_add_dynamic_tool", {})
            with anyio.fail_after(5):
                await changed.wait()
            after = {tool.name for tool in (await session.list_tools()).tools}
            assert after == before | {"dynamic_tool"}
            result = await session.call_tool("dynamic_tool", {"value": "x"})
            assert texts(result) == ["dynamic: x"]

    anyio.run(main)
