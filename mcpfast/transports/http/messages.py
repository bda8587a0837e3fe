"""HTTP requests and responses as the Streamable HTTP endpoint sees them.

The socket-facing servers (mcpfast's own HTTP/1.1 server, the ASGI application) turn what
they read into an :class:`HTTPRequest` and write out the :class:`HTTPResponse` they get
back; the endpoint never touches a socket.
"""

from __future__ import annotations

from typing import Any, AsyncIterator, Callable, Optional

from mcpfast._core.encode import encode_error

__all__ = ["HTTPRequest", "HTTPResponse", "json_error_body"]


class HTTPRequest:
    """One HTTP request with its whole body.

    ``headers``: lower-case names; a header sent several times has its values joined
    with ", " (RFC 9110 list syntax), which is how every header read here is defined.
    """

    __slots__ = ("method", "path", "query", "headers", "body")

    def __init__(self, method: str, path: str, headers: dict[str, str], body: bytes = b"",
                 query: str = "") -> None:
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body

    def __repr__(self) -> str:
        return f"<HTTPRequest {self.method} {self.path} {len(self.body)} bytes>"


class HTTPResponse:
    """A response: a whole ``body``, or a ``stream`` of chunks (an SSE stream).

    ``close()`` must be called by the server once the response is over: after the last
    chunk was written, or when the client went away before that (then ``disconnected``
    is True, and the endpoint cancels what the stream was waiting for).
    """

    __slots__ = ("status", "headers", "body", "stream", "_on_close", "closed")

    def __init__(self, status: int, headers: Optional[list[tuple[str, str]]] = None,
                 body: bytes = b"", stream: Optional[AsyncIterator[bytes]] = None,
                 on_close: Optional[Callable[[bool], None]] = None) -> None:
        self.status = status
        self.headers = headers if headers is not None else []
        self.body = body
        self.stream = stream
        self._on_close = on_close
        self.closed = False

    def header(self, name: str) -> Optional[str]:
        """The value of a response header (case-insensitive), None when absent."""
        name = name.lower()
        for key, value in self.headers:
            if key.lower() == name:
                return value
        return None

    def close(self, disconnected: bool = False) -> None:
        """The response is over (see the class docstring). Idempotent."""
        if self.closed:
            return
        self.closed = True
        on_close, self._on_close = self._on_close, None
        if on_close is not None:
            on_close(disconnected)

    def __repr__(self) -> str:
        kind = "stream" if self.stream is not None else f"{len(self.body)} bytes"
        return f"<HTTPResponse {self.status} {kind}>"


def json_error_body(code: int, message: str, request_id: Any = None) -> bytes:
    """A JSON-RPC error object as an HTTP body (for answers the session never saw)."""
    return encode_error(request_id, code, message)
