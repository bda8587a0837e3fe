"""The TCP transport: newline-delimited JSON-RPC over TCP, one conn per connection.

Not an MCP-specified transport: a plain, fast byte stream for trusted networks (sidecars,
gateways, benchmarks) with exactly the stdio framing. TCP_NODELAY is set on every
connection: frames are small and a round trip must not wait for Nagle's algorithm.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import socket
import time
from typing import Any, Callable, Optional, Set

from mcpfast._core.framing import DEFAULT_MAX_FRAME_SIZE
from mcpfast.transports.budget import InputBudget
from mcpfast.transports.stream import (
    DEFAULT_MAX_WRITE_BUFFER,
    DEFAULT_WRITE_TIMEOUT,
    LOGGER,
    ConnFactory,
    FrameProtocol,
    StreamConnection,
    check_positive_int,
    check_stream_options,
)

__all__ = [
    "DEFAULT_IDLE_TIMEOUT",
    "DEFAULT_MAX_CONNECTIONS",
    "TCPFrameProtocol",
    "open_tcp",
    "serve_tcp",
]

# Seconds serve_tcp waits, once cancelled, for dropped connections to finish closing.
SERVER_CLOSE_TIMEOUT = 5.0
#: Connections serve_tcp keeps open at once by default.
DEFAULT_MAX_CONNECTIONS = 1024
#: Seconds of inactivity (or of one incomplete line) after which serve_tcp closes a
#: connection by default. Activity is a frame received or sent: a call whose handler runs
#: longer than this without sending anything (progress counts) needs a larger value.
DEFAULT_IDLE_TIMEOUT = 300.0
# Seconds between two log lines about refused connections.
REFUSAL_LOG_INTERVAL = 1.0


def set_nodelay(transport: asyncio.BaseTransport) -> None:
    """Turn Nagle's algorithm off on a TCP transport's socket (no-op for other sockets)."""
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class TCPFrameProtocol(FrameProtocol):
    """FrameProtocol for a TCP connection: sets TCP_NODELAY when connected."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        set_nodelay(transport)
        super().connection_made(transport)


class Admission:
    """Counts a server's open connections and refuses new ones beyond max_connections.

    A refused connection is accepted and closed at once (the peer reads EOF right away)
    rather than left unaccepted: asyncio cannot stop accepting without closing the
    listening socket, and a connection waiting in the kernel's backlog looks like a hung
    server to its peer, where an immediate close is a clear answer it can retry on. Refusals
    are logged at most once per REFUSAL_LOG_INTERVAL seconds, with their count.
    """

    __slots__ = ("max_connections", "live", "_refused", "_logged_at", "_logger")

    def __init__(self, max_connections: int, logger: logging.Logger) -> None:
        self.max_connections = check_positive_int("max_connections", max_connections)
        self.live: Set[FrameProtocol] = set()
        self._refused = 0
        self._logged_at = -math.inf
        self._logger = logger

    def full(self) -> bool:
        return len(self.live) >= self.max_connections

    def refused(self) -> None:
        self._refused += 1
        now = time.monotonic()
        if now - self._logged_at >= REFUSAL_LOG_INTERVAL:
            self._logger.warning(
                "refused %d connection(s): %d open, max_connections=%d",
                self._refused, len(self.live), self.max_connections,
            )
            self._refused = 0
            self._logged_at = now


