"""The MCP Inspector's command line (npm @modelcontextprotocol/inspector-cli) against
mcpfast's everything server over Streamable HTTP: it lists and calls tools, reads
resources, gets prompts. Installed on first use into tests/interop/inspector_cli."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import anyio
import pytest

from everything_http import http_server

FOLDER = Path(__file__).parent / "inspector_cli"
CLI = FOLDER / "node_modules" / "@modelcontextprotocol" / "inspector-cli" / "build" / "index.js"


def inspector(url: str, *arguments: str) -> dict:
    node = shutil.which("node")
    assert node is not None, "node is required for the MCP Inspector interop test"
    # The CLI looks for its package.json with a path it checks against the working
    # directory but imports relative to itself: run it where "../package.json" exists.
    done = subprocess.run([node, str(CLI), url, "--transport", "http", *arguments],
                          capture_output=True, text=True, timeout=120, cwd=FOLDER / "node_modules")
    assert done.returncode == 0, f"inspector-cli failed:\n{done.stdout}\n{done.stderr}"
    return json.loads(done.stdout)


@pytest.mark.timeout(600)
def test_the_inspector_cli_lists_and_calls_over_http(ensure_ts_sdk):
    ensure_ts_sdk(FOLDER, "@modelcontextprotocol/inspector-cli")

    async def main() -> None:
        async with http_server() as url:
            def run_all() -> None:
                tools = inspector(url, "--method", "tools/list")["tools"]
                names = {tool["name"] for tool in tools}
                assert {"test_simple_text", "test_structured_output"} <= names
                called = inspector(url, "--method", "tools/call", "--tool-name", "test_simple_text")
                assert called["content"][0]["type"] == "text" and called["content"][0]["text"]
                structured = inspector(url, "--method", "tools/call", "--tool-name",
                                       "test_structured_output", "--tool-arg", "city=Paris")
                assert structured["structuredContent"]["city"] == "Paris"
                failed = inspector(url, "--method", "tools/call", "--tool-name", "test_error_handling")
                assert failed["isError"] is True
                resources = inspector(url, "--method", "resources/list")["resources"]
                assert resources
                read = inspector(url, "--method", "resources/read", "--uri", resources[0]["uri"])
                assert read["contents"][0]["uri"] == resources[0]["uri"]
                prompts = inspector(url, "--method", "prompts/list")["prompts"]
                assert prompts
                assert "test_simple_prompt" in {p["name"] for p in prompts}
                got = inspector(url, "--method", "prompts/get", "--prompt-name", "test_simple_prompt")
                assert got["messages"]

            await anyio.to_thread.run_sync(run_all)

    anyio.run(main)
