"""The client side of the 2024-11-05 HTTP+SSE transport, for servers that predate
Streamable HTTP.

``await open_sse(url, factory)`` opens the server's SSE stream (GET ``url``, usually
``.../sse``), waits for its ``endpoint`` event (the URL to post to, resolved against
``url``), then feeds every ``message`` event to the connection made by ``factory(send)``.
Each frame the connection sends is one POST to the endpoint URL (answered 202; the answer
itself comes on the stream), over keep-alive connections reused one request at a time, in
the order of :mod:`~mcpfast.transports.http.post_order`. A POST that fails fails the
requests it carried; the stream ending ends the connection.
``close()`` closes the stream and every connection.
"""

from __future__ import annotations

import asyncio
import ssl
from typing import Any, Callable, Optional
from urllib.parse import urljoin

from mcpfast._core.decode import DecodeError, decode
from mcpfast._core.encode import encode_error
from mcpfast._core.framing import DEFAULT_MAX_FRAME_SIZE
from mcpfast._core.messages import Request
from mcpfast.jsonrpc.contract import Connection
from mcpfast.jsonrpc.errors import TRANSPORT_ERROR
from mcpfast.transports.http import headers as h
from mcpfast.transports.http.client_connection import ClientConnection, HTTPTarget, StreamedAnswer
from mcpfast.transports.http.post_order import PostOrder, wait_turn
from mcpfast.transports.http.sse import SSEEvent

__all__ = ["LegacySSEClientStream", "open_sse"]

# How long the server has to name its endpoint.
ENDPOINT_TIMEOUT = 30.0


