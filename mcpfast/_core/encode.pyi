"""Compiled JSON encoding of Python values and JSON-RPC 2.0 messages.

All output is compact UTF-8 JSON (separators "," and ":", no trailing newline), byte for
byte what ``json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()`` writes
for the values accepted: dict (str keys), list, tuple, str, int, float, bool, None and the
typed messages.  Subclasses of dict/list/tuple/str/int/float are written as their base type
without calling their methods.  Integers must lie in [-2**63, 2**64-1] -- the decoder
refuses larger ones too, so both directions agree; floats are written as repr() writes
them, NaN and infinities are refused; nesting is limited to MAX_DEPTH containers, counting
the JSON-RPC envelope.  A decoded message whose payload was never read is written straight
from its simdjson tape, with the same bytes as after building it; so is a ``Verbatim``
(a message's payload standing alone) wherever it stands.
"""

from typing import Any, Callable, Final, Union

from typing_extensions import Buffer

from mcpfast._core.messages import ErrorResponse, Message, Notification, Request, Response, Verbatim

#: The deepest nesting of containers written (1024, as the decoder accepts), envelope included.
MAX_DEPTH: Final[int]

_JSONValue = Union[
    None, bool, int, float, str, list["_JSONValue"], tuple["_JSONValue", ...],
    dict[str, "_JSONValue"], Message, Verbatim,
]
_RequestId = Union[int, str]

class EncodeError(ValueError):
    """A value that cannot be encoded as JSON.

    ``message`` says what is wrong; ``path`` is where, a JSONPath-like location inside what
    was being encoded ("$" for the value itself, "$.params.items[2]", "$[1].result").
    """

    message: str
    path: str

    def __init__(self, message: str, path: str = "$") -> None: ...

def dumps(value: _JSONValue) -> bytes:
    """Compact JSON of value; raises EncodeError for a value with no JSON form here."""

def encode_request(id: _RequestId, method: str, params: _JSONValue = None) -> bytes:
    """``{"jsonrpc":"2.0","id":id,"method":method,"params":params}``; params left out when None.

    TypeError when id is not an int or str (bool included) or method is not a str.
    """

def encode_notification(method: str, params: _JSONValue = None) -> bytes:
    """``{"jsonrpc":"2.0","method":method,"params":params}``; params left out when None."""

def encode_response(id: _RequestId, result: _JSONValue) -> bytes:
    """``{"jsonrpc":"2.0","id":id,"result":result}``."""

def encode_error(
    id: _RequestId | None, code: int, message: str, data: _JSONValue = ...
) -> bytes:
    """``{"jsonrpc":"2.0","id":id,"error":{"code":code,"message":message,"data":data}}``.

    id None is written as null; data is left out unless given (data=None writes null).
    TypeError when code is not an int (bool included) or message not a str; EncodeError
    when code does not fit in 64 bits.
    """

def encode_message(message: Request | Notification | Response | ErrorResponse) -> bytes:
    """The JSON of a typed message (from its tape when its payload was never read)."""

def encode_batch(
    items: list[Message | Buffer] | tuple[Message | Buffer, ...],
) -> bytes:
    """A JSON array of messages; bytes-like items are already encoded and go in verbatim.

    EncodeError for an empty batch (not valid JSON-RPC), an empty bytes item, or an item
    that is neither a message nor bytes/bytearray/contiguous memoryview.
    """

def error_code_of(frame: Buffer) -> int | None:
    """The ``code`` of the error response ``frame``, or None when it is not one (frames
    laid out as encode_response / encode_error write them are read in place, any other
    is decoded)."""

class Extension:
    """``Extension(members, otherwise)``: ``extension(value)`` answers, for a dict (exactly
    a dict) holding none of the keys of ``members``, an :class:`Extended` value that the
    encoder writes as that dict with ``members`` added at its end (encoded once, when the
    extension is made: the same bytes as encoding a copy of the dict with the members set
    in order, without making the copy); for any other value, ``otherwise(value)``.
    ValueError for no members, TypeError for a key that is not a str, EncodeError for
    members with no JSON form."""

    text: bytes
    keys: tuple[str, ...]
    otherwise: Callable[[Any], Any]

    def __init__(self, members: dict[str, _JSONValue], otherwise: Callable[[Any], Any]) -> None: ...
    def __call__(self, value: Any) -> Any: ...

class Extended:
    """A dict and the members its Extension adds when it is encoded (made by calling an
    Extension, which see); ``value`` is the dict, unchanged."""

    value: dict[str, Any]
    extension: Extension

    def __init__(self, *args: Any, **kwargs: Any) -> None: ...
    def to_dict(self) -> dict[str, Any]:
        """A new dict: ``value`` with the members added (what the encoder writes)."""
