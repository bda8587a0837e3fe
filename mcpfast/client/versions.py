"""The MCP protocol versions the client speaks and how it checks the server's choice.

The client asks for the newest version it speaks (or the one given to ``connect``) in
``initialize``. The server answers with that version when it speaks it, else with a version
of its own choice; the client accepts any version listed here and refuses the rest with
:class:`~mcpfast.client.errors.UnsupportedProtocolVersion` (the specification: a client
that cannot use the server's version disconnects).
"""

from __future__ import annotations

from typing import Any

from mcpfast.client.errors import UnsupportedProtocolVersion
from mcpfast.protocol.versions import LATEST_VERSION, STATELESS_VERSIONS, SUPPORTED_VERSIONS

__all__ = ["AUTO", "LATEST_VERSION", "SUPPORTED_VERSIONS", "check_requested_version",
           "check_server_version"]

# Ask for the newest stateless version when the server offers it (server/discover), the
# handshake otherwise.
AUTO = "auto"
_REQUESTABLE = (AUTO, *STATELESS_VERSIONS, *SUPPORTED_VERSIONS)



def check_requested_version(version: Any) -> str:
    """The version to ask for: "auto", a stateless version (2026-07-28) or one of
    SUPPORTED_VERSIONS (ValueError otherwise)."""
    if type(version) is not str or version not in _REQUESTABLE:
        raise ValueError(
            f"protocol_version must be one of {', '.join(_REQUESTABLE)}, got {version!r}"
        )
    return version


def check_server_version(version: Any) -> str:
    """The server's answer when this client speaks it; UnsupportedProtocolVersion otherwise."""
    if type(version) is not str or version not in SUPPORTED_VERSIONS:
        raise UnsupportedProtocolVersion(version, SUPPORTED_VERSIONS)
    return version
