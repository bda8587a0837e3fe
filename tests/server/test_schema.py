"""Tests for mcpfast.server.schema: function -> tool metadata, argument validation, output.

This module uses ``from __future__ import annotations`` on purpose: every annotation below is a
string that function_schema must resolve. Tests of non-string annotations use exec().
"""

from __future__ import annotations

import ast
import collections.abc
import dataclasses
import datetime
import enum
import functools
import json
import math
import sys
import typing
import uuid
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Dict, List, Literal, Optional, Tuple, Union

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

if sys.version_info >= (3, 11):
    from typing import NotRequired, Required, TypedDict
else:  # Required/NotRequired arrived in typing with 3.11
    from typing_extensions import NotRequired, Required, TypedDict

import mcpfast.server.schema as schema_package
from mcp_spec import SPEC_VERSIONS, spec_validator
from mcpfast.server.content import Image, Text
from mcpfast.server.schema import (
    ArgumentError,
    Field,
    OutputError,
    ToolSignature,
    function_schema,
    serialize_output,
    to_jsonable,
    validate_arguments,
)

VERSIONS = list(SPEC_VERSIONS)


# ---------------------------------------------------------------------------------------------
# helpers


def check_json_schema(schema: dict) -> None:
    """The schema is valid 2020-12 (the MCP default dialect) and draft-07 JSON Schema, and
    survives a JSON round trip unchanged."""
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft7Validator.check_schema(schema)
    assert json.loads(json.dumps(schema, allow_nan=False)) == schema


def check_tool(sig: ToolSignature) -> dict:
    tool = sig.to_tool()
    check_json_schema(tool["inputSchema"])
    if "outputSchema" in tool:
        check_json_schema(tool["outputSchema"])
        versions = [v for v in VERSIONS if v >= "2025-06-18"]
    else:
        versions = VERSIONS
    for version in versions:
        errors = list(spec_validator(version, "Tool").iter_errors(tool))
        assert not errors, (version, [e.message for e in errors])
    return tool


def instance_ok(schema: dict, instance: Any) -> bool:
    return jsonschema.Draft202012Validator(schema).is_valid(instance)


def props(sig: ToolSignature) -> dict:
    return sig.input_schema["properties"]


def schema_of(annotation_source: str, namespace: dict | None = None) -> ToolSignature:
    """function_schema of ``def f(x: <annotation>)`` built with a real (non-string) annotation."""
    ns: dict = {
        "typing": typing,
        "Any": Any,
        "Optional": Optional,
        "Union": Union,
        "List": List,
        "Dict": Dict,
        "Tuple": Tuple,
        "Literal": Literal,
        "Annotated": Annotated,
        "Field": Field,
        "collections": collections,
    }
    ns.update(namespace or {})
    run(f"def f(x: {annotation_source}):\n    pass\n", ns)
    assert not isinstance(ns["f"].__annotations__["x"], str)
    return function_schema(ns["f"])


def run(source: str, namespace: dict) -> dict:
    """exec() without this module's ``from __future__ import annotations``: annotations in
    ``source`` are real objects unless it asks for the future import itself."""
    exec(compile(source, "<test source>", "exec", dont_inherit=True), namespace)
    return namespace


def arg_error(sig: ToolSignature, arguments: Any) -> ArgumentError:
    with pytest.raises(ArgumentError) as info:
        validate_arguments(sig, arguments)
    return info.value


# ---------------------------------------------------------------------------------------------
# types used by the tests (module level so string annotations resolve)


class Color(enum.Enum):
    """A color of the rainbow."""

    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@dataclasses.dataclass
class Item:
    """An item in the basket.

    Attributes:
        name: What it is called.
    """

    name: str
    count: int = 1
    tags: list[str] = dataclasses.field(default_factory=list)
    note: str = dataclasses.field(default="", metadata={"description": "free text"})
    computed: int = dataclasses.field(default=0, init=False)


@dataclasses.dataclass
class TreeNode:
    value: int
    children: list[TreeNode] = dataclasses.field(default_factory=list)


@dataclasses.dataclass(frozen=True)
class Point:
    x: int
    y: int


@dataclasses.dataclass
class Positive:
    value: int

    def __post_init__(self) -> None:
        if self.value <= 0:
            raise ValueError("value must be positive")


@dataclasses.dataclass
class Constrained:
    size: Annotated[int, Field(ge=0, le=10, description="how big")]
    label: Annotated[str, Field(default="x")]


class Options(TypedDict):
    verbose: bool
    level: NotRequired[int]


class Partial(TypedDict, total=False):
    a: int
    b: Required[str]


class Person(TypedDict):
    name: str
    friends: list[Person]


class Context:
    """Stand-in for the server's request context class."""


class SubContext(Context):
    pass


T = typing.TypeVar("T")


class GenericContext(typing.Generic[T]):
    pass


class NotSupported:
    pass


# ---------------------------------------------------------------------------------------------
# the tool object as a whole


def test_basic_tool_shape_and_spec_validity():
    def get_weather(location: str, days: int = 3, units: Literal["c", "f"] = "c") -> None:
        """Get the weather.

        Args:
            location: City name or zip code.
            days: How many days.
        """

    sig = function_schema(get_weather)
    assert sig.name == "get_weather"
    assert sig.description == "Get the weather."
    assert sig.parameters == ("location", "days", "units")
    assert sig.context_param is None
    assert sig.output_schema is None
    assert sig.wraps_output is False
    tool = check_tool(sig)
    assert tool == {
        "name": "get_weather",
        "description": "Get the weather.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "location": {"type": "string", "description": "City name or zip code."},
                "days": {"type": "integer", "description": "How many days.", "default": 3},
                "units": {"type": "string", "enum": ["c", "f"], "default": "c"},
            },
            "required": ["location"],
            "additionalProperties": False,
        },
    }


def test_no_parameters_gives_the_recommended_empty_object_schema():
    def now():
        pass

    sig = function_schema(now)
    assert sig.input_schema == {"type": "object", "properties": {}, "additionalProperties": False}
    assert sig.to_tool() == {"name": "now", "inputSchema": sig.input_schema}
    assert validate_arguments(sig, {}) == {}
    assert validate_arguments(sig, None) == {}
    assert str(arg_error(sig, {"x": 1})) == (
        "arguments.x: unexpected argument (expected one of: none)"
    )
    check_tool(sig)


def test_name_and_description_overrides():
    def f(a: int):
        """Doc."""

    sig = function_schema(f, name="other", description="Explicit")
    assert sig.name == "other"
    assert sig.description == "Explicit"


def test_large_signature_validates_against_every_spec_version():
    def big(
        items: list[Item],
        color: Color,
        level: Level,
        tree: TreeNode,
        opts: Options,
        partial: Partial,
        people: list[Person],
        points: set[Point],
        mode: Literal["a", "b", 3, True, None] = "a",
        limit: Annotated[int, Field(ge=1, le=100, description="max")] = 10,
        tag: Optional[str] = None,
        pair: tuple[int, str] = (1, "x"),
        rest: tuple[float, ...] = (),
        mapping: dict[str, list[int]] | None = None,
        anything: Any = None,
        frozen: frozenset[str] = frozenset(),
        constrained: Constrained | None = None,
    ) -> list[Item]:
        """Everything at once."""

    sig = function_schema(big)
    check_tool(sig)
    defs = sig.input_schema["$defs"]
    assert set(defs) == {"Item", "TreeNode", "Options", "Partial", "Person", "Point", "Constrained"}
    assert sig.wraps_output is True


# ---------------------------------------------------------------------------------------------
# scalars


