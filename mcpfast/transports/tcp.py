"""The TCP transport: newline-delimited JSON-RPC over TCP, one conn per connection.

Not an MCP-specified transport: a plain, fast byte stream for trusted networks (sidecars,
gateways, benchmarks) with exactly the stdio framing. TCP_NODELAY is set on every
connection: frames are small and a round trip must not wait for Nagle's algorithm.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from typing import Any, Callable, Optional, Set

from mcpfast._core.framing import DEFAULT_MAX_FRAME_SIZE
from mcpfast.transports.stream import ConnFactory, FrameProtocol, StreamConnection

__all__ = ["TCPFrameProtocol", "open_tcp", "serve_tcp"]

# Seconds serve_tcp waits, once cancelled, for dropped connections to finish closing.
SERVER_CLOSE_TIMEOUT = 5.0


def set_nodelay(transport: asyncio.BaseTransport) -> None:
    """Turn Nagle's algorithm off on a TCP transport's socket (no-op for other sockets)."""
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class TCPFrameProtocol(FrameProtocol):
    """FrameProtocol for a TCP connection: sets TCP_NODELAY when connected."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:  # type: ignore[override]
        set_nodelay(transport)
        super().connection_made(transport)


async def serve_tcp(
    factory: ConnFactory,
    host: Optional[str] = "127.0.0.1",
    port: int = 0,
    *,
    max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
    ready: Optional[Callable[[str, int], Any]] = None,
    write_high_water: Optional[int] = None,
    backlog: int = 128,
) -> None:
    """Accept TCP connections on host:port forever; each gets its own conn from factory(send).

    port 0 picks a free port: ``ready(host, port)`` is called with the address actually
    bound once the server listens (with several sockets, e.g. host None on a dual-stack
    machine, the first one's). A connection ends as described in stream.py (EOF:
    ``conn.close()``); a failing factory or conn affects only its own connection.
    Runs until cancelled; then it stops listening, drops every open connection
    (``conn.close()``) and re-raises CancelledError. Raises OSError when it cannot listen.
    """
    if not callable(factory):
        raise TypeError(f"factory must be callable, not {type(factory).__name__}")
    loop = asyncio.get_running_loop()
    live: Set[FrameProtocol] = set()

    def accept() -> FrameProtocol:
        protocol = TCPFrameProtocol(
            factory, max_frame_size=max_frame_size, write_high_water=write_high_water
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
) -> StreamConnection:
    """Connect to host:port and wire the connection to a conn made by factory(send).

    When the server closes the connection (or it breaks), ``conn.close(ConnectionError)``
    is called so every waiter fails, and ``closed`` completes. ``close()`` flushes what
    was sent and closes. Raises OSError when the connection cannot be made and whatever
    factory raises (the connection is then closed).
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
        ),
        host,
        port,
    )
    if protocol.factory_error is not None:
        error = protocol.factory_error
        await protocol.shutdown()
        raise error
    return StreamConnection(protocol)
