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
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


REQUIRED: Any = _Marker("REQUIRED")
ABSENT: Any = _Marker("ABSENT")
OMIT: Any = _Marker("OMIT")
FACTORY: Any = _Marker("FACTORY")
