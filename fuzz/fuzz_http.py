"""Fuzz the Streamable HTTP request path: raw bytes into mcpfast's HTTP/1.1 server.

Sans-socket: an HTTPServerProtocol (httptools parser -> StreamableHTTPEndpoint -> a real
Server) on a transport double that records what is written. Input: byte 0, bit 0: a valid
initialize + notifications/initialized go first (so that later requests can reach a
session: ``@SID@`` anywhere in the rest is replaced with the minted session id); bit 1: the
endpoint runs in stateless mode (no sessions, no prelude: the compiled front door routes
POSTs straight to its legs); bit 2: the client reads slowly (the transport double goes over
its high-water mark after 4 KiB written and drains after every read: answers wait, reading
pauses). A HEAD is fuzzed as a POST (the response parser cannot tell that a HEAD's answer
has no content). Byte 1: how the rest is split into reads; the rest is the
byte stream a client sends. On either endpoint a POST with ``MCP-Protocol-Version:
2026-07-28`` takes the stateless 2026-07-28 leg (routing headers checked against the body).
Property: nothing raises out of the protocol; everything written parses as a sequence of
HTTP/1.1 responses (httptools' response parser) with statuses the endpoint documents --
never 500 -- and every application/json body is one JSON-RPC message (or, answering a
2025-03-26 batch, a non-empty array of them).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from common import Choices, instrumented, main

with instrumented():
    import httptools

    from mcpfast.server import Context, Server
    from mcpfast.transports.http.server import HTTPServerProtocol


STATUSES = {100, 200, 202, 204, 400, 403, 404, 405, 406, 408, 409, 413, 415, 421, 503}

app = Server("fuzz-http")


@app.tool()
def add(a: int, b: int = 2) -> int:
    """Adds."""
    return a + b


@app.tool()
async def slow_echo(text: str, ctx: Context) -> str:
    """Echoes after a loop turn, reporting progress."""
    await ctx.report_progress(1, 2)
    await asyncio.sleep(0)
    return text


@app.tool(input_schema={
    "type": "object",
    "properties": {"region": {"type": "string", "x-mcp-header": "Region"}, "query": {"type": "string"}},
    "required": ["region"],
})
def in_region(region: str, query: str = "") -> str:
    """A tool whose region is mirrored into the Mcp-Param-Region header (2026-07-28)."""
    return f"{query} in {region}"


LOOP = asyncio.new_event_loop()
INIT_BODY = (b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":'
             b'"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}')
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'


def post(body: bytes, session: bytes = b"") -> bytes:
    head = (b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            b"Accept: application/json, text/event-stream\r\nContent-Length: %d\r\n" % len(body))
    if session:
        head += b"Mcp-Session-Id: " + session + b"\r\n"
    return head + b"\r\n" + body


class Transport:
    """What HTTPServerProtocol writes to, recorded."""

    def __init__(self, protocol: HTTPServerProtocol, slow: bool) -> None:
        self.protocol = protocol
        self.out = bytearray()
        self.closed = False
        self.slow = slow
        self.paused = False
        self.drained = 0
        self.reading = True

    def write(self, data: bytes) -> None:
        assert not self.closed, "write after close"
        self.out += data
        if self.slow and not self.paused and len(self.out) - self.drained > 4096:
            self.paused = True
            self.protocol.pause_writing()

    def drain(self) -> None:
        """The client read everything written so far."""
        self.drained = len(self.out)
        if self.paused:
            self.paused = False
            self.protocol.resume_writing()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            LOOP.call_soon(self.protocol.connection_lost, None)

    abort = close

    def is_closing(self) -> bool:
        return self.closed

    def pause_reading(self) -> None:
        self.reading = False

    def resume_reading(self) -> None:
        self.reading = True

    def get_extra_info(self, name: str, default=None):
        return default


class Responses:
    """httptools response-parser callbacks collecting (status, content type, body)."""

    def __init__(self) -> None:
        self.parsed: list = []
        self.statuses: list[int] = []
        self.parser: Any = None
        self._headers: dict = {}
        self._body = bytearray()

    def on_headers_complete(self) -> None:
        # From the parser, not from the bytes: a body may quote "HTTP/1.1 " (an error
        # message naming the refused Host header, say).
        self.statuses.append(self.parser.get_status_code())

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers[name.lower()] = value

    def on_body(self, body: bytes) -> None:
        self._body += body

    def on_message_complete(self) -> None:
        self.parsed.append((self._headers.get(b"content-type"), bytes(self._body)))
        self._headers, self._body = {}, bytearray()


async def drive(prelude: bool, stateless: bool, slow: bool, split: int, stream: bytes) -> bytes:
    endpoint = app.http_endpoint(max_body_size=4096, max_sessions=8, keepalive_interval=0.001,
                                 stateless=stateless)
    protocol = HTTPServerProtocol(endpoint, 0, set())
    transport = Transport(protocol, slow)
    protocol.connection_made(transport)  # type: ignore[arg-type]
    if prelude and not stateless:
        protocol.data_received(post(INIT_BODY))
        for _ in range(5):
            await asyncio.sleep(0)
        session = bytes(transport.out).split(b"mcp-session-id: ", 1)[-1].split(b"\r\n", 1)[0]
        protocol.data_received(post(INITIALIZED, session))
        stream = stream.replace(b"@SID@", session)
    step = max(1, split)
    start = 0
    waited = 0
    while start < len(stream) and not transport.closed and waited < 100:
        if transport.reading:
            protocol.data_received(stream[start:start + step])
            start += step
            waited = 0
        else:
            waited += 1  # (a stream that never ends keeps reading paused: the rest is unsent)
        await asyncio.sleep(0)
        transport.drain()  # a slow client reads between its writes
    for _ in range(50):  # let answers finish (SSE streams end with their request)
        await asyncio.sleep(0)
        transport.drain()
    if not transport.closed:
        transport.close()
    await asyncio.sleep(0)
    endpoint.close()
    return bytes(transport.out)


def check(data: bytes) -> None:
    choices = Choices(data)
    mode = choices.byte()
    split = choices.byte()
    stream = choices.rest().replace(b"HEAD ", b"POST ")
    out = LOOP.run_until_complete(drive(mode & 1 == 1, mode & 2 == 2, mode & 4 == 4, split, stream))
    responses = Responses()
    parser = responses.parser = httptools.HttpResponseParser(responses)
    try:
        parser.feed_data(out)
    except httptools.HttpParserError as exc:
        raise AssertionError(f"the server wrote something that is not HTTP: {exc}: {out[:300]!r}") from None
    statuses = responses.statuses
    assert out.count(b"HTTP/1.1 ") >= len(statuses), out[:500]
    assert all(status in STATUSES for status in statuses), (statuses, out[:500])
    for content_type, body in responses.parsed:
        if content_type == b"application/json" and body:
            message = json.loads(body)
            # A 2025-03-26 batch (the version a request without the header is taken for)
            # is answered with an array of responses.
            for item in message if type(message) is list and message else [message]:
                assert item.get("jsonrpc") == "2.0", body


if __name__ == "__main__":
    main(check)
