"""mcpfast's HTTP/1.1 server and the ASGI app (under uvicorn) over real loopback sockets."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from http_wire import PING, raw_post, read_response, start, stop
from mcpfast import Server

INIT = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})


def make_app(started: Any = None, cancelled: Any = None) -> Server:
    app = Server("sockets")

    @app.tool()
    def echo(text: str) -> str:
        return text

    @app.tool()
    async def hang() -> str:
        if started is not None:
            started.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            if cancelled is not None:
                cancelled.append(True)
            raise
        return "never"

    return app


INITIALIZED = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})


async def handshake(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> str:
    """initialize + notifications/initialized on one connection; returns the session id."""
    writer.write(raw_post(INIT))
    status, headers, _ = await read_response(reader)
    assert status == 200
    session = headers["mcp-session-id"]
    writer.write(raw_post(INITIALIZED, session))
    status, _, body = await read_response(reader)
    assert (status, body) == (202, b"")
    return session


def test_keep_alive_and_pipelined_requests_are_answered_in_order():
    async def main():
        server, port = await start(make_app())
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        session = await handshake(reader, writer)
        calls = [json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                             "params": {"name": "echo", "arguments": {"text": f"n{n}"}}}) for n in range(1, 6)]
        # Five requests in one write: pipelined on one connection.
        writer.write(b"".join(raw_post(call, session) for call in calls))
        answers = [await read_response(reader) for _ in calls]
        assert [json.loads(body)["result"]["content"][0]["text"] for _, _, body in answers] == [
            f"n{n}" for n in range(1, 6)]
        writer.close()
        await stop(server)

    asyncio.run(main())


def test_oversize_body_is_413_from_content_length_and_malformed_http_is_400():
    async def main():
        server, port = await start(make_app(), max_body_size=1000)
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(raw_post(json.dumps({"pad": "x" * 5000})))
        status, _, body = await read_response(reader)
        assert status == 413 and b"over 1000 bytes" in body
        writer.close()
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"NOT HTTP AT ALL\r\n\r\n")
        status, headers, body = await read_response(reader)
        assert status == 400 and headers.get("connection") == "close"
        assert await reader.read() == b""  # and the connection is closed
        writer.close()
        await stop(server)

    asyncio.run(main())


def test_a_client_that_disconnects_cancels_its_request():
    async def main():
        started, cancelled = asyncio.Event(), []
        server, port = await start(make_app(started, cancelled))
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        session = await handshake(reader, writer)
        writer.write(raw_post(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                          "params": {"name": "hang", "arguments": {}}}), session))
        await started.wait()
        writer.close()
        for _ in range(100):
            if cancelled:
                break
            await asyncio.sleep(0.01)
        assert cancelled == [True]
        await stop(server)

    asyncio.run(main())


def test_asgi_app_under_uvicorn():
    uvicorn = pytest.importorskip("uvicorn")

    async def main():
        app = make_app()
        config = uvicorn.Config(app.asgi_app(), host="127.0.0.1", port=0, log_level="error",
                                lifespan="on")
        server = uvicorn.Server(config)
        task = asyncio.ensure_future(server.serve())
        while not server.started:
            await asyncio.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        session = await handshake(reader, writer)
        writer.write(raw_post(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                          "params": {"name": "echo", "arguments": {"text": "asgi"}}}), session))
        status, _, body = await read_response(reader)
        assert json.loads(body)["result"]["content"][0]["text"] == "asgi"
        writer.write(raw_post("{broken", session))
        status, _, body = await read_response(reader)
        assert status == 400 and json.loads(body)["error"]["code"] == -32700
        writer.close()
        server.should_exit = True
        await task

    asyncio.run(main())


def test_connections_beyond_the_limit_get_503_and_are_closed():
    async def main():
        server, port = await start(make_app(), max_connections=2)
        first = await asyncio.open_connection("127.0.0.1", port)
        second = await asyncio.open_connection("127.0.0.1", port)
        await asyncio.sleep(0.05)
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        status, headers, body = await read_response(reader)
        assert status == 503 and b"2 connections are open" in body
        assert await reader.read() == b""
        # The two admitted connections still work.
        await handshake(*first)
        for _, w in (first, second, (reader, writer)):
            w.close()
        await stop(server)

    asyncio.run(main())


async def asgi_call(app, scope, messages):
    """What an ASGI app sends for one scope fed ``messages`` (then a disconnect)."""
    sent = []
    queue = list(messages)

    async def receive():
        return queue.pop(0) if queue else {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    await app(scope, receive, send)
    return sent


def test_the_asgi_app_starts_what_the_server_shares_and_refuses_when_it_cannot():
    from mcpfast.scaleout.redis_connection import RedisUnavailable
    from mcpfast.transports.http import ASGIApp

    async def main():
        started = []

        async def good():
            started.append(True)

        server = Server("asgi-startup")
        app = ASGIApp(server.http_endpoint(), on_startup=good)
        lifespan = await asgi_call(app, {"type": "lifespan"}, [{"type": "lifespan.startup"},
                                                          {"type": "lifespan.shutdown"}])
        assert [m["type"] for m in lifespan] == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
        assert started == [True]

        async def bad():
            raise RedisUnavailable("cannot reach Redis at redis://127.0.0.1:1/0: refused")

        failing = ASGIApp(server.http_endpoint(), on_startup=bad)
        lifespan = await asgi_call(failing, {"type": "lifespan"}, [{"type": "lifespan.startup"}])
        assert lifespan[0]["type"] == "lifespan.startup.failed" and "cannot reach Redis" in lifespan[0]["message"]
        # Without lifespan events (a Mount), the first request starts it -- and is refused when
        # that fails, as every later one.
        unmounted = ASGIApp(server.http_endpoint(), on_startup=bad)
        scope = {"type": "http", "method": "POST", "path": "/mcp", "query_string": b"",
                 "headers": [(b"host", b"127.0.0.1")]}
        for _ in range(2):
            sent = await asgi_call(unmounted, scope, [{"type": "http.request", "body": b"{}", "more_body": False}])
            assert sent[0]["status"] == 503
            assert (b"content-type", b"application/json") in sent[0]["headers"]
            assert b"cannot reach Redis" in b"".join(m.get("body", b"") for m in sent[1:])

    asyncio.run(main())


def test_the_asgi_app_refuses_a_body_over_the_limit_with_413_and_a_json_rpc_error():
    from mcpfast.transports.http import ASGIApp

    async def main():
        app = ASGIApp(Server("asgi-limit").http_endpoint(max_body_size=100))
        headers = [(b"host", b"127.0.0.1"), (b"content-type", b"application/json")]
        scope = {"type": "http", "method": "POST", "path": "/mcp", "query_string": b"", "headers": headers}
        by_length = {**scope, "headers": headers + [(b"content-length", b"5000")]}
        # Refused from Content-Length (nothing read), and from the bytes read when it is absent.
        for asked, messages in ((by_length, []),
                                (scope, [{"type": "http.request", "body": b"x" * 60, "more_body": True},
                                         {"type": "http.request", "body": b"x" * 60, "more_body": False}])):
            sent = await asgi_call(app, asked, messages)
            assert sent[0]["status"] == 413
            assert (b"content-type", b"application/json") in sent[0]["headers"]
            body = json.loads(b"".join(m.get("body", b"") for m in sent[1:]))
            assert body["error"]["code"] == -32600 and "over 100 bytes" in body["error"]["message"]
            assert body["id"] is None

    asyncio.run(main())


def test_an_idle_keep_alive_connection_closes_after_the_timeout_counted_from_its_last_answer():
    async def main():
        task, port = await start(make_app(), keepalive_timeout=0.4)
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        session = await handshake(reader, writer)
        # Requests keep it open past the first timeout: each answer moves the deadline.
        for _ in range(4):
            await asyncio.sleep(0.2)
            writer.write(raw_post(json.dumps({"jsonrpc": "2.0", "id": 5, "method": "ping"}), session))
            status, _, _ = await read_response(reader)
            assert status == 200
        # Then idle: closed once the timeout has passed since the last answer.
        started = asyncio.get_running_loop().time()
        assert await asyncio.wait_for(reader.read(), 5) == b""
        assert asyncio.get_running_loop().time() - started >= 0.3
        writer.close()
        await stop(task)

    asyncio.run(main())


async def exchange(port: int, data: bytes, answers: int) -> tuple[list[tuple[int, dict[str, str], bytes]], bytes]:
    """Write data on a fresh connection; the first ``answers`` responses and what follows."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    got = [await read_response(reader) for _ in range(answers)]
    rest = await asyncio.wait_for(reader.read(), 5)
    writer.close()
    return got, rest




