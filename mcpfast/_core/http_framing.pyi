"""Sans-I/O HTTP/1.1 request framing over httptools (the llhttp parser of Node.js).

HTTPRequestFramer turns the bytes one client sends on a connection into whole requests, in
order: method and path as str, the query string, headers in a dict (lower-case names,
latin-1 values, a repeated header's values joined with ", "), the whole body as bytes, and
whether the connection stays open after it. Limits are enforced while reading: a request
head over max_head_size is a parse error; a body over max_body_size (from Content-Length as
soon as the head is read, or from the bytes read) marks the request too large and its
bytes are dropped instead of kept. It knows nothing of sockets, asyncio or MCP.
"""

from typing import Any, Callable, Final, Iterable, final

from typing_extensions import Buffer

#: The max_head_size of a framer when none is given (64 KiB): bytes of the request target,
#: header names and header values together.
DEFAULT_MAX_HEAD_SIZE: Final[int]

@final
class HTTPRequestFramer:
    """Splits the bytes of one HTTP/1.1 connection into requests (see the module docstring).

    feed() returns the requests the bytes complete as (request, keep_alive, too_large)
    tuples, request being ``request_class(method, path, headers, body, query)``; a parse
    error ends the stream and is kept in ``error``.

    Plain requests given as bytes (HTTP/1.1, origin-form target, ordinary headers, a
    Content-Length body, all present) are read without llhttp; they come out exactly as
    llhttp's reading would give them, and anything else is llhttp's to read.
    """

    def __new__(cls, request_class: Callable[[str, str, dict[str, str], bytes, str], Any],
                max_body_size: int, max_head_size: int = 65536,
                require_host: bool = False) -> HTTPRequestFramer:
        """Raises ValueError when a limit is negative. ``require_host``: an HTTP/1.1
        request without exactly one Host header is a parse error (RFC 9112 3.2: 400)."""
    @property
    def request_class(self) -> Callable[[str, str, dict[str, str], bytes, str], Any]:
        """What each request is made with."""
    @property
    def max_body_size(self) -> int:
        """The most bytes a body may have; a longer one makes its request too large."""
    @property
    def max_head_size(self) -> int:
        """The most bytes of target, header names and values a request may have."""
    @property
    def error(self) -> Exception | None:
        """The httptools.HttpParserError (or HttpParserUpgrade) that ended the stream."""
    @property
    def failed(self) -> bool:
        """True after a feed() that left ``error`` set or the request being read refused."""
    @property
    def require_host(self) -> bool:
        """Whether an HTTP/1.1 request must carry exactly one Host header."""
    @property
    def reading(self) -> bool:
        """True while a request is partly read (its head or its body still to come)."""
    #: True once a head asking for 100 (Continue) is read and its body has not come; the
    #: caller sends the interim response and sets it back to False.
    continue_wanted: bool
    @property
    def refusing(self) -> bool:
        """True while the request being read is over max_body_size (its body is dropped)."""
    def feed(self, data: Buffer) -> list[tuple[Any, bool, bool]] | None:
        """Add bytes; return the requests they complete, in order, or None when none.

        Each is (request, keep_alive, too_large): too_large when its body was over
        max_body_size (the body is then b""). A parse error (with ``require_host``, an
        HTTP/1.1 request without exactly one Host among them) ends the stream: ``error`` is set, the requests
        completed before it are returned, and later calls return None. An Upgrade header is
        ignored (the request is read as HTTP/1.1, body included); a CONNECT request comes
        out with keep_alive False and nothing after it is read.
        """
    def on_message_begin(self) -> None:
        """Called by the parser (httptools callback); not for other callers."""
    def on_url(self, url: bytes) -> None:
        """Called by the parser (httptools callback); not for other callers."""
    def on_header(self, name: bytes, value: bytes) -> None:
        """Called by the parser (httptools callback); not for other callers."""
    def on_headers_complete(self) -> None:
        """Called by the parser (httptools callback); not for other callers."""
    def on_body(self, body: bytes) -> None:
        """Called by the parser (httptools callback); not for other callers."""
    def on_message_complete(self) -> None:
        """Called by the parser (httptools callback); not for other callers."""

def whole_response(status: int, headers: Iterable[tuple[str, str]], keep_alive: bool,
                   body: Buffer) -> bytes:
    """A response with a Content-Length, head and body, as one bytes object.

    ``headers``: (name, value) pairs written as given (latin-1); ``connection: close`` is
    added unless ``keep_alive``. ``body``: any bytes-like object.
    """

def stream_head(status: int, headers: Iterable[tuple[str, str]], keep_alive: bool) -> bytes:
    """The head of a response whose body follows with chunked transfer encoding."""
