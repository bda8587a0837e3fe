"""The compiled part of a server connection (stubs; the compiled module's docstring says
what ConnectionCore does and why)."""

from typing import Any, Optional

from mcpfast.auth import AccessToken
from mcpfast.server.request.state import ProtocolState

class ConnectionCore:
    """The fields and the recycling of a server connection; subclassed by
    :class:`mcpfast.server.connection.ServerConnection`."""

    session: Any
    server: Any
    state: ProtocolState
    auth: Optional[AccessToken]
    subscriptions: set[str]
    parked: bool
    _parks_attached: bool
    _gated: bool

    def recycle(self) -> bool:
        """Make this connection ready for another stateless HTTP request: True when it
        was, False when the caller closes it."""

    def revive(self) -> None:
        """A recycled connection serves again."""