def test_requests_read_before_a_parse_error_are_answered_then_400_closes_the_connection():
    async def main():
        server, port = await start(make_app(), stateless=True, json_response=True)
        got, rest = await exchange(port, raw_post(PING, extra="MCP-Protocol-Version: 2025-11-25\r\n")
                                   + b"NOT HTTP\r\n\r\n", 2)
        assert got[0][0] == 200 and json.loads(got[0][2])["id"] == 7
        assert got[1][0] == 400 and got[1][1].get("connection") == "close"
        assert json.loads(got[1][2])["error"]["message"] == (
            "Bad Request: malformed HTTP (Invalid method encountered)")
        assert rest == b""
        await stop(server)

    asyncio.run(main())


@pytest.mark.parametrize("data, message", [
    (b"GET /mcp HTTP/1.1\r\nHost: h\r\nX-Big: " + b"x" * 70000 + b"\r\n\r\n",
     "Bad Request: malformed HTTP (User callback error)"),
    (b"GET /mcp HTTP/1.1\r\nX-Big: " + b"x" * 70000 + b"\r\nHost: h\r\n\r\n",
     "Bad Request: malformed HTTP (`on_header_field` callback error)"),
    (b"POST /mcp HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
     "Bad Request: malformed HTTP (Duplicate Content-Length)"),
])
def test_refused_heads_get_400_with_their_reason(data, message):
    async def main():
        server, port = await start(make_app())
        got, rest = await exchange(port, data, 1)
        assert got[0][0] == 400 and json.loads(got[0][2])["error"]["message"] == message
        assert rest == b""
        await stop(server)

    asyncio.run(main())


