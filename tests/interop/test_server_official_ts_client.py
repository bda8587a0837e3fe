"""The official TypeScript MCP SDK client (npm @modelcontextprotocol/sdk) against mcpfast.

``tests/interop/ts_client/client.mjs`` reaches ``examples/everything_server.py`` over stdio
(the SDK's StdioClientTransport starts it), over Streamable HTTP and over WebSocket (the
server runs on a loopback port; the SDK's StreamableHTTPClientTransport and
WebSocketClientTransport, subprotocol ``mcp``), initializes, lists and calls tools, lists resources
and templates, reads resources, checks two error codes and pings; it prints a JSON report
this test checks. The SDK validates every result with its own schemas and throws on a
malformed one, so a passing run also means the SDK accepted every message.

The SDK is installed into ``tests/interop/ts_client/node_modules`` on first use
(``npm install`` from the committed package.json and package-lock.json). When npm or node
are missing or the install fails, the test fails: CI has the registry.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLIENT_DIR = Path(__file__).resolve().parent / "ts_client"
SERVER = ROOT / "examples" / "everything_server.py"



def _run_client(transport: str = "stdio") -> dict:
    node = shutil.which("node")
    assert node is not None, "node is required for the TypeScript interop test"
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    if transport != "stdio":
        return _run_client_over_network(node, env, transport)
    completed = subprocess.run(
        [node, "client.mjs", sys.executable, str(SERVER)],
        cwd=CLIENT_DIR, capture_output=True, text=True, timeout=90, env=env,
    )
    assert completed.returncode == 0, f"the TypeScript client failed:\n{completed.stderr}"
    return json.loads(completed.stdout.strip().splitlines()[-1])


def _node_options(node: str) -> list[str]:
    # The SDK's WebSocket transport uses the global WebSocket: Node 22 has it, Node 20
    # behind a flag.
    probe = subprocess.run([node, "-e", "process.exit(typeof WebSocket === 'function' ? 0 : 1)"],
                           capture_output=True, timeout=30)
    return [] if probe.returncode == 0 else ["--experimental-websocket"]


def _run_client_over_network(node: str, env: dict, transport: str) -> dict:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, str(SERVER), transport, str(port)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if transport == "http":
        command = [node, "client.mjs", "--url", f"http://127.0.0.1:{port}/mcp"]
    else:
        command = [node, *_node_options(node), "client.mjs", "--ws", f"ws://127.0.0.1:{port}/mcp"]
    try:
        for _ in range(400):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        completed = subprocess.run(command, cwd=CLIENT_DIR, capture_output=True, text=True,
                                   timeout=90, env=env)
    finally:
        server.terminate()
        server.wait(10)
    assert completed.returncode == 0, f"the TypeScript client failed:\n{completed.stderr}"
    return json.loads(completed.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("transport", ["stdio", "http", "websocket"])
def test_typescript_client_initializes_lists_calls_and_reads(ensure_ts_sdk, transport):
    ensure_ts_sdk(CLIENT_DIR)
    report = _run_client(transport)

    assert report["protocolVersion"] == "2025-11-25"
    assert report["serverInfo"]["name"] == "mcpfast-everything"
    assert report["serverInfo"]["version"] == "1.0.0"
    capabilities = report["capabilities"]
    assert capabilities["tools"] == {"listChanged": True}
    assert capabilities["resources"] == {"subscribe": True, "listChanged": True}

    tools = {tool["name"]: tool for tool in report["tools"]}
    assert tools["test_simple_text"]["description"] == "Returns a simple text response."
    assert tools["test_simple_text"]["inputSchema"] == {
        "type": "object", "properties": {}, "additionalProperties": False,
    }
    assert tools["test_structured_output"]["hasOutputSchema"] is True
    assert tools["json_schema_2020_12_tool"]["inputSchema"]["$defs"]["address"]["type"] == "object"

    calls = report["calls"]
    assert calls["test_simple_text"] == {
        "content": [{"type": "text", "text": "This is a simple text response for testing."}]
    }
    image = calls["test_image_content"]["content"][0]
    assert image["type"] == "image" and image["mimeType"] == "image/png"
    assert base64.b64decode(image["data"]).startswith(b"\x89PNG")
    assert [block["type"] for block in calls["test_multiple_content_types"]["content"]] == [
        "text", "image", "resource",
    ]
    structured = calls["test_structured_output"]
    assert structured["structuredContent"]["city"] == "Lima"
    assert json.loads(structured["content"][0]["text"]) == structured["structuredContent"]
    assert calls["test_error_handling"]["isError"] is True
    assert calls["test_error_handling"]["content"][0]["text"] == (
        "This tool intentionally returns an error for testing"
    )
    assert report["errors"]["unknownTool"]["code"] == -32602

    resources = {resource["uri"]: resource for resource in report["resources"]}
    assert resources["test://static-text"]["mimeType"] == "text/plain"
    assert report["templates"] == ["test://template/{id}/data"]
    reads = report["reads"]
    assert reads["test://static-text"]["contents"] == [{
        "uri": "test://static-text", "mimeType": "text/plain",
        "text": "This is the content of the static text resource.",
    }]
    blob = reads["test://static-binary"]["contents"][0]["blob"]
    assert base64.b64decode(blob).startswith(b"\x89PNG")
    assert json.loads(reads["test://template/7/data"]["contents"][0]["text"]) == {
        "id": "7", "templateTest": True, "data": "Data for ID: 7",
    }
    assert report["errors"]["missingResource"]["code"] == -32002
    assert report["pinged"] is True


def test_typescript_client_drives_experimental_tasks(ensure_ts_sdk):
    """The SDK's experimental task API (2025-11-25) against mcpfast's tasks: a streamed
    task-augmented call, a required-task tool, a failing task, tasks/get, tasks/list,
    tasks/cancel and its refusal for an ended task (tests/interop/ts_client/tasks_client.mjs)."""
    ensure_ts_sdk(CLIENT_DIR)
    node = shutil.which("node")
    assert node is not None, "node is required for the TypeScript interop test"
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    completed = subprocess.run([node, "tasks_client.mjs", sys.executable, str(SERVER)],
                               cwd=CLIENT_DIR, capture_output=True, text=True, timeout=120, env=env)
    assert completed.returncode == 0, f"the TypeScript client failed:\n{completed.stderr}"
    report = json.loads(completed.stdout.strip().splitlines()[-1])
    assert "fatal" not in report, report["fatal"]
    assert report["tasksCapability"] == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    assert report["execution"]["slow_compute"] == "optional"
    assert report["execution"]["failing_job"] == "required"
    assert "greet" not in report["execution"]
    completed_task = report["completed"]
    assert completed_task["kinds"][0] == "taskCreated" and completed_task["kinds"][-1] == "result"
    assert completed_task["text"] == "computed ts after 0.2 s" and completed_task["isError"] is False
    # A required-task tool is made a task by the SDK on its own (it read execution.taskSupport);
    # a tool error fails a 2025-11-25 task, a JSON-RPC error too.
    assert report["required"]["kinds"][0] == "taskCreated" and report["required"]["error"] is not None
    assert report["protocolError"]["kinds"][-1] == "error"
    assert report["got"]["taskId"] == completed_task["taskId"] and report["got"]["status"] == "completed"
    assert report["got"]["ttl"] == 60000
    assert completed_task["taskId"] in report["listed"] and len(report["listed"]) == 3
    assert report["cancelled"]["status"] == "cancelled"
    assert report["errors"]["cancelAgain"]["code"] == -32602
    assert report["errors"]["unknown"]["code"] == -32602
