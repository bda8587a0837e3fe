"""Sentinel values: "no value given" (`MISSING`, visible in `Field` defaults) and the markers
the compiled validators use for defaults (required, absent, omitted, factory-made)."""

from __future__ import annotations

from typing import Any


class _Missing:
    """Sentinel type for "no value given"."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Any = _Missing()


class _Marker:
    """A named object compared by identity."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


# No default: the argument or property must be given.
REQUIRED: Any = _Marker("REQUIRED")
# What the argument validator's lookup returns for an argument the call did not send.
ABSENT: Any = _Marker("ABSENT")
# The class applies its own default (or an optional TypedDict key stays out): pass nothing.
OMIT: Any = _Marker("OMIT")
# A dataclass field with a default_factory: no default can be written into the schema.
FACTORY: Any = _Marker("FACTORY")
