"""MCP protocol versions, the era each belongs to, and version negotiation.

Two eras of MCP exist:

- HANDSHAKE (2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25): a connection starts with
  ``initialize``; the negotiated version, the client's info and capabilities hold for the
  whole connection.
- STATELESS (2026-07-28): no handshake; every request carries its version and the
  client's capabilities in ``params._meta`` (see :mod:`mcpfast.protocol.meta_keys`), so the
  protocol state is per request.

``SUPPORTED_VERSIONS`` are the handshake versions mcpfast speaks (newest first): what
``initialize`` negotiates. ``STATELESS_VERSIONS`` are the stateless ones its server
answers per request (carried in ``_meta``). ``SPOKEN_VERSIONS`` is both, newest first.
``KNOWN_VERSIONS`` maps every published version to its era, so a layer can tell "unknown
version" from "known, not spoken".
"""

from __future__ import annotations

from typing import Any, Final

__all__ = [
    "HANDSHAKE",
    "KNOWN_VERSIONS",
    "LATEST_VERSION",
    "SPOKEN_VERSIONS",
    "STATELESS",
    "STATELESS_VERSIONS",
    "SUPPORTED_VERSIONS",
    "era_of",
    "negotiate_version",
]

HANDSHAKE: Final = "handshake"
STATELESS: Final = "stateless"

# Every published revision, newest first, with its era.
KNOWN_VERSIONS: Final[dict[str, str]] = {
    "2026-07-28": STATELESS,
    "2025-11-25": HANDSHAKE,
    "2025-06-18": HANDSHAKE,
    "2025-03-26": HANDSHAKE,
    "2024-11-05": HANDSHAKE,
}

# The handshake versions spoken by mcpfast's server and client, newest first.
SUPPORTED_VERSIONS: Final[tuple[str, ...]] = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
LATEST_VERSION: Final = SUPPORTED_VERSIONS[0]
# The stateless versions mcpfast's server answers, newest first.
STATELESS_VERSIONS: Final[tuple[str, ...]] = ("2026-07-28",)
# Every version spoken, newest first.
SPOKEN_VERSIONS: Final[tuple[str, ...]] = STATELESS_VERSIONS + SUPPORTED_VERSIONS


def era_of(version: str) -> str:
    """HANDSHAKE or STATELESS for a published version (ValueError for others)."""
    era = KNOWN_VERSIONS.get(version) if type(version) is str else None
    if era is None:
        raise ValueError(f"unknown MCP protocol version {version!r}")
    return era


def negotiate_version(requested: Any) -> str:
    """The version a server answers an initialize with: the requested one when spoken,
    else the newest spoken one (the client then decides whether it can use it)."""
    if type(requested) is str and requested in SUPPORTED_VERSIONS:
        return requested
    return LATEST_VERSION
