"""The error catalogue of mcpfast and the exceptions that carry error codes.

Codes
-----
Every code mcpfast sends or recognises is a module constant here, and ``CATALOGUE`` maps it
to an :class:`ErrorCode` (name, default message, where the code is defined). Where the
specification defines a code it is used; the codes of the seed design (erlmcp) are kept
for the cases the specification leaves open.

JSON-RPC 2.0 (https://www.jsonrpc.org/specification#error_object):
  -32700 PARSE_ERROR, -32600 INVALID_REQUEST, -32601 METHOD_NOT_FOUND,
  -32602 INVALID_PARAMS, -32603 INTERNAL_ERROR.
MCP specification:
  -32002 RESOURCE_NOT_FOUND (resources/read of an unknown URI, every version),
  -32042 URL_ELICITATION_REQUIRED (2025-11-25: URLElicitationRequiredError; ``data`` must
  hold ``elicitations``), and from 2026-07-28: -32020 HEADER_MISMATCH,
  -32021 MISSING_REQUIRED_CLIENT_CAPABILITY, -32022 UNSUPPORTED_PROTOCOL_VERSION.
Seed codes (erlmcp's include/erlmcp.hrl and its error-code reference), used where the
specification is silent:
  -32005 NOT_INITIALIZED, -32008 TRANSPORT_ERROR, -32009 REQUEST_TIMEOUT,
  -32010 RATE_LIMITED, -32012 MESSAGE_TOO_LARGE, -32061 UNSUPPORTED_VERSION.
  (The seed's -32001 "resource not found" and -32002 "tool not found" are not kept: the
  specification gives -32002 to resource not found and -32602 to an unknown tool.)
Local only:
  -32800 REQUEST_CANCELLED, the code of :class:`RequestCancelled`. MCP sends no response
  to a cancelled request, so no code is defined for it there; -32800 is the code the
  Language Server Protocol (another JSON-RPC 2.0 protocol) defines for the same event.

category(code) -- where a code belongs, decided by these rules in order:
  "parse"       -32700
  "protocol"    -32600 (the message is not a valid JSON-RPC request)
  "method"      -32601
  "params"      -32602
  "internal"    -32603
  "reserved"    any other code in -32768..-32100, the block JSON-RPC reserves for
                pre-defined errors
  "mcp"         a code in the server-error block -32099..-32000 that the MCP specification
                defines (RESOURCE_NOT_FOUND, URL_ELICITATION_REQUIRED, HEADER_MISMATCH,
                MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION)
  "server"      any other code in -32099..-32000 (implementation-defined server errors,
                the seed codes among them)
  "application" every other integer (codes outside JSON-RPC's reserved block are free for
                applications; REQUEST_CANCELLED falls here)

severity(code) -- how bad an error is for the one who receives it:
  "critical"    the message could not be processed at all or the receiver failed: the
                connection or the peer is in trouble (PARSE_ERROR, INVALID_REQUEST,
                INTERNAL_ERROR, MESSAGE_TOO_LARGE, TRANSPORT_ERROR)
  "warning"     transient: the same request can succeed later or after a step the caller
                can take (RATE_LIMITED, REQUEST_TIMEOUT, NOT_INITIALIZED,
                URL_ELICITATION_REQUIRED)
  "info"        nothing failed: the requester gave the request up (REQUEST_CANCELLED)
  "error"       every other code: the request as sent cannot be served (METHOD_NOT_FOUND,
                INVALID_PARAMS, RESOURCE_NOT_FOUND, the version and header errors, and
                codes not in the catalogue)

Exceptions
----------
:class:`JSONRPCError` is "an error with a code": a handler raises it to answer a request
with that error, and an outgoing request raises it when the peer answered with an error.
Subclasses fix the code of the common cases (:class:`MethodNotFound`,
:class:`InvalidParams`, :class:`InternalError`) and name what can happen to an outgoing
request on this side (:class:`RequestTimeout`, :class:`RequestCancelled`,
:class:`ConnectionClosed`, :class:`MessageTooLarge`).
"""

from __future__ import annotations

