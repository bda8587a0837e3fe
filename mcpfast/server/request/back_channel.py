"""Back channels: how a request's handler reaches the client (sampling, elicitation, roots).

``ctx.sample``, ``ctx.elicit``, ``ctx.elicit_url``, ``ctx.list_roots`` and ``ctx.ping``
send their request through ``ctx.back_channel``, chosen with the request's protocol state
(see :mod:`mcpfast.server.request.state_source`):

- :class:`SessionBackChannel`: the connection's own server-to-client requests (stdio, TCP,
  a Streamable HTTP session), related to the request that makes them so they travel on its
  reply channel;
- :class:`NoBackChannel`: there is no way back (a stateless HTTP request): every request
  fails at once with :class:`BackChannelUnavailable`, naming the method, instead of waiting
  for an answer that cannot come.

- :class:`~mcpfast.server.request.input_required.InputRequiredBackChannel`: 2026-07-28, where
  the request is answered with an InputRequiredResult and retried with the answers.

``key`` names an input under 2026-07-28 (``ctx.elicit(..., input_key=)``); the others
ignore it.
"""

from __future__ import annotations

from typing import Any, Optional, Protocol

from mcpfast.jsonrpc.errors import TRANSPORT_ERROR, JSONRPCError

__all__ = ["BackChannel", "BackChannelUnavailable", "NoBackChannel", "SessionBackChannel"]


class BackChannel(Protocol):
    """Sends a request to the client on behalf of the request ``origin`` (a Context)."""

    async def request(self, origin: Any, method: str, params: Any = None, *,
                      timeout: Optional[float] = None, key: Optional[str] = None) -> Any: ...


class BackChannelUnavailable(JSONRPCError):
    """A handler asked the client something where no channel to the client exists.

    Code TRANSPORT_ERROR (-32008); ``method`` names the request that could not be sent.
    Raised inside a tool it becomes a tool result with ``isError: true``.
    """

    default_code = TRANSPORT_ERROR

    def __init__(self, method: str, reason: str) -> None:
        super().__init__(
            TRANSPORT_ERROR,
            f"cannot send {method} to the client: {reason}",
            {"method": method},
        )
        self.method = method


class SessionBackChannel:
    """Server-to-client requests on the session the request arrived on."""

    __slots__ = ()

    async def request(self, origin: Any, method: str, params: Any = None, *,
                      timeout: Optional[float] = None, key: Optional[str] = None) -> Any:
        return await origin.session.request(method, params, timeout=timeout, origin=origin)


class NoBackChannel:
    """No channel to the client: every request fails at once (module docstring)."""

    __slots__ = ("reason",)

    def __init__(self, reason: str = "this request has no channel back to the client") -> None:
        self.reason = reason

    async def request(self, origin: Any, method: str, params: Any = None, *,
                      timeout: Optional[float] = None, key: Optional[str] = None) -> Any:
        raise BackChannelUnavailable(method, self.reason)


SESSION_BACK_CHANNEL = SessionBackChannel()
