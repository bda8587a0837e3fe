"""One connection of mcpfast's HTTP/1.1 server (HTTPServerProtocol), without sockets.

A transport double records what the protocol writes and asks of it; an endpoint double
answers each request with what the test gives it: a whole response, a coroutine, a stream.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, AsyncIterator, Callable

import httptools

from mcpfast.transports.http import HTTPResponse
from mcpfast.transports.http.server import HTTPServerProtocol
from transport_doubles import FakeTransport


class Wire(FakeTransport):
    """The transport: closing it ends the connection (connection_lost soon), as a socket's."""

    def write(self, data: bytes) -> None:
        assert not self.closing, "write after close"
        super().write(data)

    def close(self) -> None:
        self.abort()

    @property
    def closed(self) -> bool:
        return self.closing

    @property
    def reading_paused(self) -> bool:
        return not self.reading

    @property
    def out(self) -> bytes:
        return b"".join(self.writes)

    def responses(self) -> list[tuple[int, dict[bytes, bytes], bytes]]:
        """The complete responses written so far: (status, headers, body)."""
        done: list[tuple[int, dict[bytes, bytes], bytes]] = []
        current: dict[str, Any] = {}

        class Callbacks:
            def on_message_begin(self) -> None:
                current.update(headers={}, body=bytearray())

            def on_header(self, name: bytes, value: bytes) -> None:
                current["headers"][name.lower()] = value

            def on_body(self, body: bytes) -> None:
                current["body"] += body

            def on_message_complete(self) -> None:
                done.append((parser.get_status_code(), current["headers"], bytes(current["body"])))

        parser = httptools.HttpResponseParser(Callbacks())
        parser.feed_data(self.out)
        return done


class Answering:
    """The endpoint: handle(request) returns answer(request)."""

    max_body_size = 1000

    def __init__(self, answer: Callable[[Any], Any]) -> None:
        self.answer = answer
        self.requests: list[Any] = []

    def handle(self, request: Any) -> Any:
        self.requests.append(request)
        return self.answer(request)


def post(body: bytes = b"{}", *, close: bool = False) -> bytes:
    head = b"POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Length: %d\r\n" % len(body)
    if close:
        head += b"Connection: close\r\n"
    return head + b"\r\n" + body


def json_response(body: bytes) -> HTTPResponse:
    return HTTPResponse(200, [("content-type", "application/json")], body)


def connect(endpoint: Answering, **options: Any) -> tuple[HTTPServerProtocol, Wire, set[Any]]:
    connections: set[Any] = set()
    protocol = HTTPServerProtocol(endpoint, options.pop("keepalive_timeout", 0), connections, **options)  # type: ignore[arg-type]
    wire = Wire(protocol)
    protocol.connection_made(wire)
    return protocol, wire, connections


async def turns(n: int = 5) -> None:
    for _ in range(n):
        await asyncio.sleep(0)


def test_it_is_an_asyncio_protocol_whose_eof_closes_the_transport(run):
    async def main():
        protocol, wire, connections = connect(Answering(lambda r: json_response(b"{}")))
        assert connections == {protocol} and protocol.transport is wire
        assert not protocol.eof_received()  # falsy: asyncio closes the transport itself
        protocol.connection_lost(None)
        assert connections == set()

    run(main())


def test_a_whole_answer_is_written_at_once_and_the_connection_kept(run):
    async def main():
        endpoint = Answering(lambda r: json_response(r.body))
        protocol, wire, _ = connect(endpoint)
        protocol.data_received(post(b'{"a":1}'))
        protocol.data_received(post(b'{"a":2}'))
        assert [(s, b) for s, _, b in wire.responses()] == [(200, b'{"a":1}'), (200, b'{"a":2}')]
        assert not wire.closed
        protocol.data_received(post(b'{"a":3}', close=True))
        assert wire.responses()[-1][1][b"connection"] == b"close" and wire.closed

    run(main())


