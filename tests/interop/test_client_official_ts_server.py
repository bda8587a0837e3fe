"""The mcpfast client driving a server written with the official TypeScript SDK.

``tests/interop/ts_server/server.mjs`` is an McpServer (npm @modelcontextprotocol/sdk) on
stdio, in plain JavaScript so no compile step is needed. The SDK is installed into
``tests/interop/ts_server/node_modules`` on first use (``npm install`` from the committed
package.json and package-lock.json); when node or npm are missing or the install fails the
test fails (CI has the registry). Every message the client sends is validated against the
MCP schema of the negotiated version; the SDK validates them with its own schemas as well.
"""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
from pathlib import Path

import pytest

from mcpfast.client import connect
from mcpfast.jsonrpc import InvalidParams, JSONRPCError
from recording_client import RecordingClient

SERVER_DIR = Path(__file__).resolve().parent / "ts_server"





def _run(coroutine):
    async def bounded():
        return await asyncio.wait_for(coroutine, 120)

    return asyncio.run(bounded())


@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18"])
def test_mcpfast_client_drives_an_official_typescript_server(mcp_schema, version, ensure_ts_sdk):
    ensure_ts_sdk(SERVER_DIR)
    node = shutil.which("node")
    assert node is not None, "node is required for the TypeScript interop test"
    client = RecordingClient(name="mcpfast-interop", protocol_version=version, timeout=30)

    async def main():
        async with connect([node, "server.mjs"], cwd=SERVER_DIR, client=client):
            # initialize
            assert client.protocol_version == version
            assert client.server_info == {"name": "official-typescript", "version": "1.32.2-test"}
            assert client.instructions == "A TypeScript SDK server for mcpfast's interop tests."
            assert "tools" in client.server_capabilities
            assert "resources" in client.server_capabilities
            await client.ping()

            # tools
            tools = {tool["name"]: tool for tool in await client.list_tools()}
            assert set(tools) == {"add", "greet", "fail"}
            assert tools["add"]["inputSchema"]["properties"]["a"]["type"] == "number"
            assert "outputSchema" in tools["greet"]
            page = await client.list_tools_page()
            assert [t["name"] for t in page["tools"]] == list(tools)
            added = await client.call_tool("add", {"a": 19, "b": 23})
            assert added["content"] == [{"type": "text", "text": "42"}]
            greeted = await client.call_tool("greet", {"name": "Ada"})
            assert greeted["structuredContent"] == {"greeting": "Hello, Ada!", "length": 3}
            failed = await client.call_tool("fail")
            assert failed["isError"] is True
            assert "failed on purpose" in failed["content"][0]["text"]
            # Bad arguments: the SDK answers a tool error result or -32602, per version.
            try:
                bad = await client.call_tool("add", {"a": "x"})
            except InvalidParams:
                pass
            else:
                assert bad["isError"] is True
            many = await asyncio.gather(*(
                client.call_tool("add", {"a": i, "b": i}) for i in range(100)))
            assert [m["content"][0]["text"] for m in many] == [str(2 * i) for i in range(100)]

            # resources
            resources = {r["uri"]: r for r in await client.list_resources()}
            assert set(resources) == {"memo://readme", "memo://logo"}
            assert resources["memo://readme"]["mimeType"] == "text/markdown"
            readme = await client.read_resource("memo://readme")
            assert readme["contents"][0]["text"] == "# Hello from TypeScript"
            logo = await client.read_resource("memo://logo")
            assert base64.b64decode(logo["contents"][0]["blob"]) == bytes([0, 1, 2, 255])
            templates = await client.list_resource_templates()
            assert [t["uriTemplate"] for t in templates] == ["memo://notes/{id}"]
            note = await client.read_resource("memo://notes/17")
            assert note["contents"][0]["text"] == "note 17"
            with pytest.raises(JSONRPCError):
                await client.read_resource("memo://missing")

        assert client.closed
        schema = mcp_schema(version)
        for frame in client.sent_frames:
            schema.check_message(json.loads(frame))
        assert len(client.sent_frames) > 100

    _run(main())
