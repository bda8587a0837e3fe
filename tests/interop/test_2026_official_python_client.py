"""The official MCP Python SDK's client (mcp 2.3.0) speaking 2026-07-28 to mcpfast's
everything server: ``mcp.client.client.Client`` in its default "auto" mode probes with
``server/discover`` and, finding 2026-07-28, sends self-contained requests (version and
capabilities in ``_meta``, routing headers over HTTP) -- over stdio and over Streamable
HTTP. The SDK validates every result against the revision's types (resultType, caching
fields, server info)."""

from __future__ import annotations

import os
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

import anyio
import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

from everything_http import http_server

pytestmark = pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "examples" / "everything_server.py"


@asynccontextmanager
async def connected(transport: str) -> AsyncIterator[Client]:
    if transport == "http":
        async with http_server() as url, Client(url, mode="auto") as client:
            yield client
        return
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER)], env=env, cwd=str(ROOT))
    async with Client(params, mode="auto") as client:
        yield client


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_the_sdk_client_negotiates_2026_and_uses_every_basic_feature(transport: str) -> None:
    async def main() -> None:
        async with connected(transport) as client:
            session: Any = client.session
            assert session._negotiated_version == "2026-07-28"
            assert session._discover_result is not None  # discovered, not initialized
            tools = await client.list_tools()
            names = [tool.name for tool in tools.tools]
            assert "test_simple_text" in names
            # Deterministic order, as the revision asks of tools/list.
            assert [tool.name for tool in (await client.list_tools()).tools] == names
            result = await client.call_tool("test_simple_text", {})
            assert result.content[0].text == "This is a simple text response for testing."
            assert result.result_type == "complete"
            structured = await client.call_tool("test_structured_output", {"city": "Paris"})
            assert structured.structured_content["city"] == "Paris"
            failed = await client.call_tool("test_error_handling", {})
            assert failed.is_error
            read = await client.read_resource("test://static-text")
            assert read.contents[0].text == "This is the content of the static text resource."
            prompts = await client.list_prompts()
            assert prompts.prompts
            with pytest.raises(MCPError) as missing:
                await client.read_resource("test://no-such-resource")
            assert missing.value.error.code == -32602

    anyio.run(main)
