"""Who is calling, as the transport saw it: the client's address (``ctx.peer_address``,
``ctx.peer_port``, over TCP, WebSocket, Streamable HTTP and legacy HTTP+SSE) keys the
rate limiter when nobody authenticated, and the Streamable HTTP session id (``ctx.session_id``) is in every
request-log record."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
from typing import Any, AsyncIterator

import pytest

import mcpfast
from loop import eventually
from mcpfast import Context, Server
from mcpfast.jsonrpc.errors import RATE_LIMITED
from mcpfast.server.middleware import RateLimit, RequestLogging

V2025 = "2025-11-25"
V2026 = "2026-07-28"


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@contextlib.asynccontextmanager
async def serving(app: Server, transport: str, **options: Any) -> AsyncIterator[int]:
    """``app`` served on 127.0.0.1 (a client may connect from any of 127.0.0.0/8); yields the port."""
    loop = asyncio.get_running_loop()
    ready: asyncio.Future = loop.create_future()

    def bound(host: str, port: int) -> None:
        ready.set_result(port)

    if transport == "tcp":
        task = asyncio.ensure_future(app.serve_tcp("127.0.0.1", 0, ready=bound))
    elif transport == "websocket":
        task = asyncio.ensure_future(app.serve_websocket("127.0.0.1", 0, ready=bound))
    else:
        task = asyncio.ensure_future(app.serve_http("127.0.0.1", 0, ready=bound, **options))
    try:
        yield await asyncio.wait_for(ready, 30)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


class LineClient:
    """A bare newline-framed JSON-RPC client over TCP from a chosen source address."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer, self.next_id = reader, writer, 0

    @classmethod
    async def open(cls, port: int, source: str) -> LineClient:
        reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
        client = cls(reader, writer)
        await client.request("initialize", {"protocolVersion": V2025, "capabilities": {},
                                            "clientInfo": {"name": "line", "version": "1"}})
        client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return client

    def send(self, message: dict) -> None:
        self.writer.write(json.dumps(message).encode() + b"\n")

    async def request(self, method: str, params: Any = None) -> dict:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}})
        while True:
            message = json.loads(await asyncio.wait_for(self.reader.readline(), 10))
            if message.get("id") == self.next_id:
                return message

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(ConnectionError):
            await self.writer.wait_closed()


def test_without_a_subject_the_rate_limit_is_keyed_by_the_client_address():
    clock = FakeClock()
    limit = RateLimit(rate=1, burst=1, clock=clock)
    app = Server("by-address", middleware=[limit])

    @app.tool()
    def whoami(ctx: Context) -> str:
        return json.dumps([ctx.peer_address, *limit.default_key(ctx)])

    async def main() -> None:
        async with serving(app, "tcp") as port:
            first = await LineClient.open(port, "127.0.0.1")
            answer = await first.request("tools/call", {"name": "whoami"})
            assert json.loads(answer["result"]["content"][0]["text"]) == [
                "127.0.0.1", "address:127.0.0.1", "whoami"]
            # A new connection from the same address shares the bucket: refused.
            again = await LineClient.open(port, "127.0.0.1")
            refused = await again.request("tools/call", {"name": "whoami"})
            assert refused["error"]["code"] == RATE_LIMITED
            # Another address has a bucket of its own.
            other = await LineClient.open(port, "127.0.0.2")
            answer = await other.request("tools/call", {"name": "whoami"})
            assert json.loads(answer["result"]["content"][0]["text"]) == [
                "127.0.0.2", "address:127.0.0.2", "whoami"]
            for client in (first, again, other):
                await client.close()
        # In process there is no address: every unauthenticated caller is "anonymous".
        async with mcpfast.connect(app) as client:
            clock.now += 10
            result = await client.call_tool("whoami")
            assert json.loads(result["content"][0]["text"]) == [None, "anonymous", "whoami"]

    asyncio.run(main())