def test_str_int_float_bool_none_schemas():
    def f(s: str, i: int, fl: float, b: bool, n: None):
        pass

    sig = function_schema(f)
    assert props(sig) == {
        "s": {"type": "string"},
        "i": {"type": "integer"},
        "fl": {"type": "number"},
        "b": {"type": "boolean"},
        "n": {"type": "null"},
    }
    assert sig.input_schema["required"] == ["s", "i", "fl", "b", "n"]
    out = validate_arguments(sig, {"s": "x", "i": 1, "fl": 2, "b": False, "n": None})
    assert out == {"s": "x", "i": 1, "fl": 2.0, "b": False, "n": None}
    assert type(out["fl"]) is float


def test_bool_is_not_an_integer_or_number():
    def f(i: int = 0, fl: float = 0.0):
        pass

    sig = function_schema(f)
    assert str(arg_error(sig, {"i": True})) == "arguments.i: expected integer, got boolean"
    assert str(arg_error(sig, {"fl": False})) == "arguments.fl: expected number, got boolean"


def test_int_accepts_integral_floats_and_float_accepts_ints():
    def f(i: int = 0, fl: float = 0.0):
        pass

    sig = function_schema(f)
    out = validate_arguments(sig, {"i": 3.0, "fl": 7})
    assert out == {"i": 3, "fl": 7.0}
    assert type(out["i"]) is int and type(out["fl"]) is float
    assert str(arg_error(sig, {"i": 3.5})) == "arguments.i: expected integer, got number"
    assert str(arg_error(sig, {"i": "3"})) == "arguments.i: expected integer, got string"
    assert "too large" in str(arg_error(sig, {"fl": 10**400}))


def test_string_and_bool_reject_other_types():
    def f(s: str = "", b: bool = False):
        pass

    sig = function_schema(f)
    assert str(arg_error(sig, {"s": 1})) == "arguments.s: expected string, got integer"
    assert str(arg_error(sig, {"s": None})) == "arguments.s: expected string, got null"
    assert str(arg_error(sig, {"b": 0})) == "arguments.b: expected boolean, got integer"
    assert str(arg_error(sig, {"b": "true"})) == "arguments.b: expected boolean, got string"