def test_pipelined_requests_wait_for_the_answer_in_progress_with_reading_paused(run):
    async def main():
        release = asyncio.Event()

        async def later(body: bytes) -> HTTPResponse:
            await release.wait()
            return json_response(body)

        endpoint = Answering(lambda r: later(r.body) if r.body == b"1" else json_response(r.body))
        protocol, wire, _ = connect(endpoint)
        protocol.data_received(post(b"1") + post(b"2") + post(b"3"))
        await turns()
        assert wire.responses() == [] and wire.reading_paused
        assert [r.body for r in endpoint.requests] == [b"1"]
        release.set()
        await turns()
        assert [b for _, _, b in wire.responses()] == [b"1", b"2", b"3"]
        assert not wire.reading_paused and not wire.closed

    run(main())


def test_an_endpoint_that_raises_gets_500_and_the_connection_closes(run, caplog):
    async def main():
        def fail(request: Any) -> Any:
            raise RuntimeError("boom")

        protocol, wire, _ = connect(Answering(fail))
        protocol.data_received(post() + post())
        (status, headers, body), = wire.responses()
        assert status == 500 and headers[b"connection"] == b"close"
        assert json.loads(body)["error"] == {"code": -32603, "message": "Internal error"}
        assert wire.closed

    with caplog.at_level(logging.ERROR, logger="mcpfast.transports.http"):
        run(main())
    assert "the MCP endpoint failed on POST /mcp" in caplog.text and "boom" in caplog.text


def test_an_answer_that_fails_later_gets_500_and_the_connection_goes_on(run, caplog):
    async def main():
        async def fail() -> HTTPResponse:
            raise RuntimeError("later")

        endpoint = Answering(lambda r: fail() if r.body == b"1" else json_response(r.body))
        protocol, wire, _ = connect(endpoint)
        protocol.data_received(post(b"1"))
        await turns()
        protocol.data_received(post(b"2"))
        await turns()
        assert [s for s, _, _ in wire.responses()] == [500, 200] and not wire.closed

    with caplog.at_level(logging.ERROR, logger="mcpfast.transports.http"):
        run(main())
    assert "the MCP endpoint failed" in caplog.text and "later" in caplog.text


def test_a_body_over_the_limit_gets_413_and_a_malformed_request_400(run):
    async def main():
        protocol, wire, _ = connect(Answering(lambda r: json_response(b"{}")))
        protocol.data_received(b"POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Length: 5000\r\n\r\n")
        (status, headers, body), = wire.responses()
        assert status == 413 and b"over 1000 bytes" in body and wire.closed

        protocol, wire, _ = connect(Answering(lambda r: json_response(b"{}")))
        protocol.data_received(post() + b"NOT HTTP\r\n\r\n")
        assert [s for s, _, _ in wire.responses()] == [200, 400] and wire.closed

    run(main())