def test_request_log_records_carry_the_http_session_id_and_the_peer(caplog):
    app = Server("logged", middleware=[RequestLogging()])

    @app.tool()
    def session_of(ctx: Context) -> str:
        return str(ctx.session_id)

    async def main() -> list[str]:
        seen = []
        async with serving(app, "http") as port:
            for _ in range(2):
                async with mcpfast.connect(f"http://127.0.0.1:{port}/mcp",
                                           protocol_version=V2025) as client:
                    seen.append((await client.call_tool("session_of"))["content"][0]["text"])
        async with serving(app, "tcp") as port:
            async with mcpfast.connect(f"tcp://127.0.0.1:{port}", protocol_version=V2025) as client:
                seen.append((await client.call_tool("session_of"))["content"][0]["text"])
        return seen

    with caplog.at_level(logging.INFO, logger="mcpfast.requests"):
        seen = asyncio.run(main())
    first, second, tcp = seen
    assert re.fullmatch(r"[0-9a-f]{32}", first) and re.fullmatch(r"[0-9a-f]{32}", second)
    assert first != second and tcp == "None"
    records = [r for r in caplog.records
               if r.name == "mcpfast.requests" and r.mcp_method == "tools/call"]
    assert [(r.mcp_session_id, r.mcp_peer) for r in records] == [
        (first, "127.0.0.1"), (second, "127.0.0.1"), (None, "127.0.0.1")]


@pytest.mark.parametrize("peer, expected", [
    (("10.1.2.3", 5000), "10.1.2.3"),
    (("::1", 5000, 0, 0), "::1"),
    ("/run/mcp.sock", "/run/mcp.sock"),
    ("", None),
    (None, None),
])
def test_peer_address_drops_the_port_and_knows_none_without_a_socket(peer, expected):
    from mcpfast.transports.stream import peer_address

    class Transport(asyncio.BaseTransport):
        def get_extra_info(self, name: str, default: Any = None) -> Any:
            return peer if name == "peername" else default

    assert peer_address(Transport()) == expected
    assert peer_address(None) is None


def test_the_tcp_peer_port_is_the_clients_own_port():
    app = Server("ports")

    @app.tool()
    def whoami(ctx: Context) -> str:
        return json.dumps([ctx.peer_address, ctx.peer_port])

    async def main() -> None:
        async with serving(app, "tcp") as port:
            client = await LineClient.open(port, "127.0.0.3")
            own_port = client.writer.get_extra_info("sockname")[1]
            answer = await client.request("tools/call", {"name": "whoami"})
            assert json.loads(answer["result"]["content"][0]["text"]) == ["127.0.0.3", own_port]
            await client.close()

    asyncio.run(main())


def test_over_websocket_the_rate_limit_is_keyed_by_the_client_address():
    clock = FakeClock()
    limit = RateLimit(rate=1, burst=1, clock=clock)
    app = Server("ws-address", middleware=[limit])

    @app.tool()
    def whoami(ctx: Context) -> str:
        return json.dumps([ctx.peer_address, ctx.peer_port, *limit.default_key(ctx)])

    async def main() -> None:
        async with serving(app, "websocket") as port:
            url = f"ws://127.0.0.1:{port}/mcp"
            async with mcpfast.connect(url) as client:
                result = await client.call_tool("whoami")
                address, peer_port, key, name = json.loads(result["content"][0]["text"])
                assert (address, key, name) == ("127.0.0.1", "address:127.0.0.1", "whoami")
                assert isinstance(peer_port, int) and 0 < peer_port < 65536 and peer_port != port
            # Another WebSocket from the same address shares the bucket: refused.
            async with mcpfast.connect(url) as client:
                with pytest.raises(mcpfast.JSONRPCError) as refused:
                    await client.call_tool("whoami")
                assert refused.value.code == RATE_LIMITED

    asyncio.run(main())


