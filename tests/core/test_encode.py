"""The compiled JSON encoder: dumps against json.dumps (property tests), escaping, numbers,
errors and their paths, subclasses, nesting limits, every encode_* envelope, batches, and
typed messages -- decoded ones written from their unbuilt tape give the same bytes as after
building their payload."""

import collections
import enum
import json
import math
import pickle
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpfast._core import decode as decode_module
from mcpfast._core import encode as encode_module
from mcpfast._core.decode import decode
from mcpfast._core.encode import (
    MAX_DEPTH,
    EncodeError,
    dumps,
    encode_batch,
    encode_error,
    encode_message,
    encode_notification,
    encode_request,
    encode_response,
    error_code_of,
)
from mcpfast._core.messages import ErrorResponse, Notification, Request, Response

INT_MIN = -(2**63)
UINT_MAX = 2**64 - 1


def reference(value):
    """What dumps must write: json.dumps, compact, non-ASCII raw, as UTF-8."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()


def nested_lists(depth):
    value = []
    for _ in range(depth - 1):
        value = [value]
    return value


# Text of every kind: control characters, ASCII, Latin-1, BMP, astral; never surrogates.
text = st.text(st.characters(exclude_categories=("Cs",)))
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(INT_MIN, UINT_MAX)
    | st.floats(allow_nan=False, allow_infinity=False)
    | text
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=6) | st.dictionaries(text, children, max_size=6),
    max_leaves=40,
)


# ---------------------------------------------------------------------------------------
# dumps against json.dumps


@settings(max_examples=600)
@given(json_values)
def test_dumps_matches_json_dumps(value):
    assert dumps(value) == reference(value)


@settings(max_examples=300)
@given(text)
def test_strings_match_json_dumps(s):
    assert dumps(s) == reference(s)
    assert dumps({s: s}) == reference({s: s})


@settings(max_examples=300)
@given(st.lists(st.sampled_from(["a", "\n", '"', "\\", "\x00", "\x1f", "\x7f", "é", "ÿ",
                                 "\u2028", "€", "\uffff", "😀", "\U0010ffff", "abcdefgh"]),
                max_size=40))
def test_escapes_at_every_position_match_json_dumps(pieces):
    # Escapes land at every offset of the eight-byte scanning blocks.
    s = "".join(pieces)
    assert dumps(s) == reference(s)
    assert dumps("x" * 7 + s) == reference("x" * 7 + s)


def test_compact_output_without_newline():
    assert dumps({"a": [1, 2], "b": {"c": None}}) == b'{"a":[1,2],"b":{"c":null}}'
    assert dumps([]) == b"[]"
    assert dumps({}) == b"{}"
    assert dumps([[], {}, [[]]]) == b"[[],{},[[]]]"
    assert dumps(()) == b"[]"
    assert dumps((1, "a")) == b'[1,"a"]'


def test_literals():
    assert dumps(True) == b"true"
    assert dumps(False) == b"false"
    assert dumps(None) == b"null"
    assert dumps([True, False, None]) == b"[true,false,null]"


# ---------------------------------------------------------------------------------------
# Strings


@pytest.mark.parametrize("code", range(0x80))
def test_every_ascii_character(code):
    c = chr(code)
    assert dumps(c) == reference(c)
    assert dumps("abcdefghij" + c + "klmnopqrst") == reference("abcdefghij" + c + "klmnopqrst")


@pytest.mark.parametrize("special", ['"', "\\", "\n", "\x00", "\x1f", " ", "\x7f", "é", "€", "😀"])
def test_one_special_character_at_every_length_and_position(special):
    # Covers the in-line short-string check, the 16- and 8-byte blocks and the tails, for
    # str objects and for strings written from a decoded tape.
    strings = []
    for n in range(1, 41):
        for position in range(n):
            s = "a" * position + special + "b" * (n - position - 1)
            assert dumps(s) == reference(s), (n, position)
            assert dumps({s: 0}) == reference({s: 0}), (n, position)
            strings.append(s)
    frame = encode_response(1, {"list": strings, "keys": dict.fromkeys(strings, 1)})
    assert encode_message(decode(frame)) == frame


def test_escape_forms():
    assert dumps('"') == b'"\\""'
    assert dumps("\\") == b'"\\\\"'
    assert dumps("\n\r\t\b\f") == b'"\\n\\r\\t\\b\\f"'
    assert dumps("\x00\x01\x0b\x1f") == b'"\\u0000\\u0001\\u000b\\u001f"'
    assert dumps("/") == b'"/"'


def test_raw_characters_not_escaped():
    assert dumps("\x7f") == b'"\x7f"'
    assert dumps("\u2028\u2029") == "\"\u2028\u2029\"".encode()
    assert dumps("é") == '"é"'.encode()
    assert dumps("日本語") == '"日本語"'.encode()
    assert dumps("😀") == b'"\xf0\x9f\x98\x80"'
    assert dumps("\U0010ffff") == '"\U0010ffff"'.encode()


@pytest.mark.parametrize("s", [
    "a" * 10000,                                  # ASCII, several chunks
    ("a" * 4095 + "\n") * 3,                      # escapes at chunk ends
    "é" * 9000 + '"',                              # Latin-1 kind
    "€" * 9000 + "\\",                             # two-byte kind
    "😀" * 5000 + "\x01",                          # four-byte kind
    "x" * 4090 + "日本語" * 10,                    # non-ASCII across a chunk boundary
])
def test_long_strings(s):
    assert dumps(s) == reference(s)
    assert dumps({s: [s]}) == reference({s: [s]})


@pytest.mark.parametrize("s, index", [
    ("\ud800", 0),
    ("abc\udfff", 3),
    ("é\udc00", 1),
    ("€\ud83d", 1),
    ("😀\ud83d", 1),
    ("\ud83d\ude00", 0),                           # a pair of code points is still two lone ones
    ("€" * 5000 + "\ud800", 5000),                 # index counted across chunks
])
def test_lone_surrogates_are_errors(s, index):
    with pytest.raises(EncodeError) as info:
        dumps(s)
    assert "lone surrogate" in info.value.message
    assert f"at index {index}" in info.value.message
    assert info.value.path == "$"


def test_lone_surrogate_path_in_value_and_key():
    with pytest.raises(EncodeError) as info:
        dumps({"a": ["ok", "x\udc00"]})
    assert info.value.path == "$.a[1]"
    assert "U+DC00" in str(info.value) and "$.a[1]" in str(info.value)
    with pytest.raises(EncodeError) as info:
        dumps({"a": {"k\ud800": 1}})
    assert "dict key" in info.value.message
    assert info.value.path == "$.a"


def test_long_string_shown_shortened_in_error():
    with pytest.raises(EncodeError) as info:
        dumps("x" * 1000 + "\ud800")
    assert len(info.value.message) < 200


# ---------------------------------------------------------------------------------------
# Numbers


@pytest.mark.parametrize("value", [
    0, 1, -1, 9, 10, 99, 100, -100, 2**30 - 1, 2**30, -(2**30), 2**31, 2**32, 2**60,
    10**15, 10**19, 2**63 - 1, 2**63, INT_MIN, INT_MIN + 1, UINT_MAX, UINT_MAX - 1,
])
def test_integers(value):
    assert dumps(value) == str(value).encode()
    assert dumps([value]) == f"[{value}]".encode()


@pytest.mark.parametrize("value", [2**64, -(2**63) - 1, 10**30, -(10**30)])
def test_integers_beyond_64_bits_are_errors(value):
    with pytest.raises(EncodeError) as info:
        dumps({"n": value})
    assert "out of range" in info.value.message
    assert str(value) in info.value.message
    assert info.value.path == "$.n"


@settings(max_examples=500)
@given(st.integers(INT_MIN, UINT_MAX))
def test_integers_property(value):
    assert dumps(value) == str(value).encode()


@pytest.mark.parametrize("value", [
    0.0, -0.0, 1.0, -1.0, 0.5, 0.1, 0.2, 0.3, 1 / 3, 2 / 3, 1.5, 100.0, 123.456, 1e15, 1e16,
    1e17, 1e22, 1e23, 1e-4, 1e-5, 0.0001, 0.00001, 1.5e-7, 123456789012345.6,
    1234567890123456.0, 12345678901234567.0, 2.0**52, 2.0**53, 2.0**53 + 2, 2.0**63, 2.0**64,
    5e-324, 2.2250738585072014e-308, 2.225073858507201e-308, 1.7976931348623157e308,
    9007199254740993.0, 0.30000000000000004, 3.141592653589793, 2.718281828459045,
    1e-7, 9.999999999999999e22, 4.35, 0.007, 299792458.0, 6.02214076e23, 1.602176634e-19,
])
def test_floats_match_repr(value):
    assert dumps(value) == repr(value).encode()
    assert dumps(-value) == repr(-value).encode()


@settings(max_examples=3000)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_floats_property(value):
    assert dumps(value) == repr(value).encode()


@settings(max_examples=3000)
@given(st.integers(0, 2**64 - 1))
def test_floats_from_any_bit_pattern(bits):
    (value,) = struct.unpack("<d", struct.pack("<Q", bits))
    if math.isfinite(value):
        assert dumps(value) == repr(value).encode()
    else:
        with pytest.raises(EncodeError):
            dumps(value)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_floats_are_errors(value):
    with pytest.raises(EncodeError) as info:
        dumps({"x": [value]})
    assert info.value.path == "$.x[0]"
    assert "not valid JSON" in info.value.message


# ---------------------------------------------------------------------------------------
# Types, keys, subclasses


def test_non_str_keys_are_errors():
    for key in (1, 1.5, True, None):
        with pytest.raises(EncodeError) as info:
            dumps({"a": {key: 1}})
        assert f"not {type(key).__name__}" in info.value.message
        assert info.value.path == "$.a"
    with pytest.raises(EncodeError) as info:
        dumps({(1, 2): 1})
    assert "not tuple" in info.value.message
    with pytest.raises(EncodeError):
        dumps({b"bytes": 1})


class Opaque:
    pass


@pytest.mark.parametrize("value, name", [
    ({1, 2}, "set"),
    (frozenset(), "frozenset"),
    (b"bytes", "bytes"),
    (bytearray(b"x"), "bytearray"),
    (object(), "object"),
    (1j, "complex"),
    (Opaque(), f"{__name__}.Opaque"),
    (collections.deque(), "collections.deque"),
])
def test_unsupported_types_are_errors_naming_the_type(value, name):
    with pytest.raises(EncodeError) as info:
        dumps({"a": [1, {"b c": value}]})
    assert info.value.message.endswith(f"type {name} as JSON")
    assert info.value.path == "$.a[1]['b c']"


def test_encode_error_is_a_value_error_and_pickles():
    with pytest.raises(ValueError):
        dumps(object())
    error = EncodeError("what", "$.x")
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is EncodeError
    assert (again.message, again.path, str(again)) == ("what", "$.x", "what at $.x")
    assert str(EncodeError("top")) == "top"


class Str(str):
    def __str__(self):
        raise AssertionError("must not be called")


class Int(int):
    def __index__(self):
        raise AssertionError("must not be called")

    def __int__(self):
        raise AssertionError("must not be called")


class Float(float):
    def __float__(self):
        raise AssertionError("must not be called")


class Dict(dict):
    def items(self):
        raise AssertionError("must not be called")

    def __iter__(self):
        raise AssertionError("must not be called")


class List(list):
    def __iter__(self):
        raise AssertionError("must not be called")


class Tuple(tuple):
    pass


class Color(enum.IntEnum):
    RED = 1


class Mode(str, enum.Enum):
    FAST = "fast"


def test_subclasses_are_written_as_their_base_type():
    value = Dict(a=List([Str("x\n"), Int(7), Float(2.5), Tuple((1,)), Int(2**64 - 1)]))
    assert dumps(value) == b'{"a":["x\\n",7,2.5,[1],18446744073709551615]}'
    assert dumps({Str("k"): 1}) == b'{"k":1}'
    assert dumps([Color.RED, Mode.FAST]) == b'[1,"fast"]'
    assert dumps({Mode.FAST: Color.RED}) == b'{"fast":1}'
    assert dumps(collections.OrderedDict(b=1, a=2)) == b'{"b":1,"a":2}'
    assert dumps(collections.defaultdict(list, x=[1])) == b'{"x":[1]}'


def test_bool_is_never_an_int():
    assert dumps([True, 1, False, 0]) == b"[true,1,false,0]"
    assert dumps({"isError": False}) == b'{"isError":false}'


def test_int_subclass_out_of_range():
    with pytest.raises(EncodeError):
        dumps(Int(2**64))


# ---------------------------------------------------------------------------------------
# Dicts in every storage layout


def test_dicts_are_walked_in_place_on_current_cpython():
    # The in-place walk is an optimisation with a self-check; on the CPython versions it
    # knows (3.11+, default builds) the self-check must have passed.
    import sys
    import sysconfig

    if sys.implementation.name == "cpython" and sys.version_info >= (3, 11) \
            and not sysconfig.get_config_var("Py_GIL_DISABLED"):
        assert encode_module._DICT_WALK_IN_PLACE is True


def test_dicts_with_deleted_entries():
    d = {f"k{i}": i for i in range(50)}
    for i in range(0, 50, 3):
        del d[f"k{i}"]
    d["new"] = "x"
    del d["k1"]
    assert dumps(d) == reference(d)
    d.clear()
    assert dumps(d) == b"{}"
    d["again"] = 1
    assert dumps(d) == b'{"again":1}'


def test_dict_with_only_deleted_entries_left():
    d = {"a": 1, "b": 2}
    del d["a"]
    del d["b"]
    assert dumps(d) == b"{}"
    assert dumps([d, d]) == b"[{},{}]"


def test_dict_with_non_str_keys_removed():
    # A dict that once held a non-str key keeps the general entry layout.
    d = {1: "x", "a": [1], "b": {"c": None}}
    del d[1]
    assert dumps(d) == b'{"a":[1],"b":{"c":null}}'


def test_instance_dicts_and_large_dicts():
    class Point:
        def __init__(self, x, y):
            self.x = x
            self.y = y

    points = [Point(i, -i) for i in range(5)]
    # Instance dicts may share their keys (a split table).
    assert dumps([vars(p) for p in points]) == reference([vars(p) for p in points])
    big = {str(i): i for i in range(100000)}
    assert dumps(big) == reference(big)
    assert dumps(dict.fromkeys(["a", "b"])) == b'{"a":null,"b":null}'


@settings(max_examples=200)
@given(st.lists(st.tuples(text, st.integers(0, 9)), max_size=30), st.data())
def test_dicts_after_random_deletions(items, data):
    d = dict(items)
    for key in data.draw(st.lists(st.sampled_from(sorted(d)), unique=True)) if d else []:
        del d[key]
    assert dumps(d) == reference(d)


# ---------------------------------------------------------------------------------------
# Nesting


def test_max_depth_is_the_decoders():
    assert MAX_DEPTH == decode_module.MAX_DEPTH == 1024


def test_nesting_up_to_max_depth():
    assert dumps(nested_lists(MAX_DEPTH)) == b"[" * MAX_DEPTH + b"]" * MAX_DEPTH
    with pytest.raises(EncodeError) as info:
        dumps(nested_lists(MAX_DEPTH + 1))
    assert "nesting deeper than 1024" in info.value.message
    assert info.value.path == "$" + "[0]" * MAX_DEPTH


def test_nesting_of_dicts():
    value = {}
    for _ in range(MAX_DEPTH):
        value = {"k": value}
    with pytest.raises(EncodeError):
        dumps(value)
    assert dumps(value["k"]).startswith(b'{"k":{"k":')


def test_cycles_are_errors():
    a = []
    a.append(a)
    with pytest.raises(EncodeError) as info:
        dumps(a)
    assert "cycle" in info.value.message
    d = {}
    d["self"] = [d]
    with pytest.raises(EncodeError):
        dumps(d)
    with pytest.raises(EncodeError):
        encode_response(1, d)


def test_envelope_counts_as_a_level_like_the_decoder():
    deepest = nested_lists(MAX_DEPTH - 1)
    frame = encode_response(1, deepest)
    assert dumps(decode(frame).result) == dumps(deepest)
    with pytest.raises(EncodeError) as info:
        encode_response(1, nested_lists(MAX_DEPTH))
    assert info.value.path.startswith("$.result[0]")
    with pytest.raises(decode_module.DecodeError):
        decode(b'{"jsonrpc":"2.0","id":1,"result":' + dumps(nested_lists(MAX_DEPTH)) + b"}")
    # error.data sits two levels down.
    encode_error(1, 1, "m", nested_lists(MAX_DEPTH - 2))
    with pytest.raises(EncodeError):
        encode_error(1, 1, "m", nested_lists(MAX_DEPTH - 1))


# ---------------------------------------------------------------------------------------
# Robustness: errors leave nothing behind


def test_failure_does_not_affect_the_next_call():
    for bad in ({"a": [1, 2, object()]}, "x" * 100 + "\ud800", nested_lists(MAX_DEPTH + 5)):
        with pytest.raises(EncodeError):
            dumps(bad)
        assert dumps({"ok": [1, "two"]}) == b'{"ok":[1,"two"]}'


def test_large_output_and_buffer_reuse():
    big = {"data": ["x" * 1000 + str(i) for i in range(3000)]}
    assert dumps(big) == reference(big)
    assert dumps(big) == reference(big)
    assert dumps([1]) == b"[1]"
    huge = "é" * (3 * 1024 * 1024)
    assert dumps(huge) == reference(huge)
    assert dumps("small") == b'"small"'


def test_results_are_independent_bytes():
    first = dumps({"a": 1})
    second = dumps({"b": 2})
    assert (first, second) == (b'{"a":1}', b'{"b":2}')


# ---------------------------------------------------------------------------------------
# Envelopes


def test_encode_request():
    assert encode_request(1, "ping") == b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    assert encode_request("a-1", "tools/call", {"name": "echo", "arguments": {"x": "é"}}) == \
        '{"jsonrpc":"2.0","id":"a-1","method":"tools/call","params":{"name":"echo","arguments":{"x":"é"}}}'.encode()
    assert encode_request(0, "m", []) == b'{"jsonrpc":"2.0","id":0,"method":"m","params":[]}'
    assert encode_request(-5, "m", (1,)) == b'{"jsonrpc":"2.0","id":-5,"method":"m","params":[1]}'
    assert encode_request(UINT_MAX, "m", None) == \
        b'{"jsonrpc":"2.0","id":18446744073709551615,"method":"m"}'
    assert encode_request(id=2, method="m", params={}) == \
        b'{"jsonrpc":"2.0","id":2,"method":"m","params":{}}'


def test_encode_notification():
    assert encode_notification("notifications/initialized") == \
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
    assert encode_notification("notifications/progress",
                                {"progressToken": "t", "progress": 0.5, "total": 1.0}) == \
        b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":0.5,"total":1.0}}'


def test_encode_response():
    result = {"content": [{"type": "text", "text": "hi"}], "isError": False}
    assert encode_response(7, result) == \
        b'{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}],"isError":false}}'
    assert encode_response("x", None) == b'{"jsonrpc":"2.0","id":"x","result":null}'
    assert encode_response(1, {}) == b'{"jsonrpc":"2.0","id":1,"result":{}}'
    assert encode_response(1, "s\n") == b'{"jsonrpc":"2.0","id":1,"result":"s\\n"}'


def test_encode_error():
    assert encode_error(None, -32700, "Parse error") == \
        b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}'
    assert encode_error(3, -32602, "Unknown tool: x", None) == \
        b'{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Unknown tool: x","data":null}}'
    assert encode_error("r", 1, 'a "b"', {"why": [1]}) == \
        b'{"jsonrpc":"2.0","id":"r","error":{"code":1,"message":"a \\"b\\"","data":{"why":[1]}}}'
    assert encode_error(1, Color.RED, "m") == \
        b'{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}'
    assert encode_error(1, -(2**63), "m").endswith(b'"code":-9223372036854775808,"message":"m"}}')


@pytest.mark.parametrize("bad_id", [True, False, None, 1.5, b"1", [1], {}])
def test_request_and_response_ids_must_be_int_or_str(bad_id):
    with pytest.raises(TypeError) as info:
        encode_request(bad_id, "m")
    assert type(bad_id).__name__ in str(info.value)
    with pytest.raises(TypeError):
        encode_response(bad_id, 1)


def test_error_ids():
    with pytest.raises(TypeError):
        encode_error(True, 1, "m")
    with pytest.raises(TypeError):
        encode_error(1.0, 1, "m")
    assert encode_error(Str("s"), 1, "m").startswith(b'{"jsonrpc":"2.0","id":"s",')
    assert encode_error(Int(4), 1, "m").startswith(b'{"jsonrpc":"2.0","id":4,')


def test_id_subclasses_and_range():
    assert encode_request(Int(5), "m") == b'{"jsonrpc":"2.0","id":5,"method":"m"}'
    assert encode_request(Str("x"), Str("m")) == b'{"jsonrpc":"2.0","id":"x","method":"m"}'
    with pytest.raises(EncodeError) as info:
        encode_request(2**64, "m")
    assert info.value.path == "$.id"
    with pytest.raises(EncodeError) as info:
        encode_response("\ud800", 1)
    assert info.value.path == "$.id"


@pytest.mark.parametrize("bad_method", [None, 1, b"ping", ["ping"]])
def test_method_must_be_str(bad_method):
    with pytest.raises(TypeError) as info:
        encode_request(1, bad_method)
    assert "method" in str(info.value)
    with pytest.raises(TypeError):
        encode_notification(bad_method)


def test_method_with_lone_surrogate():
    with pytest.raises(EncodeError) as info:
        encode_notification("a\ud800")
    assert info.value.path == "$.method"


@pytest.mark.parametrize("bad_params", [1, "x", 1.5, True, b"{}", {1}])
def test_params_must_be_structured(bad_params):
    with pytest.raises(TypeError) as info:
        encode_request(1, "m", bad_params)
    assert "params" in str(info.value)
    with pytest.raises(TypeError):
        encode_notification("m", bad_params)


@pytest.mark.parametrize("bad_code", ["1", 1.0, None, True])
def test_error_code_must_be_int(bad_code):
    with pytest.raises(TypeError) as info:
        encode_error(1, bad_code, "m")
    assert "code" in str(info.value)


def test_error_code_range_and_message_type():
    with pytest.raises(EncodeError) as info:
        encode_error(1, 2**63, "m")
    assert info.value.path == "$.error.code"
    with pytest.raises(TypeError) as info:
        encode_error(1, 1, None)
    assert "message" in str(info.value)
    with pytest.raises(EncodeError) as info:
        encode_error(1, 1, "\udfff")
    assert info.value.path == "$.error.message"


def test_payload_error_paths():
    with pytest.raises(EncodeError) as info:
        encode_request(1, "m", {"a": {1}})
    assert info.value.path == "$.params.a"
    with pytest.raises(EncodeError) as info:
        encode_notification("m", [0, [math.nan]])
    assert info.value.path == "$.params[1][0]"
    with pytest.raises(EncodeError) as info:
        encode_response(1, {"content": [{"text": object()}]})
    assert info.value.path == "$.result.content[0].text"
    with pytest.raises(EncodeError) as info:
        encode_error(1, 1, "m", {"x": 2**70})
    assert info.value.path == "$.error.data.x"


# ---------------------------------------------------------------------------------------
# Typed messages


def test_python_built_messages():
    assert encode_message(Request(1, "tools/list")) == b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
    assert encode_message(Request("a", "m", {"x": 1})) == \
        b'{"jsonrpc":"2.0","id":"a","method":"m","params":{"x":1}}'
    assert encode_message(Notification("n", [1])) == b'{"jsonrpc":"2.0","method":"n","params":[1]}'
    assert encode_message(Notification("n")) == b'{"jsonrpc":"2.0","method":"n"}'
    assert encode_message(Response(2, None)) == b'{"jsonrpc":"2.0","id":2,"result":null}'
    assert encode_message(Response(2, [1.5])) == b'{"jsonrpc":"2.0","id":2,"result":[1.5]}'
    assert encode_message(ErrorResponse(None, -32600, "Invalid Request")) == \
        b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}'
    assert encode_message(ErrorResponse(1, 5, "m", None)) == \
        b'{"jsonrpc":"2.0","id":1,"error":{"code":5,"message":"m","data":null}}'
    assert encode_message(ErrorResponse(1, 5, "m", {"a": []})) == \
        b'{"jsonrpc":"2.0","id":1,"error":{"code":5,"message":"m","data":{"a":[]}}}'


def test_messages_match_the_encode_functions():
    params = {"name": "echo", "arguments": {"text": "é\n"}}
    assert encode_message(Request(9, "tools/call", params)) == encode_request(9, "tools/call", params)
    assert encode_message(Notification("n", params)) == encode_notification("n", params)
    assert encode_message(Response("r", params)) == encode_response("r", params)
    assert encode_message(ErrorResponse(1, 2, "m", params)) == encode_error(1, 2, "m", params)
    assert encode_message(ErrorResponse(1, 2, "m")) == encode_error(1, 2, "m")


def test_dumps_of_messages():
    message = Response(1, {"a": 1})
    assert dumps(message) == encode_message(message)
    assert dumps([message, Notification("n")]) == \
        b'[{"jsonrpc":"2.0","id":1,"result":{"a":1}},{"jsonrpc":"2.0","method":"n"}]'


def test_encode_message_type_check():
    with pytest.raises(TypeError) as info:
        encode_message({"jsonrpc": "2.0"})
    assert "dict" in str(info.value)


def test_message_payload_error_paths():
    with pytest.raises(EncodeError) as info:
        encode_message(Response(1, {"a": [object()]}))
    assert info.value.path == "$.result.a[0]"
    with pytest.raises(EncodeError) as info:
        encode_message(ErrorResponse(1, 1, "m", [math.inf]))
    assert info.value.path == "$.error.data[0]"


DECODED_FRAMES = [
    b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a\\nb\\u0000\\"\\\\\\u00e9\\ud83d\\ude00\\u2028\\/\\u007f"}],"isError":false}}',
    b'{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"a":[1,-2,18446744073709551615,'
    b'-9223372036854775808,1.5,1e16,1E+2,0.1,-0.0,2.5e-8,true,false,null,{},[],[[]],{"b":{}}]}}',
    b'{"method":"notifications/progress","jsonrpc":"2.0","params":{"progress":1.0,"total":1e2}}',
    b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
    b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}',
    b'{"jsonrpc":"2.0","id":3,"error":{"code":-32700,"message":"x","data":null}}',
    b'{"jsonrpc":"2.0","id":3,"error":{"message":"\\t","data":[1,{"q":"r"}],"code":7}}',
    b'{"jsonrpc":"2.0","id":3,"result":5}',
    b'{"jsonrpc":"2.0","id":3,"result":"s"}',
    b'{"jsonrpc":"2.0","id":3,"result":[]}',
    b'{"jsonrpc":"2.0","id":3,"result":{}}',
    b'{"jsonrpc":"2.0","id":3,"result":null}',
    b'{"jsonrpc":"2.0","id":3,"method":"m"}',
    b'{"jsonrpc":"2.0","id":3,"method":"m","params":[]}',
    b' { "jsonrpc" : "2.0" , "id" : 3 , "result" : { "a" : [ 1 , { } , "x" ] , "b" : { "c" : [ ] } } } ',
]


def build_payload(message):
    """Read the lazy payload, which builds its Python objects."""
    for name in ("params", "result", "data"):
        if hasattr(message, name):
            return getattr(message, name)
    raise AssertionError(message)


@pytest.mark.parametrize("frame", DECODED_FRAMES)
def test_unbuilt_payload_gives_the_same_bytes_as_built(frame):
    unbuilt = decode(frame)
    was_built = unbuilt.payload_built
    from_tape = encode_message(unbuilt)
    assert unbuilt.payload_built == was_built
    built = decode(frame)
    build_payload(built)
    assert built.payload_built
    assert from_tape == encode_message(built)
    assert decode(from_tape) == built
    # Writing it did not build it, and writing it twice gives the same bytes.
    assert encode_message(unbuilt) == from_tape
    assert dumps(unbuilt) == from_tape


def test_unbuilt_payload_stays_unbuilt():
    message = decode(b'{"jsonrpc":"2.0","id":1,"result":{"a":[1,2,3]}}')
    assert not message.payload_built
    assert encode_message(message) == b'{"jsonrpc":"2.0","id":1,"result":{"a":[1,2,3]}}'
    assert not message.payload_built


@settings(max_examples=400)
@given(json_values)
def test_decode_encode_round_trip(value):
    frame = encode_response(1, value)
    assert frame == b'{"jsonrpc":"2.0","id":1,"result":' + reference(value) + b"}"
    unbuilt = decode(frame)
    assert encode_message(unbuilt) == frame
    built = decode(frame)
    build_payload(built)
    assert encode_message(built) == frame


@settings(max_examples=200)
@given(json_values, st.one_of(st.integers(INT_MIN, UINT_MAX), text))
def test_request_round_trip(params, id):
    if not isinstance(params, (dict, list)):
        params = [params]
    frame = encode_request(id, "tools/call", params)
    assert encode_message(decode(frame)) == frame


def test_long_tape_strings():
    text_value = ("é" * 3000 + "\n" + "x" * 5000 + "😀") * 2
    frame = encode_response(1, {"t": text_value})
    assert encode_message(decode(frame)) == frame


def test_deep_tape_payload_in_a_batch():
    frame = encode_response(1, nested_lists(MAX_DEPTH - 1))
    message = decode(frame)
    assert encode_message(message) == frame
    # One level more inside a batch array: too deep, as building it would be.
    with pytest.raises(EncodeError) as info:
        encode_batch([message])
    assert "nesting deeper" in info.value.message
    assert info.value.path == "$[0].result"
    assert not message.payload_built
    build_payload(message)
    with pytest.raises(EncodeError):
        encode_batch([message])


# ---------------------------------------------------------------------------------------
# Batches


def test_encode_batch_of_messages_and_bytes():
    request = Request(1, "ping")
    encoded = encode_response(2, {"ok": True})
    batch = encode_batch([request, encoded, bytearray(b'{"jsonrpc":"2.0","method":"n"}'),
                          memoryview(b'{"jsonrpc":"2.0","id":3,"result":0}')])
    assert batch == (b'[{"jsonrpc":"2.0","id":1,"method":"ping"},'
                     b'{"jsonrpc":"2.0","id":2,"result":{"ok":true}},'
                     b'{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":3,"result":0}]')
    decoded = decode(batch)
    assert [type(m) for m in decoded] == [Request, Response, Notification, Response]
    assert encode_batch(tuple(decoded)) == batch
    assert encode_batch([request]) == b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]'


def test_encode_batch_of_decoded_messages_with_unbuilt_payloads():
    frame = b'[{"jsonrpc":"2.0","id":1,"result":{"a":"\\u00e9"}},{"jsonrpc":"2.0","method":"x","params":[1]}]'
    messages = decode(frame)
    assert encode_batch(messages) == frame.replace(b"\\u00e9", "é".encode())
    assert not any(m.payload_built for m in messages)


def test_empty_batch_is_an_error():
    with pytest.raises(EncodeError) as info:
        encode_batch([])
    assert "empty batch" in info.value.message
    with pytest.raises(EncodeError):
        encode_batch(())


def test_batch_item_errors():
    with pytest.raises(EncodeError) as info:
        encode_batch([Request(1, "m"), {"jsonrpc": "2.0"}])
    assert "not dict" in info.value.message
    assert info.value.path == "$[1]"
    with pytest.raises(EncodeError) as info:
        encode_batch([b""])
    assert "empty" in info.value.message
    with pytest.raises(EncodeError) as info:
        encode_batch([memoryview(b"abcdef")[::2]])
    assert "contiguous" in info.value.message
    with pytest.raises(EncodeError) as info:
        encode_batch([Response(1, {"x": {2}})])
    assert info.value.path == "$[0].result.x"
    with pytest.raises(TypeError):
        encode_batch(Request(1, "m"))
    with pytest.raises(TypeError):
        encode_batch(b"[]")
    assert dumps([1]) == b"[1]"


@pytest.fixture(params=["in place", "PyDict_Next"])
def dict_walk(request):
    """Both ways of reading dicts and ints: the fast paths into CPython internals and the
    public-API fallbacks (what other versions and free-threaded builds run)."""
    encode_module._use_cpython_internals(request.param == "in place")
    yield request.param
    encode_module._use_cpython_internals(True)


def test_ints_of_every_size_are_written_alike_with_and_without_internals(dict_walk):
    # One internal digit (the fast read), several, the int64 and uint64 limits (the public
    # path), both signs, alone and inside containers and as ids; beyond them refused.
    values = [0, 1, -1, 7, 2**30 - 1, 2**30, -(2**30), 2**31, 2**62, 2**63 - 1, -(2**63),
              2**63, 2**64 - 1, True, False]
    for value in values:
        assert dumps(value) == reference(value)
        assert dumps({"n": value, "m": [value, 0]}) == reference({"n": value, "m": [value, 0]})
    for value in values[:-2]:  # an id is no bool
        written = json.loads(encode_response(value, {"n": value}))
        assert written == {"jsonrpc": "2.0", "id": value, "result": {"n": value}}
    for value in [2**64, -(2**63) - 1, 10**40, -(10**40)]:
        with pytest.raises(EncodeError, match="out of range"):
            dumps([value])


def test_both_dict_walks_write_the_same_json(dict_walk):
    class Point:
        def __init__(self, x, y):
            self.x = x
            self.y = y

    shapes = [
        {},
        {"a": 1, "b": [1, 2], "c": {"d": None}},
        {f"k{i}": i for i in range(1000)},
        [vars(Point(i, -i)) for i in range(5)],  # split tables
    ]
    deleted = {f"k{i}": i for i in range(50)}
    for i in range(0, 50, 3):
        del deleted[f"k{i}"]
    general = {1: "x", "a": [1], "b": 2}
    del general[1]
    shapes += [deleted, general]
    for value in shapes:
        assert dumps(value) == reference(value)


# ---------------------------------------------------------------------------------------
# error_code_of: the code of an encoded error response, read without decoding


request_ids = st.integers(INT_MIN, UINT_MAX) | text


@settings(max_examples=400)
@given(request_ids | st.none(), st.integers(INT_MIN, 2**63 - 1), text, json_values)
def test_error_code_of_an_encoded_error_is_its_code(request_id, code, message, data):
    assert error_code_of(encode_error(request_id, code, message)) == code
    assert error_code_of(encode_error(request_id, code, message, data)) == code


@settings(max_examples=400)
@given(request_ids, json_values)
def test_error_code_of_an_encoded_result_is_none_whatever_it_holds(request_id, result):
    # A result may hold "error" keys and error-like text: only the envelope counts.
    assert error_code_of(encode_response(request_id, result)) is None
    assert error_code_of(encode_response(request_id, {"error": {"code": 1}})) is None


@pytest.mark.parametrize("frame, code", [
    # Another layout (keys in another order, spaces): decoded.
    (b'{"id":1,"jsonrpc":"2.0","error":{"message":"m","code":-32601}}', -32601),
    (b'{"jsonrpc": "2.0", "id": 1, "error": {"code": 7, "message": "m"}}', 7),
    (b'{"jsonrpc":"2.0","id":1,"error":{"message":"m","code":3}}', 3),
    (b'{"id":"e","result":{"error":1},"jsonrpc":"2.0"}', None),
    # Not an error response at all, or not JSON-RPC: None.
    (b'{"jsonrpc":"2.0","method":"ping"}', None),
    (b'{"jsonrpc":"2.0","id":1,"error":{"code":', None),
    (b"not json", None),
    (b"", None),
    (bytearray(b'{"jsonrpc":"2.0","id":1,"error":{"code":5,"message":"m"}}'), 5),
])
def test_error_code_of_other_frames_is_what_decoding_says(frame, code):
    assert error_code_of(frame) == code


# ---------------------------------------------------------------------------------------
# Extension: members appended to dicts lacking them, encoded once

from mcpfast._core.encode import Extended, Extension  # noqa: E402

json_objects = st.dictionaries(text, json_values, max_size=6)


def _pairs(frame: bytes):
    """The frame parsed with every object as its list of (key, value) pairs: key order counts."""
    return json.loads(frame, object_pairs_hook=list)


@settings(max_examples=300)
@given(json_objects, st.dictionaries(text, json_values, min_size=1, max_size=4),
       st.integers(0, 2**31) | st.text(max_size=5))
def test_an_extended_dict_encodes_as_its_copy_with_the_members_added(value, members, request_id):
    # The encoded members are exactly what encoding the shaped copy gives, key order included.
    extension = Extension(members, lambda other: ("otherwise", other))
    extended = extension(value)
    if any(key in value for key in members):
        assert extended == ("otherwise", value)
        return
    shaped = dict(value)
    for key, member in members.items():
        shaped[key] = member
    assert type(extended) is Extended and extended.value is value and extended.extension is extension
    assert dumps(extended) == dumps(shaped) == reference(shaped)
    assert _pairs(dumps(extended)) == _pairs(reference(shaped))
    assert encode_response(request_id, extended) == encode_response(request_id, shaped)
    assert _pairs(encode_response(request_id, extended)) == _pairs(encode_response(request_id, shaped))
    assert dumps({"nested": [extended]}) == dumps({"nested": [shaped]})
    assert extended.to_dict() == shaped and list(extended.to_dict()) == list(shaped)
    assert value == {k: v for k, v in value.items()}  # unchanged


def test_an_extension_answers_otherwise_for_anything_but_a_plain_dict_lacking_its_keys():
    seen = []

    def otherwise(value):
        seen.append(value)
        return "other"

    extension = Extension({"resultType": "complete", "_meta": {"info": {"name": "x"}}}, otherwise)
    assert extension.keys == ("resultType", "_meta")
    assert extension.text == b'"resultType":"complete","_meta":{"info":{"name":"x"}}'
    assert extension.otherwise is otherwise
    subclass = collections.OrderedDict(a=1)
    for value in ({"resultType": "x"}, {"a": 1, "_meta": {}}, [1], "text", None, 3, subclass):
        assert extension(value) == "other"
    assert seen[-1] is subclass and len(seen) == 7
    assert dumps(extension({})) == b'{"resultType":"complete","_meta":{"info":{"name":"x"}}}'
    assert "resultType" in repr(extension) and "Extended" in repr(extension({"a": 1}))


def test_extension_members_are_checked_and_snapshotted():
    with pytest.raises(ValueError):
        Extension({}, lambda value: value)
    with pytest.raises(TypeError):
        Extension({1: "x"}, lambda value: value)  # type: ignore[dict-item]
    with pytest.raises(TypeError):
        Extension({"a": 1}, "not callable")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Extension(None, lambda value: value)  # type: ignore[arg-type]
    with pytest.raises(EncodeError):
        Extension({"a": object()}, lambda value: value)
    cycle: dict = {}
    cycle["self"] = cycle
    with pytest.raises(EncodeError):
        Extension({"a": cycle}, lambda value: value)
    with pytest.raises(TypeError):
        Extended()
    members = {"a": [1]}
    extension = Extension(members, lambda value: value)
    members["a"].append(2)  # encoded when the extension was made
    assert dumps(extension({"b": 0})) == b'{"b":0,"a":[1]}'


def test_an_extended_dict_too_deep_is_refused_as_its_copy_would_be():
    deep_members = {"deep": nested_lists(10)}
    extension = Extension(deep_members, lambda value: value)
    # The copy at this depth would be too deep because of the members: so is the extension.
    for outer in range(MAX_DEPTH - 14, MAX_DEPTH + 1):
        extended = extension({"x": 1})
        wrapped: object = extended
        shaped: object = {"x": 1, **deep_members}
        for _ in range(outer):
            wrapped, shaped = [wrapped], [shaped]
        try:
            expected = dumps(shaped)
        except EncodeError:
            with pytest.raises(EncodeError):
                dumps(wrapped)
        else:
            assert dumps(wrapped) == expected
