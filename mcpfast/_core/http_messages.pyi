"""HTTP requests and responses as the Streamable HTTP endpoint sees them (stubs; see the
compiled module's docstring)."""

from typing import AsyncIterator, Callable, Optional

class HTTPRequest:
    """One HTTP request with its whole body.

    ``headers``: lower-case names; a header sent several times has its values joined
    with ", " (RFC 9110 list syntax), which is how every header read here is defined.
    """

    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: bytes
    # The client's (host, port) as the server's socket saw it, else None.
    client: Optional[tuple[str, int]]

    def __init__(self, method: str, path: str, headers: dict[str, str], body: bytes = b"",
                 query: str = "", client: Optional[tuple[str, int]] = None) -> None: ...

class HTTPResponse:
    """A response: a whole ``body``, or a ``stream`` of chunks (an SSE stream).

    ``close()`` must be called by the server once the response is over: after the last
    chunk was written, or when the client went away before that (then ``disconnected``
    is True, and the endpoint cancels what the stream was waiting for).
    """

    status: int
    headers: list[tuple[str, str]]
    body: bytes
    stream: Optional[AsyncIterator[bytes]]
    closed: bool

    def __init__(self, status: int, headers: Optional[list[tuple[str, str]]] = None,
                 body: bytes = b"", stream: Optional[AsyncIterator[bytes]] = None,
                 on_close: Optional[Callable[[bool], None]] = None) -> None: ...
    def header(self, name: str) -> Optional[str]:
        """The value of a response header (case-insensitive), None when absent."""
    def close(self, disconnected: bool = False) -> None:
        """The response is over (see the class docstring). Idempotent."""

