"""The error catalogue of mcpfast and the exceptions that carry error codes.

Codes
-----
The codes, their catalogue (``CATALOGUE``), ``category`` and ``severity`` live in
:mod:`mcpfast.protocol.error_codes` and are re-exported here.

Exceptions
----------
:class:`JSONRPCError` is "an error with a code": a handler raises it to answer a request
with that error, and an outgoing request raises it when the peer answered with an error.
Subclasses fix the code of the common cases (:class:`MethodNotFound`,
:class:`InvalidParams`, :class:`InternalError`) and name what can happen to an outgoing
request on this side (:class:`RequestTimeout`, :class:`RequestCancelled`,
:class:`ConnectionClosed`, :class:`MessageTooLarge`).

HTTP refusals carried by a JSON-RPC error
-----------------------------------------
Some refusals the request pipeline makes mean an HTTP status where there is HTTP:
:class:`RateLimited` (-32010, ``data.retryAfter`` seconds) is 429 with ``Retry-After``,
:class:`InsufficientScope` (-32003, ``data.requiredScopes``) is 403 with a
``WWW-Authenticate: Bearer error="insufficient_scope"`` challenge. The error is what every
transport sends; :func:`http_refusal` reads the HTTP meaning back from an error's code and
data, so that the HTTP endpoint (which sees only the encoded answer, and never imports the
server) can answer a POST whose only request was refused with the status and headers.
Inside a batch or an SSE stream the JSON-RPC error stays the answer.
"""

from __future__ import annotations

import math
from typing import Any, Iterable, NamedTuple, Optional

from mcpfast.protocol.error_codes import (
    CATALOGUE,
    HEADER_MISMATCH,
    INSUFFICIENT_SCOPE,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    MESSAGE_TOO_LARGE,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    NOT_INITIALIZED,
    PARSE_ERROR,
    RATE_LIMITED,
    REQUEST_CANCELLED,
    REQUEST_TIMEOUT,
    RESOURCE_NOT_FOUND,
    TRANSPORT_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
    UNSUPPORTED_VERSION,
    URL_ELICITATION_REQUIRED,
    ErrorCode,
    as_code,
    category,
    default_message,
    severity,
)

__all__ = [
    "ABSENT",
    "CATALOGUE",
    "ConnectionClosed",
    "ErrorCode",
    "HEADER_MISMATCH",
    "HTTPRefusal",
    "INSUFFICIENT_SCOPE",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "InsufficientScope",
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
    "RateLimited",
    "RequestCancelled",
    "RequestTimeout",
    "TRANSPORT_ERROR",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "UNSUPPORTED_VERSION",
    "URL_ELICITATION_REQUIRED",
    "category",
    "default_message",
    "error_from_response",
    "http_refusal",
    "severity",
]

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
        code = as_code(code)
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


class RateLimited(JSONRPCError):
    """-32010 RATE_LIMITED: try again in ``retry_after`` seconds (``data.retryAfter``; more
    data, such as the limit, in ``extra``). Over HTTP: 429 with ``Retry-After``."""

    default_code = RATE_LIMITED

    def __init__(self, retry_after: float, message: Optional[str] = None, **extra: Any) -> None:
        if isinstance(retry_after, bool) or not isinstance(retry_after, (int, float)) \
                or not retry_after >= 0 or not math.isfinite(retry_after):
            raise ValueError(f"retry_after must be a finite number of seconds >= 0, got {retry_after!r}")
        if message is None:
            message = f"{default_message(RATE_LIMITED)}: retry after {retry_after:.3f} s"
        super().__init__(RATE_LIMITED, message, {"retryAfter": round(retry_after, 3), **extra})
        self.retry_after = float(retry_after)


class InsufficientScope(JSONRPCError):
    """-32003 INSUFFICIENT_SCOPE: the caller's token lacks ``scopes`` (``data.requiredScopes``,
    every scope the call needs, for a step-up authorization). Over HTTP: 403 with
    ``WWW-Authenticate: Bearer error="insufficient_scope", scope="..."``."""

    default_code = INSUFFICIENT_SCOPE

    def __init__(self, scopes: Iterable[str], message: Optional[str] = None) -> None:
        needed = sorted(set(scopes))
        if not needed or not all(isinstance(s, str) and s for s in needed):
            raise ValueError("InsufficientScope needs the (non-empty) scopes the call requires")
        if message is None:
            message = f"{default_message(INSUFFICIENT_SCOPE)}: this needs the scopes {' '.join(needed)}"
        super().__init__(INSUFFICIENT_SCOPE, message, {"requiredScopes": needed})
        self.scopes = tuple(needed)


#: The codes whose errors may mean an HTTP refusal (see :func:`http_refusal`); not in
#: __all__, whose upper-case names are the catalogue's codes.
REFUSAL_CODES = frozenset({RATE_LIMITED, INSUFFICIENT_SCOPE})


class HTTPRefusal(NamedTuple):
    """What an error means over HTTP: ``status``, and ``retry_after`` (whole seconds, for
    Retry-After) or ``scopes`` (for the insufficient_scope challenge)."""

    status: int
    retry_after: Optional[int] = None
    scopes: tuple[str, ...] = ()


def http_refusal(code: Any, data: Any) -> Optional[HTTPRefusal]:
    """The HTTP refusal an error with ``code`` and ``data`` stands for, or None (an error
    that is just an answer; or one whose data does not say what the refusal needs)."""
    if type(data) is not dict:
        return None
    if code == RATE_LIMITED:
        wait = data.get("retryAfter")
        if isinstance(wait, bool) or not isinstance(wait, (int, float)) or not wait >= 0 \
                or not math.isfinite(wait):
            return None
        # Retry-After is whole seconds (RFC 9110 section 10.2.3): rounded up, at least 1.
        return HTTPRefusal(429, retry_after=max(1, math.ceil(wait)))
    if code == INSUFFICIENT_SCOPE:
        scopes = data.get("requiredScopes")
        if not isinstance(scopes, list) or not scopes \
                or not all(type(s) is str and s and " " not in s for s in scopes):
            return None
        return HTTPRefusal(403, scopes=tuple(scopes))
    return None


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
