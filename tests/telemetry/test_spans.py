"""Server and client spans on every transport and both eras, recorded by the OpenTelemetry
SDK's in-memory exporter: names, kinds, attributes, parent/child across the wire, errors,
links of a task's later requests and of an InputRequiredResult's retry, the metrics, and
nothing at all where no provider is configured or telemetry is switched off."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from pathlib import Path
from typing import Any, AsyncIterator

import pytest

import mcpfast
from mcpfast import Server
from mcpfast.jsonrpc.errors import JSONRPCError
from mcpfast.telemetry import ServerTelemetry, client_telemetry

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "helpers"))
from traced_app import make_app  # noqa: E402

from loop import eventually  # noqa: E402

APP = Path(__file__).parent / "traced_app.py"
ROOT = Path(__file__).resolve().parents[2]
V2025 = "2025-11-25"
V2026 = "2026-07-28"
SOCKET_TRANSPORTS = ["tcp", "http", "websocket", "legacy-sse"]
# The transports that tell a connection its client's address (ctx.peer_address, peer_port).
PEER_TRANSPORTS = ("tcp", "http", "websocket", "legacy-sse")
# What each transport reports (network.transport, network.protocol.name).
NETWORK = {
    "in-process": (None, None), "tcp": ("tcp", None), "http": ("tcp", "http"),
    "legacy-sse": ("tcp", "http"), "websocket": ("tcp", "websocket"), "stdio": ("pipe", None),
}


def confirm(params: Any) -> dict:
    return {"action": "accept", "content": {"confirm": True}}


@contextlib.asynccontextmanager
async def served(app: Server, transport: str) -> AsyncIterator[str]:
    """``app`` on a loopback port; yields its URL."""
    ready: asyncio.Future = asyncio.get_running_loop().create_future()

    def bound(host: str, port: int) -> None:
        ready.set_result(port)

    if transport == "tcp":
        task = asyncio.ensure_future(app.serve_tcp("127.0.0.1", 0, ready=bound))
    elif transport == "websocket":
        task = asyncio.ensure_future(app.serve_websocket("127.0.0.1", 0, ready=bound))
    else:
        task = asyncio.ensure_future(app.serve_http("127.0.0.1", 0, ready=bound,
                                                    legacy_sse=transport == "legacy-sse"))
    port = await asyncio.wait_for(ready, 30)
    scheme = {"tcp": "tcp", "websocket": "ws"}.get(transport, "http")
    path = {"tcp": "", "legacy-sse": "/sse"}.get(transport, "/mcp")
    try:
        yield f"{scheme}://127.0.0.1:{port}{path}"
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


@contextlib.asynccontextmanager
async def client_of(app: Server, transport: str, version: str) -> AsyncIterator[Any]:
    # connect() adds the client's telemetry by itself, the provider being configured.
    options: dict[str, Any] = {"protocol_version": version, "elicitation": confirm}
    if version == V2026:
        options["tasks"] = True
    if transport == "in-process":
        async with mcpfast.connect(app, **options) as client:
            yield client
    else:
        async with served(app, transport) as url, mcpfast.connect(url, **options) as client:
            yield client


def one(spans: list, name: str, kind: str) -> Any:
    found = [span for span in spans if span.name == name and span.kind.name == kind]
    assert len(found) == 1, [(span.name, span.kind.name) for span in spans]
    return found[0]


def assert_child(server_span: Any, client_span: Any) -> None:
    assert server_span.context.trace_id == client_span.context.trace_id
    assert server_span.parent is not None and server_span.parent.span_id == client_span.context.span_id
    assert server_span.parent.is_remote


@pytest.mark.parametrize("version", [V2025, V2026])
@pytest.mark.parametrize("transport", ["in-process", *SOCKET_TRANSPORTS])
def test_spans_on_every_transport_and_era(otel, transport, version):
    if transport == "legacy-sse" and version == V2026:
        pytest.skip("the 2024-11-05 HTTP+SSE transport carries the handshake versions only")
    app = make_app()

    async def main() -> None:
        async with client_of(app, transport, version) as client:
            assert (await client.call_tool("add", {"a": 2, "b": 3}))["structuredContent"] == {"result": 5}
            assert (await client.call_tool("fails"))["isError"] is True
            with pytest.raises(JSONRPCError) as unknown:
                await client.call_tool("no-such-tool")
            assert unknown.value.code == -32602
            await client.read_resource("memo://note")
            await client.get_prompt("greet", {"who": "ada"})

    asyncio.run(main())
    spans = otel.spans()
    server_add = one(spans, "tools/call add", "SERVER")
    client_add = one(spans, "tools/call add", "CLIENT")
    assert_child(server_add, client_add)
    attrs = server_add.attributes
    assert attrs["mcp.method.name"] == "tools/call"
    assert attrs["gen_ai.operation.name"] == "execute_tool"
    assert attrs["gen_ai.tool.name"] == "add"
    assert attrs["mcp.protocol.version"] == version
    assert attrs["jsonrpc.protocol.version"] == "2.0"
    assert attrs["jsonrpc.request.id"]
    assert server_add.status.status_code.name == "UNSET"
    assert "error.type" not in attrs
    transport_name, protocol_name = NETWORK[transport]
    assert attrs.get("network.transport") == transport_name
    assert attrs.get("network.protocol.name") == protocol_name
    if transport_name is not None:
        assert attrs["server.address"] == "127.0.0.1" and attrs["server.port"] > 0
    # A session id exactly where the transport has sessions (Streamable HTTP, 2025 era).
    assert ("mcp.session.id" in attrs) == (transport == "http" and version == V2025)
    # The client's socket address and port where the transport hands them to the connection.
    if transport in PEER_TRANSPORTS:
        assert attrs["client.address"] == "127.0.0.1" and 0 < attrs["client.port"] < 65536
    else:
        assert "client.address" not in attrs and "client.port" not in attrs
    for key in ("mcp.method.name", "gen_ai.tool.name", "network.transport", "network.protocol.name",
                "server.address", "server.port"):
        assert client_add.attributes.get(key) == attrs.get(key), key
    if version == V2025:
        # One JSON-RPC request: the client knows its id (a 2026-07-28 call may take rounds).
        assert client_add.attributes["jsonrpc.request.id"] == attrs["jsonrpc.request.id"]

    # A tool that failed while running: a result with isError, marked as an error.
    for kind in ("SERVER", "CLIENT"):
        failed = one(spans, "tools/call fails", kind)
        assert failed.attributes["error.type"] == "tool_error"
        assert failed.status.status_code.name == "ERROR"
    # A JSON-RPC error: its code as error.type and rpc.response.status_code.
    for kind in ("SERVER", "CLIENT"):
        refused = one(spans, "tools/call no-such-tool", kind)
        assert refused.attributes["error.type"] == "-32602"
        assert refused.attributes["rpc.response.status_code"] == "-32602"
        assert refused.status.status_code.name == "ERROR" and refused.status.description
    assert_child(one(spans, "tools/call no-such-tool", "SERVER"), one(spans, "tools/call no-such-tool", "CLIENT"))
    # Resource URIs stay out of the name; prompts name their target.
    read = one(spans, "resources/read", "SERVER")
    assert read.attributes["mcp.resource.uri"] == "memo://note"
    assert_child(read, one(spans, "resources/read", "CLIENT"))
    prompt = one(spans, "prompts/get greet", "SERVER")
    assert prompt.attributes["gen_ai.prompt.name"] == "greet"
    assert_child(prompt, one(spans, "prompts/get greet", "CLIENT"))
    if version == V2025:
        initialize = one(spans, "initialize", "SERVER")
        assert initialize.attributes["mcp.protocol.version"] == V2025
        # A notification from the client: a short span of its own.
        assert one(spans, "notifications/initialized", "SERVER").attributes["mcp.method.name"] == \
            "notifications/initialized"

    # Metrics: one tools/call add, on each side, with the convention's attributes.
    server_points = [p for p in otel.points("mcp.server.operation.duration")
                     if p.attributes.get("gen_ai.tool.name") == "add"]
    assert [p.count for p in server_points] == [1]
    assert server_points[0].attributes["mcp.method.name"] == "tools/call"
    assert "error.type" not in server_points[0].attributes
    failed_points = [p for p in otel.points("mcp.server.operation.duration")
                     if p.attributes.get("gen_ai.tool.name") == "fails"]
    assert [p.attributes["error.type"] for p in failed_points] == ["tool_error"]
    client_points = [p for p in otel.points("mcp.client.operation.duration")
                     if p.attributes.get("gen_ai.tool.name") == "add"]
    assert [p.count for p in client_points] == [1]
    if version == V2025:
        sessions = otel.points("mcp.server.session.duration")
        assert sum(p.count for p in sessions) == 1
        assert sum(p.count for p in otel.points("mcp.client.session.duration")) == 1


def test_a_tasks_later_requests_link_to_the_call_that_made_it(otel):
    app = make_app()

    async def main() -> str:
        async with client_of(app, "in-process", V2025) as client:
            created = await client.request("tools/call", {"name": "slow", "arguments": {},
                                                          "task": {"ttl": 60000}})
            task_id = created["task"]["taskId"]
            result = await client.request("tasks/result", {"taskId": task_id})
            return result["content"][0]["text"]

    assert asyncio.run(main()) == "done as a task"
    spans = otel.spans()
    made = one(spans, "tools/call slow", "SERVER")
    later = one(spans, "tasks/result", "SERVER")
    assert [link.context.span_id for link in later.links] == [made.context.span_id]


def test_an_input_required_retry_links_to_the_request_that_asked(otel):
    app = make_app()

    async def main() -> str:
        async with client_of(app, "in-process", V2026) as client:
            return (await client.call_tool("asks"))["content"][0]["text"]

    assert asyncio.run(main()) == "confirmed True"
    spans = [span for span in otel.spans() if span.name == "tools/call asks"]
    client_span = one(spans, "tools/call asks", "CLIENT")
    first, retry = sorted((s for s in spans if s.kind.name == "SERVER"), key=lambda s: s.start_time)
    # Both attempts are children of the client's one span; the retry links to the first.
    assert_child(first, client_span)
    assert_child(retry, client_span)
    assert [link.context.span_id for link in retry.links] == [first.context.span_id]


def test_a_gateway_continues_the_downstream_trace_upstream(otel):
    # A server whose tool calls another server with mcpfast's client, as a gateway does:
    # the upstream CLIENT span is a child of the downstream SERVER span, and the upstream
    # SERVER span a child of that.
    upstream = make_app()
    gateway = Server("gateway")

    @gateway.tool()
    async def relay(a: int, b: int) -> int:
        async with mcpfast.connect(upstream, observer=client_telemetry()) as inner:
            return (await inner.call_tool("add", {"a": a, "b": b}))["structuredContent"]["result"]

    async def main() -> int:
        async with client_of(gateway, "in-process", V2025) as client:
            return (await client.call_tool("relay", {"a": 1, "b": 2}))["structuredContent"]["result"]

    assert asyncio.run(main()) == 3
    spans = otel.spans()
    outer_client = one(spans, "tools/call relay", "CLIENT")
    outer_server = one(spans, "tools/call relay", "SERVER")
    inner_client = one(spans, "tools/call add", "CLIENT")
    inner_server = one(spans, "tools/call add", "SERVER")
    assert_child(outer_server, outer_client)
    assert inner_client.parent.span_id == outer_server.context.span_id
    assert_child(inner_server, inner_client)
    assert len({span.context.trace_id for span in (outer_client, outer_server, inner_client, inner_server)}) == 1


def test_opt_in_tool_content(otel):
    app = Server("content", middleware=[ServerTelemetry(otel.tracer_provider, capture_content=True)])

    @app.tool()
    def add(a: int, b: int) -> int:
        return a + b

    async def main() -> None:
        async with mcpfast.connect(app) as client:
            await client.call_tool("add", {"a": 4, "b": 5})

    asyncio.run(main())
    span = one(otel.spans(), "tools/call add", "SERVER")
    assert json.loads(span.attributes["gen_ai.tool.call.arguments"]) == {"a": 4, "b": 5}
    assert json.loads(span.attributes["gen_ai.tool.call.result"])["structuredContent"] == {"result": 9}
    # The Server added no second telemetry middleware beside the one given.
    assert [type(mw).__name__ for mw in app.middleware] == ["ServerTelemetry"]


def test_nothing_is_installed_without_a_provider():
    app = make_app()

    async def main() -> None:
        async with mcpfast.connect(app) as client:
            await client.call_tool("add", {"a": 1, "b": 1})

    asyncio.run(main())
    assert app.middleware == ()
    assert app.dispatch_router is app.router
    assert client_telemetry() is None


def test_switched_off(otel, monkeypatch):
    off = make_app()
    off.telemetry = False
    monkeypatch.setenv("MCPFAST_TELEMETRY", "off")
    by_env = make_app()

    async def main() -> None:
        for app in (off, by_env):
            async with mcpfast.connect(app) as client:
                await client.call_tool("add", {"a": 1, "b": 1})

    asyncio.run(main())
    assert otel.spans() == []
    assert off.middleware == () and by_env.middleware == ()


def test_stdio_server_span_is_the_child_of_the_client_span(otel, tmp_path):
    spans_file = tmp_path / "spans.jsonl"
    env = {"PYTHONPATH": str(ROOT), "TRACED_SPANS": str(spans_file)}

    async def main() -> None:
        async with mcpfast.connect([sys.executable, str(APP)], env=env,
                                   observer=client_telemetry(transport="stdio")) as client:
            await client.call_tool("add", {"a": 1, "b": 2})
            await eventually(lambda: spans_file.exists() and "tools/call add" in spans_file.read_text())

    asyncio.run(main())
    server_spans = [json.loads(line) for line in spans_file.read_text().splitlines()]
    server_add = next(span for span in server_spans if span["name"] == "tools/call add")
    client_add = one(otel.spans(), "tools/call add", "CLIENT")
    assert server_add["kind"] == "SERVER"
    assert server_add["trace_id"] == client_add.context.trace_id
    assert server_add["parent"] == client_add.context.span_id
    assert server_add["attributes"]["network.transport"] == "pipe"
    assert server_add["attributes"]["gen_ai.tool.name"] == "add"
    assert client_add.attributes["network.transport"] == "pipe"


@pytest.mark.parametrize("traceparent", ["garbage", "00-" + "0" * 32 + "-" + "0" * 16 + "-01", 12345,
                                         ["00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"] * 2,
                                         "00-" + "f" * 5000])
def test_a_malformed_trace_context_is_no_parent(otel, traceparent):
    app = make_app()

    async def main() -> dict:
        async with mcpfast.connect(app, observer=None) as client:
            return await client.call_tool("add", {"a": 1, "b": 1},
                                          meta={"traceparent": traceparent, "tracestate": "x" * 10000})

    assert asyncio.run(main())["structuredContent"] == {"result": 2}
    span = one(otel.spans(), "tools/call add", "SERVER")
    assert span.parent is None


def test_unknown_tool_names_stay_out_of_the_metrics(otel):
    app = make_app()

    async def main() -> None:
        async with mcpfast.connect(app) as client:
            for n in range(5):
                with pytest.raises(JSONRPCError):
                    await client.call_tool(f"no-such-tool-{n}")

    asyncio.run(main())
    refused = [p for p in otel.points("mcp.server.operation.duration")
               if p.attributes.get("error.type") == "-32602"]
    assert [(p.count, "gen_ai.tool.name" in p.attributes) for p in refused] == [(5, False)]
    # The spans still say what was asked for.
    assert one(otel.spans(), "tools/call no-such-tool-3", "SERVER").attributes["gen_ai.tool.name"] == \
        "no-such-tool-3"
