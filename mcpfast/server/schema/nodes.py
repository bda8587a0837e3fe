"""Type nodes: what one annotation compiles to (JSON Schema + input converter + output dumper),
the scalar nodes, and the nodes that accept a fixed set of values (Literal, Enum)."""

from __future__ import annotations

import enum
import json
import math
from typing import Any, Callable

from .errors import Mismatch, short_repr, wrong_type
from .jsonable import to_jsonable
from .sentinels import MISSING

NUMERIC_KINDS = frozenset({"integer", "number"})
ALL_KINDS = frozenset({"string", "integer", "number", "boolean", "null", "array", "object"})


def map_items(convert: Callable[[Any], Any], values: Any) -> list[Any]:
    """[convert(item) for item in values]; a mismatch names the item's index in its path."""
    out: list[Any] = []
    append = out.append
    for index, element in enumerate(values):
        try:
            append(convert(element))
        except Mismatch as exc:
            exc.path.append(index)
            raise
    return out


def map_positions(converts: list[Callable[[Any], Any]], values: list[Any]) -> list[Any]:
    """[converts[i](values[i]) ...] (as many values as converts); paths as in map_items."""
    out: list[Any] = []
    append = out.append
    for index, element in enumerate(values):
        try:
            append(converts[index](element))
        except Mismatch as exc:
            exc.path.append(index)
            raise
    return out


class Node:
    """What one annotation compiles to.

    ``schema``: its JSON Schema (shared; copy before changing). ``convert``: JSON value ->
    Python value, raising Mismatch. ``dump``: Python value -> JSON value, raising Mismatch.
    ``kinds``: the JSON types the schema admits. ``label``: short name for error messages.
    ``hashable``: converted values can go into a set. ``exact``: a type whose instances
    convert to themselves (lets the argument validator skip the call for the common case).
    """

    __slots__ = ("schema", "convert", "dump", "kinds", "label", "hashable", "exact")

    def __init__(
        self,
        schema: dict[str, Any],
        convert: Callable[[Any], Any],
        dump: Callable[[Any], Any],
        kinds: frozenset[str],
        label: str,
        hashable: bool = True,
        exact: type | None = None,
    ) -> None:
        self.schema = schema
        self.convert = convert
        self.dump = dump
        self.kinds = kinds
        self.label = label
        self.hashable = hashable
        self.exact = exact


def identity(value: Any) -> Any:
    return value


def _conv_str(value: Any) -> Any:
    if isinstance(value, str):
        return value
    raise wrong_type("string", value)


def _dump_str(value: Any) -> Any:
    if type(value) is str:
        return value
    if isinstance(value, str):
        return str.__str__(value)
    raise wrong_type("string", value)


def _conv_int(value: Any) -> Any:
    t = type(value)
    if t is int:
        return value
    if t is float and value.is_integer():
        return int(value)
    raise wrong_type("integer", value)


def _dump_int(value: Any) -> Any:
    # What _conv_int accepts, and int subclasses (IntEnum...) as plain ints.
    t = type(value)
    if t is not int and t is not bool and isinstance(value, int):
        return int(value)
    return _conv_int(value)


def _conv_float(value: Any) -> Any:
    t = type(value)
    if t is float:
        return value
    if t is int:
        try:
            return float(value)
        except OverflowError:
            raise Mismatch("number is too large for a float") from None
    raise wrong_type("number", value)


def _dump_float(value: Any) -> Any:
    t = type(value)
    if t is int:
        return value
    if t is bool or not isinstance(value, (int, float)):
        raise wrong_type("number", value)
    if isinstance(value, int):  # IntEnum and other int subclasses
        return int(value)
    value = float(value)
    if not math.isfinite(value):
        raise Mismatch(f"expected a finite number, got {value!r}")
    return value


def _conv_bool(value: Any) -> Any:
    if type(value) is bool:
        return value
    raise wrong_type("boolean", value)


