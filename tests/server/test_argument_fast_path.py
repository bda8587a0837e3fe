"""The compiled check of a tool's common call (plain values of the parameters' types) beside
the full argument validator: for every input, the same kwargs (same order, the same value
objects) or the same ArgumentError; and the compiled check takes exactly the inputs it is
meant to take -- an exact dict, every required argument present, no unknown one, each
value of exactly its parameter's plain type (str, int, float, bool) -- leaving everything
else, nested objects included, to the full validator."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any, Callable, Literal, Optional, TypedDict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpfast import Context, Server
from mcpfast.server.features.tools import Tool, _argument_taker, _takes_plain_arguments_positionally
from mcpfast.server.schema import ArgumentError, Field, function_schema


class Point(TypedDict):
    x: int
    y: int


class Options(TypedDict, total=False):
    verbose: bool
    depth: int


@dataclasses.dataclass
class Box:
    width: float
    label: str = "box"


def one_str(text: str) -> str:
    return text


def scalars(count: int, ratio: float = 1.5, flag: bool = False, name: str = "x") -> str:
    return name


def numbers(real: float, whole: int) -> float:
    return real


def nested(point: Point, label: str = "", options: Optional[Options] = None) -> str:
    return label


def containers(n: int, tags: Optional[list[str]] = None, weights: Optional[dict[str, float]] = None,
               box: Optional[Box] = None) -> int:
    return n


def special(kind: Literal["a", "b"], size: Annotated[int, Field(ge=0)] = 0,
            note: Optional[str] = None, anything: Any = None) -> str:
    return kind


def no_parameters() -> str:
    return "nothing"


# The parameters' plain types (None: none, the full validator always decides).
FUNCTIONS: dict[Callable[..., Any], dict[str, Optional[type]]] = {
    one_str: {"text": str},
    scalars: {"count": int, "ratio": float, "flag": bool, "name": str},
    numbers: {"real": float, "whole": int},
    nested: {"point": None, "label": str, "options": None},
    containers: {"n": int, "tags": None, "weights": None, "box": None},
    special: {"kind": None, "size": None, "note": None, "anything": None},
    no_parameters: {},
}

json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=5),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.sampled_from(["x", "y", "verbose", "depth", "width",
                                                             "label", "k"]), inner, max_size=3)),
    max_leaves=6,
)
plain_values = st.one_of(st.text(max_size=5), st.integers(), st.booleans(),
                         st.floats(allow_nan=False, allow_infinity=False))


@st.composite
def arguments_for(draw: Any, plain: dict[str, Optional[type]]) -> Any:
    """Argument dicts near the common call: each parameter absent, a plain value (often of
    its own type) or any JSON value; sometimes an unknown key; sometimes no dict at all."""
    shape = draw(st.integers(0, 9))
    if shape == 0:
        return draw(st.one_of(st.none(), st.lists(json_scalars, max_size=2), st.text(max_size=3)))
    arguments: dict[str, Any] = {}
    for name in plain:
        choice = draw(st.integers(0, 3))
        if choice == 0:
            continue
        arguments[name] = draw(plain_values if choice < 3 else json_values)
    if shape == 1:
        arguments[draw(st.sampled_from(["unknown", "Text", "x"]))] = draw(json_scalars)
    if shape == 2 and arguments:
        # Keys in another order than the parameters'.
        arguments = dict(reversed(list(arguments.items())))
    return arguments


def _outcome(validate: Callable[[Any], dict[str, Any]], arguments: Any) -> tuple[Any, ...]:
    try:
        kwargs = validate(arguments)
    except ArgumentError as exc:
        return ("error", str(exc), exc.path, exc.reason)
    return ("ok", list(kwargs.items()), kwargs)


def _check(fn: Callable[..., Any], arguments: Any) -> None:
    signature = function_schema(fn)
    fallbacks: list[Any] = []

    def full(value: Any) -> dict[str, Any]:
        fallbacks.append(value)
        return signature.validator(value)

    taker = _argument_taker(dataclasses.replace(signature, validator=full))
    fast = _outcome(taker, arguments)
    taken = not fallbacks
    expected = _outcome(signature.validator, arguments)
    # Same kwargs in the same order, or the same error.
    assert fast[:2] == expected[:2]
    plain = FUNCTIONS[fn]
    meant = (type(arguments) is dict and expected[0] == "ok"
             and all(plain.get(key) is not None and type(value) is plain[key]
                     for key, value in arguments.items()))
    assert taken == meant, (arguments, taken)
    if taken:
        # Values taken as they are: the very objects the validator would have passed on.
        assert all(fast[2][name] is expected[2][name] for name in expected[2])
        assert fast[2] is not arguments
    # The positional taker: the same values as a tuple in order when taken, else exactly
    # the validator's dict or error.
    again: list[Any] = []

    def full_again(value: Any) -> dict[str, Any]:
        again.append(value)
        return signature.validator(value)

    positional = _argument_taker(dataclasses.replace(signature, validator=full_again), True)
    try:
        args = positional(arguments)
    except ArgumentError as exc:
        assert expected[:2] == ("error", str(exc))
    else:
        if taken:
            assert type(args) is tuple and len(args) == len(expected[2])
            assert all(value is expected[2][name] for value, name in zip(args, expected[2]))
        else:
            assert args == expected[2] and type(args) is dict
    assert (not again) == taken


@pytest.mark.parametrize("fn", list(FUNCTIONS), ids=lambda fn: fn.__name__)
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_the_compiled_check_agrees_with_the_full_validator(fn, data):
    _check(fn, data.draw(arguments_for(FUNCTIONS[fn])))


@pytest.mark.parametrize("fn, arguments, taken", [
    (one_str, {"text": "hi"}, True),
    (one_str, {"text": 1}, False),
    (one_str, {}, False),
    (one_str, {"text": "hi", "more": 1}, False),
    (scalars, {"count": 2}, True),
    (scalars, {"count": 2, "ratio": 2}, False),       # an int for a float: converted, full check
    (scalars, {"count": 2.0}, False),                 # an integral float for an int: converted
    (scalars, {"count": True}, False),                # bool is not an integer
    (scalars, {"flag": True, "count": 1, "name": "n", "ratio": 0.0}, True),
    (numbers, {"real": 1.0, "whole": 1}, True),
    (nested, {"point": {"x": 1, "y": 2}}, False),     # a nested object: full check
    (nested, {"point": {"x": 1, "y": 2}, "options": {"verbose": True, "extra": 1}}, False),
    (containers, {"n": 1}, True),                     # optional containers absent: defaults
    (containers, {"n": 1, "tags": ["a"]}, False),
    (containers, {"n": 1, "box": {"width": 2}}, False),
    (special, {"kind": "a"}, False),
    (no_parameters, {}, True),
    (no_parameters, None, False),
])
def test_examples(fn, arguments, taken):
    signature = function_schema(fn)
    fallbacks: list[Any] = []

    def full(value: Any) -> dict[str, Any]:
        fallbacks.append(value)
        return signature.validator(value)

    try:
        _argument_taker(dataclasses.replace(signature, validator=full))(arguments)
    except ArgumentError:
        pass
    assert (not fallbacks) is taken
    _check(fn, arguments)


def test_a_signature_without_plain_arguments_keeps_its_validator():
    signature = dataclasses.replace(function_schema(one_str), plain_arguments=None)
    assert _argument_taker(signature) is signature.validator


def test_tools_answer_the_same_through_either_path(ready_client):
    app = Server("args")
    app.tool()(scalars)
    app.tool()(nested)
    client = ready_client(app)
    assert client.call_tool("scalars", {"count": 1})["content"][0]["text"] == "x"
    assert client.call_tool("scalars", {"count": 1.0, "name": "y"})["content"][0]["text"] == "y"
    refused = client.call_tool("scalars", {"count": 1, "zz": 2})
    assert refused["isError"] is True
    assert refused["content"][0]["text"] == (
        "Invalid arguments for tool 'scalars': arguments.zz: unexpected argument "
        "(expected one of: count, flag, name, ratio)")
    missing = client.call_tool("nested", {"label": "only"})
    assert missing["content"][0]["text"] == (
        "Invalid arguments for tool 'nested': arguments.point: missing required argument")
    assert client.call_tool("nested", {"point": {"x": 1, "y": 2}, "label": "p"})["content"][0]["text"] == "p"
    assert Tool(scalars)._validator({"count": 5}) == {"count": 5, "ratio": 1.5, "flag": False, "name": "x"}


def test_which_functions_take_their_plain_arguments_positionally():
    import functools

    def with_context(text: str, ctx: Context) -> str:
        return text

    def keyword_only(text: str, *, count: int = 1) -> str:
        return text

    @functools.wraps(one_str)
    def wrapper(*args: Any, **kwargs: Any) -> str:
        return one_str(*args, **kwargs)

    class Holder:
        def method(self, count: int, ratio: float = 1.5) -> int:
            return count

    def positionally(fn: Callable[..., Any]) -> bool:
        return _takes_plain_arguments_positionally(fn, function_schema(fn, context_type=Context))

    assert positionally(one_str) and positionally(scalars) and positionally(no_parameters)
    assert positionally(Holder().method)
    assert not positionally(with_context)      # the context goes by name
    assert not positionally(keyword_only)      # a keyword-only parameter
    assert not positionally(wrapper)           # its own parameters are *args, **kwargs
    # Without a compiled check there is nothing to take positionally.
    assert not _takes_plain_arguments_positionally(
        one_str, dataclasses.replace(function_schema(one_str), plain_arguments=None))


def test_tools_called_positionally_or_by_keyword_answer_alike(ready_client):
    import functools

    app = Server("positional")

    def order(first: str, second: int = 2, third: float = 0.5) -> str:
        return f"{first} {second} {third}"

    @functools.wraps(order)
    def wrapped(*args: Any, **kwargs: Any) -> str:
        return order(*args, **kwargs)

    app.tool(name="plain")(order)
    app.tool(name="wrapped")(wrapped)
    client = ready_client(app)
    for name in ("plain", "wrapped"):
        for arguments, text in [({"first": "a"}, "a 2 0.5"),
                                ({"third": 1.5, "first": "b", "second": 7}, "b 7 1.5"),
                                ({"first": "c", "second": 3.0}, "c 3 0.5")]:  # converted: full path
            result = client.call_tool(name, arguments)
            assert result["content"] == [{"type": "text", "text": text}], (name, arguments)
