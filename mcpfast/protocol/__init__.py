"""What an MCP server and an MCP client share: versions and their eras, what each version
can carry, method names, log levels, ``_meta`` keys and error codes.

Plain constants and small pure functions only; every layer above ``mcpfast._core`` may
import it, and it imports nothing of mcpfast.
"""

from mcpfast.protocol import error_codes, meta_keys, methods
from mcpfast.protocol.features import FEATURES, VersionFeatures, features_for
from mcpfast.protocol.log_levels import LEVEL_INDEX, LEVELS, level_index
from mcpfast.protocol.versions import (
    HANDSHAKE,
    KNOWN_VERSIONS,
    LATEST_VERSION,
    SPOKEN_VERSIONS,
    STATELESS,
    STATELESS_VERSIONS,
    SUPPORTED_VERSIONS,
    era_of,
    negotiate_version,
)

__all__ = [
    "FEATURES",
    "VersionFeatures",
    "HANDSHAKE",
    "KNOWN_VERSIONS",
    "LATEST_VERSION",
    "LEVELS",
    "LEVEL_INDEX",
    "SPOKEN_VERSIONS",
    "STATELESS",
    "STATELESS_VERSIONS",
    "SUPPORTED_VERSIONS",
    "era_of",
    "error_codes",
    "features_for",
    "level_index",
    "meta_keys",
    "methods",
    "negotiate_version",
]
