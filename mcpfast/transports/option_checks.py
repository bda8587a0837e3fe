"""Checks of the transports' numeric options (a leaf: the stream and the budget use it)."""

from __future__ import annotations

from typing import Any

__all__ = ["check_positive_int"]


def check_positive_int(name: str, value: Any) -> int:
    """value if it is an int > 0 (bool refused); ValueError naming it otherwise."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return value