def test_none_only_where_optional():
    def f(a: int, b: Optional[int], c: int | None, d: Union[int, None] = None):
        pass

    sig = function_schema(f)
    nullable = {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    assert props(sig)["b"] == nullable
    assert props(sig)["c"] == nullable
    assert props(sig)["d"] == {**nullable, "default": None}
    assert validate_arguments(sig, {"a": 1, "b": None, "c": None}) == {
        "a": 1, "b": None, "c": None, "d": None,
    }
    err = arg_error(sig, {"a": None, "b": 1, "c": 1})
    assert str(err) == "arguments.a: expected integer, got null"
    err = arg_error(sig, {"a": 1, "b": "x", "c": 1})
    assert str(err) == "arguments.b: expected integer or null, got string"


def test_any_and_unannotated_parameters_accept_any_json():
    exec_ns = run("def f(a, b=1):\n    pass\n", {})
    sig = function_schema(exec_ns["f"])
    assert props(sig) == {"a": {}, "b": {"default": 1}}

    def g(x: Any, y: object = None):
        pass

    sig = function_schema(g)
    assert props(sig) == {"x": {}, "y": {"default": None}}
    value = {"deep": [1, {"z": None}]}
    assert validate_arguments(sig, {"x": value})["x"] is value
    check_tool(sig)


# ---------------------------------------------------------------------------------------------
# unions


def test_union_schema_and_conversion_order():
    def f(v: Union[int, str], w: float | int, z: Union[str, list[int], None] = None):
        pass

    sig = function_schema(f)
    assert props(sig)["v"] == {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    out = validate_arguments(sig, {"v": "3", "w": 3})
    assert out["v"] == "3"
    # An integer stays an int when both int and float are allowed.
    assert type(out["w"]) is int
    assert type(validate_arguments(sig, {"v": 1, "w": 2.5})["w"]) is float
    err = arg_error(sig, {"v": [], "w": 1})
    assert str(err) == "arguments.v: expected integer or string, got array"
    # Only one member takes an array: its deeper error is the one reported.
    err = arg_error(sig, {"v": 1, "w": 1, "z": [1, "x"]})
    assert str(err) == "arguments.z[1]: expected integer, got string"
    assert err.path == ("z", 1)
    check_tool(sig)


def test_union_of_dataclasses_reports_generic_error_when_ambiguous():
    def f(shape: Union[Point, Item]):
        pass

    sig = function_schema(f)
    assert validate_arguments(sig, {"shape": {"x": 1, "y": 2}})["shape"] == Point(1, 2)
    assert validate_arguments(sig, {"shape": {"name": "n"}})["shape"] == Item("n")
    err = arg_error(sig, {"shape": {"q": 1}})
    assert str(err) == "arguments.shape: expected Point object or Item object, got object"


def test_union_with_non_string_annotations_and_pep604():
    sig = schema_of("int | str | None")
    assert props(sig)["x"] == {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]}
    assert validate_arguments(sig, {"x": None}) == {"x": None}


# ---------------------------------------------------------------------------------------------
# containers


def test_lists():
    def f(a: list[int], b: List[str], c: list, d: typing.Sequence[float], e: List):
        pass

    sig = function_schema(f)
    p = props(sig)
    assert p["a"] == {"type": "array", "items": {"type": "integer"}}
    assert p["b"] == {"type": "array", "items": {"type": "string"}}
    assert p["c"] == {"type": "array"}
    assert p["d"] == {"type": "array", "items": {"type": "number"}}
    assert p["e"] == {"type": "array"}
    out = validate_arguments(sig, {"a": [1, 2.0], "b": [], "c": [1, "x"], "d": [1], "e": [None]})
    assert out == {"a": [1, 2], "b": [], "c": [1, "x"], "d": [1.0], "e": [None]}
    assert str(arg_error(sig, {"a": "12", "b": [], "c": [], "d": [], "e": []})) == (
        "arguments.a: expected array, got string"
    )
    err = arg_error(sig, {"a": [1, 2, "3"], "b": [], "c": [], "d": [], "e": []})
    assert str(err) == "arguments.a[2]: expected integer, got string"


def test_nested_error_path():
    @dataclasses.dataclass
    class Line:
        count: int

    def f(items: list[Item], grid: list[list[int]], table: dict[str, list[int]]):
        pass

    sig = function_schema(f)
    base = {"items": [{"name": "a"}], "grid": [[1]], "table": {}}
    err = arg_error(sig, {**base, "items": [{"name": "a"}, {"name": "b"}, {"name": "c", "count": "x"}]})
    assert str(err) == "arguments.items[2].count: expected integer, got string"
    assert err.path == ("items", 2, "count")
    assert err.reason == "expected integer, got string"
    err = arg_error(sig, {**base, "grid": [[1], [2, None]]})
    assert str(err) == "arguments.grid[1][1]: expected integer, got null"
    err = arg_error(sig, {**base, "table": {"ok": [1], "not ok": [1, True]}})
    assert str(err) == 'arguments.table["not ok"][1]: expected integer, got boolean'
    assert err.path == ("table", "not ok", 1)


def test_tuples():
    def f(
        pair: tuple[int, str],
        many: tuple[float, ...],
        empty: tuple[()],
        bare: tuple,
        old: Tuple[bool, bool],
        old_bare: Tuple = (),
    ):
        pass

    sig = function_schema(f)
    p = props(sig)
    assert p["pair"] == {
        "type": "array",
        "minItems": 2,
        "maxItems": 2,
        "prefixItems": [{"type": "integer"}, {"type": "string"}],
    }
    assert p["many"] == {"type": "array", "items": {"type": "number"}}
    assert p["empty"] == {"type": "array", "minItems": 0, "maxItems": 0}
    assert p["bare"] == {"type": "array"}
    assert p["old_bare"] == {"type": "array", "default": []}
    arguments = {"pair": [1, "a"], "many": [], "empty": [], "bare": [], "old": [True, True], "old_bare": [1, "x"]}
    assert validate_arguments(sig, arguments)["old_bare"] == (1, "x")
    out = validate_arguments(
        sig, {"pair": [1, "a"], "many": [1, 2.5], "empty": [], "bare": [1, "x"], "old": [True, False]}
    )
    assert out == {
        "pair": (1, "a"), "many": (1.0, 2.5), "empty": (), "bare": (1, "x"), "old": (True, False), "old_bare": ()
    }
    base = {"pair": [1, "a"], "many": [], "empty": [], "bare": [], "old": [True, True]}
    assert str(arg_error(sig, {**base, "pair": [1]})) == (
        "arguments.pair: expected an array of 2 items, got 1"
    )
    assert str(arg_error(sig, {**base, "pair": [1, 2]})) == "arguments.pair[1]: expected string, got integer"
    assert str(arg_error(sig, {**base, "empty": [1]})) == "arguments.empty: expected an array of 0 items, got 1"
    check_tool(sig)
    # The 2020-12 schema agrees.
    assert instance_ok(sig.input_schema, {**base, "pair": [1, "b"]})
    assert not instance_ok(sig.input_schema, {**base, "pair": [1, "b", 3]})


def test_sets():
    def f(tags: set[str], ids: frozenset[int], points: set[Point] = frozenset()):
        pass

    sig = function_schema(f)
    assert props(sig)["tags"] == {"type": "array", "uniqueItems": True, "items": {"type": "string"}}
    out = validate_arguments(sig, {"tags": ["a", "b"], "ids": [1], "points": [{"x": 1, "y": 2}]})
    assert out["tags"] == {"a", "b"} and type(out["tags"]) is set
    assert out["ids"] == frozenset({1}) and type(out["ids"]) is frozenset
    assert out["points"] == {Point(1, 2)}
    err = arg_error(sig, {"tags": ["a", "b", "a"], "ids": []})
    assert str(err) == "arguments.tags[2]: duplicate item (items must be unique)"
    # 1 and 1.0 are the same JSON number: also a duplicate for the JSON Schema validator.
    assert "duplicate" in str(arg_error(sig, {"tags": [], "ids": [1, 1.0]}))
    assert not instance_ok(sig.input_schema, {"tags": [], "ids": [1, 1.0]})


def test_set_of_unhashable_items_is_refused_at_decoration():
    def f(x: set[list[int]]):
        pass

    with pytest.raises(TypeError, match="parameter 'x' of f.*hashable"):
        function_schema(f)

    def g(x: set[Item]):  # Item is a mutable dataclass
        pass

    with pytest.raises(TypeError, match="hashable"):
        function_schema(g)


def test_dicts():
    def f(
        scores: dict[str, int],
        loose: dict,
        anyv: Dict[str, Any],
        mapping: typing.Mapping[str, float],
        nested: dict[str, dict[str, bool]],
    ):
        pass

    sig = function_schema(f)
    p = props(sig)
    assert p["scores"] == {"type": "object", "additionalProperties": {"type": "integer"}}
    assert p["loose"] == {"type": "object"}
    assert p["anyv"] == {"type": "object"}
    assert p["nested"] == {
        "type": "object",
        "additionalProperties": {"type": "object", "additionalProperties": {"type": "boolean"}},
    }
    args = {"scores": {"a": 1}, "loose": {"x": [1]}, "anyv": {}, "mapping": {"m": 1}, "nested": {"a": {"b": True}}}
    out = validate_arguments(sig, args)
    assert out["mapping"] == {"m": 1.0} and type(out["mapping"]["m"]) is float
    assert str(arg_error(sig, {**args, "scores": {"a": "1"}})) == "arguments.scores.a: expected integer, got string"
    assert str(arg_error(sig, {**args, "loose": []})) == "arguments.loose: expected object, got array"
    assert str(arg_error(sig, {**args, "nested": {"a": {"b": 1}}})) == (
        "arguments.nested.a.b: expected boolean, got integer"
    )


def test_dict_with_non_string_keys_is_refused():
    def f(x: dict[int, str]):
        pass

    with pytest.raises(TypeError, match=r"dict\[int.*parameter 'x' of f"):
        function_schema(f)


# ---------------------------------------------------------------------------------------------
# Literal and Enum


def test_literal():
    def f(
        mode: Literal["fast", "slow"],
        n: Literal[1, 2, 3] = 1,
        flag: Literal[True] = True,
        mixed: Literal["a", 1, None] = None,
    ):
        pass

    sig = function_schema(f)
    p = props(sig)
    assert p["mode"] == {"type": "string", "enum": ["fast", "slow"]}
    assert p["n"] == {"type": "integer", "enum": [1, 2, 3], "default": 1}
    assert p["flag"] == {"type": "boolean", "enum": [True], "default": True}
    assert p["mixed"] == {"enum": ["a", 1, None], "default": None}
    assert validate_arguments(sig, {"mode": "fast", "n": 2.0, "mixed": 1})["n"] == 2
    assert str(arg_error(sig, {"mode": "medium"})) == (
        'arguments.mode: expected one of "fast", "slow", got "medium"'
    )
    # True is not 1, 1 is not True.
    assert "got true" in str(arg_error(sig, {"mode": "fast", "n": True}))
    assert "got 1" in str(arg_error(sig, {"mode": "fast", "flag": 1}))
    assert "got array" in str(arg_error(sig, {"mode": []}))
    check_tool(sig)


def test_literal_of_enum_members_converts_to_members():
    def f(c: Literal[Color.RED]):
        pass

    sig = function_schema(f)
    assert props(sig)["c"] == {"type": "string", "enum": ["red"]}
    assert validate_arguments(sig, {"c": "red"})["c"] is Color.RED


def test_enums():
    def f(color: Color, level: Level = Level.LOW):
        pass

    sig = function_schema(f)
    p = props(sig)
    assert p["color"] == {
        "type": "string",
        "enum": ["red", "green"],
        "title": "Color",
        "description": "A color of the rainbow.",
    }
    assert p["level"] == {"type": "integer", "enum": [1, 2], "title": "Level", "default": 1}
    out = validate_arguments(sig, {"color": "green", "level": 2})
    assert out == {"color": Color.GREEN, "level": Level.HIGH}
    assert out["color"] is Color.GREEN
    assert str(arg_error(sig, {"color": "blue"})) == (
        'arguments.color: expected one of "red", "green", got "blue"'
    )
    assert "got true" in str(arg_error(sig, {"color": "red", "level": True}))
    check_tool(sig)


def test_enum_with_unsupported_values_is_refused():
    class Weird(enum.Enum):
        A = (1, 2)

    def f(w: Weird):
        pass

    f.__annotations__["w"] = Weird
    with pytest.raises(TypeError, match="parameter 'w' of f"):
        function_schema(f)


# ---------------------------------------------------------------------------------------------
# TypedDict


def test_typeddict_required_and_not_required():
    def f(opts: Options, partial: Partial):
        pass

    sig = function_schema(f)
    defs = sig.input_schema["$defs"]
    assert defs["Options"] == {
        "type": "object",
        "title": "Options",
        "properties": {"verbose": {"type": "boolean"}, "level": {"type": "integer"}},
        "required": ["verbose"],
        "additionalProperties": False,
    }
    assert defs["Partial"]["required"] == ["b"]
    assert props(sig)["opts"] == {"$ref": "#/$defs/Options"}
    out = validate_arguments(sig, {"opts": {"verbose": True}, "partial": {"b": "x"}})
    assert out == {"opts": {"verbose": True}, "partial": {"b": "x"}}
    assert type(out["opts"]) is dict
    assert str(arg_error(sig, {"opts": {}, "partial": {"b": "x"}})) == (
        "arguments.opts.verbose: missing required property"
    )
    err = arg_error(sig, {"opts": {"verbose": True, "extra": 1}, "partial": {"b": "x"}})
    assert str(err) == "arguments.opts.extra: unexpected property (expected one of: level, verbose)"
    err = arg_error(sig, {"opts": {"verbose": True, "level": "hi"}, "partial": {"b": "x"}})
    assert str(err) == "arguments.opts.level: expected integer, got string"
    check_tool(sig)


def test_recursive_typeddict():
    def f(p: Person):
        pass

    sig = function_schema(f)
    assert sig.input_schema["$defs"]["Person"]["properties"]["friends"] == {
        "type": "array",
        "items": {"$ref": "#/$defs/Person"},
    }
    value = {"name": "a", "friends": [{"name": "b", "friends": []}]}
    assert validate_arguments(sig, {"p": value}) == {"p": value}
    err = arg_error(sig, {"p": {"name": "a", "friends": [{"name": "b", "friends": [{"name": 3, "friends": []}]}]}})
    assert str(err) == "arguments.p.friends[0].friends[0].name: expected string, got integer"


def test_typeddict_without_future_annotations():
    ns = run(
        "class TD(TypedDict, total=False):\n"
        "    a: int\n"
        "    b: Required[str]\n"
        "def f(x: TD):\n    pass\n",
        {"TypedDict": TypedDict, "Required": Required},
    )
    assert not isinstance(ns["TD"].__annotations__["b"], str)
    sig = function_schema(ns["f"])
    assert sig.input_schema["$defs"]["TD"]["required"] == ["b"]


# ---------------------------------------------------------------------------------------------
# dataclasses


def test_dataclass_schema_and_conversion():
    def f(item: Item):
        pass

    sig = function_schema(f)
    assert sig.input_schema["$defs"]["Item"] == {
        "type": "object",
        "title": "Item",
        "description": "An item in the basket.",
        "properties": {
            "name": {"type": "string", "description": "What it is called."},
            "count": {"type": "integer", "default": 1},
            "tags": {"type": "array", "items": {"type": "string"}},
            "note": {"type": "string", "description": "free text", "default": ""},
        },
        "required": ["name"],
        "additionalProperties": False,
    }
    out = validate_arguments(sig, {"item": {"name": "apple", "tags": ["red"]}})
    assert out["item"] == Item("apple", 1, ["red"], "")
    assert isinstance(out["item"], Item)
    assert str(arg_error(sig, {"item": {"name": "a", "computed": 1}})).startswith(
        "arguments.item.computed: unexpected property"
    )
    assert str(arg_error(sig, {"item": {}})) == "arguments.item.name: missing required property"
    assert str(arg_error(sig, {"item": "apple"})) == "arguments.item: expected Item object, got string"
    check_tool(sig)


def test_recursive_dataclass():
    def f(tree: TreeNode):
        pass

    sig = function_schema(f)
    arguments = {"tree": {"value": 1, "children": [{"value": 2, "children": [{"value": 3}]}]}}
    tree = validate_arguments(sig, arguments)["tree"]
    assert tree == TreeNode(1, [TreeNode(2, [TreeNode(3)])])
    assert isinstance(tree.children[0].children[0], TreeNode)
    err = arg_error(sig, {"tree": {"value": 1, "children": [{"value": 2, "children": [{"value": True}]}]}})
    assert str(err) == "arguments.tree.children[0].children[0].value: expected integer, got boolean"
    check_tool(sig)


def test_dataclass_post_init_error_becomes_argument_error():
    def f(p: Positive):
        pass

    sig = function_schema(f)
    assert validate_arguments(sig, {"p": {"value": 2}})["p"] == Positive(2)
    err = arg_error(sig, {"p": {"value": -1}})
    assert str(err) == "arguments.p: invalid Positive: value must be positive"


def test_dataclass_field_constraints_and_field_default():
    def f(c: Constrained):
        pass

    sig = function_schema(f)
    definition = sig.input_schema["$defs"]["Constrained"]
    assert definition["properties"] == {
        "size": {"type": "integer", "description": "how big", "minimum": 0, "maximum": 10},
        "label": {"type": "string", "default": "x"},
    }
    assert definition["required"] == ["size"]
    assert validate_arguments(sig, {"c": {"size": 3}})["c"] == Constrained(3, "x")
    assert str(arg_error(sig, {"c": {"size": 11}})) == "arguments.c.size: must be <= 10, got 11"


def test_same_class_name_in_two_scopes_gets_distinct_defs():
    def make():
        @dataclasses.dataclass
        class Item:
            other: int

        return Item

    Other = make()

    def f(a: Item, b: Other):  # type: ignore[valid-type]
        pass

    f.__annotations__ = {"a": Item, "b": Other}
    sig = function_schema(f)
    assert props(sig)["a"] == {"$ref": "#/$defs/Item"}
    assert props(sig)["b"] == {"$ref": "#/$defs/Item2"}
    assert validate_arguments(sig, {"a": {"name": "n"}, "b": {"other": 1}})["b"] == Other(1)
    check_tool(sig)


# ---------------------------------------------------------------------------------------------
# Annotated and Field


def test_annotated_string_description():
    def f(city: Annotated[str, "The city"], n: Annotated[int, "ignored", "Count"] = 1):
        """Doc.

        Args:
            city: docstring loses to Annotated.
        """

    sig = function_schema(f)
    assert props(sig)["city"] == {"type": "string", "description": "The city"}
    assert props(sig)["n"] == {"type": "integer", "description": "Count", "default": 1}
    assert validate_arguments(sig, {"city": "Oslo", "n": 2.0}) == {"city": "Oslo", "n": 2}
    assert str(arg_error(sig, {"city": 1})) == "arguments.city: expected string, got integer"


def test_field_constraints_schema_and_validation():
    def f(
        age: Annotated[int, Field(ge=0, le=150)],
        ratio: Annotated[float, Field(gt=0, lt=1)] = 0.5,
        step: Annotated[int, Field(multiple_of=5)] = 5,
        fstep: Annotated[float, Field(multiple_of=0.5)] = 1.0,
        name: Annotated[str, Field(min_length=2, max_length=4, pattern="^[a-z]+$")] = "ab",
        items: Annotated[list[int], Field(min_length=1, max_length=2)] = (1,),
        tags: Annotated[dict[str, int], Field(min_length=1)] = None,
        nick: Annotated[Optional[str], Field(max_length=3, examples=["bob"], title="Nick")] = None,
    ):
        pass

    sig = function_schema(f)
    p = props(sig)
    assert p["age"] == {"type": "integer", "minimum": 0, "maximum": 150}
    assert p["ratio"] == {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1, "default": 0.5}
    assert p["step"]["multipleOf"] == 5
    assert p["name"] == {
        "type": "string", "minLength": 2, "maxLength": 4, "pattern": "^[a-z]+$", "default": "ab",
    }
    assert p["items"] == {"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 2, "default": [1]}
    assert p["tags"]["minProperties"] == 1
    assert p["nick"] == {
        "anyOf": [{"type": "string"}, {"type": "null"}],
        "title": "Nick",
        "examples": ["bob"],
        "maxLength": 3,
        "default": None,
    }
    check_tool(sig)
    ok = {"age": 0}
    assert validate_arguments(sig, ok)["age"] == 0
    cases = {
        "age": (-1, "arguments.age: must be >= 0, got -1"),
        "ratio": (1, "arguments.ratio: must be < 1, got 1"),
        "step": (7, "arguments.step: must be a multiple of 5, got 7"),
        "fstep": (0.7, "arguments.fstep: must be a multiple of 0.5, got 0.7"),
        "name": ("abcde", "arguments.name: expected at most 4 characters, got 5"),
        "items": ([], "arguments.items: expected at least 1 items, got 0"),
        "tags": ({}, "arguments.tags: expected at least 1 properties, got 0"),
        "nick": ("long", "arguments.nick: expected at most 3 characters, got 4"),
    }
    for key, (value, message) in cases.items():
        assert str(arg_error(sig, {**ok, key: value})) == message
        assert not instance_ok(sig.input_schema, {**ok, key: value}), key
    assert str(arg_error(sig, {**ok, "name": "A1"})) == "arguments.name: must match pattern '^[a-z]+$'"
    assert validate_arguments(sig, {**ok, "ratio": 0.25, "fstep": 1.5, "nick": None})["fstep"] == 1.5


def test_field_default_makes_parameter_optional():
    def f(n: Annotated[int, Field(default=7, description="seven")]):
        pass

    sig = function_schema(f)
    assert "required" not in sig.input_schema
    assert props(sig)["n"] == {"type": "integer", "description": "seven", "default": 7}
    assert validate_arguments(sig, {}) == {"n": 7}


def test_field_arguments_are_checked():
    with pytest.raises(ValueError, match="pattern"):
        Field(pattern="(")
    with pytest.raises(ValueError, match="min_length"):
        Field(min_length=-1)
    with pytest.raises(ValueError, match="greater"):
        Field(min_length=3, max_length=2)
    with pytest.raises(ValueError, match="ge"):
        Field(ge="1")
    with pytest.raises(ValueError, match="ge"):
        Field(ge=True)
    with pytest.raises(ValueError, match="multiple_of"):
        Field(multiple_of=0)
    with pytest.raises(ValueError, match="finite"):
        Field(le=math.inf)
    with pytest.raises(ValueError, match="examples"):
        Field(examples="x")


def test_constraint_on_wrong_type_is_a_type_error():
    def f(x: Annotated[str, Field(ge=1)]):
        pass

    with pytest.raises(TypeError, match="parameter 'x' of f"):
        function_schema(f)

    def g(x: Annotated[int, Field(pattern="a")]):
        pass

    with pytest.raises(TypeError, match="pattern"):
        function_schema(g)

    def h(x: Annotated[bool, Field(max_length=2)]):
        pass

    with pytest.raises(TypeError, match="max_length"):
        function_schema(h)


def test_annotated_inside_containers():
    def f(xs: list[Annotated[int, Field(ge=0)]]):
        pass

    sig = function_schema(f)
    assert props(sig)["xs"] == {"type": "array", "items": {"type": "integer", "minimum": 0}}
    assert str(arg_error(sig, {"xs": [1, -1]})) == "arguments.xs[1]: must be >= 0, got -1"


# ---------------------------------------------------------------------------------------------
# defaults


def test_defaults_fill_in_and_appear_in_schema():
    sentinel = object()

    def f(
        a: int = 1,
        b: Color = Color.RED,
        c: Optional[list[int]] = None,
        d: Any = sentinel,
        e: tuple[int, int] = (1, 2),
    ):
        pass

    sig = function_schema(f)
    p = props(sig)
    assert p["a"]["default"] == 1
    assert p["b"]["default"] == "red"
    assert p["c"]["default"] is None
    assert "default" not in p["d"]  # not representable in JSON
    assert p["e"]["default"] == [1, 2]
    out = validate_arguments(sig, {})
    assert out == {"a": 1, "b": Color.RED, "c": None, "d": sentinel, "e": (1, 2)}
    check_tool(sig)


def test_sloppy_default_none_for_non_optional_type():
    def f(x: int = None):  # type: ignore[assignment]
        pass

    sig = function_schema(f)
    assert props(sig)["x"] == {"type": "integer", "default": None}
    assert validate_arguments(sig, {}) == {"x": None}
    assert str(arg_error(sig, {"x": None})) == "arguments.x: expected integer, got null"


# ---------------------------------------------------------------------------------------------
# context parameter


def test_context_parameter_is_excluded():
    def f(query: str, ctx: Context, limit: int = 1):
        pass

    sig = function_schema(f, context_type=Context)
    assert sig.context_param == "ctx"
    assert sig.parameters == ("query", "limit")
    assert set(props(sig)) == {"query", "limit"}
    assert validate_arguments(sig, {"query": "q"}) == {"query": "q", "limit": 1}
    assert str(arg_error(sig, {"query": "q", "ctx": {}})).startswith("arguments.ctx: unexpected argument")


def test_context_parameter_forms():
    def optional_ctx(x: int, ctx: Optional[Context] = None):
        pass

    def sub_ctx(ctx: SubContext, x: int):
        pass

    def generic_ctx(ctx: GenericContext[int]):
        pass

    def annotated_ctx(ctx: Annotated[Context, "injected"]):
        pass

    assert function_schema(optional_ctx, context_type=Context).context_param == "ctx"
    assert function_schema(sub_ctx, context_type=Context).context_param == "ctx"
    assert function_schema(generic_ctx, context_type=GenericContext).context_param == "ctx"
    assert function_schema(annotated_ctx, context_type=Context).context_param == "ctx"


def test_context_without_context_type_is_unsupported():
    def f(ctx: Context):
        pass

    with pytest.raises(TypeError, match="unsupported type annotation Context for parameter 'ctx' of f"):
        function_schema(f)


def test_two_context_parameters_are_refused():
    def f(a: Context, b: Context):
        pass

    with pytest.raises(TypeError, match="two context parameters"):
        function_schema(f, context_type=Context)


# ---------------------------------------------------------------------------------------------
# unsupported signatures


@pytest.mark.parametrize(
    "annotation, type_text",
    [
        ("bytes", "bytes"),
        ("NotSupported", "NotSupported"),
        ("list[bytes]", "bytes"),
        ("dict[str, NotSupported]", "NotSupported"),
        ("typing.Callable[[], int]", "Callable"),
        ("T", "T"),
        ("datetime.datetime", "datetime"),
    ],
)
def test_unsupported_annotations_raise_type_error_naming_parameter_and_type(annotation, type_text):
    ns = {"NotSupported": NotSupported, "T": T, "datetime": datetime, "typing": typing}
    run(f"def tool(param: {annotation}):\n    pass\n", ns)
    with pytest.raises(TypeError) as info:
        function_schema(ns["tool"])
    message = str(info.value)
    assert "parameter 'param' of tool" in message
    assert type_text in message


def test_star_args_kwargs_and_positional_only_are_refused():
    def a(*args: int):
        pass

    def b(**kwargs: int):
        pass

    def c(x: int, /):
        pass

    for fn, needle in ((a, "'args'"), (b, "'kwargs'"), (c, "positional-only")):
        with pytest.raises(TypeError, match=needle):
            function_schema(fn)


def test_unresolvable_forward_reference():
    def f(x: DoesNotExist):  # type: ignore[name-defined]  # noqa: F821
        pass

    with pytest.raises(TypeError, match="cannot resolve the type annotations of f.*DoesNotExist"):
        function_schema(f)


def test_unresolvable_reference_inside_a_dataclass():
    ns = run(
        "from __future__ import annotations\n"
        "import dataclasses\n"
        "@dataclasses.dataclass\n"
        "class Broken:\n"
        "    x: Missing\n",
        {"__name__": __name__},
    )

    def f(b):
        pass

    f.__annotations__ = {"b": ns["Broken"]}
    with pytest.raises(TypeError, match="Broken"):
        function_schema(f)


# ---------------------------------------------------------------------------------------------
# callables of every kind


def test_methods_partials_callable_objects_and_wrapped_functions():
    class Service:
        def search(self, query: str, limit: int = 5) -> list[str]:
            """Search it."""
            return []

    sig = function_schema(Service().search)
    assert sig.name == "search" and sig.parameters == ("query", "limit")
    assert sig.description == "Search it."

    def base(a: int, b: str) -> int:
        return a

    sig = function_schema(functools.partial(base, b="x"), name="partial_tool")
    assert sig.name == "partial_tool"
    assert props(sig)["a"] == {"type": "integer"}
    assert props(sig)["b"] == {"type": "string", "default": "x"}

    class Callable:
        """A callable tool."""

        def __call__(self, n: int) -> int:
            return n

    sig = function_schema(Callable())
    assert sig.name == "Callable"
    assert props(sig) == {"n": {"type": "integer"}}
    assert sig.output_schema == {
        "type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"],
    }

    def decorator(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            return fn(*args, **kwargs)

        return wrapper

    @decorator
    def wrapped(x: Item) -> Item:
        """Wrapped."""
        return x

    sig = function_schema(wrapped)
    assert sig.name == "wrapped"
    assert props(sig)["x"] == {"$ref": "#/$defs/Item"}
    assert sig.output_schema["title"] == "Item"


def test_non_string_annotations_are_supported_too():
    sig = schema_of("Annotated[List[Optional[int]], Field(min_length=1)]")
    assert props(sig)["x"] == {
        "type": "array",
        "items": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "minItems": 1,
    }
    assert validate_arguments(sig, {"x": [1, None]}) == {"x": [1, None]}
    sig = schema_of("collections.abc.Sequence[str]")
    assert props(sig)["x"] == {"type": "array", "items": {"type": "string"}}


def test_newtype_uses_its_supertype():
    UserId = typing.NewType("UserId", int)

    def f(u):
        pass

    f.__annotations__ = {"u": UserId}
    sig = function_schema(f)
    assert props(sig)["u"] == {"type": "integer"}


# ---------------------------------------------------------------------------------------------
# arguments object itself


def test_arguments_must_be_an_object():
    def f(a: int = 0):
        pass

    sig = function_schema(f)
    for bad, kind in (([], "array"), ("x", "string"), (3, "integer")):
        err = arg_error(sig, bad)
        assert str(err) == f"arguments: expected object, got {kind}"
        assert err.path == ()


def test_missing_and_unknown_arguments():
    def f(a: int, b: str):
        pass

    sig = function_schema(f)
    err = arg_error(sig, {"a": 1})
    assert str(err) == "arguments.b: missing required argument"
    assert err.path == ("b",)
    err = arg_error(sig, {"a": 1, "b": "x", "c": 2, "d": 3})
    assert str(err) == "arguments.c: unexpected argument (expected one of: a, b)"
    err = arg_error(sig, {"a": 1, "b": "x", "weird key": 2})
    assert str(err).startswith('arguments["weird key"]: unexpected argument')
    assert isinstance(err, ValueError)


def test_arguments_may_be_any_mapping():
    import types

    def f(a: int, b: str = "x"):
        pass

    sig = function_schema(f)
    assert validate_arguments(sig, types.MappingProxyType({"a": 1})) == {"a": 1, "b": "x"}


def test_validation_does_not_mutate_the_arguments():
    def f(items: list[Item], opts: Options, m: dict[str, int]):
        pass

    sig = function_schema(f)
    arguments = {"items": [{"name": "a"}], "opts": {"verbose": False}, "m": {"a": 1}}
    snapshot = json.loads(json.dumps(arguments))
    validate_arguments(sig, arguments)
    assert arguments == snapshot


# ---------------------------------------------------------------------------------------------
# output schemas and serialize_output


def test_no_output_schema_cases():
    def none() -> None:
        pass

    def text() -> str:
        return ""

    def anything() -> Any:
        pass

    def unannotated():
        pass

    def image() -> Image:
        raise AssertionError

    def blocks() -> list[Union[Text, str]]:
        return []

    def unsupported() -> NotSupported:
        raise AssertionError

    for fn in (none, text, anything, unannotated, image, blocks, unsupported):
        sig = function_schema(fn)
        assert sig.output_schema is None, fn.__name__
        assert sig.wraps_output is False
        assert serialize_output(sig, "anything") is None


def test_structured_output_flag():
    def text() -> str:
        return "x"

    sig = function_schema(text, structured_output=True)
    assert sig.output_schema == {
        "type": "object", "properties": {"result": {"type": "string"}}, "required": ["result"],
    }
    assert serialize_output(sig, "x") == {"result": "x"}

    def typed() -> int:
        return 1

    assert function_schema(typed, structured_output=False).output_schema is None
    for fn in (lambda: None,):
        with pytest.raises(TypeError, match="no annotation"):
            function_schema(fn, structured_output=True)

    def none() -> None:
        pass

    def image() -> Image:
        raise AssertionError

    def unsupported() -> NotSupported:
        raise AssertionError

    with pytest.raises(TypeError, match="returns None"):
        function_schema(none, structured_output=True)
    with pytest.raises(TypeError, match="content"):
        function_schema(image, structured_output=True)
    with pytest.raises(TypeError, match="NotSupported"):
        function_schema(unsupported, structured_output=True)


@pytest.mark.parametrize(
    "annotation, value, expected_schema, expected",
    [
        ("int", 3, {"type": "integer"}, 3),
        ("float", 2, {"type": "number"}, 2),
        ("bool", True, {"type": "boolean"}, True),
        ("list[int]", (1, 2), {"type": "array", "items": {"type": "integer"}}, [1, 2]),
        ("tuple[int, str]", (1, "a"), {"type": "array", "minItems": 2, "maxItems": 2,
                                        "prefixItems": [{"type": "integer"}, {"type": "string"}]}, [1, "a"]),
        ("Optional[int]", None, {"anyOf": [{"type": "integer"}, {"type": "null"}]}, None),
        ("Color", Color.GREEN, {"type": "string", "enum": ["red", "green"], "title": "Color",
                                "description": "A color of the rainbow."}, "green"),
        ("Literal['a', 'b']", "b", {"type": "string", "enum": ["a", "b"]}, "b"),
        ("set[str]", {"only"}, {"type": "array", "uniqueItems": True, "items": {"type": "string"}}, ["only"]),
    ],
)
def test_wrapped_outputs(annotation, value, expected_schema, expected):
    ns = {"Optional": Optional, "Color": Color, "Literal": Literal}
    run(f"def f() -> {annotation}:\n    pass\n", ns)
    sig = function_schema(ns["f"])
    assert sig.wraps_output is True
    assert sig.output_schema == {"type": "object", "properties": {"result": expected_schema}, "required": ["result"]}
    check_tool(sig)
    structured = serialize_output(sig, value)
    assert structured == {"result": expected}
    assert instance_ok(sig.output_schema, structured)


def test_dataclass_output_is_the_root_object():
    def f() -> Item:
        raise AssertionError

    sig = function_schema(f)
    assert sig.wraps_output is False
    assert sig.output_schema["type"] == "object"
    assert sig.output_schema["title"] == "Item"
    assert "$defs" not in sig.output_schema
    assert sig.output_schema["properties"]["count"] == {"type": "integer", "default": 1}
    check_tool(sig)
    structured = serialize_output(sig, Item("a", 2, ["t"]))
    assert structured == {"name": "a", "count": 2, "tags": ["t"], "note": ""}
    assert instance_ok(sig.output_schema, structured)
    # A mapping of the right shape is accepted too.
    assert serialize_output(sig, {"name": "b"}) == {"name": "b"}


def test_recursive_dataclass_output_keeps_its_definition():
    def f() -> TreeNode:
        raise AssertionError

    sig = function_schema(f)
    assert sig.output_schema["$defs"]["TreeNode"]["title"] == "TreeNode"
    assert sig.output_schema["properties"]["children"]["items"] == {"$ref": "#/$defs/TreeNode"}
    check_tool(sig)
    structured = serialize_output(sig, TreeNode(1, [TreeNode(2)]))
    assert structured == {"value": 1, "children": [{"value": 2, "children": []}]}
    assert instance_ok(sig.output_schema, structured)


def test_typeddict_and_dict_outputs_are_not_wrapped():
    def td() -> Options:
        raise AssertionError

    def mapping() -> dict[str, int]:
        raise AssertionError

    def nested() -> list[Options]:
        raise AssertionError

    sig = function_schema(td)
    assert sig.wraps_output is False and sig.output_schema["title"] == "Options"
    assert serialize_output(sig, {"verbose": True}) == {"verbose": True}
    sig = function_schema(mapping)
    assert sig.output_schema == {"type": "object", "additionalProperties": {"type": "integer"}}
    assert serialize_output(sig, {"a": 1}) == {"a": 1}
    sig = function_schema(nested)
    assert sig.wraps_output is True
    assert sig.output_schema["$defs"]["Options"]["required"] == ["verbose"]
    check_tool(sig)


def test_union_of_objects_output_root_is_an_object():
    def f() -> Union[Point, Item]:
        raise AssertionError

    sig = function_schema(f)
    assert sig.wraps_output is False
    assert sig.output_schema["type"] == "object"
    assert sig.output_schema["anyOf"] == [{"$ref": "#/$defs/Point"}, {"$ref": "#/$defs/Item"}]
    check_tool(sig)
    assert serialize_output(sig, Point(1, 2)) == {"x": 1, "y": 2}


def test_optional_dataclass_output_is_wrapped():
    def f() -> Optional[Point]:
        raise AssertionError

    sig = function_schema(f)
    assert sig.wraps_output is True
    assert serialize_output(sig, None) == {"result": None}
    assert serialize_output(sig, Point(0, 1)) == {"result": {"x": 0, "y": 1}}
    check_tool(sig)


def test_serialize_output_converts_nested_values():
    @dataclasses.dataclass
    class Report:
        color: Color
        levels: tuple[Level, ...]
        points: list[Point]
        extra: dict[str, Any]
        when: Any

    def f() -> Report:
        raise AssertionError

    f.__annotations__ = {"return": Report}
    sig = function_schema(f)
    value = Report(
        Color.RED,
        (Level.LOW, Level.HIGH),
        [Point(1, 2)],
        {"k": (1, 2), "e": Color.GREEN},
        datetime.date(2025, 1, 2),
    )
    structured = serialize_output(sig, value)
    assert structured == {
        "color": "red",
        "levels": [1, 2],
        "points": [{"x": 1, "y": 2}],
        "extra": {"k": [1, 2], "e": "green"},
        "when": "2025-01-02",
    }
    assert json.loads(json.dumps(structured)) == structured
    assert instance_ok(sig.output_schema, structured)


def test_serialize_output_rejects_values_that_do_not_fit():
    def ints() -> list[int]:
        raise AssertionError

    def item() -> Item:
        raise AssertionError

    def num() -> float:
        raise AssertionError

    def color() -> Color:
        raise AssertionError

    sig = function_schema(ints)
    with pytest.raises(OutputError) as info:
        serialize_output(sig, [1, "2"])
    assert str(info.value) == "result[1]: expected integer, got string"
    assert info.value.path == (1,)
    with pytest.raises(OutputError, match="expected array, got string"):
        serialize_output(sig, "12")
    with pytest.raises(OutputError, match="expected integer, got boolean"):
        serialize_output(sig, [True])
    sig = function_schema(item)
    with pytest.raises(OutputError) as info:
        serialize_output(sig, Item("a", count="many"))  # type: ignore[arg-type]
    assert str(info.value) == "result.count: expected integer, got string"
    with pytest.raises(OutputError, match="result.name: missing required property"):
        serialize_output(sig, {})
    with pytest.raises(OutputError, match="expected Item object, got integer"):
        serialize_output(sig, 3)
    sig = function_schema(num)
    with pytest.raises(OutputError, match="finite"):
        serialize_output(sig, math.nan)
    sig = function_schema(color)
    assert serialize_output(sig, "red") == {"result": "red"}
    with pytest.raises(OutputError, match='expected one of "red", "green", got "blue"'):
        serialize_output(sig, "blue")


def test_output_with_constraints_is_checked():
    def f() -> Annotated[int, Field(ge=0)]:
        raise AssertionError

    sig = function_schema(f)
    assert sig.output_schema["properties"]["result"] == {"type": "integer", "minimum": 0}
    assert serialize_output(sig, 3) == {"result": 3}
    with pytest.raises(OutputError, match="must be >= 0"):
        serialize_output(sig, -3)


# ---------------------------------------------------------------------------------------------
# to_jsonable


def test_to_jsonable():
    class Model:
        def model_dump(self, mode: str = "python"):
            assert mode == "json"
            return {"m": (1,)}

    value = {
        "a": (1, 2),
        "s": {3},
        "e": Color.RED,
        "i": Level.HIGH,
        "d": Point(1, 2),
        "dt": datetime.datetime(2025, 1, 2, 3, 4, 5),
        "u": uuid.UUID(int=1),
        "p": PurePosixPath("/x/y"),
        1: "int key",
        None: "none key",
        "m": Model(),
    }
    assert to_jsonable(value) == {
        "a": [1, 2],
        "s": [3],
        "e": "red",
        "i": 2,
        "d": {"x": 1, "y": 2},
        "dt": "2025-01-02T03:04:05",
        "u": "00000000-0000-0000-0000-000000000001",
        "p": "/x/y",
        "1": "int key",
        "null": "none key",
        "m": {"m": [1]},
    }
    with pytest.raises(TypeError, match="bytes"):
        to_jsonable(b"x")
    with pytest.raises(TypeError, match="NotSupported"):
        to_jsonable([NotSupported()])
    with pytest.raises(ValueError):
        to_jsonable(math.inf)
    with pytest.raises(TypeError, match="key"):
        to_jsonable({(1, 2): 3})


# ---------------------------------------------------------------------------------------------
# property tests: our validator agrees with a JSON Schema validator on the generated schema

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5)
    | st.sampled_from(["red", "green", "a", "b", "", "x"]),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(
        st.sampled_from(["name", "count", "tags", "x", "y", "value", "children", "k"]), children, max_size=4
    ),
    max_leaves=12,
)


