"""One HTTP/1.1 connection of mcpfast's own Streamable HTTP server (stubs; the contract is in
mcpfast.transports.http.server's docstring, which re-exports HTTPServerProtocol)."""

import asyncio
from typing import Any, Final, Optional, final

from mcpfast.transports.http.endpoint import HTTPEndpoint

#: The most bytes of request target, header names and values a request may have.
MAX_HEAD_SIZE: Final[int]
#: Seconds a connection accepted just before shutdown gets to send its first request.
FRESH_GRACE: Final[float]

@final
class HTTPServerProtocol(asyncio.Protocol):
    """One HTTP/1.1 connection to the endpoint (mcpfast.transports.http.server's docstring).

    An asyncio protocol (connection_made, data_received, eof_received, connection_lost,
    pause_writing, resume_writing) made by serve_http for each connection.
    """

    def __init__(self, endpoint: HTTPEndpoint, keepalive_timeout: float,
                 connections: set[HTTPServerProtocol],
                 max_connections: Optional[int] = None) -> None: ...
    @property
    def endpoint(self) -> HTTPEndpoint: ...
    @property
    def keepalive_timeout(self) -> float: ...
    @property
    def connections(self) -> set[HTTPServerProtocol]: ...
    @property
    def max_connections(self) -> Optional[int]: ...
    @property
    def loop(self) -> asyncio.AbstractEventLoop: ...
    @property
    def transport(self) -> Optional[asyncio.Transport]: ...
    def connection_made(self, transport: Any) -> None: ...
    def connection_lost(self, exc: Optional[BaseException]) -> None: ...
    def eof_received(self) -> None: ...
    def pause_writing(self) -> None: ...
    def resume_writing(self) -> None: ...
    def data_received(self, data: bytes) -> None: ...
    def close_now(self) -> None:
        """End the connection at once (the end of a shutdown)."""
    def shutdown(self) -> Optional[asyncio.Future[None]]:
        """Stop taking requests: close now when idle, after the current answer otherwise.

        Returns a future done once the request being answered is answered, when that is
        a POST (a GET stream has no end of its own: it ends with its session), else None.
        A connection that has not sent its first request yet was accepted just before the
        listener closed: its request is on its way, so it gets FRESH_GRACE seconds to send
        it, which is answered (then the connection closes) -- closing it at once would fail
        a request the client had every reason to think accepted.
        """
