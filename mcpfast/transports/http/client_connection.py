"""The HTTP/1.1 client connection of the Streamable HTTP and legacy SSE clients.

:class:`ClientConnection` is an asyncio protocol over one keep-alive connection, one
request at a time, reading answers with the compiled
:class:`~mcpfast.transports.http.response_reader.ResponseReader` (its ``reader``). What it
reads goes to the reader's current ``answer``, an :class:`AnswerSink`: its callbacks run
inside ``data_received`` -- ``whole`` for an answer read in one step, else ``header``,
``headers_done``, ``body``, ``complete`` as it arrives; ``lost`` and ``broken`` when the
connection ends or the answer is malformed. :class:`StreamedAnswer` is the sink a task
awaits (a future for the head, a queue of body chunks, SSE events); a sink may also finish
the whole answer in those callbacks, with no task (the client's plain JSON answers,
:mod:`mcpfast.transports.http.client`), and hand over to a StreamedAnswer after the head
when the answer turns out to need one.
"""

from __future__ import annotations

import asyncio
import ssl
from typing import AsyncIterator, Optional, Protocol
from urllib.parse import urlsplit

from mcpfast.transports.http.client_connection_core import ClientConnectionCore
from mcpfast.transports.http.response_reader import ResponseReader
from mcpfast.transports.http.sse import SSEEvent, split_events

__all__ = ["AnswerSink", "ClientConnection", "HTTPTarget", "StreamedAnswer"]


class HTTPTarget:
    """Where an http(s) URL's requests go: ``host``, ``port``, ``ssl`` (a context for
    https, else None), ``path`` with its query, and the ``host_header``."""

    __slots__ = ("url", "host", "port", "ssl", "path", "host_header")

    def __init__(self, url: str, ssl_context: Optional[ssl.SSLContext] = None) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"an MCP HTTP endpoint is http(s)://host[:port]/path, got {url!r}")
        self.url = url
        self.host = parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.ssl = (ssl_context or ssl.create_default_context()) if parts.scheme == "https" else None
        self.path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self.host_header = parts.netloc.rsplit("@", 1)[-1]


class AnswerSink(Protocol):
    """What a connection tells the answer it is reading (module docstring)."""

    def whole(self, status: int, headers: list[tuple[bytes, bytes]], content_type: Optional[bytes],
              body: bytes, keep_alive: bool) -> None: ...
    def header(self, name: bytes, value: bytes) -> None: ...
    def headers_done(self, status: int) -> None: ...
    def body(self, chunk: bytes) -> None: ...
    def complete(self, keep_alive: bool) -> None: ...
    def lost(self) -> None: ...
    def broken(self, reason: str) -> None: ...


class StreamedAnswer:
    """One HTTP response as it arrives, for a task to await: ``status`` and ``headers``
    (``head`` resolves once they are in), then body chunks (:meth:`read_body`,
    :meth:`events`); ``finished`` and ``keep_alive`` once it has all come."""

    def __init__(self) -> None:
        self.status = 0
        self.headers: dict[str, str] = {}
        self.head: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.chunks: asyncio.Queue[Optional[bytes]] = asyncio.Queue()
        # Whether the whole answer has come (or the connection ended).
        self.finished = False
        self.keep_alive = False

    # -- AnswerSink --------------------------------------------------------------------

    def whole(self, status: int, headers: list[tuple[bytes, bytes]], content_type: Optional[bytes],
              body: bytes, keep_alive: bool) -> None:
        for name, value in headers:
            self.header(name, value)
        self.headers_done(status)
        if body:
            self.body(body)
        self.complete(keep_alive)

    def header(self, name: bytes, value: bytes) -> None:
        self.headers[name.decode("latin-1").lower()] = value.decode("latin-1")

    def headers_done(self, status: int) -> None:
        if not self.head.done():
            self.status = status
            self.head.set_result(None)

    def body(self, chunk: bytes) -> None:
        self.chunks.put_nowait(chunk)

    def complete(self, keep_alive: bool) -> None:
        self.keep_alive = keep_alive
        self.finished = True
        self.chunks.put_nowait(None)

    def lost(self) -> None:
        if not self.head.done():
            self.head.set_exception(ConnectionError("the HTTP connection was lost"))
        if not self.finished:
            self.chunks.put_nowait(None)
            self.finished = True
            self.keep_alive = False

    def broken(self, reason: str) -> None:
        if not self.head.done():
            self.head.set_exception(ConnectionError(reason))

    # -- reading -----------------------------------------------------------------------

    async def events(self, limit: int) -> AsyncIterator[SSEEvent]:
        """The body's SSE events as they arrive (ValueError when an event still
        arriving passes ``limit`` bytes)."""
        buffer = b""
        while True:
            chunk = await self.chunks.get()
            if chunk is None:
                return
            buffer += chunk.replace(b"\r\n", b"\n")
            events, buffer = split_events(buffer)
            for event in events:
                yield event
            if len(buffer) > limit:
                raise ValueError(f"an SSE event is over the frame limit of {limit} bytes")

    async def read_body(self, limit: int) -> bytes:
        """The whole body (ValueError past ``limit`` bytes)."""
        parts: list[bytes] = []
        size = 0
        while True:
            chunk = await self.chunks.get()
            if chunk is None:
                return b"".join(parts)
            size += len(chunk)
            if size > limit:
                raise ValueError(f"the answer is over {limit} bytes")
            parts.append(chunk)


class ClientConnection(ClientConnectionCore, asyncio.Protocol):
    """A keep-alive HTTP/1.1 connection answering one request at a time; what it reads
    goes to ``reader.answer`` (module docstring). ``data_received``, ``send`` and
    ``close`` are the compiled base's
    (:mod:`~mcpfast.transports.http.client_connection_core`)."""

    def __init__(self) -> None:
        self.transport = None
        self.reader = ResponseReader()
        self.lost = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def connection_lost(self, exc: Optional[BaseException]) -> None:
        self.lost = True
        answer = self.reader.answer
        if answer is not None:
            answer.lost()

    def start(self, head: bytes, body: bytes) -> StreamedAnswer:
        """Write a request; returns the StreamedAnswer its answer goes to."""
        answer = StreamedAnswer()
        self.send(head + body, answer)
        return answer
