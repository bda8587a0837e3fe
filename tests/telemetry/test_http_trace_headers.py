"""The HTTP ``traceparent`` / ``tracestate`` headers of a POST as the parent of the server's
span on every HTTP leg and version (Streamable HTTP with sessions and stateless, 2025-03-26
to 2025-11-25 and 2026-07-28, legacy HTTP+SSE in each handshake version), ``params._meta``
winning over them, and nothing captured when the server records no spans. Driven through
the server's own HTTP endpoint (``Server.http_endpoint``) without sockets, and once over a
socket with mcpfast's client."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any, Optional

import pytest

import mcpfast
from mcpfast import Context, Server
from mcpfast.protocol import meta_keys
from mcpfast.transports.http import HTTPRequest, HTTPResponse

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "helpers"))
from test_spans import one, served  # noqa: E402

from endpoint_requests import answer, post  # noqa: E402
from endpoint_requests import request as rpc  # noqa: E402
from loop import until  # noqa: E402

HEADER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
HEADER_SPAN = "00f067aa0ba902b7"
TRACEPARENT = f"00-{HEADER_TRACE}-{HEADER_SPAN}-01"
TRACESTATE = "vendor=opaque"
META_TRACE = "0af7651916cd43dd8448eb211c80319c"
META_SPAN = "b7ad6b7169203331"
HANDSHAKE_VERSIONS = ["2025-03-26", "2025-06-18", "2025-11-25"]
V2026 = "2026-07-28"
META_2026 = {meta_keys.PROTOCOL_VERSION: V2026, meta_keys.CLIENT_CAPABILITIES: {}}


def make_app(telemetry: bool = True) -> Server:
    app = Server("traced-headers", telemetry=telemetry)

    @app.tool()
    def add(a: int, b: int) -> int:
        return a + b

    @app.tool()
    def channel_trace(ctx: Context) -> str:
        """What the request's reply channel holds of the POST's trace headers."""
        return json.dumps(getattr(ctx.channel, "trace_headers", None))

    return app


def call(tool: str, version: str, id: int = 1, meta: Optional[dict] = None) -> dict:
    params: dict[str, Any] = {"name": tool, "arguments": {"a": 1, "b": 2} if tool == "add" else {}}
    if version == V2026:
        meta = {**META_2026, **(meta or {})}
    if meta:
        params["_meta"] = meta
    return rpc(id, "tools/call", params)


def traced(message: dict, version: str, session: Optional[str] = None, **extra: str) -> HTTPRequest:
    headers = {"traceparent": TRACEPARENT, "tracestate": TRACESTATE, **extra}
    if version == V2026:
        headers.update({"mcp-method": "tools/call", "mcp-name": message["params"]["name"]})
    call_request = post(message, session, version=version)
    call_request.headers.update(headers)
    return call_request


async def open_session(endpoint: Any, version: str, **extra: str) -> str:
    init = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    response = await answer(endpoint.handle(traced(rpc(0, "initialize", init), version, **extra)))
    assert response.status == 200, response.body
    session = response.header("mcp-session-id")
    notified = await answer(endpoint.handle(post({"jsonrpc": "2.0", "method": "notifications/initialized"},
                                                 session, version=version)))
    assert notified.status == 202
    return session


async def streamable_call(mode: str, version: str, message: dict, app: Optional[Server] = None) -> dict:
    """One traced tools/call POST on a Streamable HTTP endpoint of ``mode`` (sessions or
    stateless); its JSON-RPC answer."""
    endpoint = (app or make_app()).http_endpoint(stateless=mode == "stateless")
    session = None
    if mode == "sessions" and version != V2026:
        session = await open_session(endpoint, version)
    response = await answer(endpoint.handle(traced(message, version, session)))
    assert response.status == 200, response.body
    endpoint.close()
    return json.loads(response.body)


async def legacy_call(message: dict, version: str, app: Optional[Server] = None) -> dict:
    """One traced tools/call POST of a legacy HTTP+SSE session; its answer (on the stream)."""
    endpoint = (app or make_app()).http_endpoint(legacy_sse=True)
    host = {"host": "127.0.0.1:8000"}
    opened = endpoint.handle(HTTPRequest("GET", "/sse", {**host, "accept": "text/event-stream"}))
    events = opened.stream
    chunks: list[bytes] = []

    async def next_data() -> dict:
        chunks.append(await asyncio.wait_for(events.__anext__(), 5))
        return next(line[6:] for line in chunks[-1].decode().splitlines() if line.startswith("data: "))

    url = await next_data()
    session_id = url.split("session_id=", 1)[1]

    def send(body: dict, **headers: str) -> None:
        sent = HTTPRequest("POST", "/messages", {**host, "content-type": "application/json", **headers},
                           json.dumps(body).encode(), query=f"session_id={session_id}")
        response = endpoint.handle(sent)
        assert isinstance(response, HTTPResponse) and response.status == 202

    send(rpc(0, "initialize", {"protocolVersion": version, "capabilities": {},
                                   "clientInfo": {"name": "t", "version": "1"}}))
    await next_data()
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send(message, traceparent=TRACEPARENT, tracestate=TRACESTATE)
    answered = json.loads(await next_data())
    opened.close(disconnected=True)
    endpoint.close()
    return answered


async def traced_call(mode: str, version: str, tool: str, meta: Optional[dict] = None,
                      app: Optional[Server] = None) -> dict:
    """One traced tools/call of ``tool`` on the leg ``mode`` (sessions, stateless,
    legacy-sse) in ``version``; its answer."""
    message = call(tool, version, meta=meta)
    if mode == "legacy-sse":
        return await legacy_call(message, version, app)
    return await streamable_call(mode, version, message, app)


def text_of(answered: dict) -> str:
    """The text of a tool's result (every version has it; structuredContent is newer)."""
    return answered["result"]["content"][0]["text"]


