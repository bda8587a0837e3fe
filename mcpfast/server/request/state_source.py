"""State sources: where a request's protocol state comes from, chosen per request.

A request's :class:`~mcpfast.server.request.context.Context` reads the protocol facts (version,
features, client capabilities, log level) from a :class:`ProtocolState`, and reaches the
client through a back channel. Which state and which back channel depends on the request:

- handshake versions (2024-11-05 .. 2025-11-25): the connection's own state, filled by
  ``initialize``, and the connection's session as back channel. This is the default and
  needs no source.
- a source added to the server (``Server(state_sources=[...])``) may claim a request
  instead, for example the stateless 2026-07-28 era, where each request carries its version
  and client capabilities in ``params._meta`` and the state is built from them.

Sources are asked in order; the first that returns a :class:`RequestState` wins, and when
none does the connection's handshake state is used. A source sees the connection, the
method and the params, and must not keep the params (they belong to one request).

A request whose state did not come from the connection's handshake is not subject to the
initialization gate (it carries everything the handshake would have said).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, NamedTuple, Optional, Protocol

from mcpfast.server.request.back_channel import BackChannel
from mcpfast.server.request.state import ProtocolState

if TYPE_CHECKING:
    from mcpfast.server.core import ConnectionHandle

__all__ = ["RequestState", "StateSource"]


class RequestState(NamedTuple):
    """What a state source gives one request: its protocol state, its back channel, and
    optionally a function applied to its result before it is sent (an era's result
    fields)."""

    state: ProtocolState
    back_channel: BackChannel
    shape_result: Optional[Callable[[Any], Any]] = None


class StateSource(Protocol):
    """Claims the requests whose protocol state it provides (module docstring)."""

    def state_for(self, connection: ConnectionHandle, method: str,
                  params: Any) -> Optional[RequestState]:
        """The request's state, or None to leave the request to the next source. May raise
        a JSONRPCError to refuse the request (malformed ``_meta``, say)."""
        ...