def _agreement_tool(
    name: Annotated[str, Field(min_length=1)],
    count: int,
    ratio: float = 0.5,
    color: Color = Color.RED,
    mode: Literal["a", "b"] | None = None,
    items: list[Item] = (),
    point: Point | None = None,
    pair: tuple[int, str] = (0, ""),
    tags: set[str] = frozenset(),
    scores: dict[str, float] = None,
    tree: TreeNode = None,
    opts: Partial = None,
    number: Union[int, str, list[bool]] = 0,
):
    pass


AGREEMENT_SIG = function_schema(_agreement_tool)
AGREEMENT_VALIDATOR = jsonschema.Draft202012Validator(AGREEMENT_SIG.input_schema)
KEYS = ["name", "count", "ratio", "color", "mode", "items", "point", "pair", "tags", "scores", "tree", "opts", "number"]


small_text = st.text(alphabet="ab", max_size=3)
scalars = st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from([1.0, 2.5, -0.5]) | small_text
items_value = st.lists(
    st.fixed_dictionaries(
        {"name": small_text | scalars},
        optional={"count": scalars, "tags": st.lists(scalars, max_size=2), "bad": scalars},
    ),
    max_size=3,
)
tree_value = st.recursive(
    st.fixed_dictionaries({"value": st.integers(-2, 2) | scalars}),
    lambda children: st.fixed_dictionaries(
        {"value": st.integers(-2, 2)}, optional={"children": st.lists(children, max_size=2)}
    ),
    max_leaves=6,
)
# Per argument: values that are mostly close to valid, sometimes anything.
ARGUMENT_VALUES = {
    "name": small_text | scalars,
    "count": st.integers(-5, 5) | scalars,
    "ratio": st.floats(allow_nan=False, allow_infinity=False) | scalars,
    "color": st.sampled_from(["red", "green", "blue"]) | scalars,
    "mode": st.sampled_from(["a", "b", "c", None]) | scalars,
    "items": items_value | json_values,
    "point": st.fixed_dictionaries({"x": scalars, "y": st.integers(0, 2)}) | st.none() | json_values,
    "pair": st.tuples(st.integers(0, 2) | scalars, small_text | scalars).map(list) | st.lists(scalars, max_size=3),
    "tags": st.lists(small_text, max_size=3) | st.lists(scalars, max_size=2),
    "scores": st.dictionaries(small_text, scalars, max_size=3) | json_values,
    "tree": tree_value | json_values,
    "opts": st.fixed_dictionaries({}, optional={"a": scalars, "b": small_text | scalars, "c": scalars}),
    "number": st.integers(-2, 2) | small_text | st.lists(st.booleans() | scalars, max_size=3) | json_values,
}


