"""String-valued arguments -> the typed keyword arguments of a handler.

URI template variables and prompt arguments reach the server as strings (a template's
exploded variables as lists of strings). A handler may still annotate its parameters as
``int``, ``float``, ``bool``, an Enum, a Literal, ``list[int]`` ...: `StringArguments`
converts each string by the JSON type its parameter's schema names (``"42"`` -> 42 for
an integer, ``"true"``/``"false"`` for a boolean, a single string -> a one-item list for
an array) and then runs the signature's validator, which does the rest (Enum members,
Literal checks, defaults). Strings that do not convert raise ArgumentError naming the
argument.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping

from mcpfast.server.schema import ArgumentError, ToolSignature

__all__ = ["StringArguments"]


def _json_types(schema: Mapping[str, Any]) -> list[str]:
    """The JSON types a property schema allows (in order), looking through anyOf."""
    kind = schema.get("type")
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, list):
        return [k for k in kind if isinstance(k, str)]
    out: list[str] = []
    for option in schema.get("anyOf", ()) or schema.get("oneOf", ()):
        if isinstance(option, Mapping):
            out.extend(_json_types(option))
    if not out and "enum" in schema:
        values = schema["enum"]
        if values and all(isinstance(v, bool) for v in values):
            out.append("boolean")
        elif values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            out.append("integer")
    return out


def _to_int(text: str) -> int:
    return int(text.strip(), 10)


def _to_float(text: str) -> float:
    value = float(text.strip())
    if not math.isfinite(value):
        raise ValueError("not a finite number")
    return value


def _to_bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered == "true":
        return True
    if lowered == "false":
        return False
    raise ValueError("expected true or false")


_SCALAR_CONVERTERS: dict[str, Callable[[str], Any]] = {
    "integer": _to_int,
    "number": _to_float,
    "boolean": _to_bool,
}


def _item_schema(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    items = schema.get("items")
    if isinstance(items, Mapping):
        return items
    for option in schema.get("anyOf", ()):
        if isinstance(option, Mapping) and option.get("type") == "array":
            return _item_schema(option)
    return {}


def _convert(value: Any, schema: Mapping[str, Any]) -> Any:
    types = _json_types(schema)
    if "array" in types:
        items = value if isinstance(value, list) else [value]
        item_schema = _item_schema(schema)
        return [_convert(item, item_schema) for item in items]
    if isinstance(value, list):
        return value
    if "string" in types or not types:
        return value
    last_error: Exception | None = None
    for kind in types:
        converter = _SCALAR_CONVERTERS.get(kind)
        if converter is None:
            continue
        try:
            return converter(value)
        except ValueError as exc:
            last_error = exc
    if last_error is not None:
        raise last_error
    return value


class StringArguments:
    """Converts string arguments for one handler signature (see the module docstring)."""

    __slots__ = ("signature", "_properties")

    def __init__(self, signature: ToolSignature) -> None:
        self.signature = signature
        self._properties: dict[str, Mapping[str, Any]] = signature.input_schema.get("properties", {})

    @property
    def parameters(self) -> tuple[str, ...]:
        return self.signature.parameters

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(self.signature.input_schema.get("required", ()))

    def convert(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """Keyword arguments for the handler; ArgumentError when a value does not fit."""
        converted: dict[str, Any] = {}
        for name, value in values.items():
            schema = self._properties.get(name)
            if schema is None:
                converted[name] = value  # the validator reports unknown names
                continue
            try:
                converted[name] = _convert(value, schema)
            except ValueError as exc:
                raise ArgumentError((name,), f"cannot read {value!r}: {exc}") from None
        return self.signature.validator(converted)
