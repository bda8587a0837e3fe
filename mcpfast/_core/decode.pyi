"""decode(frame): validate one JSON-RPC 2.0 frame with simdjson and return typed messages."""

from typing import Union

from mcpfast._core.messages import ErrorResponse, Notification, Request, Response

PARSE_ERROR: int
INVALID_REQUEST: int
MAX_DEPTH: int

_AnyMessage = Union[Request, Notification, Response, ErrorResponse]

class DecodeError(ValueError):
    """A frame that is not valid JSON-RPC 2.0.

    ``code``: -32700 (parse error) or -32600 (invalid request); ``message``: what is wrong;
    ``id``: the request id when it could be read, else None (answer with id null).
    """

    code: int
    message: str
    id: int | str | None
    def __init__(self, code: int, message: str, id: int | str | None = None) -> None: ...

def decode(frame: bytes | bytearray | memoryview | str, /) -> _AnyMessage | list[_AnyMessage | DecodeError]:
    """Decode one frame into typed messages; a JSON array gives a list (bad elements in place)."""