valid_tree = st.recursive(
    st.fixed_dictionaries({"value": st.integers()}),
    lambda children: st.fixed_dictionaries(
        {"value": st.integers()}, optional={"children": st.lists(children, max_size=2)}
    ),
    max_leaves=6,
)
VALID_VALUES = {
    "name": st.text(min_size=1, max_size=3),
    "count": st.integers(),
    "ratio": st.floats(allow_nan=False, allow_infinity=False) | st.integers(),
    "color": st.sampled_from(["red", "green"]),
    "mode": st.sampled_from(["a", "b", None]),
    "items": st.lists(
        st.fixed_dictionaries(
            {"name": small_text}, optional={"count": st.integers(), "tags": st.lists(small_text, max_size=2)}
        ),
        max_size=3,
    ),
    "point": st.none() | st.fixed_dictionaries({"x": st.integers(), "y": st.integers()}),
    "pair": st.tuples(st.integers(), small_text).map(list),
    "tags": st.sets(small_text, max_size=3).map(sorted),
    "scores": st.dictionaries(small_text, st.integers() | st.floats(allow_nan=False, allow_infinity=False), max_size=3),
    "tree": valid_tree,
    "opts": st.fixed_dictionaries({"b": small_text}, optional={"a": st.integers()}),
    "number": st.integers() | small_text | st.lists(st.booleans(), max_size=3),
}


