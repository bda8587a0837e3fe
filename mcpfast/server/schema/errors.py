"""Errors of argument validation and output serialization, and the internal mismatch they
are built from.

`ArgumentError` and `OutputError` are what callers see. `Mismatch` is raised by the compiled
converters (see `nodes`) and carries the path of the offending value innermost-first; the
validator and the serializer turn it into one of the public errors at the top.
"""

from __future__ import annotations

import collections.abc
import enum
import json
from typing import Any, Mapping


class ArgumentError(ValueError):
    """The arguments of a tools/call do not match the tool's input schema.

    ``path`` is the location of the offending value below ``arguments`` (keys and list
    indices), ``reason`` what is wrong there; ``str(error)`` reads
    ``"arguments.items[2].count: expected integer, got string"``.
    """

    def __init__(self, path: tuple[str | int, ...], reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{_format_path('arguments', path)}: {reason}")


class OutputError(ValueError):
    """A tool's return value does not conform to its output schema.

    ``path`` locates the value below the returned value, ``reason`` says what is wrong;
    ``str(error)`` reads ``"result.items[0]: expected integer, got string"``.
    """

    def __init__(self, path: tuple[str | int, ...], reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{_format_path('result', path)}: {reason}")


def _format_path(root: str, path: tuple[str | int, ...]) -> str:
    parts = [root]
    for step in path:
        if isinstance(step, int):
            parts.append(f"[{step}]")
        elif isinstance(step, str) and step.isidentifier():
            parts.append(f".{step}")
        else:
            parts.append(f"[{json.dumps(str(step), ensure_ascii=False)}]")
    return "".join(parts)


class Mismatch(Exception):
    """Internal: a value does not match a node. ``path`` is built innermost-first while the
    exception travels up through the container converters, so nothing is allocated for the
    path on the success path. ``at`` starts the path with the step the mismatch is found at."""

    def __init__(self, reason: str, at: str | int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.path: list[str | int] = [] if at is None else [at]


_KIND_OF_TYPE: dict[type, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    type(None): "null",
    list: "array",
    dict: "object",
}


def kind_of(value: Any) -> str:
    """The JSON type name of a value (Python type name for values JSON cannot hold)."""
    kind = _KIND_OF_TYPE.get(type(value))
    if kind is not None:
        return kind
    if isinstance(value, enum.Enum):
        return type(value).__name__
    for base, name in _KIND_OF_TYPE.items():
        if isinstance(value, base) and base is not int:
            return name
    if isinstance(value, int) and not isinstance(value, bool):
        return "integer"
    return type(value).__name__


def wrong_type(label: str, value: Any) -> Mismatch:
    return Mismatch(f"expected {label}, got {kind_of(value)}")


def check_array_like(label: str, value: Any) -> None:
    """Output side: an array may be any iterable but a str, bytes or mapping."""
    if isinstance(value, (str, bytes, bytearray, Mapping)) or not isinstance(
        value, collections.abc.Iterable
    ):
        raise wrong_type(label, value)


def short_repr(value: Any) -> str:
    kind = kind_of(value)
    if kind in ("string", "integer", "number", "boolean", "null"):
        try:
            text = json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError):
            text = repr(value)
        if len(text) > 40:
            text = text[:37] + "..."
        return text
    return kind


def unknown_key_error(value: Mapping[Any, Any], names: set[str], noun: str) -> Mismatch:
    for key in value:
        if key not in names:
            expected = ", ".join(sorted(names)) if names else "none"
            return Mismatch(f"unexpected {noun} (expected one of: {expected})", at=key)
    return Mismatch(f"unexpected {noun}")
