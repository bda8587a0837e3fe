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
from typing import Callable, Optional

from mcpfast.transports.http.endpoint import HTTPEndpoint

# The connection is compiled (a typed class: its per-request work is C calls). Its
# constants are re-exported: MAX_HEAD_SIZE (64 KiB), FRESH_GRACE (seconds a connection
# accepted just before shutdown gets to send its first request).
from mcpfast.transports.http.http_connection import FRESH_GRACE as FRESH_GRACE
from mcpfast.transports.http.http_connection import MAX_HEAD_SIZE as MAX_HEAD_SIZE
from mcpfast.transports.http.http_connection import HTTPServerProtocol

__all__ = ["HTTPServerProtocol", "serve_http"]

_LOGGER = logging.getLogger("mcpfast.transports.http")

DEFAULT_MAX_CONNECTIONS = 1024
DEFAULT_KEEPALIVE_TIMEOUT = 75.0
DEFAULT_SHUTDOWN_TIMEOUT = 30.0


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