@st.composite
def near_valid_arguments(draw):
    """Valid arguments with at most one thing changed: the boundary cases."""
    arguments = draw(
        st.fixed_dictionaries(
            {"name": VALID_VALUES["name"], "count": VALID_VALUES["count"]},
            optional={k: v for k, v in VALID_VALUES.items() if k not in ("name", "count")},
        )
    )
    mutation = draw(st.sampled_from(["none", "replace", "replace", "drop", "unknown"]))
    key = draw(st.sampled_from(KEYS))
    if mutation == "replace":
        arguments[key] = draw(ARGUMENT_VALUES[key])
    elif mutation == "drop":
        arguments.pop(key, None)
    elif mutation == "unknown":
        arguments["unknown"] = draw(json_values)
    return arguments


def _agree(arguments: dict) -> bool:
    expected = AGREEMENT_VALIDATOR.is_valid(arguments)
    try:
        validate_arguments(AGREEMENT_SIG, arguments)
        ours = True
    except ArgumentError:
        ours = False
    assert ours == expected, (arguments, [e.message for e in AGREEMENT_VALIDATOR.iter_errors(arguments)])
    return expected


@settings(max_examples=800, deadline=None)
@given(near_valid_arguments() | st.fixed_dictionaries({}, optional={**ARGUMENT_VALUES, "unknown": json_values}))
def test_validator_agrees_with_jsonschema(arguments):
    _agree(arguments)


