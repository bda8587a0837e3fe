"""MCP log levels: the eight syslog severities (RFC 5424), lowest first."""

from __future__ import annotations

from typing import Any, Final

__all__ = ["LEVELS", "LEVEL_INDEX", "level_index"]

LEVELS: Final[tuple[str, ...]] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
LEVEL_INDEX: Final[dict[str, int]] = {name: index for index, name in enumerate(LEVELS)}


def level_index(level: Any) -> int:
    """The rank of an MCP level name (0 = debug ... 7 = emergency); ValueError otherwise."""
    index = LEVEL_INDEX.get(level) if type(level) is str else None
    if index is None:
        raise ValueError(
            f"invalid MCP log level {level!r}: expected one of {', '.join(LEVELS)}"
        )
    return index
