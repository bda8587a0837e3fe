"""Typed JSON-RPC 2.0 messages with a lazy payload (compiled: messages.pyx)."""

from typing import Any, Union

_JSONValue = Any
_RequestId = Union[int, str]

class Message:
    """Base of the four JSON-RPC message kinds; holds the lazy payload."""

    @property
    def payload_built(self) -> bool:
        """False while a decoded payload is still only its tape (nobody read it yet)."""

class Request(Message):
    """A JSON-RPC request: ``id`` (int or str), ``method``, ``params`` (dict, list or None)."""

    id: _RequestId
    method: str
    def __init__(self, id: _RequestId, method: str, params: dict[str, Any] | list[Any] | None = None) -> None: ...
    @property
    def params(self) -> dict[str, Any] | list[Any] | None:
        """The params as Python objects (built on first access), or None when absent."""

class Notification(Message):
    """A JSON-RPC notification: ``method`` and ``params`` (dict, list or None); no id."""

    method: str
    def __init__(self, method: str, params: dict[str, Any] | list[Any] | None = None) -> None: ...
    @property
    def params(self) -> dict[str, Any] | list[Any] | None:
        """The params as Python objects (built on first access), or None when absent."""

class Response(Message):
    """A successful JSON-RPC response: ``id`` and ``result`` (any JSON value)."""

    id: _RequestId
    def __init__(self, id: _RequestId, result: _JSONValue) -> None: ...
    @property
    def result(self) -> _JSONValue:
        """The result as Python objects (built on first access)."""

class ErrorResponse(Message):
    """A JSON-RPC error response: ``id`` (None when null), ``code``, ``message``, ``data``."""

    id: _RequestId | None
    code: int
    message: str
    def __init__(self, id: _RequestId | None, code: int, message: str, data: _JSONValue = ...) -> None: ...
    @property
    def data(self) -> _JSONValue:
        """error.data as Python objects (built on first access), or None when absent."""
    @property
    def has_data(self) -> bool:
        """True when the error carries a data member (even a null one)."""

class Verbatim:
    """``Verbatim(message)``: the payload of a message (params, result or error data; null
    when it has none) as a value the encoder writes as it came -- from the message's tape
    while nobody read it, no Python objects built --, else from the built payload, with the
    same bytes: ``encode_response(id, Verbatim(upstream_response))``."""

    message: Message
    def __init__(self, message: Message) -> None: ...
    @property
    def value(self) -> _JSONValue:
        """The payload as Python objects (built on first access)."""
