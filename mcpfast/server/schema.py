"""Python function -> MCP tool metadata: JSON Schemas, argument validation, structured output.

`function_schema(fn)` reads a function's signature, type annotations and docstring once, at
decoration time, and returns a `ToolSignature` holding:

- ``input_schema``: a JSON Schema (dialect 2020-12, the MCP default, so no ``$schema`` key) of
  type ``object`` with one property per parameter, ``required`` for parameters without a default,
  named object types (dataclasses, TypedDicts) under ``$defs`` so recursive types work, and
  ``"additionalProperties": false``. Unknown arguments are rejected by `validate_arguments`, so
  the schema says so; the specification recommends exactly this form for parameterless tools and
  the official TypeScript SDK emits it for every tool. (The official Python SDK leaves the key out
  and silently drops unknown arguments; a client that honours the schema never notices the
  difference.) Nested dataclass / TypedDict objects are closed the same way.
- ``output_schema``: the schema of ``structuredContent``, derived from the return annotation, or
  None when there is no annotation or it is ``None``, ``str``, ``Any`` or mentions MCP content
  classes (`mcpfast.server.content`). MCP requires ``type: object`` at the root, so an object
  return type (dataclass, TypedDict, ``dict[str, X]``) is used directly and anything else is
  wrapped as ``{"result": <value>}`` (``wraps_output`` is then True and `serialize_output` wraps
  the value the same way). Return annotations that cannot be described give no output schema
  unless ``structured_output=True`` asks for one, in which case they are a TypeError.
- a validator compiled once per signature (one converter closure per parameter, nested closures
  for containers) that `validate_arguments` runs per call, and the matching output serializer.

Supported annotations: ``str``, ``int``, ``float``, ``bool``, ``None``, ``Optional[X]`` /
``X | None``, ``Union``, ``list[X]`` / ``List`` / ``Sequence``, ``tuple[X, ...]`` / ``tuple[A, B]``,
``set[X]`` / ``frozenset[X]``, ``dict[str, X]`` / ``Mapping``, ``Any`` (also an unannotated
parameter), ``Literal[...]``, ``Enum`` subclasses, ``TypedDict`` (``total=``, ``Required``,
``NotRequired``), dataclasses, ``NewType``, and ``Annotated[X, "description"]`` /
``Annotated[X, Field(...)]``. Anything else raises TypeError naming the parameter and the type.

Validation rules (they mirror what a JSON Schema validator says about the generated schema):
``bool`` is not an integer; an integer is accepted for ``float`` (converted to float); a float
with an integral value is accepted for ``int`` (JSON Schema counts 3.0 as an integer; converted
to int); ``None`` only where the type allows null; unknown arguments and missing required
arguments are errors; defaults are filled in. Values are converted to what the annotation asks
for: Enum members, dataclass instances, TypedDict dicts, tuples, sets.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import datetime
import enum
import inspect
import json
import math
import re
import types
import typing
import uuid
from pathlib import PurePath
from typing import Any, Callable, Mapping

__all__ = [
    "ArgumentError",
    "Field",
    "OutputError",
    "ToolSignature",
    "function_schema",
    "serialize_output",
    "to_jsonable",
    "validate_arguments",
]


# --------------------------------------------------------------------------------------------
# Errors


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


class _Mismatch(Exception):
    """Internal: a value does not match a node. ``path`` is built innermost-first while the
    exception travels up through the container converters, so nothing is allocated for the
    path on the success path."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.path: list[str | int] = []


_KIND_OF_TYPE: dict[type, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    type(None): "null",
    list: "array",
    dict: "object",
}


def _kind_of(value: Any) -> str:
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


def _expected(label: str, value: Any) -> _Mismatch:
    return _Mismatch(f"expected {label}, got {_kind_of(value)}")


def _check_array_like(label: str, value: Any) -> None:
    """Output side: an array may be any iterable but a str, bytes or mapping."""
    if isinstance(value, (str, bytes, bytearray, Mapping)) or not isinstance(
        value, collections.abc.Iterable
    ):
        raise _expected(label, value)


def _map_items(convert: Callable[[Any], Any], values: Any) -> list[Any]:
    """[convert(item) for item in values]; a mismatch names the item's index in its path."""
    out = []
    append = out.append
    for index, element in enumerate(values):
        try:
            append(convert(element))
        except _Mismatch as exc:
            exc.path.append(index)
            raise
    return out


def _map_positions(converts: list[Callable[[Any], Any]], values: list[Any]) -> list[Any]:
    """[converts[i](values[i]) ...] (as many values as converts); paths as in _map_items."""
    out = []
    append = out.append
    for index, element in enumerate(values):
        try:
            append(converts[index](element))
        except _Mismatch as exc:
            exc.path.append(index)
            raise
    return out