def test_an_upgrade_header_is_ignored_the_request_answered_once_and_the_connection_goes_on():
    async def main():
        server, port = await start(make_app(), stateless=True, json_response=True)
        # curl --http2 on a plain http:// URL: an h2c upgrade offer with a body. Served as
        # HTTP/1.1 (RFC 9110 7.8), body included, one answer; then the next request.
        upgrade = ("Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
                   "HTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\nMCP-Protocol-Version: 2025-11-25\r\n")
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(raw_post(PING, extra=upgrade) + raw_post(PING.replace("7", "8"), extra=upgrade))
        first, second = await read_response(reader), await read_response(reader)
        assert (first[0], json.loads(first[2])) == (200, {"jsonrpc": "2.0", "id": 7, "result": {}})
        assert (second[0], json.loads(second[2])["id"]) == (200, 8)
        writer.close()
        await stop(server)

    asyncio.run(main())


def test_a_body_too_large_by_content_length_gets_413_before_it_is_sent():
    async def main():
        server, port = await start(make_app(), max_body_size=1000)
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Length: 5000\r\n\r\n{")
        status, headers, body = await asyncio.wait_for(read_response(reader), 5)
        assert status == 413 and headers.get("connection") == "close" and b"over 1000 bytes" in body
        writer.close()
        await stop(server)

    asyncio.run(main())


class _Responding:
    """An endpoint answering every request with the response a test gives it."""

    max_body_size = 1000

    def __init__(self, make_response: Any) -> None:
        self.make_response = make_response

    def handle(self, request: Any) -> Any:
        return self.make_response()

    async def start(self) -> None:
        pass

    def begin_shutdown(self) -> None:
        pass

    def close(self) -> None:
        pass


@pytest.mark.parametrize("streamed", [False, True])
def test_a_response_that_cannot_be_written_gets_500_and_the_server_goes_on(streamed, caplog):
    from mcpfast.transports.http import HTTPResponse
    from mcpfast.transports.http.server import serve_http

    async def chunks():
        yield b"data: x\n\n"

    def bad() -> Any:
        # "€" has no latin-1 form: the head cannot be written.
        return HTTPResponse(200, [("x-note", "5 €")], b"{}", stream=chunks() if streamed else None)

    async def main():
        bound = asyncio.get_running_loop().create_future()
        server = asyncio.ensure_future(serve_http(_Responding(bad), "127.0.0.1", 0,
                                                  ready=lambda h, p: bound.set_result(p)))
        port = await bound
        for _ in range(2):  # the server serves the next connection as well
            got, rest = await exchange(port, b"GET /mcp HTTP/1.1\r\nHost: h\r\n\r\n", 1)
            assert got[0][0] == 500 and got[0][1].get("connection") == "close"
            assert json.loads(got[0][2])["error"]["message"] == (
                "Internal error: the response could not be written")
            assert rest == b""
        await stop(server)

    asyncio.run(main())
    assert "an HTTP response could not be written" in caplog.text
