"""A tool annotated ``-> ToolResult``, called by the official MCP Python SDK's client
(mcp 2.3.0) over stdio: the client checks every result of a tool with an output schema
against it, so a schema made of ToolResult's own fields made it refuse every call."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

pytestmark = pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")

ROOT = Path(__file__).resolve().parents[2]
SERVER = """
from mcpfast import Server
from mcpfast.server import ToolResult

app = Server("tool-result")


@app.tool()
def report() -> ToolResult:
    return ToolResult("done", structured_content={"count": 3})


@app.tool()
def failing() -> ToolResult:
    return ToolResult("it failed", is_error=True)


app.run("stdio")
"""


def test_tool_result_tools_are_callable_by_the_official_client(tmp_path):
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    env = {"PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    parameters = StdioServerParameters(command=sys.executable, args=[str(script)], env=env, cwd=str(ROOT))

    async def main() -> None:
        with open(os.devnull, "w") as devnull:
            async with stdio_client(parameters, errlog=devnull) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    listed = {tool.name: tool for tool in (await session.list_tools()).tools}
                    assert listed["report"].output_schema is None
                    result = await session.call_tool("report", {})
                    assert result.is_error is False
                    assert result.structured_content == {"count": 3}
                    assert [block.text for block in result.content] == ["done"]
                    failed = await session.call_tool("failing", {})
                    assert failed.is_error is True and failed.content[0].text == "it failed"

    anyio.run(main)
