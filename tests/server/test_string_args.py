"""String arguments (URI template variables, prompt arguments) -> typed keyword arguments."""

import enum
from typing import Literal, Optional

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpfast.server.schema import ArgumentError, function_schema
from mcpfast.server.string_args import StringArguments


class Size(enum.Enum):
    S = "s"
    L = "l"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


def handler(name: str, count: int, ratio: float, flag: bool, size: Size, level: Level,
            mode: Literal["a", "b"] = "a", tags: Optional[list[int]] = None,
            maybe: Optional[int] = None, either: float | str = 0.0):
    return None


ARGS = StringArguments(function_schema(handler))
BASE = {"name": "n", "count": "3", "ratio": "0.5", "flag": "true", "size": "l", "level": "2"}


def test_conversions():
    kwargs = ARGS.convert({**BASE, "tags": ["1", "2"], "maybe": "7", "either": "x"})
    assert kwargs == {"name": "n", "count": 3, "ratio": 0.5, "flag": True, "size": Size.L,
                      "level": Level.HIGH, "mode": "a", "tags": [1, 2], "maybe": 7, "either": "x"}
    assert ARGS.convert({**BASE, "tags": "5"})["tags"] == [5]
    assert ARGS.convert({**BASE, "flag": "FALSE"})["flag"] is False
    assert ARGS.parameters[0] == "name"
    assert ARGS.required == ("name", "count", "ratio", "flag", "size", "level")


@pytest.mark.parametrize("override", [
    {"count": "three"}, {"count": "1.5"}, {"ratio": "nan"}, {"ratio": "inf"}, {"flag": "yes"},
    {"size": "m"}, {"level": "3"}, {"mode": "c"}, {"tags": ["x"]}, {"unknown": "1"},
])
def test_bad_strings_raise_argument_errors(override):
    with pytest.raises(ArgumentError):
        ARGS.convert({**BASE, **override})


def test_missing_required_argument():
    values = dict(BASE)
    del values["count"]
    with pytest.raises(ArgumentError) as caught:
        ARGS.convert(values)
    assert caught.value.path == ("count",)


@given(st.integers(-10**12, 10**12))
def test_integers_round_trip(number):
    assert ARGS.convert({**BASE, "count": str(number)})["count"] == number
