"""HTTP/1.1 responses read for a client connection, sans I/O (stubs; the contract is in
the compiled module's docstring).

ResponseReader.feed() reads the bytes a connection receives and tells its ``answer`` (an
AnswerSink, mcpfast.transports.http.client_connection) what they hold: a plain response
whole in the bytes at hand in one call, ``whole(status, headers, content_type, body,
keep_alive)``; any other through httptools' llhttp, in steps (``header``, ``headers_done``,
``body``, ``complete``). A malformed response, or a head over ``max_head_size`` bytes,
raises httptools.HttpParserError.
"""

from typing import Any, Final, final

#: The max_head_size of a reader when none is given (64 KiB of header names and values).
DEFAULT_MAX_HEAD_SIZE: Final[int]

@final
class ResponseReader:
    """Reads the responses of one HTTP/1.1 client connection (see the module docstring)
    and hands them to ``answer``."""

    #: The AnswerSink the answer being read goes to (None: dropped).
    answer: Any

    def __init__(self, max_head_size: int = 65536) -> None:
        """Raises ValueError when ``max_head_size`` is negative."""
    @property
    def max_head_size(self) -> int: ...
    def feed(self, data: bytes) -> None:
        """Read ``data``, the next bytes of the connection (module docstring)."""
    def on_message_begin(self) -> None: ...
    def on_header(self, name: bytes, value: bytes) -> None: ...
    def on_headers_complete(self) -> None: ...
    def on_body(self, body: bytes) -> None: ...
    def on_message_complete(self) -> None: ...