from typing import Any, Mapping, NamedTuple

__all__ = [
    "ABSENT",
    "CATALOGUE",
    "ConnectionClosed",
    "ErrorCode",
    "HEADER_MISMATCH",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "InternalError",
    "InvalidParams",
    "JSONRPCError",
    "METHOD_NOT_FOUND",
    "MESSAGE_TOO_LARGE",
    "MISSING_REQUIRED_CLIENT_CAPABILITY",
    "MessageTooLarge",
    "MethodNotFound",
    "NOT_INITIALIZED",
    "PARSE_ERROR",
    "RATE_LIMITED",
    "REQUEST_CANCELLED",
    "REQUEST_TIMEOUT",
    "RESOURCE_NOT_FOUND",
    "RequestCancelled",
    "RequestTimeout",
    "TRANSPORT_ERROR",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "UNSUPPORTED_VERSION",
    "URL_ELICITATION_REQUIRED",
    "category",
    "default_message",
    "error_from_response",
    "severity",
]

# JSON-RPC 2.0
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# MCP specification
RESOURCE_NOT_FOUND = -32002
URL_ELICITATION_REQUIRED = -32042
HEADER_MISMATCH = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022
# Seed (erlmcp)
NOT_INITIALIZED = -32005
TRANSPORT_ERROR = -32008
REQUEST_TIMEOUT = -32009
RATE_LIMITED = -32010
MESSAGE_TOO_LARGE = -32012
UNSUPPORTED_VERSION = -32061
# Local only
REQUEST_CANCELLED = -32800


class ErrorCode(NamedTuple):
    """One catalogue entry: the code, its constant's name, its default message and source.

    ``source`` is "json-rpc", "mcp <version>" (the first MCP version defining it), "seed"
    or "local".
    """

    code: int
    name: str
    message: str
    source: str


CATALOGUE: Mapping[int, ErrorCode] = {
    e.code: e
    for e in (
        ErrorCode(PARSE_ERROR, "PARSE_ERROR", "Parse error", "json-rpc"),
        ErrorCode(INVALID_REQUEST, "INVALID_REQUEST", "Invalid Request", "json-rpc"),
        ErrorCode(METHOD_NOT_FOUND, "METHOD_NOT_FOUND", "Method not found", "json-rpc"),
        ErrorCode(INVALID_PARAMS, "INVALID_PARAMS", "Invalid params", "json-rpc"),
        ErrorCode(INTERNAL_ERROR, "INTERNAL_ERROR", "Internal error", "json-rpc"),
        ErrorCode(RESOURCE_NOT_FOUND, "RESOURCE_NOT_FOUND", "Resource not found", "mcp 2024-11-05"),
        ErrorCode(
            URL_ELICITATION_REQUIRED,
            "URL_ELICITATION_REQUIRED",
            "URL elicitation required",
            "mcp 2025-11-25",
        ),
        ErrorCode(HEADER_MISMATCH, "HEADER_MISMATCH", "Header mismatch", "mcp 2026-07-28"),
        ErrorCode(
            MISSING_REQUIRED_CLIENT_CAPABILITY,
            "MISSING_REQUIRED_CLIENT_CAPABILITY",
            "Missing required client capability",
            "mcp 2026-07-28",
        ),
        ErrorCode(
            UNSUPPORTED_PROTOCOL_VERSION,
            "UNSUPPORTED_PROTOCOL_VERSION",
            "Unsupported protocol version",
            "mcp 2026-07-28",
        ),
        ErrorCode(NOT_INITIALIZED, "NOT_INITIALIZED", "Server not initialized", "seed"),
        ErrorCode(TRANSPORT_ERROR, "TRANSPORT_ERROR", "Transport error", "seed"),
        ErrorCode(REQUEST_TIMEOUT, "REQUEST_TIMEOUT", "Request timeout", "seed"),
        ErrorCode(RATE_LIMITED, "RATE_LIMITED", "Rate limit exceeded", "seed"),
        ErrorCode(MESSAGE_TOO_LARGE, "MESSAGE_TOO_LARGE", "Message too large", "seed"),
        ErrorCode(
            UNSUPPORTED_VERSION, "UNSUPPORTED_VERSION", "Unsupported protocol version", "seed"
        ),
        ErrorCode(REQUEST_CANCELLED, "REQUEST_CANCELLED", "Request cancelled", "local"),
    )
}

