"""ProtocolState: what the server knows about its client when it handles a request.

Every request's :class:`~mcpfast.server.request.context.Context` reads the protocol version, the
version's `VersionFeatures`, the client's info and capabilities and the log level from a
ProtocolState. Where that state comes from depends on the protocol era:

- handshake versions (2024-11-05 .. 2025-11-25): ``initialize`` fills one ProtocolState
  per connection, shared by every request on it; ``logging/setLevel`` changes its level;
  ``notifications/initialized`` marks it initialized.
- the stateless era (2026-07-28): each request carries its version and client
  capabilities in ``_meta``, so a ProtocolState is built per request from that. Nothing
  in the handlers changes: they only ever read ``ctx.state``.
"""

from __future__ import annotations

from typing import Any, Optional

from mcpfast.protocol.features import VersionFeatures, features_for
from mcpfast.protocol.log_levels import LEVELS

__all__ = ["ProtocolState"]

_EMPTY: dict[str, Any] = {}


class ProtocolState:
    """Negotiated protocol facts (see the module docstring).

    protocol_version     the negotiated version; None before initialize
    features             that version's VersionFeatures; None before initialize
    client_info          the client's Implementation dict (name, version, ...); {} before
    client_capabilities  the client's ClientCapabilities dict; {} before initialize
    log_level            minimum MCP log level rank to send (0 = debug ... 7 = emergency;
                         8 = none: a 2026-07-28 request that set no logLevel)
    initialized          True once the client sent notifications/initialized
    """

    __slots__ = (
        "protocol_version",
        "features",
        "client_info",
        "client_capabilities",
        "log_level",
        "initialized",
    )

    def __init__(self, log_level: int = 1, version: Optional[str] = None,
                 client_info: dict[str, Any] = _EMPTY,
                 client_capabilities: dict[str, Any] = _EMPTY) -> None:
        """A new state; with ``version`` (supported), one already negotiated and
        initialized, as a 2026-07-28 request's is (one step instead of three)."""
        # StatelessEra.claim (mcpfast.server.eras.stateless) sets these fields in place, without
        # this frame, for a 2026-07-28 request declaring values: a field added here goes
        # there too.
        self.protocol_version = version
        self.features: Optional[VersionFeatures] = None if version is None else features_for(version)
        self.client_info = client_info
        self.client_capabilities = client_capabilities
        self.log_level = log_level
        self.initialized = version is not None

    @property
    def negotiated(self) -> bool:
        """True once a protocol version is set (initialize answered)."""
        return self.protocol_version is not None

    def negotiate(self, version: str, client_info: dict[str, Any],
                  client_capabilities: dict[str, Any]) -> None:
        """Record the outcome of initialize (version must be supported)."""
        self.features = features_for(version)
        self.protocol_version = version
        self.client_info = client_info
        self.client_capabilities = client_capabilities

    @property
    def log_level_name(self) -> str:
        return LEVELS[self.log_level] if self.log_level < len(LEVELS) else "off"

    def __repr__(self) -> str:
        state = "initialized" if self.initialized else (
            "negotiated" if self.protocol_version else "new")
        return f"<ProtocolState {self.protocol_version or '-'} {state} log={self.log_level_name}>"