class RefusedProtocol(asyncio.Protocol):
    """Protocol of a connection over max_connections: closes it as soon as it is made."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport.close()


async def serve_tcp(
    factory: ConnFactory,
    host: Optional[str] = "127.0.0.1",
    port: int = 0,
    *,
    max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
    ready: Optional[Callable[[str, int], Any]] = None,
    write_high_water: Optional[int] = None,
    backlog: int = 128,
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
    idle_timeout: Optional[float] = DEFAULT_IDLE_TIMEOUT,
    max_buffered: Optional[int] = None,
    max_write_buffer: int = DEFAULT_MAX_WRITE_BUFFER,
    write_timeout: Optional[float] = DEFAULT_WRITE_TIMEOUT,
) -> None:
    """Accept TCP connections on host:port forever; each gets its own conn from factory(send).

    port 0 picks a free port: ``ready(host, port)`` is called with the address actually
    bound once the server listens (with several sockets, e.g. host None on a dual-stack
    machine, the first one's). A connection ends as described in stream.py (EOF:
    ``conn.close()``); a failing factory or conn affects only its own connection.
    Runs until cancelled; then it stops listening, drops every open connection
    (``conn.close()``) and re-raises CancelledError. Raises OSError when it cannot listen.

    Limits (README, "Limits"):
    max_connections: connections open at once; one more is closed as soon as it is
        accepted (logged).
    idle_timeout: seconds (None: never) after which a connection that received no frame
        and sent none, or held one incomplete line all along, is closed (conn.close gets
        ConnectionIdle); checked once per period, so it closes within two periods.
    max_buffered: bytes of incomplete lines all connections may hold together (default
        4 x max_frame_size); beyond it the connection holding the largest is dropped.
    max_write_buffer, write_timeout: a peer that leaves more than max_write_buffer bytes
        unread and reads nothing for write_timeout seconds (None: never) is dropped
        (conn.close gets PeerNotReading). Above the write high-water mark reading from a
        peer and handing its requests over pause until its writes drain; replies of the
        requests already running are queued, never dropped.
    """
    # Bad values fail here, before listening, not in the first connection.
    check_stream_options(factory, max_frame_size=max_frame_size,
                         write_high_water=write_high_water,
                         max_write_buffer=max_write_buffer, idle_timeout=idle_timeout,
                         write_timeout=write_timeout)
    budget = InputBudget(4 * max_frame_size if max_buffered is None else max_buffered)
    admission = Admission(max_connections, LOGGER)
    live = admission.live
    loop = asyncio.get_running_loop()

    def accept() -> asyncio.Protocol:
        if admission.full():
            admission.refused()
            return RefusedProtocol()
        protocol = TCPFrameProtocol(
            factory,
            max_frame_size=max_frame_size,
            write_high_water=write_high_water,
            idle_timeout=idle_timeout,
            budget=budget,
            max_write_buffer=max_write_buffer,
            write_timeout=write_timeout,
        )
        live.add(protocol)
        protocol.closed.add_done_callback(lambda _: live.discard(protocol))
        return protocol

    server = await loop.create_server(accept, host, port, backlog=backlog)
    try:
        if ready is not None:
            bound_host, bound_port = server.sockets[0].getsockname()[:2]
            ready(bound_host, bound_port)
        # Not server.serve_forever(): on newer Pythons its cancellation waits for every
        # connection to end, before the ones still open could be dropped below.
        await loop.create_future()
    finally:
        server.close()
        dropped = list(live)
        for protocol in dropped:
            protocol.abort()
        if dropped:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(
                    asyncio.gather(*(asyncio.shield(p.closed) for p in dropped)),
                    SERVER_CLOSE_TIMEOUT,
                )


async def open_tcp(
    host: str,
    port: int,
    factory: ConnFactory,
    *,
    max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
    write_high_water: Optional[int] = None,
    max_write_buffer: int = DEFAULT_MAX_WRITE_BUFFER,
    idle_timeout: Optional[float] = None,
) -> StreamConnection:
    """Connect to host:port and wire the connection to a conn made by factory(send).

    When the server closes the connection (or it breaks), ``conn.close(ConnectionError)``
    is called so every waiter fails, and ``closed`` completes. ``close()`` flushes what
    was sent and closes. Raises OSError when the connection cannot be made and whatever
    factory raises (the connection is then closed). When the server leaves
    max_write_buffer bytes unread, send() raises WriteBufferFull (the frame is not sent;
    the connection stays). idle_timeout: as for serve_tcp (default None: never).
    """
    if not callable(factory):
        raise TypeError(f"factory must be callable, not {type(factory).__name__}")
    loop = asyncio.get_running_loop()
    _, protocol = await loop.create_connection(
        lambda: TCPFrameProtocol(
            factory,
            client_side=True,
            max_frame_size=max_frame_size,
            write_high_water=write_high_water,
            max_write_buffer=max_write_buffer,
            idle_timeout=idle_timeout,
        ),
        host,
        port,
    )
    if protocol.factory_error is not None:
        error = protocol.factory_error
        await protocol.shutdown()
        raise error
    return StreamConnection(protocol)