def test_agreement_property_sees_both_outcomes():
    # Guard for the property above: its generator must produce valid and invalid arguments.
    outcomes = []

    @settings(max_examples=300, deadline=None, database=None)
    @given(near_valid_arguments())
    def collect(arguments):
        outcomes.append(_agree(arguments))

    collect()
    assert outcomes.count(True) >= 30
    assert outcomes.count(False) >= 30


@settings(max_examples=200, deadline=None)
@given(
    st.builds(
        dict,
        name=st.text(min_size=1, max_size=5),
        count=st.integers(),
        items=st.lists(st.builds(lambda n, c: {"name": n, "count": c}, st.text(max_size=3), st.integers()), max_size=3),
        pair=st.tuples(st.integers(), st.text(max_size=3)).map(list),
        tags=st.sets(st.text(max_size=3), max_size=3).map(sorted),
    )
)
def test_valid_arguments_convert_to_the_annotated_types(arguments):
    out = validate_arguments(AGREEMENT_SIG, arguments)
    assert all(isinstance(i, Item) for i in out["items"])
    assert isinstance(out["pair"], tuple)
    assert isinstance(out["tags"], set)
    assert out["color"] is Color.RED
    assert [i.count for i in out["items"]] == [i["count"] for i in arguments["items"]]


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.builds(TreeNode, st.integers(), st.just([])),
        lambda children: st.builds(TreeNode, st.integers(), st.lists(children, max_size=3)),
        max_leaves=10,
    )
)
def test_tree_output_round_trips_through_arguments(tree):
    def echo(tree: TreeNode) -> TreeNode:
        return tree

    sig = function_schema(echo)
    structured = serialize_output(sig, tree)
    assert instance_ok(sig.output_schema, structured)
    assert validate_arguments(sig, {"tree": structured})["tree"] == tree


