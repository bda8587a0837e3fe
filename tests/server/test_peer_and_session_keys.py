"""Who is calling, as the transport saw it: the client's address (``ctx.peer_address``,
``ctx.peer_port``, over TCP and WebSocket) keys the rate limiter when nobody
authenticated, and the Streamable HTTP session id (``ctx.session_id``) is in every
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
from mcpfast import Context, Server
from mcpfast.jsonrpc.errors import RATE_LIMITED
from mcpfast.server.middleware import RateLimit, RequestLogging

V2025 = "2025-11-25"


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@contextlib.asynccontextmanager
async def serving(app: Server, transport: str) -> AsyncIterator[int]:
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
        task = asyncio.ensure_future(app.serve_http("127.0.0.1", 0, ready=bound))
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
        (first, None), (second, None), (None, "127.0.0.1")]


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