def _conv_null(value: Any) -> Any:
    if value is None:
        return None
    raise wrong_type("null", value)


def _dump_any(value: Any) -> Any:
    try:
        return to_jsonable(value)
    except (TypeError, ValueError) as exc:
        raise Mismatch(str(exc)) from None


STR_NODE = Node({"type": "string"}, _conv_str, _dump_str, frozenset({"string"}), "string", exact=str)
INT_NODE = Node({"type": "integer"}, _conv_int, _dump_int, frozenset({"integer"}), "integer", exact=int)
FLOAT_NODE = Node({"type": "number"}, _conv_float, _dump_float, NUMERIC_KINDS, "number", exact=float)
BOOL_NODE = Node(
    {"type": "boolean"}, _conv_bool, _conv_bool, frozenset({"boolean"}), "boolean", exact=bool
)
NULL_NODE = Node({"type": "null"}, _conv_null, _conv_null, frozenset({"null"}), "null")
ANY_NODE = Node({}, identity, _dump_any, ALL_KINDS, "any value", hashable=False)


def literal_key(value: Any) -> tuple[str, Any] | None:
    """Lookup key for enum/literal tables: keeps True apart from 1 and lets 1.0 find 1, as
    JSON equality does."""
    t = type(value)
    if t is str:
        return ("s", value)
    if t is bool:
        return ("b", value)
    if t is int or t is float:
        return ("n", value)
    if value is None:
        return ("z", None)
    return None


def _json_type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "null"


def _choice_schema(json_values: list[Any]) -> tuple[dict[str, Any], frozenset[str]]:
    type_names = {_json_type_name(v) for v in json_values}
    if type_names == {"integer", "number"}:
        type_names = {"number"}
    schema: dict[str, Any] = {}
    if len(type_names) == 1:
        schema["type"] = next(iter(type_names))
    schema["enum"] = json_values
    kinds = set(type_names)
    if "number" in kinds:
        kinds.add("integer")
    return schema, frozenset(kinds)


def format_choices(json_values: list[Any]) -> str:
    shown = ", ".join(json.dumps(v, ensure_ascii=False) for v in json_values[:10])
    if len(json_values) > 10:
        shown += ", ..."
    return f"one of {shown}"


def choice_node(
    pairs: list[tuple[Any, Any]], label: str | None = None, extra: dict[str, Any] | None = None
) -> Node:
    """A node accepting exactly the given JSON values; pairs are (JSON value, Python value)."""
    json_values = [j for j, _ in pairs]
    schema, kinds = _choice_schema(json_values)
    if extra:
        schema.update(extra)
    label = label or format_choices(json_values)
    message = format_choices(json_values)
    table: dict[Any, Any] = {}
    dump_table: dict[Any, Any] = {}
    for json_value, py_value in pairs:
        table[literal_key(json_value)] = py_value
        dump_table[literal_key(json_value)] = json_value
    py_to_json = {id(py): j for j, py in pairs if isinstance(py, enum.Enum)}

    if all(type(v) is str for v in json_values):
        str_table = {j: py for j, py in pairs}

        def convert(value: Any) -> Any:
            if type(value) is str:
                try:
                    return str_table[value]
                except KeyError:
                    pass
            raise Mismatch(f"expected {message}, got {short_repr(value)}")

    else:

        def convert(value: Any) -> Any:
            key = literal_key(value)
            if key is not None:
                try:
                    return table[key]
                except KeyError:
                    pass
            raise Mismatch(f"expected {message}, got {short_repr(value)}")

    def dump(value: Any) -> Any:
        if isinstance(value, enum.Enum):
            found = py_to_json.get(id(value), MISSING)
            if found is not MISSING:
                return found
            value = value.value
        key = literal_key(value)
        if key is not None:
            try:
                return dump_table[key]
            except KeyError:
                pass
        raise Mismatch(f"expected {message}, got {short_repr(value)}")

    return Node(schema, convert, dump, kinds, label)
