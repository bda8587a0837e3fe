"""Trace context across implementations: the official Python SDK (``mcp`` 2.3.0, which
emits spans and injects ``traceparent`` into ``params._meta`` on its own) and mcpfast.

- The SDK's client calling mcpfast's server over Streamable HTTP: mcpfast's SERVER span is
  the child of the SDK's CLIENT span.
- mcpfast's client calling an SDK server (stdio, its telemetry on, its spans written to a
  file by that process): the SDK's SERVER span is the child of mcpfast's CLIENT span.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the official SDK is in the interop extra")

import mcpfast  # noqa: E402
from mcpfast.telemetry import client_telemetry  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "helpers"))
from traced_app import make_app  # noqa: E402

from loop import eventually  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

ROOT = Path(__file__).resolve().parents[2]
SDK_SERVER = Path(__file__).parent / "sdk_traced_server.py"


def test_the_sdk_clients_span_is_the_parent_of_mcpfasts_server_span(otel):
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    app = make_app()

    async def main() -> int:
        ready: asyncio.Future = asyncio.get_running_loop().create_future()
        task = asyncio.ensure_future(app.serve_http("127.0.0.1", 0,
                                                    ready=lambda host, port: ready.set_result(port)))
        port = await ready
        try:
            async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    result = await session.call_tool("add", {"a": 20, "b": 22})
                    return result.structured_content["result"]
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    assert asyncio.run(main()) == 42
    spans = otel.spans()
    sdk_client = [s for s in spans if s.kind.name == "CLIENT" and s.attributes.get("mcp.method.name") == "tools/call"]
    ours = [s for s in spans if s.kind.name == "SERVER" and s.name == "tools/call add"]
    assert len(sdk_client) == 1 and len(ours) == 1, [(s.name, s.kind.name) for s in spans]
    assert sdk_client[0].instrumentation_scope.name == "mcp-python-sdk"
    assert ours[0].instrumentation_scope.name == "mcpfast"
    assert ours[0].context.trace_id == sdk_client[0].context.trace_id
    assert ours[0].parent.span_id == sdk_client[0].context.span_id
    assert ours[0].attributes["jsonrpc.request.id"] == sdk_client[0].attributes["jsonrpc.request.id"]


def test_mcpfasts_client_span_is_the_parent_of_the_sdk_servers_span(otel, tmp_path):
    spans_file = tmp_path / "sdk-spans.jsonl"
    env = {"PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "TRACED_SPANS": str(spans_file)}

    async def main() -> int:
        async with mcpfast.connect([sys.executable, str(SDK_SERVER)], env=env,
                                   observer=client_telemetry(transport="stdio")) as client:
            result = await client.call_tool("add", {"a": 1, "b": 2})
            await eventually(lambda: spans_file.exists() and "tools/call add" in spans_file.read_text())
            return result["structuredContent"]["result"]

    assert asyncio.run(main()) == 3
    sdk_spans = [json.loads(line) for line in spans_file.read_text().splitlines()]
    sdk_server = [s for s in sdk_spans if s["name"] == "tools/call add" and s["kind"] == "SERVER"]
    ours = [s for s in otel.spans() if s.name == "tools/call add" and s.kind.name == "CLIENT"]
    assert len(sdk_server) == 1 and len(ours) == 1
    assert sdk_server[0]["trace_id"] == ours[0].context.trace_id
    assert sdk_server[0]["parent"] == ours[0].context.span_id
    assert sdk_server[0]["attributes"]["gen_ai.tool.name"] == "add"