# --------------------------------------------------------------------------------------------
# Field: constraints and descriptions for Annotated[...]


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


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclasses.dataclass(frozen=True)
class Field:
    """Schema details for ``Annotated[X, Field(...)]`` (pydantic is not a dependency).

    ``ge``/``le``/``gt``/``lt``/``multiple_of`` apply to numbers (``minimum``, ``maximum``,
    ``exclusiveMinimum``, ``exclusiveMaximum``, ``multipleOf``); ``min_length``/``max_length``
    to strings, arrays and objects (``minLength``/``minItems``/``minProperties`` and the max
    forms); ``pattern`` (a regular expression searched in the string) to strings. ``default``
    makes the parameter or field optional; ``examples`` and ``title`` are copied to the schema.
    Constraints are enforced by `validate_arguments` and `serialize_output`.
    """

    description: str | None = None
    default: Any = MISSING
    ge: float | None = None
    le: float | None = None
    gt: float | None = None
    lt: float | None = None
    multiple_of: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    examples: list[Any] | None = None
    title: str | None = None

    def __post_init__(self) -> None:
        for name in ("ge", "le", "gt", "lt", "multiple_of"):
            value = getattr(self, name)
            if value is not None and not _is_number(value):
                raise ValueError(f"Field({name}=...) must be a number, got {value!r}")
            if value is not None and not math.isfinite(value):
                raise ValueError(f"Field({name}=...) must be finite, got {value!r}")
        if self.multiple_of is not None and self.multiple_of <= 0:
            raise ValueError(f"Field(multiple_of=...) must be > 0, got {self.multiple_of!r}")
        for name in ("min_length", "max_length"):
            value = getattr(self, name)
            if value is not None and (
                not isinstance(value, int) or isinstance(value, bool) or value < 0
            ):
                raise ValueError(f"Field({name}=...) must be an int >= 0, got {value!r}")
        if (
            self.min_length is not None
            and self.max_length is not None
            and self.min_length > self.max_length
        ):
            raise ValueError("Field(min_length=...) is greater than max_length")
        if self.pattern is not None:
            if not isinstance(self.pattern, str):
                raise ValueError(f"Field(pattern=...) must be a string, got {self.pattern!r}")
            try:
                re.compile(self.pattern)
            except re.error as exc:
                raise ValueError(f"Field(pattern={self.pattern!r}) is not a valid regex: {exc}")
        if self.examples is not None:
            if not isinstance(self.examples, (list, tuple)):
                raise ValueError("Field(examples=...) must be a list")
            object.__setattr__(self, "examples", list(self.examples))
        for name in ("description", "title"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise ValueError(f"Field({name}=...) must be a string, got {value!r}")

    def merged(self, other: Field) -> Field:
        """This Field with every attribute ``other`` sets replacing ours."""
        changes = {}
        for f in dataclasses.fields(other):
            value = getattr(other, f.name)
            if value is not f.default:
                changes[f.name] = value
        return dataclasses.replace(self, **changes)


# --------------------------------------------------------------------------------------------
# Generic conversion of Python values to JSON values


def _json_key(key: Any) -> str:
    if isinstance(key, str):
        return key.value if isinstance(key, enum.Enum) else str.__str__(key)
    if isinstance(key, enum.Enum):
        return _json_key(key.value)
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if isinstance(key, int):
        return str(int(key))
    if isinstance(key, float):
        return repr(float(key))
    raise TypeError(f"cannot use a {type(key).__name__} as a JSON object key")


def to_jsonable(value: Any) -> Any:
    """Convert a Python value to JSON-compatible data without looking at any annotation.

    dataclass instances -> dicts of their fields, Enum -> its value, tuples/sets -> lists,
    mappings -> dicts (str keys; int/float/bool/None keys become strings as ``json`` does),
    date/datetime/time -> ISO 8601 strings, UUID and paths -> strings, objects with a
    pydantic-style ``model_dump`` -> its ``mode="json"`` output. Raises TypeError for anything
    else (bytes included: return `mcpfast.server.content` objects for binary data) and
    ValueError for NaN and infinities, which JSON cannot represent.
    """
    t = type(value)
    if t is str or t is int or t is bool or value is None:
        return value
    if t is float:
        if not math.isfinite(value):
            raise ValueError(f"{value!r} cannot be represented in JSON")
        return value
    if t is dict:
        return {_json_key(k): to_jsonable(v) for k, v in value.items()}
    if t is list or t is tuple:
        return [to_jsonable(v) for v in value]
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return to_jsonable(float(value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {_json_key(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset, collections.abc.Set)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, (uuid.UUID, PurePath)):
        return str(value)
    model_dump = getattr(value, "model_dump", None)
    if callable(model_dump) and not isinstance(value, type):
        return to_jsonable(model_dump(mode="json"))
    raise TypeError(f"cannot convert a {type(value).__name__} to JSON")


# --------------------------------------------------------------------------------------------
# Docstrings: description + per-parameter descriptions (Google, Sphinx, NumPy)

_GOOGLE_PARAM_SECTIONS = frozenset(
    {
        "args",
        "arguments",
        "parameters",
        "params",
        "keyword args",
        "keyword arguments",
        "kwargs",
        "other parameters",
    }
)
_ATTRIBUTE_SECTIONS = frozenset({"attributes"})
_GOOGLE_HEADER = re.compile(r"^([A-Za-z][A-Za-z ]*?)\s*:\s*$")
_GOOGLE_ENTRY = re.compile(r"^\*{0,2}([A-Za-z_]\w*)\s*(?:\([^)]*\))?\s*:(?:\s+(.*))?$")
_NUMPY_UNDERLINE = re.compile(r"^\s*-{3,}\s*$")
_NUMPY_ENTRY = re.compile(r"^(\*{0,2}[A-Za-z_]\w*(?:\s*,\s*\*{0,2}[A-Za-z_]\w*)*)\s*(?::.*)?$")
_SPHINX_PARAM = re.compile(
    r"^:(?:param|parameter|arg|argument|key|keyword)\s+(?:[^:]*?\s+)?\*{0,2}([A-Za-z_]\w*)\s*:\s*(.*)$"
)
_SPHINX_TYPE = re.compile(r"^:(?:type|kwtype)\s+\*{0,2}[A-Za-z_]\w*\s*:.*$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def parse_docstring(
    doc: str | None, *, sections: frozenset[str] = _GOOGLE_PARAM_SECTIONS
) -> tuple[str, dict[str, str]]:
    """Split a docstring into (description, {parameter: description}).

    The description is the docstring without its parameter section(s); other sections
    (Returns, Raises, ...) stay. ``sections`` names the Google/NumPy headers (lower case) that
    hold parameter entries; Sphinx ``:param x:`` / ``:type x:`` fields are always taken.
    """
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    params: dict[str, list[str]] = {}
    kept: list[str] = []
    i = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        stripped = line.strip()
        indent = _indent(line)
        header = _GOOGLE_HEADER.match(stripped)
        # NumPy: "Parameters" underlined by dashes.
        if (
            i + 1 < n
            and stripped.lower() in sections
            and _NUMPY_UNDERLINE.match(lines[i + 1])
        ):
            i += 2
            current: list[str] | None = None
            while i < n:
                entry_line = lines[i]
                if not entry_line.strip():
                    i += 1
                    continue
                if i + 1 < n and _NUMPY_UNDERLINE.match(lines[i + 1]):
                    break  # next NumPy section
                entry_indent = _indent(entry_line)
                if entry_indent < indent:
                    break
                m = _NUMPY_ENTRY.match(entry_line.strip())
                if entry_indent == indent and m:
                    current = []
                    for name in m.group(1).split(","):
                        params[name.strip().lstrip("*")] = current
                elif entry_indent == indent:
                    break
                elif current is not None:
                    current.append(entry_line.strip())
                i += 1
            continue
        # Google: "Args:" followed by indented entries.
        if header and header.group(1).lower() in sections:
            i += 1
            entry_indent: int | None = None
            current = None
            while i < n:
                entry_line = lines[i]
                if not entry_line.strip():
                    i += 1
                    continue
                this_indent = _indent(entry_line)
                if this_indent <= indent:
                    break
                if entry_indent is None:
                    entry_indent = this_indent
                m = _GOOGLE_ENTRY.match(entry_line.strip())
                if this_indent <= entry_indent and m:
                    current = [m.group(2)] if m.group(2) else []
                    params[m.group(1)] = current
                elif current is not None:
                    current.append(entry_line.strip())
                i += 1
            continue
        # Sphinx: ":param x: ..." with indented continuation lines.
        m = _SPHINX_PARAM.match(stripped)
        if m or _SPHINX_TYPE.match(stripped):
            current = None
            if m:
                current = [m.group(2)] if m.group(2) else []
                params[m.group(1)] = current
            i += 1
            while i < n and lines[i].strip() and _indent(lines[i]) > indent:
                if current is not None:
                    current.append(lines[i].strip())
                i += 1
            continue
        kept.append(line)
        i += 1
    description = "\n".join(line.rstrip() for line in kept).strip()
    description = re.sub(r"\n{3,}", "\n\n", description)
    return description, {k: " ".join(v).strip() for k, v in params.items() if " ".join(v).strip()}


def _class_doc(cls: type) -> tuple[str, dict[str, str]]:
    """Description and attribute descriptions from a class docstring; the docstrings that
    ``@dataclass`` and (on Python 3.10) Enum generate when there is none are ignored."""
    doc = cls.__dict__.get("__doc__")
    if not isinstance(doc, str):
        return "", {}
    if dataclasses.is_dataclass(cls) and doc.startswith(f"{cls.__name__}("):
        return "", {}
    if issubclass(cls, enum.Enum) and doc == "An enumeration.":  # set by Python 3.10
        return "", {}
    return parse_docstring(
        doc, sections=_GOOGLE_PARAM_SECTIONS | _ATTRIBUTE_SECTIONS
    )


# --------------------------------------------------------------------------------------------
# Type nodes: schema + converter (input) + dumper (output), built once per annotation

_NUMERIC_KINDS = frozenset({"integer", "number"})
_ALL_KINDS = frozenset({"string", "integer", "number", "boolean", "null", "array", "object"})

_UNION_ORIGINS: tuple[Any, ...] = (typing.Union,)
if hasattr(types, "UnionType"):
    _UNION_ORIGINS += (types.UnionType,)

_LIST_ORIGINS = (list, collections.abc.Sequence, collections.abc.MutableSequence)
_SET_ORIGINS = (set, frozenset, collections.abc.Set, collections.abc.MutableSet)
_DICT_ORIGINS = (dict, collections.abc.Mapping, collections.abc.MutableMapping)

_REQUIREDNESS_WRAPPERS: set[Any] = set()
for _module_name in ("typing", "typing_extensions"):
    try:
        _module = __import__(_module_name)
    except ImportError:  # typing_extensions is optional
        continue
    for _name in ("Required", "NotRequired", "ReadOnly"):
        _wrapper = getattr(_module, _name, None)
        if _wrapper is not None:
            _REQUIREDNESS_WRAPPERS.add(_wrapper)

_LITERAL_ORIGINS: set[Any] = {typing.Literal}
_ANNOTATED_ORIGINS: set[Any] = {typing.Annotated}
try:
    import typing_extensions as _te

    _LITERAL_ORIGINS.add(_te.Literal)
    _ANNOTATED_ORIGINS.add(_te.Annotated)
except ImportError:  # typing_extensions is optional
    pass


class _Node:
    """What one annotation compiles to.

    ``schema``: its JSON Schema (shared; copy before changing). ``convert``: JSON value ->
    Python value, raising _Mismatch. ``dump``: Python value -> JSON value, raising _Mismatch.
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


def _identity(value: Any) -> Any:
    return value


def _conv_str(value: Any) -> Any:
    if isinstance(value, str):
        return value
    raise _expected("string", value)


def _dump_str(value: Any) -> Any:
    if type(value) is str:
        return value
    if isinstance(value, str):
        return str.__str__(value)
    raise _expected("string", value)


def _conv_int(value: Any) -> Any:
    t = type(value)
    if t is int:
        return value
    if t is float and value.is_integer():
        return int(value)
    raise _expected("integer", value)


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
            raise _Mismatch("number is too large for a float") from None
    raise _expected("number", value)


def _dump_float(value: Any) -> Any:
    t = type(value)
    if t is int:
        return value
    if t is bool or not isinstance(value, (int, float)):
        raise _expected("number", value)
    if isinstance(value, int):  # IntEnum and other int subclasses
        return int(value)
    value = float(value)
    if not math.isfinite(value):
        raise _Mismatch(f"expected a finite number, got {value!r}")
    return value


def _conv_bool(value: Any) -> Any:
    if type(value) is bool:
        return value
    raise _expected("boolean", value)


def _conv_null(value: Any) -> Any:
    if value is None:
        return None
    raise _expected("null", value)


def _dump_any(value: Any) -> Any:
    try:
        return to_jsonable(value)
    except (TypeError, ValueError) as exc:
        raise _Mismatch(str(exc)) from None


_STR_NODE = _Node({"type": "string"}, _conv_str, _dump_str, frozenset({"string"}), "string", exact=str)
_INT_NODE = _Node({"type": "integer"}, _conv_int, _dump_int, frozenset({"integer"}), "integer", exact=int)
_FLOAT_NODE = _Node({"type": "number"}, _conv_float, _dump_float, _NUMERIC_KINDS, "number", exact=float)
_BOOL_NODE = _Node(
    {"type": "boolean"}, _conv_bool, _conv_bool, frozenset({"boolean"}), "boolean", exact=bool
)
_NULL_NODE = _Node({"type": "null"}, _conv_null, _conv_null, frozenset({"null"}), "null")
_ANY_NODE = _Node({}, _identity, _dump_any, _ALL_KINDS, "any value", hashable=False)


def _literal_key(value: Any) -> tuple[str, Any] | None:
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


def _format_choices(json_values: list[Any]) -> str:
    shown = ", ".join(json.dumps(v, ensure_ascii=False) for v in json_values[:10])
    if len(json_values) > 10:
        shown += ", ..."
    return f"one of {shown}"


def _choice_node(
    pairs: list[tuple[Any, Any]], label: str | None = None, extra: dict[str, Any] | None = None
) -> _Node:
    """A node accepting exactly the given JSON values; pairs are (JSON value, Python value)."""
    json_values = [j for j, _ in pairs]
    schema, kinds = _choice_schema(json_values)
    if extra:
        schema.update(extra)
    label = label or _format_choices(json_values)
    message = _format_choices(json_values)
    table: dict[Any, Any] = {}
    dump_table: dict[Any, Any] = {}
    for json_value, py_value in pairs:
        table[_literal_key(json_value)] = py_value
        dump_table[_literal_key(json_value)] = json_value
    py_to_json = {id(py): j for j, py in pairs if isinstance(py, enum.Enum)}

    if all(type(v) is str for v in json_values):
        str_table = {j: py for j, py in pairs}

        def convert(value: Any) -> Any:
            if type(value) is str:
                try:
                    return str_table[value]
                except KeyError:
                    pass
            raise _Mismatch(f"expected {message}, got {_short_repr(value)}")

    else:

        def convert(value: Any) -> Any:
            key = _literal_key(value)
            if key is not None:
                try:
                    return table[key]
                except KeyError:
                    pass
            raise _Mismatch(f"expected {message}, got {_short_repr(value)}")

    def dump(value: Any) -> Any:
        if isinstance(value, enum.Enum):
            found = py_to_json.get(id(value), MISSING)
            if found is not MISSING:
                return found
            value = value.value
        key = _literal_key(value)
        if key is not None:
            try:
                return dump_table[key]
            except KeyError:
                pass
        raise _Mismatch(f"expected {message}, got {_short_repr(value)}")

    return _Node(schema, convert, dump, kinds, label)


def _short_repr(value: Any) -> str:
    kind = _kind_of(value)
    if kind in ("string", "integer", "number", "boolean", "null"):
        try:
            text = json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError):
            text = repr(value)
        if len(text) > 40:
            text = text[:37] + "..."
        return text
    return kind


def _check_constraints(fld: Field) -> Callable[[Any], None] | None:
    """Build a check for the JSON value against Field constraints (JSON Schema semantics: a
    keyword only applies to values of the types it is defined for)."""
    ge, le, gt, lt, mult = fld.ge, fld.le, fld.gt, fld.lt, fld.multiple_of
    min_len, max_len = fld.min_length, fld.max_length
    regex = re.compile(fld.pattern) if fld.pattern is not None else None
    numeric = any(v is not None for v in (ge, le, gt, lt, mult))
    sized = min_len is not None or max_len is not None
    if not numeric and not sized and regex is None:
        return None

    def count_check(count: int, noun: str) -> None:
        if min_len is not None and count < min_len:
            raise _Mismatch(f"expected at least {min_len} {noun}, got {count}")
        if max_len is not None and count > max_len:
            raise _Mismatch(f"expected at most {max_len} {noun}, got {count}")

    def check(value: Any) -> None:
        t = type(value)
        if (t is int or t is float) and numeric:
            if ge is not None and not value >= ge:
                raise _Mismatch(f"must be >= {ge}, got {value!r}")
            if le is not None and not value <= le:
                raise _Mismatch(f"must be <= {le}, got {value!r}")
            if gt is not None and not value > gt:
                raise _Mismatch(f"must be > {gt}, got {value!r}")
            if lt is not None and not value < lt:
                raise _Mismatch(f"must be < {lt}, got {value!r}")
            if mult is not None:
                if isinstance(mult, int) and t is int:
                    bad = value % mult != 0
                else:
                    try:
                        quotient = value / mult
                        bad = quotient != int(quotient)
                    except (OverflowError, ValueError):
                        bad = True
                if bad:
                    raise _Mismatch(f"must be a multiple of {mult}, got {value!r}")
        elif t is str:
            if sized:
                count_check(len(value), "characters")
            if regex is not None and regex.search(value) is None:
                raise _Mismatch(f"must match pattern {fld.pattern!r}")
        elif t is list and sized:
            count_check(len(value), "items")
        elif t is dict and sized:
            count_check(len(value), "properties")

    return check


def _constraint_keywords(fld: Field, kinds: frozenset[str], where: str) -> dict[str, Any]:
    keywords: dict[str, Any] = {}
    numeric = {
        "ge": "minimum",
        "le": "maximum",
        "gt": "exclusiveMinimum",
        "lt": "exclusiveMaximum",
        "multiple_of": "multipleOf",
    }
    for attr, keyword in numeric.items():
        value = getattr(fld, attr)
        if value is not None:
            if not kinds & _NUMERIC_KINDS:
                raise TypeError(f"Field({attr}=...) on {where} needs a numeric type")
            keywords[keyword] = value
    sized = {"string": ("minLength", "maxLength"), "array": ("minItems", "maxItems"),
             "object": ("minProperties", "maxProperties")}
    if fld.min_length is not None or fld.max_length is not None:
        applicable = [kind for kind in sized if kind in kinds]
        if not applicable:
            raise TypeError(f"Field(min_length/max_length) on {where} needs a string, array or object type")
        for kind in applicable:
            low, high = sized[kind]
            if fld.min_length is not None:
                keywords[low] = fld.min_length
            if fld.max_length is not None:
                keywords[high] = fld.max_length
    if fld.pattern is not None:
        if "string" not in kinds:
            raise TypeError(f"Field(pattern=...) on {where} needs a string type")
        keywords["pattern"] = fld.pattern
    return keywords


def _split_annotated(tp: Any) -> tuple[Any, str | None, Field | None]:
    """Annotated[X, ...] -> (X, description, Field). Later metadata wins."""
    description: str | None = None
    fld: Field | None = None
    while typing.get_origin(tp) in _ANNOTATED_ORIGINS:
        for meta in tp.__metadata__:
            if isinstance(meta, str):
                description = meta
            elif isinstance(meta, Field):
                fld = meta if fld is None else fld.merged(meta)
        tp = tp.__origin__
    if fld is not None and fld.description is not None:
        description = fld.description
    return tp, description, fld


def _typeddict_key_required(hint: Any, declared: bool) -> bool:
    """Whether a TypedDict key is required. An explicit Required/NotRequired wrapper decides;
    the class's ``__required_keys__`` cannot see them when annotations are strings
    (``from __future__ import annotations``), so they are read from the resolved hint."""
    while True:
        origin = typing.get_origin(hint)
        if origin not in _REQUIREDNESS_WRAPPERS:
            return declared
        if getattr(origin, "_name", None) == "Required":
            return True
        if getattr(origin, "_name", None) == "NotRequired":
            return False
        hint = typing.get_args(hint)[0]  # ReadOnly[...] says nothing about requiredness


def _strip_requiredness(tp: Any) -> Any:
    while typing.get_origin(tp) in _REQUIREDNESS_WRAPPERS:
        tp = typing.get_args(tp)[0]
    return tp


def _type_name(tp: Any) -> str:
    if isinstance(tp, type):
        return tp.__qualname__
    return repr(tp)


class _Builder:
    """Compiles annotations into nodes, collecting named object schemas in ``defs``."""

    def __init__(self, globalns: dict[str, Any] | None) -> None:
        self.globalns = globalns or {}
        self.defs: dict[str, Any] = {}
        self.named: dict[Any, _Node] = {}
        self.def_owner: dict[str, Any] = {}

    # -- entry point --------------------------------------------------------------------

    def annotated(self, tp: Any, where: str) -> tuple[_Node, Field | None]:
        """Node for a possibly Annotated type with its metadata applied, plus the Field."""
        base, description, fld = _split_annotated(tp)
        node = self.node(base, where)
        return self.apply_meta(node, description, fld, where), fld

    def apply_meta(
        self, node: _Node, description: str | None, fld: Field | None, where: str
    ) -> _Node:
        if description is None and fld is None:
            return node
        schema = dict(node.schema)
        if description:
            schema["description"] = description
        if fld is None:
            return _Node(
                schema, node.convert, node.dump, node.kinds, node.label, node.hashable, node.exact
            )
        if fld.title is not None:
            schema["title"] = fld.title
        if fld.examples is not None:
            schema["examples"] = [to_jsonable(e) for e in fld.examples]
        schema.update(_constraint_keywords(fld, node.kinds, where))
        check = _check_constraints(fld)
        if check is None:
            return _Node(
                schema, node.convert, node.dump, node.kinds, node.label, node.hashable, node.exact
            )
        inner_convert, inner_dump = node.convert, node.dump

        def convert(value: Any) -> Any:
            result = inner_convert(value)
            check(value)
            return result

        def dump(value: Any) -> Any:
            result = inner_dump(value)
            check(result)
            return result

        return _Node(schema, convert, dump, node.kinds, node.label, node.hashable)

    def node(self, tp: Any, where: str) -> _Node:
        if isinstance(tp, str):
            tp = typing.ForwardRef(tp)
        if isinstance(tp, typing.ForwardRef):
            try:
                tp = eval(tp.__forward_arg__, self.globalns)  # noqa: S307 - annotation text
            except Exception as exc:
                raise TypeError(
                    f"cannot resolve the annotation {tp.__forward_arg__!r} of {where}: {exc}"
                ) from None
        if tp is Any or tp is object:
            return _ANY_NODE
        if tp is None or tp is type(None):
            return _NULL_NODE
        if tp is str:
            return _STR_NODE
        if tp is bool:
            return _BOOL_NODE
        if tp is int:
            return _INT_NODE
        if tp is float:
            return _FLOAT_NODE
        origin = typing.get_origin(tp)
        args = typing.get_args(tp)
        if origin in _ANNOTATED_ORIGINS:
            return self.annotated(tp, where)[0]
        if origin in _UNION_ORIGINS:
            return self.union_node(args, where)
        if origin in _LITERAL_ORIGINS:
            return self.literal_node(args, where)
        if origin in _REQUIREDNESS_WRAPPERS:
            return self.node(args[0], where)
        if tp in _LIST_ORIGINS or origin in _LIST_ORIGINS:
            return self.list_node(args[0] if args else Any, where)
        if tp is tuple or origin is tuple:
            # Bare ``tuple`` / ``typing.Tuple`` take any length; ``tuple[()]`` takes none.
            return self.tuple_node(args, bare=tp is tuple or tp is typing.Tuple, where=where)
        if tp in _SET_ORIGINS or origin in _SET_ORIGINS:
            frozen = (origin or tp) in (frozenset, collections.abc.Set)
            return self.set_node(args[0] if args else Any, frozen, where)
        if tp in _DICT_ORIGINS or origin in _DICT_ORIGINS:
            key, value = (args[0], args[1]) if len(args) == 2 else (str, Any)
            return self.dict_node(key, value, where)
        if isinstance(tp, typing.NewType):
            return self.node(tp.__supertype__, where)
        if origin is None and isinstance(tp, type):
            if issubclass(tp, enum.Enum):
                return self.enum_node(tp, where)
            if dataclasses.is_dataclass(tp):
                return self.object_node(tp, where, is_typeddict=False)
            if issubclass(tp, dict) and hasattr(tp, "__required_keys__"):
                return self.object_node(tp, where, is_typeddict=True)
        raise TypeError(f"unsupported type annotation {_type_name(tp)} for {where}")

    # -- composite nodes ----------------------------------------------------------------

    def union_node(self, args: tuple[Any, ...], where: str) -> _Node:
        members: list[_Node] = []
        nullable = False
        for arg in args:
            if arg is None or arg is type(None):
                nullable = True
                continue
            members.append(self.node(arg, where))
        # An integer argument should keep its type when int and float are both allowed,
        # whichever order the annotation lists them in.
        if _INT_NODE in members and _FLOAT_NODE in members:
            int_at, float_at = members.index(_INT_NODE), members.index(_FLOAT_NODE)
            if float_at < int_at:
                members[int_at], members[float_at] = members[float_at], members[int_at]
        if nullable:
            members.append(_NULL_NODE)
        if len(members) == 1:
            return members[0]
        schema = {"anyOf": [m.schema for m in members]}
        kinds = frozenset().union(*(m.kinds for m in members))
        label = " or ".join(m.label for m in members)
        hashable = all(m.hashable for m in members)
        converts = [m.convert for m in members]
        dumps = [m.dump for m in members]
        member_kinds = [m.kinds for m in members]

        def pick_error(value: Any, errors: list[_Mismatch]) -> _Mismatch:
            # If exactly one member admits this JSON type, its (deeper) error is the useful
            # one; otherwise say which types would have been accepted.
            kind = _kind_of(value)
            candidates = [e for e, k in zip(errors, member_kinds) if kind in k]
            if len(candidates) == 1:
                return candidates[0]
            return _Mismatch(f"expected {label}, got {kind}")

        if nullable and len(members) == 2:
            inner_convert, inner_dump = members[0].convert, members[0].dump

            def convert(value: Any) -> Any:
                if value is None:
                    return None
                try:
                    return inner_convert(value)
                except _Mismatch as exc:
                    raise pick_error(value, [exc, _expected("null", value)]) from None

            def dump(value: Any) -> Any:
                if value is None:
                    return None
                try:
                    return inner_dump(value)
                except _Mismatch as exc:
                    raise pick_error(value, [exc, _expected("null", value)]) from None

        else:

            def convert(value: Any) -> Any:
                errors = []
                for member_convert in converts:
                    try:
                        return member_convert(value)
                    except _Mismatch as exc:
                        errors.append(exc)
                raise pick_error(value, errors)

            def dump(value: Any) -> Any:
                errors = []
                for member_dump in dumps:
                    try:
                        return member_dump(value)
                    except _Mismatch as exc:
                        errors.append(exc)
                raise pick_error(value, errors)

        return _Node(schema, convert, dump, kinds, label, hashable)

    def literal_node(self, args: tuple[Any, ...], where: str) -> _Node:
        pairs: list[tuple[Any, Any]] = []
        for arg in args:
            json_value = arg.value if isinstance(arg, enum.Enum) else arg
            if _literal_key(json_value) is None:
                raise TypeError(
                    f"unsupported Literal value {arg!r} for {where}: "
                    "use str, int, float, bool, None or Enum members"
                )
            pairs.append((json_value, arg))
        if not pairs:
            raise TypeError(f"empty Literal for {where}")
        return _choice_node(pairs)

    def enum_node(self, cls: type[enum.Enum], where: str) -> _Node:
        pairs: list[tuple[Any, Any]] = []
        for member in cls:
            if _literal_key(member.value) is None or isinstance(member.value, enum.Enum):
                raise TypeError(
                    f"unsupported type annotation {cls.__qualname__} for {where}: enum values "
                    f"must be str, int, float, bool or None, {member.name} is {member.value!r}"
                )
            pairs.append((member.value, member))
        if not pairs:
            raise TypeError(f"unsupported type annotation {cls.__qualname__} for {where}: empty enum")
        description, _ = _class_doc(cls)
        extra: dict[str, Any] = {"title": cls.__name__}
        if description:
            extra["description"] = description
        return _choice_node(pairs, label=f"{cls.__name__} ({_format_choices([p[0] for p in pairs])})", extra=extra)

    def list_node(self, item_tp: Any, where: str) -> _Node:
        item = self.node(item_tp, where)
        schema: dict[str, Any] = {"type": "array"}
        if item.schema:
            schema["items"] = item.schema
        item_convert, item_dump = item.convert, item.dump
        label = "array"

        def convert(value: Any) -> Any:
            if type(value) is not list:
                raise _expected(label, value)
            return _map_items(item_convert, value)

        def dump(value: Any) -> Any:
            _check_array_like(label, value)
            return _map_items(item_dump, value)

        return _Node(schema, convert, dump, frozenset({"array"}), label, hashable=False)

    def tuple_node(self, args: tuple[Any, ...], bare: bool, where: str) -> _Node:
        if args == ((),):  # tuple[()] on Python 3.10
            args = ()
        variadic = bare or (len(args) == 2 and args[1] is Ellipsis)
        if variadic:
            item = self.node(args[0] if args else Any, where)
            items = [item]
            schema: dict[str, Any] = {"type": "array"}
            if item.schema:
                schema["items"] = item.schema
        else:
            if Ellipsis in args:
                raise TypeError(f"unsupported type annotation {args!r} for {where}")
            items = [self.node(arg, where) for arg in args]
            schema = {"type": "array", "minItems": len(items), "maxItems": len(items)}
            if items:
                schema["prefixItems"] = [i.schema for i in items]
        converts = [i.convert for i in items]
        dumps = [i.dump for i in items]
        size = len(items)
        label = "array"
        hashable = all(i.hashable for i in items)

        def convert(value: Any) -> Any:
            if type(value) is not list:
                raise _expected(label, value)
            if variadic:
                return tuple(_map_items(converts[0], value))
            if len(value) != size:
                raise _Mismatch(f"expected an array of {size} items, got {len(value)}")
            return tuple(_map_positions(converts, value))

        def dump(value: Any) -> Any:
            _check_array_like(label, value)
            value = list(value)
            if variadic:
                return _map_items(dumps[0], value)
            if len(value) != size:
                raise _Mismatch(f"expected an array of {size} items, got {len(value)}")
            return _map_positions(dumps, value)

        return _Node(schema, convert, dump, frozenset({"array"}), label, hashable)

    def set_node(self, item_tp: Any, frozen: bool, where: str) -> _Node:
        item = self.node(item_tp, where)
        if not item.hashable:
            raise TypeError(
                f"unsupported type annotation set[{_type_name(item_tp)}] for {where}: "
                "set items must be hashable (scalars, enums, tuples, frozen dataclasses)"
            )
        schema: dict[str, Any] = {"type": "array", "uniqueItems": True}
        if item.schema:
            schema["items"] = item.schema
        item_convert, item_dump = item.convert, item.dump
        make = frozenset if frozen else set
        label = "array"

        def convert(value: Any) -> Any:
            if type(value) is not list:
                raise _expected(label, value)
            out: set[Any] = set()
            for index, element in enumerate(value):
                try:
                    converted = item_convert(element)
                except _Mismatch as exc:
                    exc.path.append(index)
                    raise
                if converted in out:
                    err = _Mismatch("duplicate item (items must be unique)")
                    err.path.append(index)
                    raise err
                out.add(converted)
            return make(out)

        def dump(value: Any) -> Any:
            _check_array_like(label, value)
            out = []
            seen: set[Any] = set()
            for index, element in enumerate(value):
                try:
                    dumped = item_dump(element)
                except _Mismatch as exc:
                    exc.path.append(index)
                    raise
                key = _literal_key(dumped) or json.dumps(dumped, sort_keys=True)
                if key in seen:
                    err = _Mismatch("duplicate item (items must be unique)")
                    err.path.append(index)
                    raise err
                seen.add(key)
                out.append(dumped)
            return out

        return _Node(schema, convert, dump, frozenset({"array"}), label, hashable=False)

    def dict_node(self, key_tp: Any, value_tp: Any, where: str) -> _Node:
        key_base = _split_annotated(key_tp)[0]
        if key_base is not str and key_base is not Any:
            raise TypeError(
                f"unsupported type annotation dict[{_type_name(key_tp)}, ...] for {where}: "
                "JSON object keys are strings, use dict[str, ...]"
            )
        value = self.node(value_tp, where)
        schema: dict[str, Any] = {"type": "object"}
        label = "object"
        if value is _ANY_NODE:

            def convert(v: Any) -> Any:
                if isinstance(v, dict):
                    return v
                raise _expected(label, v)

        else:
            schema["additionalProperties"] = value.schema
            value_convert = value.convert

            def convert(v: Any) -> Any:
                if not isinstance(v, dict):
                    raise _expected(label, v)
                out = {}
                for k, element in v.items():
                    try:
                        out[k] = value_convert(element)
                    except _Mismatch as exc:
                        exc.path.append(k)
                        raise
                return out

        value_dump = value.dump

        def dump(v: Any) -> Any:
            if not isinstance(v, Mapping):
                raise _expected(label, v)
            out = {}
            for k, element in v.items():
                if not isinstance(k, str):
                    raise _Mismatch(f"object keys must be strings, got {_kind_of(k)} key {k!r}")
                try:
                    out[str.__str__(k)] = value_dump(element)
                except _Mismatch as exc:
                    exc.path.append(k)
                    raise
            return out

        return _Node(schema, convert, dump, frozenset({"object"}), label, hashable=False)

    def def_name(self, cls: type) -> str:
        base = re.sub(r"[^A-Za-z0-9_.-]", "_", cls.__name__)
        name = base
        counter = 2
        while name in self.def_owner and self.def_owner[name] is not cls:
            name = f"{base}{counter}"
            counter += 1
        self.def_owner[name] = cls
        return name

    def object_node(self, cls: type, where: str, is_typeddict: bool) -> _Node:
        known = self.named.get(cls)
        if known is not None:
            return known
        name = self.def_name(cls)
        label = f"{name} object"
        hashable = (
            not is_typeddict
            and cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
            and cls.__dataclass_params__.eq  # type: ignore[attr-defined]
        )
        # (field name, convert, dump, default); default is _REQUIRED, _OMIT or a value.
        specs: list[tuple[str, Callable[[Any], Any], Callable[[Any], Any], Any]] = []
        names: set[str] = set()
        # The converter closes over ``specs``, filled below: registering the finished node
        # before compiling the fields lets a recursive reference capture the real functions.
        convert, dump = _object_functions(cls, label, specs, names, is_typeddict)
        node = _Node({"$ref": f"#/$defs/{name}"}, convert, dump, frozenset({"object"}), label, hashable)
        self.named[cls] = node
        self.defs[name] = None
        description, attribute_docs = _class_doc(cls)
        try:
            hints = typing.get_type_hints(cls, include_extras=True)
        except Exception as exc:
            raise TypeError(f"cannot resolve the type hints of {cls.__qualname__} ({where}): {exc}") from None

        properties: dict[str, Any] = {}
        required: list[str] = []
        if is_typeddict:
            required_keys = cls.__required_keys__  # type: ignore[attr-defined]
            entries = [
                (k, hint, _typeddict_key_required(hint, k in required_keys), MISSING)
                for k, hint in hints.items()
            ]
        else:
            entries = []
            for f in dataclasses.fields(cls):
                if not f.init:
                    continue
                if f.default is not dataclasses.MISSING:
                    entries.append((f.name, hints.get(f.name, Any), False, f.default))
                elif f.default_factory is not dataclasses.MISSING:
                    entries.append((f.name, hints.get(f.name, Any), False, _FACTORY))
                else:
                    entries.append((f.name, hints.get(f.name, Any), True, MISSING))
        field_metadata = (
            {} if is_typeddict else {f.name: f.metadata for f in dataclasses.fields(cls)}
        )
        for field_name, hint, is_required, class_default in entries:
            field_where = f"field {field_name!r} of {cls.__qualname__} ({where})"
            base, field_description, fld = _split_annotated(_strip_requiredness(hint))
            child = self.apply_meta(
                self.node(base, field_where), field_description, fld, field_where
            )
            schema = dict(child.schema)
            if "description" not in schema:
                doc = attribute_docs.get(field_name)
                meta_doc = field_metadata.get(field_name, {}).get("description")
                if not doc and isinstance(meta_doc, str):
                    doc = meta_doc
                if doc:
                    schema["description"] = doc
            if is_required and fld is not None and fld.default is not MISSING:
                # Field(default=...) on a field the class itself requires: we pass it.
                is_required = False
                spec_default: Any = fld.default
                _set_default(schema, child, fld.default)
            elif is_required:
                spec_default = _REQUIRED
            else:
                # The class applies its own default / factory; an optional TypedDict key
                # simply stays absent.
                spec_default = _OMIT
                if class_default is not MISSING and class_default is not _FACTORY:
                    _set_default(schema, child, class_default)
            properties[field_name] = schema
            if is_required:
                required.append(field_name)
            specs.append((field_name, child.convert, child.dump, spec_default))
            names.add(field_name)

        definition: dict[str, Any] = {"type": "object", "title": cls.__name__}
        if description:
            definition["description"] = description
        definition["properties"] = properties
        if required:
            definition["required"] = required
        definition["additionalProperties"] = False
        self.defs[name] = definition
        return node


class _Marker:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


_REQUIRED: Any = _Marker("REQUIRED")
_ABSENT: Any = _Marker("ABSENT")
_OMIT: Any = _Marker("OMIT")
_FACTORY: Any = _Marker("FACTORY")


def _set_default(schema: dict[str, Any], node: _Node, default: Any) -> None:
    """Put a default into a property schema when it can be written as JSON."""
    try:
        schema["default"] = node.dump(default)
        return
    except _Mismatch:
        pass
    try:
        value = to_jsonable(default)
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return
    schema["default"] = value


def _unknown_key_error(value: Mapping[Any, Any], names: set[str], noun: str) -> _Mismatch:
    for key in value:
        if key not in names:
            expected = ", ".join(sorted(names)) if names else "none"
            err = _Mismatch(f"unexpected {noun} (expected one of: {expected})")
            err.path.append(key)
            return err
    return _Mismatch(f"unexpected {noun}")


def _object_functions(
    cls: type,
    label: str,
    specs: list[tuple[str, Callable[[Any], Any], Callable[[Any], Any], Any]],
    names: set[str],
    is_typeddict: bool,
) -> tuple[Callable[[Any], Any], Callable[[Any], Any]]:
    """convert/dump for a dataclass or TypedDict whose fields are compiled in ``specs``."""

    def read_fields(value: Mapping[Any, Any], use_dump: bool) -> dict[str, Any]:
        out: dict[str, Any] = {}
        seen = 0
        for field_name, field_convert, field_dump, default in specs:
            if field_name in value:
                seen += 1
                try:
                    out[field_name] = (field_dump if use_dump else field_convert)(value[field_name])
                except _Mismatch as exc:
                    exc.path.append(field_name)
                    raise
            elif default is _REQUIRED:
                err = _Mismatch("missing required property")
                err.path.append(field_name)
                raise err
            elif default is not _OMIT:
                out[field_name] = field_dump(default) if use_dump else default
        if seen != len(value):
            raise _unknown_key_error(value, names, "property")
        return out

    def convert(value: Any) -> Any:
        if not isinstance(value, dict):
            raise _expected(label, value)
        kwargs = read_fields(value, use_dump=False)
        if is_typeddict:
            return kwargs
        try:
            return cls(**kwargs)
        except (TypeError, ValueError) as exc:
            raise _Mismatch(f"invalid {cls.__name__}: {exc}") from None

    def dump(value: Any) -> Any:
        if not is_typeddict and isinstance(value, cls):
            out: dict[str, Any] = {}
            for field_name, _, field_dump, _ in specs:
                try:
                    out[field_name] = field_dump(getattr(value, field_name))
                except _Mismatch as exc:
                    exc.path.append(field_name)
                    raise
            return out
        if isinstance(value, Mapping):
            return read_fields(value, use_dump=True)
        raise _expected(label, value)

    return convert, dump


# --------------------------------------------------------------------------------------------
# Tool signatures


@dataclasses.dataclass(frozen=True, eq=False)
class ToolSignature:
    """MCP metadata and compiled validators of one tool function (see `function_schema`)."""

    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    context_param: str | None
    wraps_output: bool
    parameters: tuple[str, ...]
    validator: Callable[[Any], dict[str, Any]] = dataclasses.field(repr=False)
    output_dumper: Callable[[Any], Any] | None = dataclasses.field(repr=False)

    def to_tool(self) -> dict[str, Any]:
        """The ``Tool`` object for tools/list: name, description (when not empty),
        inputSchema and outputSchema (when there is one)."""
        tool: dict[str, Any] = {"name": self.name}
        if self.description:
            tool["description"] = self.description
        tool["inputSchema"] = self.input_schema
        if self.output_schema is not None:
            tool["outputSchema"] = self.output_schema
        return tool


def _is_context_annotation(tp: Any, context_type: Any) -> bool:
    tp = _split_annotated(tp)[0]
    if typing.get_origin(tp) in _UNION_ORIGINS:
        members = [a for a in typing.get_args(tp) if a is not type(None)]
        return len(members) == 1 and _is_context_annotation(members[0], context_type)
    tp = typing.get_origin(tp) or tp
    return isinstance(tp, type) and issubclass(tp, context_type)


def _mentions_content(tp: Any, content_base: type) -> bool:
    tp = _split_annotated(tp)[0]
    # (typing.get_origin: on Python 3.10 ``list[int]`` also passes isinstance(x, type).)
    if typing.get_origin(tp) is None and isinstance(tp, type) and issubclass(tp, content_base):
        return True
    return any(_mentions_content(arg, content_base) for arg in typing.get_args(tp) if arg is not Ellipsis)


def _resolved_signature(fn: Callable[..., Any], name: str) -> tuple[inspect.Signature, dict[str, Any]]:
    """The signature with annotations evaluated (``from __future__ import annotations`` and
    string annotations), Annotated metadata kept, and a dict of the annotations by name
    (``"return"`` for the return annotation).

    ``inspect.signature(eval_str=True)`` rather than ``typing.get_type_hints``: it works for
    partials and callable objects too, and does not turn ``x: int = None`` into
    ``Optional[int]`` as get_type_hints does on Python 3.10 only. String forward references
    nested inside an annotation are resolved later, against the function's globals."""
    try:
        signature = inspect.signature(fn, eval_str=True)
    except (NameError, SyntaxError, AttributeError, TypeError) as exc:
        raise TypeError(f"cannot resolve the type annotations of {name}: {exc}") from None
    except ValueError as exc:
        raise TypeError(f"cannot read the signature of {name}: {exc}") from None
    hints = {
        p.name: p.annotation
        for p in signature.parameters.values()
        if p.annotation is not inspect.Parameter.empty
    }
    if signature.return_annotation is not inspect.Signature.empty:
        hints["return"] = signature.return_annotation
    return signature, hints


def function_schema(
    fn: Callable[..., Any],
    *,
    context_type: type | tuple[type, ...] | None = None,
    name: str | None = None,
    description: str | None = None,
    structured_output: bool | None = None,
) -> ToolSignature:
    """Read ``fn`` once and build its `ToolSignature`.

    ``context_type``: parameters annotated with this class (or ``Optional`` of it, or a generic
    alias of it) receive the request context; they are left out of the schema and the
    validator, and their name is ``context_param``. ``name``/``description`` override the
    function name and docstring. ``structured_output``: None derives an output schema when the
    return annotation allows one, False never does, True requires one (TypeError otherwise).

    Raises TypeError for parameters that cannot be described: unsupported annotations,
    ``*args``/``**kwargs``, positional-only parameters, more than one context parameter.
    """
    tool_name = name or getattr(fn, "__name__", None) or type(fn).__name__
    signature, hints = _resolved_signature(fn, tool_name)
    unwrapped = inspect.unwrap(fn)
    globalns = getattr(unwrapped, "__globals__", None)
    if globalns is None:
        module = inspect.getmodule(unwrapped) or inspect.getmodule(type(unwrapped))
        globalns = vars(module) if module is not None else {}
    doc_description, param_docs = parse_docstring(inspect.getdoc(fn))
    builder = _Builder(globalns)

    properties: dict[str, Any] = {}
    required: list[str] = []
    plan: list[tuple[str, Callable[[Any], Any], Any, type | None]] = []
    context_param: str | None = None
    for param in signature.parameters.values():
        where = f"parameter {param.name!r} of {tool_name}"
        annotation = hints.get(param.name, Any)
        if context_type is not None and _is_context_annotation(annotation, context_type):
            if context_param is not None:
                raise TypeError(f"{tool_name} has two context parameters: {context_param!r} and {param.name!r}")
            context_param = param.name
            continue
        if param.kind is inspect.Parameter.VAR_POSITIONAL or param.kind is inspect.Parameter.VAR_KEYWORD:
            raise TypeError(f"{where}: *args and **kwargs cannot be described by a JSON Schema")
        if param.kind is inspect.Parameter.POSITIONAL_ONLY:
            raise TypeError(f"{where}: positional-only parameters cannot receive named arguments")
        base, param_description, fld = _split_annotated(annotation)
        node = builder.apply_meta(builder.node(base, where), param_description, fld, where)
        schema = dict(node.schema)
        if "description" not in schema and param.name in param_docs:
            schema["description"] = param_docs[param.name]
        default: Any = _REQUIRED
        if param.default is not inspect.Parameter.empty:
            default = param.default
        elif fld is not None and fld.default is not MISSING:
            default = fld.default
        if default is _REQUIRED:
            required.append(param.name)
        else:
            _set_default(schema, node, default)
        properties[param.name] = schema
        plan.append((param.name, node.convert, default, node.exact))

    input_schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        input_schema["required"] = required
    input_schema["additionalProperties"] = False
    if builder.defs:
        input_schema["$defs"] = builder.defs

    output_schema, wraps, dumper = _output_plan(
        hints.get("return", MISSING)
        if signature.return_annotation is not inspect.Signature.empty
        else MISSING,
        structured_output,
        tool_name,
        globalns,
    )
    return ToolSignature(
        name=tool_name,
        description=description if description is not None else doc_description,
        input_schema=input_schema,
        output_schema=output_schema,
        context_param=context_param,
        wraps_output=wraps,
        parameters=tuple(p[0] for p in plan),
        validator=_compile_validator(plan),
        output_dumper=dumper,
    )


def _output_plan(
    annotation: Any, structured_output: bool | None, tool_name: str, globalns: dict[str, Any]
) -> tuple[dict[str, Any] | None, bool, Callable[[Any], Any] | None]:
    """(output schema, wraps_output, dumper) for a return annotation."""
    if structured_output is False:
        return None, False, None
    where = f"the return value of {tool_name}"

    def no_schema(reason: str) -> tuple[None, bool, None]:
        if structured_output:
            raise TypeError(f"{tool_name}: no structured output possible, {reason}")
        return None, False, None

    if annotation is MISSING:
        return no_schema("the return value has no annotation")
    base = _split_annotated(annotation)[0]
    if base is None or base is type(None):
        return no_schema("the function returns None")
    if base is Any or base is object:
        return no_schema("the return annotation is Any")
    from .content import ContentItem  # imported here: content.py imports this module

    if _mentions_content(annotation, ContentItem):
        return no_schema("the function returns MCP content objects")
    if base is str and not structured_output:
        return None, False, None
    builder = _Builder(globalns)
    try:
        node = builder.annotated(annotation, where)[0]
    except TypeError:
        if structured_output:
            raise
        return None, False, None

    if node.kinds == frozenset({"object"}):
        schema = dict(node.schema)
        ref = schema.pop("$ref", None)
        if ref is not None:
            def_name = ref.rsplit("/", 1)[1]
            schema = {**builder.defs[def_name], **schema}
            # Keep the definition only when something still refers to it (recursion).
            rest = {k: v for k, v in builder.defs.items() if k != def_name}
            if ref in json.dumps([schema, rest]):
                rest = builder.defs
            defs = rest
        else:
            defs = builder.defs
        schema.setdefault("type", "object")
        if defs:
            schema["$defs"] = defs
        return schema, False, node.dump

    schema = {"type": "object", "properties": {"result": node.schema}, "required": ["result"]}
    if builder.defs:
        schema["$defs"] = builder.defs
    return schema, True, node.dump


def _compile_validator(
    plan: list[tuple[str, Callable[[Any], Any], Any, type | None]],
) -> Callable[[Any], dict[str, Any]]:
    """One closure that checks and converts the arguments of a call: a loop over the
    per-parameter converters compiled at decoration time. A value whose type is the
    parameter's plain scalar type (``exact``) is taken as it is, without a call."""
    names = {name for name, _, _, _ in plan}
    # A type no JSON value has, for converters without an exact fast path.
    steps = tuple((name, convert, default, exact or _NoExactType) for name, convert, default, exact in plan)
    empty: dict[str, Any] = {}
    absent = _ABSENT

    def validate(arguments: Any) -> dict[str, Any]:
        if arguments is None:
            arguments = empty
        elif type(arguments) is not dict:
            if not isinstance(arguments, Mapping):
                raise ArgumentError((), f"expected object, got {_kind_of(arguments)}")
            arguments = dict(arguments)
        kwargs: dict[str, Any] = {}
        seen = 0
        get = arguments.get
        name = ""
        try:
            for name, convert, default, exact in steps:
                value = get(name, absent)
                if value is absent:
                    if default is _REQUIRED:
                        raise ArgumentError((name,), "missing required argument")
                    kwargs[name] = default
                    continue
                seen += 1
                kwargs[name] = value if type(value) is exact else convert(value)
        except _Mismatch as exc:
            exc.path.append(name)
            raise ArgumentError(tuple(reversed(exc.path)), exc.reason) from None
        if seen != len(arguments):
            exc = _unknown_key_error(arguments, names, "argument")
            raise ArgumentError(tuple(exc.path), exc.reason)
        return kwargs

    return validate


class _NoExactType:
    """Placeholder ``exact`` type: no argument value is ever of this type."""


def validate_arguments(sig: ToolSignature, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    """Check the ``arguments`` of a tools/call against ``sig`` and convert them to the keyword
    arguments of the call (Enum members, dataclass and TypedDict instances, tuples, sets,
    defaults filled in; the context parameter is not included). Raises `ArgumentError`."""
    return sig.validator(arguments)


def serialize_output(sig: ToolSignature, value: Any) -> dict[str, Any] | None:
    """The ``structuredContent`` for a tool's return value, or None when the tool has no
    output schema. Dataclasses become dicts, Enums their values, tuples and sets lists;
    ``{"result": ...}`` wraps non-object types. Raises `OutputError` when the value does not
    match the output schema."""
    if sig.output_dumper is None:
        return None
    try:
        dumped = sig.output_dumper(value)
    except _Mismatch as exc:
        raise OutputError(tuple(reversed(exc.path)), exc.reason) from None
    if sig.wraps_output:
        return {"result": dumped}
    return dumped
