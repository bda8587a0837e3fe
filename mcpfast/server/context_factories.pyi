"""The server connection's context factories, compiled (stubs; the compiled module's
docstring says what they do and why)."""

from typing import Any

from mcpfast._core.dispatch import ContextFactory

class HandshakeContexts(ContextFactory):
    """Contexts of one connection whose requests all have its handshake state."""

    def __init__(self, connection: Any, state: Any, back_channel: Any) -> None: ...

class EitherEraContexts(HandshakeContexts):
    """Contexts of a connection that takes both eras: a request whose ``_meta`` names a
    protocol version is claimed by the stateless era, any other has the handshake's
    state."""

    def __init__(self, connection: Any, state: Any, back_channel: Any, era: Any) -> None: ...