_JSONRPC_CATEGORIES = {
    PARSE_ERROR: "parse",
    INVALID_REQUEST: "protocol",
    METHOD_NOT_FOUND: "method",
    INVALID_PARAMS: "params",
    INTERNAL_ERROR: "internal",
}
_MCP_SPEC_CODES = frozenset(
    {
        RESOURCE_NOT_FOUND,
        URL_ELICITATION_REQUIRED,
        HEADER_MISMATCH,
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        UNSUPPORTED_PROTOCOL_VERSION,
    }
)
_SEVERITIES = {
    PARSE_ERROR: "critical",
    INVALID_REQUEST: "critical",
    INTERNAL_ERROR: "critical",
    MESSAGE_TOO_LARGE: "critical",
    TRANSPORT_ERROR: "critical",
    RATE_LIMITED: "warning",
    REQUEST_TIMEOUT: "warning",
    NOT_INITIALIZED: "warning",
    URL_ELICITATION_REQUIRED: "warning",
    REQUEST_CANCELLED: "info",
}


def _check_code(code: object) -> int:
    if type(code) is not int:
        if isinstance(code, int) and not isinstance(code, bool):
            return int(code)
        raise TypeError(f"an error code must be an int, not {type(code).__name__}")
    return code


def category(code: int) -> str:
    """The category of an error code (rules in the module docstring)."""
    code = _check_code(code)
    named = _JSONRPC_CATEGORIES.get(code)
    if named is not None:
        return named
    if -32768 <= code <= -32100:
        return "reserved"
    if -32099 <= code <= -32000:
        return "mcp" if code in _MCP_SPEC_CODES else "server"
    return "application"


def severity(code: int) -> str:
    """The severity of an error code: "critical", "error", "warning" or "info"."""
    return _SEVERITIES.get(_check_code(code), "error")


def default_message(code: int) -> str:
    """The catalogue's message for code; "Server error" or "Error" for uncatalogued codes."""
    entry = CATALOGUE.get(_check_code(code))
    if entry is not None:
        return entry.message
    return "Server error" if -32099 <= code <= -32000 else "Error"


