"""The gateway in front of more servers no one here wrote, used by more clients no one here
wrote (tests/interop/test_gateway_reference_servers.py has the npm reference servers,
mcp-server-time and an official-Python-SDK server under the official Python client).

Upstreams, all at once behind one ``mcpfast gateway config.json``: a server on the official
TypeScript SDK (tests/interop/ts_server/server.mjs) over stdio, the PyPI server
``mcp-server-git`` over stdio on a repository made here, a FastMCP 4 server over Streamable
HTTP (its own process and port), and mcpfast's examples/everything_server.py mounted
without a namespace. Downstream: the official TypeScript SDK's client
(tests/interop/ts_client/client.mjs, which validates every result against the SDK's
schemas) over stdio, the MCP Inspector CLI over Streamable HTTP, and mcpfast's client.
The PyPI servers go into a venv of tests/interop/gateway_upstreams on first use; skipped,
saying why, when npm or the registries are out of reach.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import pytest

import mcpfast
from everything_http import wait_for_port
from gateway_process import gateway_command, http_gateway, stop

# The first run installs the PyPI and npm peers.
pytestmark = pytest.mark.timeout(900)

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
UPSTREAMS = HERE / "gateway_upstreams"
PEER_PINS = ("fastmcp==4.2.3", "mcp-server-git==2026.10.19")
INSPECTOR = HERE / "inspector_cli"
INSPECTOR_CLI = INSPECTOR / "node_modules" / "@modelcontextprotocol" / "inspector-cli" / "build" / "index.js"

FASTMCP_SERVER = textwrap.dedent('''
    import sys

    from fastmcp import FastMCP

    mcp = FastMCP("fastmcp-upstream")

    @mcp.tool
    def multiply(a: int, b: int) -> int:
        """Multiply two integers."""
        return a * b

    @mcp.resource("notes://fastmcp")
    def note() -> str:
        """A note kept by the FastMCP server."""
        return "kept by FastMCP"

    mcp.run(transport="http", host="127.0.0.1", port=int(sys.argv[1]), show_banner=False)
''')


@pytest.fixture(scope="module")
def peer_python() -> Path:
    """The bin folder of a venv holding fastmcp and mcp-server-git (installed on first use)."""
    venv = UPSTREAMS / ".venv"
    python = venv / "bin" / "python"
    wanted = [pin.split("==") for pin in PEER_PINS]
    check = "import importlib.metadata as m, sys; sys.exit(any(m.version(n) != v for n, v in %r))" % (wanted,)
    if python.is_file() and subprocess.run([str(python), "-c", check], capture_output=True).returncode == 0:
        return venv / "bin"
    if not python.is_file():
        made = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True)
        assert made.returncode == 0, made.stderr
    installed = subprocess.run([str(python), "-m", "pip", "install", "--quiet", *PEER_PINS],
                               capture_output=True, text=True, timeout=900)
    if installed.returncode != 0:
        pytest.skip(f"pip could not install {PEER_PINS} (network?): {installed.stderr[-500:]}")
    return venv / "bin"


@pytest.fixture(scope="module")
def node_peers(ensure_ts_sdk) -> str:
    """node, with the TypeScript SDK's server and client and the Inspector CLI installed."""
    node = shutil.which("node")
    if node is None or shutil.which("npm") is None:
        pytest.skip("node and npm are needed for the TypeScript SDK and the Inspector CLI")
    try:
        ensure_ts_sdk(HERE / "ts_server")
        ensure_ts_sdk(HERE / "ts_client")
        ensure_ts_sdk(INSPECTOR, "@modelcontextprotocol/inspector-cli")
    except (AssertionError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"npm could not install the TypeScript peers (network?): {exc}")
    return node


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def fastmcp_url(peer_python, tmp_path_factory):
    """A FastMCP 4 server over Streamable HTTP on loopback, for the module's tests."""
    folder = tmp_path_factory.mktemp("fastmcp")
    (folder / "server.py").write_text(FASTMCP_SERVER)
    port = _free_port()
    process = subprocess.Popen([str(peer_python / "python"), str(folder / "server.py"), str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        anyio.run(wait_for_port, port)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(process)


@pytest.fixture(scope="module")
def repository(tmp_path_factory) -> Path:
    """A git repository with one commit, for mcp-server-git."""
    repo = tmp_path_factory.mktemp("repo")
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    (repo / "README.md").write_text("behind the gateway\n")
    for command in (["git", "init", "-q"], ["git", "add", "README.md"],
                    ["git", "commit", "-q", "-m", "first commit through the gateway"]):
        subprocess.run(command, cwd=repo, env=env, check=True, capture_output=True)
    (repo / "README.md").write_text("behind the gateway, changed\n")
    return repo


@pytest.fixture
def gateway_config(tmp_path, node_peers, peer_python, fastmcp_url, repository) -> str:
    config = {"mcpServers": {
        "everything": {"command": sys.executable, "args": [str(ROOT / "examples" / "everything_server.py")],
                       "env": {"PYTHONPATH": str(ROOT)}, "namespace": ""},
        "ts": {"command": node_peers, "args": [str(HERE / "ts_server" / "server.mjs")]},
        "git": {"command": str(peer_python / "mcp-server-git"), "args": ["--repository", str(repository)]},
        "fm": {"url": fastmcp_url},
    }}
    path = tmp_path / "gateway.json"
    path.write_text(json.dumps(config))
    return str(path)


def test_typescript_client_through_the_gateway(gateway_config, node_peers):
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([node_peers, "client.mjs", *gateway_command(gateway_config)],
                          cwd=HERE / "ts_client", capture_output=True, text=True, timeout=180, env=env)
    assert done.returncode == 0, f"the TypeScript client failed:\n{done.stderr[-3000:]}"
    report = json.loads(done.stdout.strip().splitlines()[-1])

    assert report["protocolVersion"] == "2025-11-25"
    names = {tool["name"] for tool in report["tools"]}
    # The everything server's own names (no namespace) beside the namespaced upstreams'.
    assert {"test_simple_text", "test_structured_output", "ts_add", "ts_greet", "git_git_status",
            "fm_multiply"} <= names
    calls = report["calls"]
    assert calls["test_simple_text"] == {
        "content": [{"type": "text", "text": "This is a simple text response for testing."}]}
    assert calls["test_structured_output"]["structuredContent"]["city"] == "Lima"
    assert calls["test_error_handling"]["isError"] is True
    assert report["errors"]["unknownTool"]["code"] == -32602
    assert report["reads"]["test://static-text"]["contents"][0]["text"] == (
        "This is the content of the static text resource.")
    assert json.loads(report["reads"]["test://template/7/data"]["contents"][0]["text"])["id"] == "7"
    assert report["errors"]["missingResource"]["code"] == -32002
    uris = {resource["uri"] for resource in report["resources"]}
    assert {"test://static-text", "memo://readme", "notes://fastmcp"} <= uris
    assert "memo://notes/{id}" in report["templates"]
    assert report["pinged"] is True


def _inspector(node: str, url: str, *arguments: str) -> dict:
    # Run where "../package.json" exists (see tests/interop/test_inspector_cli.py).
    done = subprocess.run([node, str(INSPECTOR_CLI), url, "--transport", "http", *arguments],
                          capture_output=True, text=True, timeout=120, cwd=INSPECTOR / "node_modules")
    assert done.returncode == 0, f"inspector-cli failed:\n{done.stdout}\n{done.stderr}"
    return json.loads(done.stdout)


def test_inspector_cli_through_the_gateway_over_http(gateway_config, node_peers, repository):
    with http_gateway(gateway_config) as url:
        names = {tool["name"] for tool in _inspector(node_peers, url, "--method", "tools/list")["tools"]}
        assert {"ts_add", "git_git_status", "git_git_log", "fm_multiply", "test_simple_text"} <= names
        added = _inspector(node_peers, url, "--method", "tools/call", "--tool-name", "ts_add",
                           "--tool-arg", "a=2", "b=40")
        assert added["content"][0]["text"] == "42"
        product = _inspector(node_peers, url, "--method", "tools/call", "--tool-name", "fm_multiply",
                             "--tool-arg", "a=6", "b=7")
        assert "42" in json.dumps(product)
        status = _inspector(node_peers, url, "--method", "tools/call", "--tool-name", "git_git_status",
                            "--tool-arg", f"repo_path={repository}")
        assert "README.md" in status["content"][0]["text"]
        failed = _inspector(node_peers, url, "--method", "tools/call", "--tool-name", "ts_fail")
        assert failed["isError"] is True
        read = _inspector(node_peers, url, "--method", "resources/read", "--uri", "memo://readme")
        assert read["contents"][0]["text"] == "# Hello from TypeScript"
        noted = _inspector(node_peers, url, "--method", "resources/read", "--uri", "notes://fastmcp")
        assert noted["contents"][0]["text"] == "kept by FastMCP"


def test_mcpfast_client_through_the_gateway(gateway_config, repository):
    async def main() -> None:
        async with mcpfast.connect(gateway_command(gateway_config), stderr=subprocess.DEVNULL) as client:
            greeted = await client.call_tool("ts_greet", {"name": "Ada"})
            assert greeted["structuredContent"] == {"greeting": "Hello, Ada!", "length": 3}
            log = await client.call_tool("git_git_log", {"repo_path": str(repository)})
            assert "first commit through the gateway" in log["content"][0]["text"]
            product = await client.call_tool("fm_multiply", {"a": 3, "b": 5})
            assert product["structuredContent"] == {"result": 15}
            note = await client.read_resource("memo://notes/9")
            assert note["contents"][0]["text"] == "note 9"

    anyio.run(main)
