"""Fuzz encode: any Python value gives EncodeError or valid JSON that round-trips.

Input: a program for a small value builder (containers, strings with any code point
including lone surrogates, integers around the 64-bit limits, floats including NaN and
infinities, subclasses of the JSON types, objects with no JSON form, deep nesting, keys
that are not strings) and a choice of encoder (dumps, encode_request, encode_response,
encode_notification, encode_error).
Property: the encoder raises EncodeError (TypeError for a badly typed id, method, code
or message of a message encoder), or returns bytes that json.loads accepts and that give
back the value (tuples as lists, subclasses as their base type); for dumps, those bytes
are exactly json.dumps(value, separators=(",", ":"), ensure_ascii=False) in UTF-8.
"""

from __future__ import annotations

import json
import math
import struct

from common import Choices, instrumented, main

with instrumented():
    from mcpfast._core.codec import (
        EncodeError,
        dumps,
        encode_error,
        encode_notification,
        encode_request,
        encode_response,
    )

INTS = (0, 1, -1, 2**31, -(2**31), 2**53 + 1, 2**63 - 1, 2**63, -(2**63), -(2**63) - 1,
        2**64 - 1, 2**64, 10**30, -(10**30))
FLOATS = (0.0, -0.0, 1.5, 1e308, 5e-324, -1e-7, 1e16, 0.1, math.nan, math.inf, -math.inf)
# Characters chosen for what escaping and UTF-8 encoding must get right.
SPECIAL = ('"', "\\", "\n", "\x00", "\x1f", "\x7f", "\u2028", "\ud800", "\udfff",
           "\ud83d\ude00", "\U0001f600", "é", "€", "/")


class IntSub(int):
    pass


class StrSub(str):
    pass


class FloatSub(float):
    pass


class DictSub(dict):
    pass


class ListSub(list):
    pass


class Opaque:
    """A value with no JSON form."""


def build(choices: Choices, depth: int = 0):
    kind = choices.byte() % 18
    if depth > 40 and kind in (6, 7, 8, 13, 14):
        kind = 0
    if kind == 0:
        return None
    if kind == 1:
        return bool(choices.byte() & 1)
    if kind == 2:
        return choices.pick(INTS)
    if kind == 3:
        return int.from_bytes(choices.take(9), "little", signed=True)
    if kind == 4:
        return choices.pick(FLOATS)
    if kind == 5:
        return struct.unpack("<d", choices.take(8).ljust(8, b"\0"))[0]
    if kind == 6:
        return [build(choices, depth + 1) for _ in range(choices.byte() % 5)]
    if kind == 7:
        return tuple(build(choices, depth + 1) for _ in range(choices.byte() % 4))
    if kind == 8:
        value = {}
        for _ in range(choices.byte() % 5):
            value[key(choices)] = build(choices, depth + 1)
        return value
    if kind == 9:
        return text(choices)
    if kind == 10:
        return choices.pick((IntSub(7), StrSub("sub"), FloatSub(2.5), True))
    if kind == 11:
        return choices.pick((Opaque(), b"bytes", {1, 2}, bytearray(b"x"), 1j))
    if kind == 12:
        return "".join(choices.pick(SPECIAL) for _ in range(choices.byte() % 6))
    if kind == 13:
        nested = None
        for _ in range(choices.int(2) % 1100):  # around the depth limit
            nested = [nested]
        return nested
    if kind == 14:
        return DictSub(a=build(choices, depth + 1)) if choices.byte() & 1 else \
            ListSub([build(choices, depth + 1)])
    if kind == 15:
        return choices.pick((float("nan"), -0.0, 1e-320))
    if kind == 16:
        return choices.take(choices.byte() % 8).decode("latin-1")
    return choices.int(8) - (1 << 63)


def key(choices: Choices):
    choice = choices.byte() % 8
    if choice == 0:
        return choices.pick((1, None, 2.5, ("t",), True))  # not a str: no JSON form
    if choice == 1:
        return choices.pick(SPECIAL)
    return text(choices)


def text(choices: Choices) -> str:
    size = choices.byte() % 12
    return "".join(chr(choices.int(3) % 0x110000) for _ in range(size))


def plain(value):
    """value as json.loads gives it back (subclasses as base types, tuples as lists)."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    raise AssertionError(f"an encoder accepted {type(value).__name__}")


def same(a, b) -> bool:
    """Equal as JSON values (0.0 and -0.0 told apart, like their JSON texts).  A loop, not
    recursion: values nest up to 1100 deep, and a recursion through all() and a generator
    per level raises RecursionError there on Python 3.12."""
    pending = [(a, b)]
    while pending:
        a, b = pending.pop()
        if isinstance(a, float) and isinstance(b, float):
            if not (a == b and math.copysign(1, a) == math.copysign(1, b)):
                return False
        elif type(a) is not type(b):
            return False
        elif isinstance(a, list):
            if len(a) != len(b):
                return False
            pending.extend(zip(a, b))
        elif isinstance(a, dict):
            if a.keys() != b.keys():
                return False
            pending.extend((a[k], b[k]) for k in a)
        elif a != b:
            return False
    return True


def check_value(value) -> None:
    try:
        out = dumps(value)
    except EncodeError:
        return
    assert type(out) is bytes
    back = json.loads(out)
    assert same(back, plain(value)), (value, out)
    assert out == json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode(), out


def check_message(choices: Choices, value) -> None:
    which = choices.byte() % 4
    ident = choices.pick((1, "a", 2**63 - 1, -5, "", None, 1.5, True, "\ud800", 2**70))
    method = choices.pick(("tools/call", "", "\x00", "\ud800", 5, None, "é"))
    try:
        if which == 0:
            out = encode_request(ident, method, value)
            expected = {"jsonrpc": "2.0", "id": ident, "method": method}
            if value is not None:
                expected["params"] = value
        elif which == 1:
            out = encode_notification(method, value)
            expected = {"jsonrpc": "2.0", "method": method}
            if value is not None:
                expected["params"] = value
        elif which == 2:
            out = encode_response(ident, value)
            expected = {"jsonrpc": "2.0", "id": ident, "result": value}
        else:
            code = choices.pick((-32600, 0, 2**63, -(2**63) - 1, "x", True))
            out = encode_error(ident, code, method, value)
            expected = {"jsonrpc": "2.0", "id": ident,
                        "error": {"code": code, "message": method, "data": value}}
    except (EncodeError, TypeError):
        return
    back = json.loads(out)
    assert same(back, plain(expected)), (expected, out)


def check(data: bytes) -> None:
    choices = Choices(data)
    value = build(choices)
    check_value(value)
    check_message(choices, value)


if __name__ == "__main__":
    main(check)
