"""mcpfast's own HTTP/1.1 server for the Streamable HTTP endpoint: asyncio (uvloop) + httptools.

One :class:`HTTPServerProtocol` per TCP connection reads requests with the compiled
framer of mcpfast._core.http_framing (httptools, the llhttp parser of Node.js, underneath),
hands each to the endpoint and writes its answer. Requests on
one connection are answered in order (HTTP/1.1); pipelined ones wait their turn, with
reading paused meanwhile. An answer the endpoint has at once (a sync tool, every error)
is written without creating a task. Streams (SSE) go out with chunked transfer encoding,
waiting for the socket to drain when the client reads slowly; a client that disconnects
ends its response (and, through the endpoint, cancels its request).

Limits: the body is refused with 413 as soon as Content-Length (or the bytes read) pass the
endpoint's ``max_body_size``; request heads over 64 KiB and malformed requests get 400 and
the connection is closed; an idle keep-alive connection is closed after
``keepalive_timeout`` seconds; beyond ``max_connections`` open connections a new one gets
503 and is closed at once (an answer a client can retry on, where a connection left in the
kernel's backlog would look like a hung server).
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections import deque
from typing import Any, Callable, Optional

import httptools

from mcpfast._core.http_framing import HTTPRequestFramer, stream_head, whole_response
from mcpfast.transports.http.endpoint import HTTPEndpoint
from mcpfast.transports.http.messages import HTTPRequest, HTTPResponse, json_error_body

__all__ = ["HTTPServerProtocol", "serve_http"]

_LOGGER = logging.getLogger("mcpfast.transports.http")

MAX_HEAD_SIZE = 64 * 1024
DEFAULT_MAX_CONNECTIONS = 1024
DEFAULT_KEEPALIVE_TIMEOUT = 75.0
DEFAULT_SHUTDOWN_TIMEOUT = 30.0
# Seconds a connection accepted just before shutdown gets to send its first request.
FRESH_GRACE = 1.0
class HTTPServerProtocol(asyncio.Protocol):
    """One HTTP/1.1 connection to the endpoint (module docstring)."""

    def __init__(self, endpoint: HTTPEndpoint, keepalive_timeout: float,
                 connections: set[HTTPServerProtocol],
                 max_connections: Optional[int] = None) -> None:
        self.max_connections = max_connections
        self.endpoint = endpoint
        self.keepalive_timeout = keepalive_timeout
        self.connections = connections
        self.loop = asyncio.get_running_loop()
        self.transport: Optional[asyncio.Transport] = None
        self._framer = HTTPRequestFramer(HTTPRequest, endpoint.max_body_size, MAX_HEAD_SIZE)
        self._feed = self._framer.feed
        self._handle = endpoint.handle
        # Requests read and not answered yet: (request, keep_alive, too_large).
        self._queue: deque[tuple[HTTPRequest, bool, bool]] = deque()
        # Reading was paused for pipelined requests (resumed once they are answered).
        self._paused = False
        self._busy = False
        self._task: Optional[asyncio.Task[None]] = None
        self._response: Optional[HTTPResponse] = None
        self._closed = False
        self._writable: Optional[asyncio.Future[None]] = None
        # The keep-alive timeout: one timer, moved lazily (see _arm_idle).
        self._idle: Optional[asyncio.TimerHandle] = None
        self._idle_deadline: Optional[float] = None
        self._stopping = False
        # The method of the request whose answer is in progress (a task), if any.
        self._answering: Optional[str] = None
        # Set by shutdown() while a POST is being answered: done once it is.
        self._drained: Optional[asyncio.Future[None]] = None
        # A request was received; the grace timer of a fresh connection at shutdown
        # (shutdown()).
        self._served = False
        self._grace: Optional[asyncio.TimerHandle] = None

    # -- asyncio.Protocol --------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        limit = self.max_connections
        if limit is not None and len(self.connections) >= limit:
            _LOGGER.warning("HTTP connection refused: %d connections are open", limit)
            self._fail(503, f"Service Unavailable: {limit} connections are open; try again")
            return
        self.connections.add(self)
        self._arm_idle()

    def connection_lost(self, exc: Optional[BaseException]) -> None:
        self._closed = True
        self.connections.discard(self)
        if self._idle is not None:
            self._idle.cancel()
        if self._grace is not None:
            self._grace.cancel()
            self._grace = None
        if self._task is not None and not self._task.done():
            self._task.cancel()
        response, self._response = self._response, None
        if response is not None:
            response.close(disconnected=True)
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)
        self._set_drained()

    def pause_writing(self) -> None:
        if self._writable is None or self._writable.done():
            self._writable = self.loop.create_future()

    def resume_writing(self) -> None:
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)

    def data_received(self, data: bytes) -> None:
        if self._closed:
            return  # closing: what else the client sent is not read
        # Not idle while a request arrives (the timer, if armed, finds no deadline).
        self._idle_deadline = None
        done = self._feed(data)
        if done is not None:
            self._served = True
            queue = self._queue
            queue.extend(done)
            if not self._busy:
                self._next()
            if queue and self._busy and self.transport is not None:
                # Pipelined: answered after the one in progress; read no further meanwhile.
                self.transport.pause_reading()
                self._paused = True
        if self._framer.failed:
            self._framing_failed()

    def _framing_failed(self) -> None:
        error = self._framer.error
        if isinstance(error, httptools.HttpParserUpgrade):
            self._fail(400, "Bad Request: protocol upgrades are not served here")
        elif error is not None:
            self._fail(400, f"Bad Request: malformed HTTP ({error})")
        elif not self._closed:
            # Refused from its Content-Length: answer now instead of reading the body.
            if self._busy:
                self._stopping = True  # after the answer in progress
            else:
                limit = self.endpoint.max_body_size
                self._fail(413, f"Payload Too Large: the body is over {limit} bytes")

    # -- answering ---------------------------------------------------------------------

    def _grace_over(self) -> None:
        self._grace = None
        if not self._busy and self.transport is not None:
            self.transport.close()

    def _next(self) -> None:
        if self._stopping and self._grace is None:
            if self.transport is not None:
                self.transport.close()
            return
        queue = self._queue
        while queue and not self._closed:
            request, keep_alive, too_large = queue.popleft()
            if self._stopping:
                # The first request of a connection accepted before the listener closed:
                # answered, then the connection closes.
                self._grace.cancel()  # type: ignore[union-attr]
                self._grace = None
                keep_alive = False
            if too_large:
                limit = self.endpoint.max_body_size
                self._write_whole(HTTPResponse(413, [("content-type", "application/json")],
                                               json_error_body(-32600, f"Payload Too Large: the "
                                                               f"body is over {limit} bytes")), False)
                return
            try:
                outcome = self._handle(request)
            except Exception:
                _LOGGER.exception("the MCP endpoint failed on %s %s", request.method, request.path)
                self._write_whole(HTTPResponse(500, [("content-type", "application/json")],
                                               json_error_body(-32603, "Internal error")), False)
                return
            if type(outcome) is HTTPResponse and outcome.stream is None:
                self._write_whole(outcome, keep_alive)
                if not keep_alive:
                    return
                continue
            self._busy = True
            self._answering = request.method
            self._task = self.loop.create_task(self._answer(outcome, keep_alive))
            return
        if not self._closed and self.transport is not None:
            if self._paused:
                self._paused = False
                self.transport.resume_reading()
            if self._idle is not None:
                # The timer is armed: moving its deadline is all _arm_idle would do.
                self._idle_deadline = self.loop.time() + self.keepalive_timeout
            else:
                self._arm_idle()

    async def _answer(self, outcome: Any, keep_alive: bool) -> None:
        try:
            response = outcome if isinstance(outcome, HTTPResponse) else await outcome
        except asyncio.CancelledError:
            return
        except Exception:
            _LOGGER.exception("the MCP endpoint failed")
            response = HTTPResponse(500, [("content-type", "application/json")],
                                    json_error_body(-32603, "Internal error"))
        if self._closed:
            response.close(disconnected=True)
            return
        if response.stream is None:
            self._write_whole(response, keep_alive)
        else:
            await self._write_stream(response, keep_alive)
        self._busy = False
        self._task = None
        self._answering = None
        self._set_drained()
        if keep_alive and not self._closed:
            self._next()

    def _set_drained(self) -> None:
        drained, self._drained = self._drained, None
        if drained is not None and not drained.done():
            drained.set_result(None)

    def _write_whole(self, response: HTTPResponse, keep_alive: bool) -> None:
        transport = self.transport
        if transport is None or self._closed:
            response.close(disconnected=True)
            return
        try:
            data = whole_response(response.status, response.headers, keep_alive, response.body)
        except Exception:
            # A response that cannot be written (a header outside latin-1, say): the
            # client gets a 500 instead of a cut connection, then the connection closes.
            _LOGGER.exception("an HTTP response could not be written: %r", response)
            data, keep_alive = _unwritable(), False
        transport.write(data)
        response.close()
        if not keep_alive:
            transport.close()
            self._closed = True

    async def _write_stream(self, response: HTTPResponse, keep_alive: bool) -> None:
        transport = self.transport
        assert transport is not None and response.stream is not None
        stream = response.stream
        try:
            head = stream_head(response.status, response.headers, keep_alive)
        except Exception:
            _LOGGER.exception("an HTTP response could not be written: %r", response)
            transport.write(_unwritable())
            transport.close()
            self._closed = True
            response.close(disconnected=True)
            await stream.aclose()  # type: ignore[attr-defined]
            return
        self._response = response
        transport.write(head)
        try:
            async for chunk in stream:
                if self._closed:
                    return
                transport.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                writable = self._writable
                if writable is not None and not writable.done():
                    await writable
            if not self._closed:
                transport.write(b"0\r\n\r\n")
                self._response = None
                response.close()
                if not keep_alive:
                    transport.close()
                    self._closed = True
        except asyncio.CancelledError:
            pass
        finally:
            await stream.aclose()  # type: ignore[attr-defined]

    def _fail(self, status: int, message: str) -> None:
        transport = self.transport
        if transport is None or self._closed:
            return
        if self._busy:
            # An answer is being written (a stream, say): an error now would land inside
            # it. The connection just ends; the answer in progress is cut.
            _LOGGER.debug("closing an HTTP connection: %s", message)
            transport.close()
            self._closed = True
            return
        body = json_error_body(-32600, message)
        transport.write(whole_response(status, [("content-type", "application/json")], False, body))
        transport.close()
        self._closed = True

    def _arm_idle(self) -> None:
        # Why lazily: a keep-alive connection goes idle after every answer; cancelling and
        # making a timer each time cost more than the rest of a small request's bookkeeping.
        # The deadline moves; the one timer, when it fires early, is set again for it.
        if self.keepalive_timeout and not self._closed:
            self._idle_deadline = self.loop.time() + self.keepalive_timeout
            if self._idle is None:
                self._idle = self.loop.call_later(self.keepalive_timeout, self._close_idle)

    def _close_idle(self) -> None:
        self._idle = None
        deadline = self._idle_deadline
        if deadline is None or self._closed:
            return  # a request is arriving or being answered: _arm_idle sets it again
        remaining = deadline - self.loop.time()
        if remaining > 0:
            self._idle = self.loop.call_later(remaining, self._close_idle)
            return
        if not self._busy and self.transport is not None:
            self.transport.close()

    def close_now(self) -> None:
        """End the connection at once (the end of a shutdown)."""
        if self.transport is not None and not self._closed:
            self.transport.close()

    def shutdown(self) -> Optional[asyncio.Future[None]]:
        """Stop taking requests: close now when idle, after the current answer otherwise.

        Returns a future done once the request being answered is answered, when that is
        a POST (a GET stream has no end of its own: it ends with its session), else None.
        A connection that has not sent its first request yet was accepted just before the
        listener closed: its request is on its way, so it gets FRESH_GRACE seconds to send
        it, which is answered (then the connection closes) -- closing it at once would fail
        a request the client had every reason to think accepted.
        """
        self._stopping = True
        self._queue.clear()
        if not self._busy:
            if not self._served and self.transport is not None and not self._closed:
                self._grace = self.loop.call_later(FRESH_GRACE, self._grace_over)
                if self._drained is None:
                    self._drained = self.loop.create_future()
                return self._drained
            if self.transport is not None:
                self.transport.close()
            return None
        if self._answering == "GET" or self._closed:
            return None
        if self._drained is None:
            self._drained = self.loop.create_future()
        return self._drained


def _unwritable() -> bytes:
    return whole_response(500, [("content-type", "application/json")], False,
                          json_error_body(-32603, "Internal error: the response could not be written"))


async def serve_http(
    endpoint: HTTPEndpoint,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    ready: Optional[Callable[[str, int], None]] = None,
    keepalive_timeout: float = DEFAULT_KEEPALIVE_TIMEOUT,
    max_connections: Optional[int] = DEFAULT_MAX_CONNECTIONS,
    shutdown_timeout: Optional[float] = DEFAULT_SHUTDOWN_TIMEOUT,
    backlog: int = 1024,
    reuse_port: bool = False,
    sock: Optional[socket.socket] = None,
) -> None:
    """Serve the endpoint on host:port until cancelled; ``ready(host, port)`` once
    listening (port 0 picks a free one); ``max_connections`` (None: no limit) caps the
    connections open at once; ``reuse_port``: SO_REUSEPORT, so that several processes
    listen on one port and the kernel spreads the connections; ``sock``: serve a listening
    socket made elsewhere instead (host and port are then ignored: ``mcpfast run
    --workers`` hands each worker one its supervisor keeps open).

    Cancelling it shuts down gracefully: the listening socket closes, idle connections
    close, requests being answered get up to ``shutdown_timeout`` seconds (None: as long
    as they take) to finish and be written, then every session ends (its GET stream
    closes, requests still running are cancelled) and the last connections close.
    Cancelling it again during that wait skips the rest of the wait."""
    if max_connections is not None and (isinstance(max_connections, bool)
                                        or not isinstance(max_connections, int)
                                        or max_connections < 1):
        raise ValueError(f"max_connections must be an int >= 1 or None, got {max_connections!r}")
    if shutdown_timeout is not None and not shutdown_timeout >= 0:
        raise ValueError(f"shutdown_timeout must be >= 0 or None, got {shutdown_timeout!r}")
    loop = asyncio.get_running_loop()
    connections: set[HTTPServerProtocol] = set()
    def protocol() -> HTTPServerProtocol:
        return HTTPServerProtocol(endpoint, keepalive_timeout, connections, max_connections)

    if sock is not None:
        server = await loop.create_server(protocol, sock=sock, backlog=backlog)
    else:
        server = await loop.create_server(protocol, host, port, backlog=backlog,
                                          reuse_port=reuse_port or None)
    try:
        bound = server.sockets[0].getsockname()
        if ready is not None:
            ready(bound[0], bound[1])
        await asyncio.Future()
    finally:
        server.close()
        endpoint.begin_shutdown()
        pending = [f for f in (c.shutdown() for c in list(connections)) if f is not None]
        if pending and shutdown_timeout != 0:
            _LOGGER.info("shutting down: waiting for %d request(s) to finish", len(pending))
            try:
                await asyncio.wait(pending, timeout=shutdown_timeout)
            except asyncio.CancelledError:
                _LOGGER.info("shutting down: no more waiting")
        endpoint.close()
        for connection in list(connections):
            connection.close_now()
        await server.wait_closed()