class Chunks:
    """A stream whose chunks the test hands out one by one; records how it ended."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.closed = False

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self

    async def __anext__(self) -> bytes:
        chunk = await self.queue.get()
        if chunk is None:
            raise StopAsyncIteration
        return chunk

    async def aclose(self) -> None:
        self.closed = True


def streamed(chunks: Chunks, ended: list[bool]) -> HTTPResponse:
    return HTTPResponse(200, [("content-type", "text/event-stream")], stream=chunks,
                        on_close=ended.append)


def test_a_stream_is_chunked_and_waits_while_the_transport_is_full(run):
    async def main():
        chunks, ended = Chunks(), []
        protocol, wire, _ = connect(Answering(lambda r: streamed(chunks, ended)))
        protocol.data_received(post())
        await turns()
        assert wire.out.endswith(b"transfer-encoding: chunked\r\n\r\n")
        protocol.pause_writing()
        chunks.queue.put_nowait(b"data: 1\n\n")
        chunks.queue.put_nowait(b"data: 2\n\n")
        await turns()
        # The first chunk was written; the next waits for the transport to drain.
        assert wire.out.endswith(b"9\r\ndata: 1\n\n\r\n")
        protocol.resume_writing()
        chunks.queue.put_nowait(None)
        await turns()
        (status, _, body), = wire.responses()
        assert (status, body) == (200, b"data: 1\n\ndata: 2\n\n")
        assert ended == [False] and chunks.closed and not wire.closed

    run(main())


def test_a_lost_connection_ends_its_stream_as_disconnected_and_cancels_its_answer(run):
    async def main():
        chunks, ended = Chunks(), []
        endpoint = Answering(lambda r: streamed(chunks, ended))
        protocol, wire, connections = connect(endpoint)
        protocol.data_received(post())
        await turns()
        chunks.queue.put_nowait(b"data: 1\n\n")
        await turns()
        protocol.connection_lost(None)
        await turns()
        assert ended == [True] and chunks.closed and connections == set()
        protocol.data_received(post())  # what a closed connection receives is not read
        assert len(endpoint.requests) == 1

        started = asyncio.Event()
        cancelled: list[bool] = []

        async def hang() -> HTTPResponse:
            started.set()
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                cancelled.append(True)
                raise
            raise AssertionError("not reached")

        protocol, wire, _ = connect(Answering(lambda r: hang()))
        protocol.data_received(post())
        await started.wait()
        protocol.connection_lost(None)
        await turns()
        assert cancelled == [True] and wire.out == b""

    run(main())


def test_a_head_that_cannot_be_written_gets_500(run, caplog):
    async def main():
        protocol, wire, _ = connect(Answering(lambda r: HTTPResponse(200, [("x-note", "5 €")], b"{}")))
        protocol.data_received(post())
        (status, headers, body), = wire.responses()
        assert status == 500 and headers[b"connection"] == b"close" and wire.closed
        assert json.loads(body)["error"]["message"] == "Internal error: the response could not be written"

    with caplog.at_level(logging.ERROR, logger="mcpfast.transports.http"):
        run(main())
    assert "an HTTP response could not be written" in caplog.text


def test_shutdown_closes_an_idle_connection_and_waits_for_a_post_in_progress(run):
    async def main():
        protocol, wire, _ = connect(Answering(lambda r: json_response(b"{}")))
        protocol.data_received(post())
        assert protocol.shutdown() is None and wire.closed

        release = asyncio.Event()

        async def later() -> HTTPResponse:
            await release.wait()
            return json_response(b"{}")

        protocol, wire, _ = connect(Answering(lambda r: later()))
        protocol.data_received(post())
        await turns()
        drained = protocol.shutdown()
        assert drained is not None and not drained.done() and not wire.closed
        release.set()
        await turns()
        assert drained.done() and [s for s, _, _ in wire.responses()] == [200]
        assert wire.closed  # closes after the answer in progress

    run(main())


def test_a_connection_accepted_just_before_shutdown_has_its_first_request_answered(run):
    async def main():
        protocol, wire, _ = connect(Answering(lambda r: json_response(b"{}")))
        drained = protocol.shutdown()
        assert drained is not None and not wire.closed
        protocol.data_received(post())
        (status, headers, _), = wire.responses()
        assert status == 200 and headers[b"connection"] == b"close" and wire.closed
        await turns()
        assert drained.done()

    run(main())


def test_beyond_max_connections_a_connection_gets_503(run):
    async def main():
        endpoint = Answering(lambda r: json_response(b"{}"))
        first, _, connections = connect(endpoint, max_connections=1)
        second = HTTPServerProtocol(endpoint, 0, connections, 1)  # type: ignore[arg-type]
        wire = Wire(second)
        second.connection_made(wire)
        (status, _, body), = wire.responses()
        assert status == 503 and b"1 connections are open" in body and wire.closed
        assert connections == {first}

    run(main())


def test_an_idle_connection_closes_once_the_keepalive_timeout_has_passed(run):
    async def main():
        protocol, wire, _ = connect(Answering(lambda r: json_response(b"{}")), keepalive_timeout=0.05)
        protocol.data_received(post())
        assert not wire.closed
        while not wire.closed:  # bounded by the run fixture's timeout
            await asyncio.sleep(0.02)

    run(main())