# ---------------------------------------------------------------------------------------------
# the package's own imports


def _package_imports(path: Path) -> set[str]:
    """The mcpfast modules one source file imports (relative imports resolved)."""
    package = "mcpfast.server.schema" if path.name != "content.py" else "mcpfast.server"
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                found.add(f"{base}.{node.module}" if node.module else base)
            elif node.module and node.module.split(".")[0] == "mcpfast":
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.split(".")[0] == "mcpfast")
    return found


def test_schema_package_imports_nothing_of_mcpfast_but_itself_and_has_no_cycle():
    folder = Path(schema_package.__file__).parent
    graph = {
        f"mcpfast.server.schema.{path.stem}": _package_imports(path)
        for path in folder.glob("*.py")
        if path.name != "__init__.py"
    }
    assert len(graph) >= 10, graph
    for module, imports in graph.items():
        outside = {name for name in imports if name not in graph}
        assert not outside, f"{module} imports {outside}"
    # Depth-first search over the package's modules: a back edge would be an import cycle.
    state: dict[str, str] = {}

    def visit(module: str, trail: list[str]) -> None:
        state[module] = "open"
        for target in graph[module]:
            assert state.get(target) != "open", f"import cycle: {' -> '.join(trail + [target])}"
            if target not in state:
                visit(target, trail + [target])
        state[module] = "done"

    for module in graph:
        if module not in state:
            visit(module, [module])
    # content depends on the schema package, never the other way round.
    content = Path(schema_package.__file__).parents[1] / "content.py"
    assert "mcpfast.server.schema" in _package_imports(content)
