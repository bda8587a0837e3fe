"""The edge of mcpfast's HTTP server against peers that are slow, hostile or unusual: partial
requests, clients that do not read, Upgrade / HEAD / Expect / Host, values the decoder
refuses, DNS-rebinding protection on every loopback address (issue 34). Real loopback
sockets throughout."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import socket
from typing import Any, Callable

import picows
import pytest

from endpoint_requests import answer, initialize, post
from http_wire import PING, raw_post, read_response, start, stop
from mcpfast import Context, Server
from mcpfast.transports.http import HostPolicy, HTTPRequest

BIG = 64 * 1024


def make_app() -> Server:
    app = Server("edge")

    @app.tool()
    def big(n: int, pad: str = "") -> str:
        calls.append(n)
        return "x" * n

    @app.tool()
    def echo(text: str) -> str:
        return text

    calls: list[int] = []
    app.calls = calls  # type: ignore[attr-defined]
    return app


async def eventually(predicate: Callable[[], bool], seconds: float = 20.0) -> None:
    """Wait (polling the loop) until predicate() holds; the socket work happens meanwhile."""
    deadline = asyncio.get_running_loop().time() + seconds
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, "condition not reached"
        await asyncio.sleep(0.01)


async def server_connection(port: int) -> Any:
    """The server's open HTTP connection on ``port`` (its protocol object, found by type and
    by the socket it serves: other tests leave protocols on fake transports behind)."""
    from mcpfast.transports.http.server import HTTPServerProtocol

    def serves_port(o: Any) -> bool:
        transport = getattr(o, "transport", None)
        if transport is None or not hasattr(transport, "is_reading"):
            return False
        sockname = transport.get_extra_info("sockname")
        return sockname is not None and sockname[1] == port

    found: list = []
    await eventually(lambda: bool(found.extend(o for o in gc.get_objects()
                                               if type(o) is HTTPServerProtocol and serves_port(o))
                                  or found))
    return found[0]


def stateless_post(body: str, extra: str = "") -> bytes:
    return raw_post(body, extra="MCP-Protocol-Version: 2025-11-25\r\n" + extra)


def call(n: int, name: str = "big", **arguments: Any) -> str:
    # A request as large as its answer.
    return json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                       "params": {"name": name, "arguments": arguments or {"n": BIG, "pad": "p" * BIG}}})


def small_receive_buffer() -> socket.socket:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    return sock


async def connect_slow_reader(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    sock = small_receive_buffer()
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
    return await asyncio.open_connection(sock=sock)


# -- item 1: a partial request is timed out ---------------------------------------------------


@pytest.mark.parametrize("partial", [b"P", b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10\r\n\r\n{"])
def test_a_partial_request_gets_408_and_loses_its_connection_at_the_keepalive_timeout(partial):
    async def main():
        server, port = await start(make_app(), keepalive_timeout=0.3, max_connections=1, stateless=True,
                                   json_response=True)
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(partial)
        status, headers, body = await asyncio.wait_for(read_response(reader), 10)
        assert status == 408 and headers.get("connection") == "close"
        assert json.loads(body)["error"]["message"] == (
            "Request Timeout: the request did not arrive whole within 0.3 s")
        assert await asyncio.wait_for(reader.read(), 10) == b""
        writer.close()
        # Its slot is free again: a new client is served.
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(stateless_post(PING))
        assert (await asyncio.wait_for(read_response(reader), 10))[0] == 200
        writer.close()
        await stop(server)

    asyncio.run(main())


# -- item 2: a peer that does not read -------------------------------------------------------


def test_pipelined_requests_whose_answers_are_not_read_stop_being_read_and_all_come_later():
    async def main():
        app = make_app()
        server, port = await start(app, stateless=True, json_response=True)
        reader, writer = await connect_slow_reader(port)
        total = 400  # 400 answers of 64 KiB: 25 MiB owed (and as much asked: more than the
        # kernel's buffers hold, so that a server that stops reading is seen)
        writer.write(b"".join(stateless_post(call(n)) for n in range(total)))
        # The server stops reading long before it has answered everything: what it holds
        # for the client stays near its high-water mark (64 KiB) plus one answer.
        connection = await server_connection(port)
        await eventually(lambda: not connection.transport.is_reading())
        assert len(app.calls) < total
        assert connection.transport.get_write_buffer_size() < 4 * BIG
        # Read, and every answer comes, in order.
        for n in range(total):
            status, _, body = await asyncio.wait_for(read_response(reader), 20)
            assert status == 200 and json.loads(body)["id"] == n
        writer.close()
        await stop(server)

    asyncio.run(main())


def test_a_client_that_reads_none_of_its_pipelined_answers_is_dropped_at_the_keepalive_timeout(caplog):
    async def main():
        app = make_app()
        server, port = await start(app, stateless=True, json_response=True, keepalive_timeout=0.5)
        reader, writer = await connect_slow_reader(port)
        writer.write(b"".join(stateless_post(call(n)) for n in range(400)))
        await eventually(lambda: "read none of its answers" in caplog.text)
        writer.close()
        await stop(server)

    with caplog.at_level(logging.WARNING, "mcpfast.transports.http"):
        asyncio.run(main())


def test_a_legacy_sse_stream_never_read_ends_at_max_stream_buffer_with_its_session(caplog):
    async def main():
        app = make_app()
        server, port = await start(app, legacy_sse=True, max_stream_buffer=256 * 1024,
                                   keepalive_timeout=1)
        reader, writer = await connect_slow_reader(port)
        writer.write(b"GET /sse HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
        await read_response_head(reader)
        line = b""
        while not line.startswith(b"data: /messages"):
            line = await reader.readline()
        target = line[6:].strip().decode()
        poster_reader, poster = await asyncio.open_connection("127.0.0.1", port)

        async def send(message: str) -> int:
            data = message.encode()
            poster.write(f"POST {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                         f"Content-Length: {len(data)}\r\n\r\n".encode() + data)
            return (await read_response(poster_reader))[0]

        assert await send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2024-11-05", "capabilities": {},
            "clientInfo": {"name": "old", "version": "1"}}})) == 202
        assert await send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})) == 202
        # The stream's client reads nothing: its answers pile up to the limit (then they are
        # dropped, with a warning), and once it has read nothing for keepalive_timeout the
        # connection is dropped, which ends the session: later posts find none.
        statuses = []
        for n in range(1, 100_000):
            statuses.append(await send(call(n)))
            if statuses[-1] == 404:
                break
        assert statuses[-1] == 404 and statuses[0] == 202
        assert "over 262144 bytes behind (max_stream_buffer)" in caplog.text
        assert "read nothing of a streamed answer for 1 s" in caplog.text
        poster.close()
        writer.close()
        await stop(server)

    with caplog.at_level(logging.WARNING, "mcpfast.transports.http"):
        asyncio.run(main())


async def read_response_head(reader: asyncio.StreamReader) -> int:
    status = int((await reader.readline()).split()[1])
    while (await reader.readline()).strip():
        pass
    return status


def test_an_sse_stream_over_its_buffer_drops_what_it_holds_and_ends_broken():
    from mcpfast.transports.http.sse_stream import SSEStream, StreamOverflow

    async def main():
        stream = SSEStream("s", None, 60.0, max_buffer=1000)
        stream.attach()
        events = stream.events()
        stream.push(b'{"n":1}')
        assert b'{"n":1}' in await events.__anext__()
        for _ in range(100):
            stream.push(b"x" * 50)
        assert stream.overflowed and not stream._queue
        with pytest.raises(StreamOverflow, match="fell over 1000 bytes behind"):
            await events.__anext__()

    asyncio.run(main())


def test_a_websocket_peer_that_does_not_read_stops_being_read():
    async def main():
        app = make_app()
        ready: asyncio.Future = asyncio.get_running_loop().create_future()
        server = asyncio.create_task(app.serve_websocket("127.0.0.1", 0, ready=lambda h, p: ready.set_result(p)))
        port = await ready
        reader, writer = await connect_slow_reader(port)
        key = "dGhlIHNhbXBsZSBub25jZQ=="
        writer.write(f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                     f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                     f"Sec-WebSocket-Protocol: mcp\r\n\r\n".encode())
        assert await read_response_head(reader) == 101
        meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}}
        total = 400
        for n in range(total):
            message = json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                                  "params": {"name": "big", "arguments": {"n": BIG, "pad": "p" * BIG},
                                             "_meta": meta}})
            writer.write(ws_text_frame(message.encode()))
        # The server's socket stops being read, with most requests unanswered.
        found: list = []
        await eventually(lambda: bool(found.extend(
            o for o in gc.get_objects() if type(o) is picows.WSTransport and not o.is_client_side) or found))
        await eventually(lambda: not found[0].underlying_transport.is_reading())
        assert len(app.calls) < total
        # (Bounded by the high-water mark plus the answers to one read's requests: the
        # 25 MiB owed are not all queued.)
        assert found[0].underlying_transport.get_write_buffer_size() < 4 * 1024 * 1024
        writer.transport.abort()  # (close() would wait to send what the server does not read)
        server.cancel()
        await asyncio.gather(server, return_exceptions=True)

    asyncio.run(main())


def test_a_websocket_send_past_max_write_buffer_drops_the_socket(caplog):
    async def main():
        app = Server("flood")

        @app.tool()
        async def flood(ctx: Context) -> str:
            for _ in range(200):
                await ctx.info("y" * BIG)
            return "done"

        ready: asyncio.Future = asyncio.get_running_loop().create_future()
        server = asyncio.create_task(app.serve_websocket(
            "127.0.0.1", 0, ready=lambda h, p: ready.set_result(p), max_write_buffer=BIG * 4))
        port = await ready
        reader, writer = await connect_slow_reader(port)
        writer.write(f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                     f"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                     f"Sec-WebSocket-Version: 13\r\n\r\n".encode())
        assert await read_response_head(reader) == 101
        meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}, "io.modelcontextprotocol/logLevel": "info"}
        writer.write(ws_text_frame(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "flood", "arguments": {}, "_meta": meta}}).encode()))
        await eventually(lambda: "max_write_buffer=262144" in caplog.text)
        writer.close()
        server.cancel()
        await asyncio.gather(server, return_exceptions=True)

    with caplog.at_level(logging.WARNING, "mcpfast.transports.websocket"):
        asyncio.run(main())


def ws_text_frame(payload: bytes) -> bytes:
    """One masked text frame, as a client sends it (RFC 6455 5.2). The masking key is zero
    (any key is valid): the payload goes as it is, without a Python loop over its bytes."""
    mask = bytes(4)
    size = len(payload)
    head = bytes([0x81])
    if size < 126:
        head += bytes([0x80 | size])
    elif size < 65536:
        head += bytes([0x80 | 126]) + size.to_bytes(2, "big")
    else:
        head += bytes([0x80 | 127]) + size.to_bytes(8, "big")
    return head + mask + payload


# -- item 5: HTTP rules ------------------------------------------------------------------------


def test_head_gets_the_head_of_its_answer_without_content_and_keep_alive_goes_on():
    async def main():
        server, port = await start(make_app(), stateless=True, json_response=True)
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"HEAD /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" + stateless_post(PING))
        status_line = await reader.readline()
        head = {}
        while (line := (await reader.readline()).decode().strip()):
            name, _, value = line.partition(":")
            head[name.lower()] = value.strip()
        assert b" 405 " in status_line and int(head["content-length"]) > 0
        # The next bytes are the next answer, not the 405's body.
        status, _, body = await asyncio.wait_for(read_response(reader), 10)
        assert (status, json.loads(body)["id"]) == (200, 7)
        writer.close()
        await stop(server)

    asyncio.run(main())


def test_expect_100_continue_gets_its_interim_response_before_the_body_is_sent():
    async def main():
        server, port = await start(make_app(), stateless=True, json_response=True)
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        request = stateless_post(PING, extra="Expect: 100-continue\r\n")
        head, body = request.split(b"\r\n\r\n", 1)
        writer.write(head + b"\r\n\r\n")
        assert await asyncio.wait_for(reader.readline(), 10) == b"HTTP/1.1 100 Continue\r\n"
        assert await reader.readline() == b"\r\n"
        writer.write(body)
        status, _, answer_body = await asyncio.wait_for(read_response(reader), 10)
        assert (status, json.loads(answer_body)["id"]) == (200, 7)
        writer.close()
        await stop(server)

    asyncio.run(main())


@pytest.mark.parametrize("hosts, reason", [
    ("", "no Host header"),
    ("Host: 127.0.0.1\r\nHost: 127.0.0.1\r\n", "more than one Host header"),
])
def test_a_missing_or_repeated_host_gets_400(hosts, reason):
    async def main():
        server, port = await start(make_app(), stateless=True, json_response=True)
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        data = PING.encode()
        writer.write(f"POST /mcp HTTP/1.1\r\n{hosts}Content-Type: application/json\r\n"
                     f"Accept: application/json\r\nContent-Length: {len(data)}\r\n\r\n".encode() + data)
        status, _, body = await asyncio.wait_for(read_response(reader), 10)
        assert status == 400
        assert json.loads(body)["error"]["message"] == f"Bad Request: malformed HTTP ({reason})"
        writer.close()
        await stop(server)

    asyncio.run(main())


# -- item 6: values the decoder refuses --------------------------------------------------------

REFUSED = [b'{"n": 18446744073709551616}', b'{"n": 1e999}', b'{"n": "\\ud800"}']


@pytest.mark.parametrize("value", REFUSED)
def test_a_post_holding_a_value_the_decoder_refuses_gets_invalid_params_with_its_id(value):
    async def main():
        endpoint = make_app().http_endpoint()
        session = await initialize(endpoint)
        body = b'{"jsonrpc": "2.0", "id": 41, "method": "tools/call", "params": {"name": "echo", ' \
               b'"arguments": ' + value + b"}}"
        response = await answer(endpoint.handle(post(body, session)))
        error = json.loads(response.body)
        assert response.status == 400 and error["id"] == 41 and error["error"]["code"] == -32602
        assert error["error"]["data"]["method"] == "tools/call"
        notification = await answer(endpoint.handle(post(
            b'{"jsonrpc": "2.0", "method": "notifications/x", "params": ' + value + b"}", session)))
        assert notification.status == 202
        plain = await answer(endpoint.handle(post(b"{not json", session)))
        assert plain.status == 400 and json.loads(plain.body)["error"]["code"] == -32700
        endpoint.close()

    asyncio.run(main())


@pytest.mark.parametrize("value", REFUSED)
def test_a_legacy_message_holding_a_value_the_decoder_refuses_is_answered_on_its_stream(value):
    async def main():
        endpoint = make_app().http_endpoint(legacy_sse=True)
        opened = endpoint.handle(HTTPRequest("GET", "/sse", {"host": "127.0.0.1:8000"}, b""))
        events = opened.stream
        first = (await events.__anext__()).decode()
        session_id = first.split("session_id=")[1].split()[0]

        def send(body: bytes) -> int:
            return endpoint.handle(HTTPRequest(
                "POST", "/messages", {"host": "127.0.0.1:8000", "content-type": "application/json"},
                body, query=f"session_id={session_id}")).status

        assert send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2024-11-05", "capabilities": {},
            "clientInfo": {"name": "old", "version": "1"}}}).encode()) == 202
        await events.__anext__()
        assert send(b'{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": ' + value + b"}") == 202
        chunk = (await asyncio.wait_for(events.__anext__(), 5)).decode()
        error = json.loads(chunk.split("data: ", 1)[1])
        assert error["id"] == 9 and error["error"]["code"] == -32602
        opened.close(True)
        endpoint.close()

    asyncio.run(main())


# -- item 7: DNS-rebinding protection on all of 127.0.0.0/8 ---------------------------------------


@pytest.mark.parametrize("bound", ["127.0.0.2", "127.1.2.3", "::ffff:127.0.0.2"])
def test_dns_rebinding_protection_is_on_for_every_loopback_address(bound):
    policy = HostPolicy.for_bind(bound)
    assert policy.enabled
    assert policy.check("evil.example", None)[0] == 421
    assert policy.check("127.0.0.1:8000", "http://evil.example")[0] == 403
    name = f"[{bound}]" if ":" in bound else bound
    assert policy.check(f"{name}:8000", None) is None
    assert policy.check("localhost:8000", f"http://{name}:8000") is None
    assert not HostPolicy.for_bind("192.0.2.1").enabled


def test_a_server_bound_to_127_0_0_2_refuses_a_rebound_host():
    async def main():
        bound = asyncio.get_running_loop().create_future()
        task = asyncio.ensure_future(make_app().serve_http(
            "127.0.0.2", 0, ready=lambda h, p: bound.set_result(p), stateless=True, json_response=True))
        port = await bound
        reader, writer = await asyncio.open_connection("127.0.0.2", port)
        data = PING.encode()
        writer.write(b"POST /mcp HTTP/1.1\r\nHost: evil.example\r\nOrigin: http://evil.example\r\n"
                     b"Content-Type: application/json\r\nAccept: application/json\r\n"
                     b"MCP-Protocol-Version: 2025-11-25\r\nContent-Length: %d\r\n\r\n" % len(data) + data)
        assert (await asyncio.wait_for(read_response(reader), 10))[0] == 421
        writer.close()
        await stop(task)

    asyncio.run(main())

