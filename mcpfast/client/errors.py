"""Exceptions raised by the MCP client on its own side (before or instead of a server answer).

What the server answers with an error still raises the JSON-RPC classes of
:mod:`mcpfast.jsonrpc.errors` (JSONRPCError, MethodNotFound, InvalidParams, ...), and what
happens to a request in flight raises RequestTimeout, RequestCancelled or ConnectionClosed.
The classes here cover what only a client can find out:

* :class:`CapabilityError`: the server did not advertise what a call needs.
* :class:`UnsupportedProtocolVersion`: initialize answered with a version this client
  does not speak.
* :class:`InvalidResult`: a result does not have the shape the specification gives it;
  :class:`InitializeError` for the initialize answer.
* :class:`NotInitialized`: a call before the handshake completed.
* :class:`TransportUnavailable`: the target names a transport this build cannot open.
* :class:`PaginationError`: a server's cursors go round in a loop.
"""

from __future__ import annotations

from typing import Optional, Sequence

__all__ = [
    "CapabilityError",
    "ClientError",
    "InitializeError",
    "InvalidResult",
    "NotInitialized",
    "PaginationError",
    "TransportUnavailable",
    "UnsupportedProtocolVersion",
]


class ClientError(Exception):
    """Base class of the errors the MCP client raises on its own side."""


class CapabilityError(ClientError):
    """The server did not advertise the capability a call needs.

    ``capability`` names it as the specification does, dotted for a sub-capability
    ("tools", "resources", "resources.subscribe", "prompts", "completions", "logging");
    ``method`` is the request that was not sent.
    """

    def __init__(self, capability: str, method: str) -> None:
        super().__init__(
            f"the server did not advertise the {capability!r} capability, so {method!r} "
            f"was not sent (connect with check_capabilities=False to send it anyway)"
        )
        self.capability = capability
        self.method = method


class UnsupportedProtocolVersion(ClientError):
    """The server answered initialize with a protocol version this client does not speak.

    ``version`` is what the server answered, ``supported`` the versions this client
    speaks (newest first). The connection is closed when this is raised by ``connect``.
    """

    def __init__(self, version: object, supported: Sequence[str]) -> None:
        super().__init__(
            f"the server answered initialize with protocol version {version!r}, which this "
            f"client does not support (supported: {', '.join(supported)})"
        )
        self.version = version
        self.supported = tuple(supported)


class InvalidResult(ClientError):
    """A server's result lacks what the specification requires (``method`` names the request)."""

    def __init__(self, method: str, problem: str) -> None:
        super().__init__(f"invalid result for {method!r}: {problem}")
        self.method = method
        self.problem = problem


class InitializeError(InvalidResult):
    """The server's answer to initialize is not a valid InitializeResult."""

    def __init__(self, problem: str) -> None:
        super().__init__("initialize", problem)


class NotInitialized(ClientError):
    """A request was made before initialize completed (or after it failed)."""

    def __init__(self, method: str) -> None:
        super().__init__(f"{method!r} needs an initialized connection: call initialize() first")
        self.method = method


class TransportUnavailable(ClientError):
    """The target needs a transport this build of mcpfast does not have yet.

    ``transport`` names it ("http" for http:// and https:// URLs).
    """

    def __init__(self, transport: str, target: str, detail: Optional[str] = None) -> None:
        message = f"the {transport} transport is not available yet: cannot connect to {target!r}"
        if detail:
            message = f"{message} ({detail})"
        super().__init__(message)
        self.transport = transport
        self.target = target


class PaginationError(ClientError):
    """A paginated list did not end: the server sent a cursor it had already sent."""

    def __init__(self, method: str, cursor: str) -> None:
        super().__init__(
            f"{method!r} returned the cursor {cursor!r} a second time; stopping instead of "
            f"looping forever"
        )
        self.method = method
        self.cursor = cursor