class LegacySSEClientStream:
    """The transport handle ``open_sse`` returns: ``conn``, ``send``, ``close()``."""

    def __init__(self, url: str, factory: Callable[[Callable[[bytes], None]], Connection], *,
                 headers: Optional[dict[str, str]] = None,
                 max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
                 ssl_context: Optional[ssl.SSLContext] = None) -> None:
        self.stream_target = HTTPTarget(url, ssl_context)
        self.ssl_context = ssl_context
        self.post_target: Optional[HTTPTarget] = None
        self.extra_headers = dict(headers or {})
        self.max_frame_size = max_frame_size
        self.loop = asyncio.get_running_loop()
        self.endpoint: asyncio.Future[str] = self.loop.create_future()
        self._idle: list[ClientConnection] = []
        self._tasks: set[asyncio.Task[Any]] = set()
        self._order = PostOrder()
        self._stream_connection: Optional[ClientConnection] = None
        self._reader: Optional[asyncio.Task[None]] = None
        self._closed = False
        self.closed: asyncio.Future[None] = self.loop.create_future()
        self.conn = factory(self.send)

    # -- HTTP plumbing -----------------------------------------------------------------

    async def _connect(self, target: HTTPTarget) -> ClientConnection:
        _, connection = await self.loop.create_connection(
            ClientConnection, target.host, target.port, ssl=target.ssl,
            server_hostname=target.host if target.ssl else None)
        return connection

    def _head(self, method: str, target: HTTPTarget, extra: dict[str, str], length: int) -> bytes:
        lines = [f"{method} {target.path} HTTP/1.1", f"Host: {target.host_header}"]
        for name, value in {**self.extra_headers, **extra}.items():
            lines.append(f"{name}: {value}")
        lines.append(f"Content-Length: {length}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    # -- the stream --------------------------------------------------------------------

    async def start(self) -> None:
        """Open the stream and wait for the server's endpoint event."""
        target = self.stream_target
        connection = await self._connect(target)
        self._stream_connection = connection
        response = connection.start(self._head("GET", target, {"Accept": h.EVENT_STREAM}, 0), b"")
        await response.head
        content_type = response.headers.get(h.CONTENT_TYPE, "").split(";")[0].strip().lower()
        if response.status != 200 or content_type != h.EVENT_STREAM:
            body = b""
            try:
                body = await asyncio.wait_for(response.read_body(4096), 5)
            except (ValueError, asyncio.TimeoutError):
                pass
            await self.close()
            raise ConnectionError(f"HTTP {response.status} from {target.url}: "
                                  f"{body[:200].decode('utf-8', 'replace')}")
        self._reader = self.loop.create_task(self._read(response))
        try:
            endpoint = await asyncio.wait_for(asyncio.shield(self.endpoint), ENDPOINT_TIMEOUT)
        except BaseException:
            await self.close()
            raise
        self.post_target = HTTPTarget(urljoin(target.url, endpoint), self.ssl_context)

    async def _read(self, response: StreamedAnswer) -> None:
        try:
            async for event in response.events(self.max_frame_size):
                self._event(event)
        except (ConnectionError, ValueError) as exc:
            self._end(exc)
            return
        self._end(ConnectionError("the server closed the SSE stream"))

    def _event(self, event: SSEEvent) -> None:
        if event.event == "endpoint":
            if not self.endpoint.done():
                self.endpoint.set_result(event.data.decode("utf-8", "replace").strip())
        elif event.event == "message" and event.data.strip() and not self._closed:
            self.conn.feed(event.data)

    def _end(self, exc: Optional[BaseException]) -> None:
        if not self.endpoint.done():
            self.endpoint.set_exception(exc or ConnectionError("the SSE stream ended"))
        if not self._closed:
            self._closed = True
            self._close_connections()
            self.conn.close(exc)
            if not self.closed.done():
                self.closed.set_result(None)

    # -- sending -----------------------------------------------------------------------

    def send(self, frame: bytes) -> None:
        """The connection's writer: one POST per frame."""
        if self._closed:
            raise ConnectionError("the HTTP+SSE transport is closed")
        frame = bytes(frame)
        try:
            message: Any = decode(frame)
        except DecodeError:
            message = None
        task = self.loop.create_task(self._post(frame, self._order.turn()))
        self._order.posted(message, task)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _post(self, frame: bytes, before: Optional[asyncio.Task[Any]]) -> None:
        await wait_turn(before)
        target = self.post_target
        try:
            if target is None:
                raise ConnectionError("the server has not named its endpoint")
            connection = self._idle.pop() if self._idle else await self._connect(target)
            while connection.lost and self._idle:
                connection = self._idle.pop()
            if connection.lost:
                connection = await self._connect(target)
            response = connection.start(
                self._head("POST", target, {"Content-Type": h.JSON}, len(frame)), frame)
            await response.head
            body = await response.read_body(self.max_frame_size)
        except (OSError, ValueError) as exc:
            self._fail(frame, f"cannot post to {target.url if target else self.stream_target.url}: {exc}")
            return
        if response.keep_alive and not connection.lost and not self._closed:
            connection.reader.answer = None
            self._idle.append(connection)
        elif connection.transport is not None:
            connection.transport.close()
        if response.status >= 400:
            self._fail(frame, f"HTTP {response.status} from {target.url}: "
                              f"{body[:200].decode('utf-8', 'replace')}")

    def _fail(self, frame: bytes, reason: str) -> None:
        try:
            message: Any = decode(frame)
        except DecodeError:
            return
        for item in message if isinstance(message, list) else [message]:
            if type(item) is Request and not self._closed:
                self.conn.feed(encode_error(item.id, TRANSPORT_ERROR, reason))

    # -- closing -----------------------------------------------------------------------

    def _close_connections(self) -> None:
        for connection in [*self._idle, self._stream_connection]:
            if connection is not None and connection.transport is not None:
                connection.transport.close()
        self._idle.clear()

    async def close(self) -> None:
        """Close the stream (the session ends with it) and every connection."""
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        self._end(None)
        if self._reader is not None and self._reader is not asyncio.current_task():
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)

    async def __aenter__(self) -> LegacySSEClientStream:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.close()


async def open_sse(url: str, factory: Callable[[Callable[[bytes], None]], Connection], *,
                   headers: Optional[dict[str, str]] = None,
                   max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
                   ssl_context: Optional[ssl.SSLContext] = None) -> LegacySSEClientStream:
    """Open an HTTP+SSE connection to ``url`` (module docstring); ConnectionError when the
    server answers anything but an SSE stream naming its endpoint."""
    stream = LegacySSEClientStream(url, factory, headers=headers, max_frame_size=max_frame_size,
                                   ssl_context=ssl_context)
    await stream.start()
    return stream
