"""The official MCP Python SDK client (mcp 2.3.0) against mcpfast's Streamable HTTP server
in its other modes: stateless (no sessions), JSON answers only, and both."""

from __future__ import annotations

import anyio
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from everything_http import http_server

pytestmark = pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")


@pytest.mark.parametrize("options", [("stateless",), ("json",), ("stateless", "json")])
def test_tools_resources_and_prompts_in_each_mode(options):
    async def main() -> None:
        async with http_server(*options) as url, streamable_http_client(url) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = await session.list_tools()
                assert "test_simple_text" in [tool.name for tool in tools.tools]
                result = await session.call_tool("test_simple_text", {})
                assert result.content[0].text == "This is a simple text response for testing."
                progress: list[float] = []

                async def on_progress(value: float, total: float | None, message: str | None) -> None:
                    progress.append(value)

                await session.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
                if "json" not in options:
                    # Progress rides on the request's SSE answer.
                    assert progress == [0, 50, 100]
                read_result = await session.read_resource("test://static-text")
                assert read_result.contents[0].text == "This is the content of the static text resource."
                prompt = await session.get_prompt("test_prompt_with_arguments",
                                                  {"arg1": "hello", "arg2": "world"})
                assert "arg1='hello'" in prompt.messages[0].content.text

    anyio.run(main)