def header_parent(span: Any) -> None:
    assert span.parent is not None and span.parent.is_remote
    assert (span.context.trace_id, span.parent.span_id) == (int(HEADER_TRACE, 16), int(HEADER_SPAN, 16))
    assert span.context.trace_state.get("vendor") == "opaque"


LEGS = ([("sessions", v) for v in [*HANDSHAKE_VERSIONS, V2026]]
        + [("stateless", v) for v in [*HANDSHAKE_VERSIONS, V2026]]
        + [("legacy-sse", v) for v in ["2024-11-05", *HANDSHAKE_VERSIONS]])


@pytest.mark.parametrize(("mode", "version"), LEGS)
def test_the_posts_traceparent_is_the_parent_of_the_server_span(otel, mode, version):
    assert text_of(asyncio.run(traced_call(mode, version, "add"))) == "3"
    header_parent(one(otel.spans(), "tools/call add", "SERVER"))


@pytest.mark.parametrize("version", ["2025-11-25", V2026])
def test_the_first_post_of_a_stateless_server_has_its_header_parent(otel, version):
    # The telemetry is decided when the first connection is made, during that POST: its
    # headers are read after it (an initialize first, on the 2025 leg).
    async def main() -> None:
        endpoint = make_app().http_endpoint(stateless=True)
        if version != V2026:
            init = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
            first = await answer(endpoint.handle(traced(rpc(0, "initialize", init), version)))
        else:
            first = await answer(endpoint.handle(traced(call("add", version), version)))
        assert first.status == 200
        endpoint.close()

    asyncio.run(main())
    name = "tools/call add" if version == V2026 else "initialize"
    header_parent(one(otel.spans(), name, "SERVER"))


def test_the_initialize_of_a_session_has_its_header_parent(otel):
    async def main() -> None:
        endpoint = make_app().http_endpoint()
        await open_session(endpoint, "2025-11-25")
        endpoint.close()

    asyncio.run(main())
    header_parent(one(otel.spans(), "initialize", "SERVER"))


@pytest.mark.parametrize(("mode", "version"), LEGS)
def test_the_messages_meta_wins_over_the_header(otel, mode, version):
    meta = {"traceparent": f"00-{META_TRACE}-{META_SPAN}-01"}

    asyncio.run(traced_call(mode, version, "add", meta))
    span = one(otel.spans(), "tools/call add", "SERVER")
    assert (span.context.trace_id, span.parent.span_id) == (int(META_TRACE, 16), int(META_SPAN, 16))


@pytest.mark.parametrize(("mode", "version"), LEGS)
def test_only_the_two_trace_headers_reach_the_reply_channel(otel, mode, version):
    answered = asyncio.run(traced_call(mode, version, "channel_trace"))
    assert json.loads(text_of(answered)) == {
        "traceparent": TRACEPARENT, "tracestate": TRACESTATE}


@pytest.mark.parametrize("telemetry", ["switched off", "no provider"])
@pytest.mark.parametrize(("mode", "version"), LEGS)
def test_nothing_is_captured_without_spans(request, mode, version, telemetry):
    if telemetry == "switched off":
        request.getfixturevalue("otel")
    app = make_app(telemetry=telemetry != "switched off")

    answered = asyncio.run(traced_call(mode, version, "channel_trace", app=app))
    assert json.loads(text_of(answered)) is None
    assert [mw for mw in app.middleware if type(mw).__name__ == "ServerTelemetry"] == []


def test_metrics_alone_capture_nothing():
    # A telemetry middleware without a tracer (metrics only) reads no trace headers.
    from mcpfast.telemetry import PrometheusMetrics, ServerTelemetry

    app = make_app()
    app.add_middleware(ServerTelemetry(None, [PrometheusMetrics()]))
    answered = asyncio.run(traced_call("stateless", "2025-11-25", "channel_trace", app=app))
    assert json.loads(text_of(answered)) is None


def test_an_endpoint_made_after_the_first_connection_is_told_at_once(otel):
    app = make_app()

    async def main() -> None:
        async with mcpfast.connect(app):  # the first connection: telemetry decided
            pass
        endpoint = app.http_endpoint()
        assert endpoint.capture_trace_headers is True

    asyncio.run(main())


def test_over_a_socket_with_mcpfasts_client(otel):
    # The client's headers= on every POST, no client telemetry (nothing in _meta).
    async def main() -> None:
        async with served(make_app(), "http") as url, mcpfast.connect(
                url, protocol_version="2025-06-18", observer=None,
                headers={"traceparent": TRACEPARENT, "tracestate": TRACESTATE}) as client:
            await client.call_tool("add", {"a": 1, "b": 2})
            await until(lambda: any(s.name == "tools/call add" for s in otel.spans()))

    asyncio.run(main())
    header_parent(one(otel.spans(), "tools/call add", "SERVER"))