class _Absent:
    """The type of ABSENT: an error without a ``data`` member (distinct from data null)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "ABSENT"

    def __reduce__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()


class JSONRPCError(Exception):
    """A JSON-RPC error: ``code`` (int), ``message`` (str) and optional ``data``.

    Raised by a request handler, it is sent as the error response to that request, exactly
    as given (so its message and data must be fit for the peer's eyes). Raised by
    Session.request, it is the error response the peer sent. ``data`` is None and
    ``has_data`` False when the error carries no data member.
    """

    # The code a subclass stands for; JSONRPCError itself takes it as an argument.
    default_code: int | None = None

    def __init__(self, code: int, message: str | None = None, data: Any = ABSENT) -> None:
        code = _check_code(code)
        if message is None:
            message = default_message(code)
        elif type(message) is not str:
            raise TypeError(f"an error message must be a str, not {type(message).__name__}")
        super().__init__(code, message)
        self.code = code
        self.message = message
        self.has_data = data is not ABSENT
        self.data = data if self.has_data else None

    def __str__(self) -> str:
        return f"[{self.code}] {self.message}"

    def __repr__(self) -> str:
        if self.has_data:
            return f"{type(self).__name__}({self.code}, {self.message!r}, data={self.data!r})"
        return f"{type(self).__name__}({self.code}, {self.message!r})"

    def __reduce__(self):
        data = self.data if self.has_data else ABSENT
        return (_rebuild, (type(self), self.code, self.message, data, self.__dict__))


def _rebuild(cls, code, message, data, state):
    # Subclasses have their own __init__ signatures: restore through the base one.
    exc = Exception.__new__(cls)
    JSONRPCError.__init__(exc, code, message, data)
    exc.__dict__.update(state)
    return exc


class _FixedCodeError(JSONRPCError):
    """A JSONRPCError whose code is fixed by its class: Cls(message=None, data=ABSENT)."""

    default_code: int

    def __init__(self, message: str | None = None, data: Any = ABSENT) -> None:
        super().__init__(self.default_code, message, data)


class MethodNotFound(_FixedCodeError):
    """-32601: the method does not exist or is not available."""

    default_code = METHOD_NOT_FOUND


class InvalidParams(_FixedCodeError):
    """-32602: the params are invalid; raise it from a handler that validates its params."""

    default_code = INVALID_PARAMS


class InternalError(_FixedCodeError):
    """-32603: the receiver failed; say only what is safe for the peer to read."""

    default_code = INTERNAL_ERROR


class RequestTimeout(JSONRPCError):
    """An outgoing request got no response within its timeout (code REQUEST_TIMEOUT).

    ``request_id``, ``method`` and ``timeout`` (seconds) name the request.
    """

    default_code = REQUEST_TIMEOUT

    def __init__(self, request_id: int | str | None = None, method: str | None = None,
                 timeout: float | None = None) -> None:
        if method is None:
            message = "Request timed out"
        elif timeout is None:
            message = f"Request {method!r} (id {request_id!r}) timed out"
        else:
            message = f"Request {method!r} (id {request_id!r}) timed out after {timeout:g} s"
        super().__init__(REQUEST_TIMEOUT, message)
        self.request_id = request_id
        self.method = method
        self.timeout = timeout


class RequestCancelled(JSONRPCError):
    """An outgoing request was given up on this side before its response came.

    ``reason`` is the reason given (also sent to the peer in notifications/cancelled).
    """

    default_code = REQUEST_CANCELLED

    def __init__(self, reason: str | None = None, request_id: int | str | None = None) -> None:
        message = "Request cancelled" if reason is None else f"Request cancelled: {reason}"
        super().__init__(REQUEST_CANCELLED, message)
        self.reason = reason
        self.request_id = request_id


class ConnectionClosed(JSONRPCError):
    """The session was closed: no response can come any more (code TRANSPORT_ERROR)."""

    default_code = TRANSPORT_ERROR

    def __init__(self, message: str = "Connection closed") -> None:
        super().__init__(TRANSPORT_ERROR, message)


class MessageTooLarge(_FixedCodeError):
    """-32012 MESSAGE_TOO_LARGE: a message was over a frame size limit and was dropped.

    Raised by an outgoing request when the peer's response to it was too large for this
    side's framer (it fails at once instead of waiting for a response that was thrown
    away), and when the peer answered our request with -32012 (ours was too large for
    it). ``data`` is ``{"limit": bytes, "size": bytes}`` when known: ``limit`` and
    ``size`` read it (None when absent); ``size`` is what had been read when the line
    was refused, so the message was at least that long.
    """

    default_code = MESSAGE_TOO_LARGE

    @property
    def limit(self) -> int | None:
        """The size limit in bytes, when the error says."""
        return self.data.get("limit") if type(self.data) is dict else None

    @property
    def size(self) -> int | None:
        """Bytes read of the message when it was refused, when the error says."""
        return self.data.get("size") if type(self.data) is dict else None


# Codes whose error response raises a more specific class on the requesting side.
_RESPONSE_CLASSES = {
    METHOD_NOT_FOUND: MethodNotFound,
    INVALID_PARAMS: InvalidParams,
    INTERNAL_ERROR: InternalError,
    MESSAGE_TOO_LARGE: MessageTooLarge,
}


def error_from_response(code: int, message: str, data: Any = ABSENT) -> JSONRPCError:
    """The exception for an error response received from the peer.

    MethodNotFound / InvalidParams / InternalError / MessageTooLarge for those codes,
    JSONRPCError otherwise (never RequestTimeout, RequestCancelled or ConnectionClosed,
    which only this side raises, whatever the code).
    """
    cls = _RESPONSE_CLASSES.get(code)
    if cls is None:
        return JSONRPCError(code, message, data)
    return cls(message, data)
