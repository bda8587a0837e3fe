"""The gateway in front of servers no one here wrote, used by clients no one here wrote.

Upstreams, all at once behind one ``mcpfast gateway config.json``: the npm reference
servers (``@modelcontextprotocol/server-everything``, ``server-filesystem``,
``server-memory``) over stdio, installed with npm into tests/interop/gateway_upstreams;
the PyPI server ``mcp-server-time`` over stdio, installed into a venv of that folder; a
server written with the official Python SDK (``mcp`` 2.3.0, MCPServer) over stdio.
Downstream: the official Python SDK's client (``mcp.ClientSession`` over stdio, which
validates every result against its types) and mcpfast's client. Skipped, saying why, when
npm or the registries are out of reach.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import pytest

import mcpfast
from gateway_process import gateway_command, http_gateway

pytestmark = pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")

FOLDER = Path(__file__).resolve().parent / "gateway_upstreams"
TIME_PIN = "mcp-server-time==2026.10.19"

SDK_SERVER = textwrap.dedent('''
    import warnings
    from mcp.server.mcpserver import MCPServer

    warnings.simplefilter("ignore")
    mcp = MCPServer("official-python-upstream")

    @mcp.tool()
    def shout(text: str) -> str:
        """Upper-case a text."""
        return text.upper()

    @mcp.prompt()
    def greet(name: str) -> str:
        """Greet someone."""
        return f"Hello, {name}!"

    mcp.run()
''')


@pytest.fixture(scope="module")
def npm_servers(ensure_ts_sdk) -> Path:
    """The npm reference servers' bin folder (installed on first use)."""
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed: the npm reference servers cannot be installed")
    try:
        ensure_ts_sdk(FOLDER, "@modelcontextprotocol/server-memory")
    except (AssertionError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"npm could not install the reference servers (network?): {exc}")
    return FOLDER / "node_modules" / ".bin"


@pytest.fixture(scope="module")
def time_server() -> str:
    """The mcp-server-time command (installed into a venv of its own on first use)."""
    venv = FOLDER / ".venv"
    command = venv / "bin" / "mcp-server-time"
    if not command.is_file():
        made = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True)
        assert made.returncode == 0, made.stderr
        installed = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", TIME_PIN],
                                   capture_output=True, text=True, timeout=600)
        if installed.returncode != 0:
            pytest.skip(f"pip could not install {TIME_PIN} (network?): {installed.stderr[-500:]}")
    return str(command)


@pytest.fixture
def gateway_config(tmp_path, npm_servers, time_server) -> str:
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "hello.txt").write_text("hello through the gateway\n")
    (tmp_path / "sdk_server.py").write_text(SDK_SERVER)
    config = {"mcpServers": {
        "everything": {"command": str(npm_servers / "mcp-server-everything"), "args": ["stdio"]},
        "fs": {"command": str(npm_servers / "mcp-server-filesystem"), "args": [str(tmp_path / "files")]},
        "memory": {"command": str(npm_servers / "mcp-server-memory"),
                   "env": {"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")}},
        "time": {"command": time_server, "args": ["--local-timezone", "UTC"]},
        "sdk": {"command": sys.executable, "args": [str(tmp_path / "sdk_server.py")]},
    }}
    path = tmp_path / "gateway.json"
    path.write_text(json.dumps(config))
    return str(path)


def test_official_python_client_uses_every_upstream_through_the_gateway(gateway_config, tmp_path):
    from mcp import ClientSession, StdioServerParameters, stdio_client

    command = gateway_command(gateway_config)
    parameters = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))

    async def main() -> None:
        with open(os.devnull, "w") as devnull:
            async with stdio_client(parameters, errlog=devnull) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    names = {tool.name for tool in (await session.list_tools()).tools}
                    assert {"everything_echo", "fs_read_text_file", "memory_create_entities",
                            "time_get_current_time", "sdk_shout"} <= names

                    echoed = await session.call_tool("everything_echo", {"message": "hi"})
                    assert "hi" in echoed.content[0].text
                    read_back = await session.call_tool(
                        "fs_read_text_file", {"path": str(tmp_path / "files" / "hello.txt")})
                    assert read_back.content[0].text == "hello through the gateway\n"
                    created = await session.call_tool("memory_create_entities", {"entities": [
                        {"name": "gateway", "entityType": "software", "observations": ["mounts servers"]}]})
                    assert not created.is_error
                    graph = await session.call_tool("memory_read_graph", {})
                    assert "mounts servers" in graph.content[0].text
                    now = await session.call_tool("time_get_current_time", {"timezone": "UTC"})
                    assert json.loads(now.content[0].text)["timezone"] == "UTC"
                    shouted = await session.call_tool("sdk_shout", {"text": "quiet"})
                    assert shouted.content[0].text == "QUIET"
                    prompt = await session.get_prompt("sdk_greet", {"name": "Ada"})
                    assert "Hello, Ada!" in prompt.messages[0].content.text

    anyio.run(main)


def test_mcpfast_client_through_the_gateway_resources_and_prompts(gateway_config):
    async def main() -> None:
        async with mcpfast.connect(gateway_command(gateway_config), stderr=subprocess.DEVNULL) as client:
            prompts = {prompt["name"] for prompt in await client.list_prompts()}
            assert "sdk_greet" in prompts and any(name.startswith("everything_") for name in prompts)
            resources = await client.list_resources()
            everything = [r for r in resources if r["name"].startswith("everything_")]
            assert everything, resources
            read = await client.read_resource(everything[0]["uri"])
            assert read["contents"] and read["contents"][0]["uri"] == everything[0]["uri"]
            added = await client.call_tool("everything_get-sum", {"a": 2, "b": 40})
            assert "42" in added["content"][0]["text"]

    anyio.run(main)


def test_official_python_client_over_http_through_the_gateway(gateway_config, tmp_path):
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    with http_gateway(gateway_config) as url:
        async def main() -> None:
            async with streamable_http_client(url) as (read, write, *_):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    names = {tool.name for tool in (await session.list_tools()).tools}
                    assert {"everything_echo", "fs_list_directory", "time_convert_time", "sdk_shout"} <= names
                    listed = await session.call_tool("fs_list_directory", {"path": str(tmp_path / "files")})
                    assert "hello.txt" in listed.content[0].text
                    converted = await session.call_tool("time_convert_time", {
                        "source_timezone": "UTC", "time": "12:00", "target_timezone": "Europe/Oslo"})
                    assert not converted.is_error, converted
                    assert (await session.call_tool("sdk_shout", {"text": "http"})).content[0].text == "HTTP"

        anyio.run(main)