@pytest.mark.parametrize("mode", ["session", "stateless-endpoint", "2026"])
def test_over_streamable_http_the_rate_limit_is_keyed_by_the_client_address(mode):
    clock = FakeClock()
    limit = RateLimit(rate=1, burst=1, clock=clock)
    app = Server("http-address", middleware=[limit])

    @app.tool()
    def whoami(ctx: Context) -> str:
        return json.dumps([ctx.peer_address, ctx.peer_port, *limit.default_key(ctx)])

    version = V2026 if mode == "2026" else V2025
    options = {"stateless": True} if mode == "stateless-endpoint" else {}

    async def main() -> None:
        async with serving(app, "http", **options) as port:
            url = f"http://127.0.0.1:{port}/mcp"
            async with mcpfast.connect(url, protocol_version=version) as client:
                result = await client.call_tool("whoami")
                address, peer_port, key, name = json.loads(result["content"][0]["text"])
                assert (address, key, name) == ("127.0.0.1", "address:127.0.0.1", "whoami")
                assert isinstance(peer_port, int) and 0 < peer_port < 65536 and peer_port != port
            # Another client from the same address shares the bucket: refused.
            async with mcpfast.connect(url, protocol_version=version) as client:
                with pytest.raises(mcpfast.JSONRPCError) as refused:
                    await client.call_tool("whoami")
                assert refused.value.code == RATE_LIMITED

    asyncio.run(main())


def test_a_raw_http_client_from_another_address_is_told_apart():
    # Stateless requests from two source addresses on one keep-alive pool: each request's
    # connection is told its own client (the leased connections are reused between them).
    app = Server("raw-http")

    @app.tool()
    def whoami(ctx: Context) -> str:
        return f"{ctx.peer_address} {ctx.peer_port}"

    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "whoami", "arguments": {}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": V2026,
            "io.modelcontextprotocol/clientCapabilities": {}}}}).encode()

    async def ask(port: int, source: str) -> tuple[str, int]:
        reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
        own_port = writer.get_extra_info("sockname")[1]
        writer.write(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Accept: application/json, text/event-stream\r\n"
                     b"MCP-Protocol-Version: " + V2026.encode() + b"\r\n"
                     b"Mcp-Method: tools/call\r\nMcp-Name: whoami\r\n"
                     b"Content-Length: " + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body)
        response = await asyncio.wait_for(reader.read(), 10)
        writer.close()
        head, _, payload = response.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200"), head
        text = json.loads(payload)["result"]["content"][0]["text"]
        return text, own_port

    async def main() -> None:
        async with serving(app, "http") as port:
            for source in ("127.0.0.4", "127.0.0.5", "127.0.0.4"):
                text, own_port = await ask(port, source)
                assert text == f"{source} {own_port}"

    asyncio.run(main())


def test_the_asgi_app_tells_the_connection_the_scopes_client():
    uvicorn = pytest.importorskip("uvicorn", reason="the ASGI test runs the app under uvicorn")
    app = Server("asgi-address")

    @app.tool()
    def whoami(ctx: Context) -> str:
        return json.dumps([ctx.peer_address, ctx.peer_port])

    async def main() -> None:
        config = uvicorn.Config(app.asgi_app(), host="127.0.0.1", port=0, log_level="error", lifespan="on")
        server = uvicorn.Server(config)
        task = asyncio.ensure_future(server.serve())
        try:
            await eventually(lambda: server.started or task.done())
            port = server.servers[0].sockets[0].getsockname()[1]
            for version in (V2025, V2026):
                async with mcpfast.connect(f"http://127.0.0.1:{port}/mcp", protocol_version=version) as client:
                    address, peer_port = json.loads((await client.call_tool("whoami"))["content"][0]["text"])
                    assert address == "127.0.0.1" and isinstance(peer_port, int) and peer_port != port
        finally:
            server.should_exit = True
            await task

    asyncio.run(main())


def test_over_legacy_sse_the_session_keeps_the_address_of_its_client():
    app = Server("sse-address")

    @app.tool()
    def whoami(ctx: Context) -> str:
        return json.dumps([ctx.peer_address, ctx.peer_port])

    async def main() -> None:
        async with serving(app, "http", legacy_sse=True) as port:
            async with mcpfast.connect(f"http://127.0.0.1:{port}/sse",
                                       protocol_version="2024-11-05") as client:
                address, peer_port = json.loads((await client.call_tool("whoami"))["content"][0]["text"])
                assert address == "127.0.0.1"
                assert isinstance(peer_port, int) and 0 < peer_port < 65536 and peer_port != port

    asyncio.run(main())
