"""decode(): every JSON-RPC 2.0 rule, the specification's examples, malformed input."""

import gc
import json
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpfast._core import messages as messages_module
from mcpfast._core.decode import (
    INVALID_REQUEST,
    MAX_DEPTH,
    PARSE_ERROR,
    DecodeError,
    decode,
)
from mcpfast._core.encode import encode_message
from mcpfast._core.messages import ErrorResponse, Notification, Request, Response


def code_of(frame):
    with pytest.raises(DecodeError) as info:
        decode(frame)
    return info.value.code


# --- the examples of the JSON-RPC 2.0 specification -------------------------------------


def test_spec_positional_params():
    m = decode(b'{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}')
    assert type(m) is Request
    assert (m.id, m.method, m.params) == (1, "subtract", [42, 23])


def test_spec_named_params():
    m = decode(b'{"jsonrpc": "2.0", "method": "subtract", "params": {"subtrahend": 23, "minuend": 42}, "id": 3}')
    assert type(m) is Request
    assert m.params == {"subtrahend": 23, "minuend": 42}


def test_spec_notifications():
    m = decode(b'{"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]}')
    assert type(m) is Notification and m.method == "update" and m.params == [1, 2, 3, 4, 5]
    m = decode(b'{"jsonrpc": "2.0", "method": "foobar"}')
    assert type(m) is Notification and m.params is None


def test_spec_responses():
    m = decode(b'{"jsonrpc": "2.0", "result": 19, "id": 1}')
    assert type(m) is Response and m.id == 1 and m.result == 19
    m = decode(b'{"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"}, "id": "1"}')
    assert type(m) is ErrorResponse
    assert (m.id, m.code, m.message, m.has_data, m.data) == ("1", -32601, "Method not found", False, None)


def test_spec_invalid_json():
    assert code_of(b'{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]') == PARSE_ERROR


def test_spec_invalid_request_object():
    with pytest.raises(DecodeError) as info:
        decode(b'{"jsonrpc": "2.0", "method": 1, "params": "bar"}')
    assert info.value.code == INVALID_REQUEST and info.value.id is None


def test_spec_batch_invalid_json():
    frame = b'[{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},{"jsonrpc": "2.0", "method"]'
    assert code_of(frame) == PARSE_ERROR


def test_spec_empty_batch():
    assert code_of(b"[]") == INVALID_REQUEST
    assert code_of(b"[ ]") == INVALID_REQUEST


def test_spec_invalid_batch_elements():
    out = decode(b"[1]")
    assert len(out) == 1 and isinstance(out[0], DecodeError) and out[0].code == INVALID_REQUEST
    out = decode(b"[1,2,3]")
    assert [e.code for e in out] == [INVALID_REQUEST] * 3


def test_spec_mixed_batch():
    frame = b"""[
        {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},
        {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},
        {"jsonrpc": "2.0", "method": "subtract", "params": [42,23], "id": "2"},
        {"foo": "boo"},
        {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},
        {"jsonrpc": "2.0", "method": "get_data", "id": "9"}
    ]"""
    out = decode(frame)
    assert [type(x).__name__ for x in out] == [
        "Request", "Notification", "Request", "DecodeError", "Request", "Request"]
    assert out[0].params == [1, 2, 4] and out[4].params == {"name": "myself"}
    assert out[3].code == INVALID_REQUEST
    assert [x.id for x in out if type(x) is Request] == ["1", "2", "5", "9"]


def test_spec_all_notification_batch():
    out = decode(b'[{"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]},'
                 b'{"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}]')
    assert all(type(x) is Notification for x in out)


# --- envelope rules ---------------------------------------------------------------------


@pytest.mark.parametrize("frame", [
    b'{"method":"x","id":1}',                       # jsonrpc missing
    b'{"jsonrpc":"1.0","method":"x","id":1}',       # wrong version
    b'{"jsonrpc":2.0,"method":"x","id":1}',         # version not a string
    b'{"jsonrpc":"2.0 ","method":"x","id":1}',
    b'{"jsonrpc":"2.0","method":null,"id":1}',      # method not a string
    b'{"jsonrpc":"2.0","method":"x","params":"s","id":1}',   # params scalar
    b'{"jsonrpc":"2.0","method":"x","params":3,"id":1}',
    b'{"jsonrpc":"2.0","method":"x","params":null,"id":1}',
    b'{"jsonrpc":"2.0","method":"x","id":null}',    # request id null
    b'{"jsonrpc":"2.0","method":"x","id":1.5}',     # id float
    b'{"jsonrpc":"2.0","method":"x","id":true}',    # id bool
    b'{"jsonrpc":"2.0","method":"x","id":[1]}',     # id array
    b'{"jsonrpc":"2.0","method":"x","id":{}}',
    b'{"jsonrpc":"2.0","result":1}',                # response without id
    b'{"jsonrpc":"2.0","result":1,"id":null}',      # result with null id
    b'{"jsonrpc":"2.0","result":1,"error":{"code":1,"message":"m"},"id":1}',
    b'{"jsonrpc":"2.0","method":"x","result":1,"id":1}',
    b'{"jsonrpc":"2.0","error":{"code":1,"message":"m"}}',   # error without id
    b'{"jsonrpc":"2.0","error":"boom","id":1}',     # error not an object
    b'{"jsonrpc":"2.0","error":{"message":"m"},"id":1}',     # no code
    b'{"jsonrpc":"2.0","error":{"code":"1","message":"m"},"id":1}',
    b'{"jsonrpc":"2.0","error":{"code":1.5,"message":"m"},"id":1}',
    b'{"jsonrpc":"2.0","error":{"code":1},"id":1}',          # no message
    b'{"jsonrpc":"2.0","error":{"code":1,"message":7},"id":1}',
    b'{"jsonrpc":"2.0","id":1}',                    # nothing to do
    b'{"jsonrpc":"2.0"}',
    b'{}',
    b'"just a string"',
    b'42',
    b'null',
    b'true',
    b'[[]]' ,
])
def test_invalid_request(frame):
    if frame == b'[[]]':
        out = decode(frame)
        assert out[0].code == INVALID_REQUEST
    else:
        assert code_of(frame) == INVALID_REQUEST


def test_invalid_request_carries_readable_id():
    with pytest.raises(DecodeError) as info:
        decode(b'{"jsonrpc":"1.0","method":"x","id":"abc"}')
    assert info.value.id == "abc"
    with pytest.raises(DecodeError) as info:
        decode(b'{"jsonrpc":"2.0","method":5,"id":77}')
    assert info.value.id == 77
    with pytest.raises(DecodeError) as info:
        decode(b'{"jsonrpc":"2.0","method":"x","id":1.5}')
    assert info.value.id is None
    assert "id" in info.value.message


def test_error_messages_say_what_is_wrong():
    with pytest.raises(DecodeError, match="jsonrpc"):
        decode(b'{"jsonrpc":"1.0","method":"x","id":1}')
    with pytest.raises(DecodeError, match="params"):
        decode(b'{"jsonrpc":"2.0","method":"x","params":1,"id":1}')
    with pytest.raises(DecodeError, match="Parse error"):
        decode(b'{"jsonrpc":')


def test_error_response_with_null_id_and_data():
    m = decode(b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":{"at":3}}}')
    assert type(m) is ErrorResponse and m.id is None and m.has_data and m.data == {"at": 3}
    m = decode(b'{"jsonrpc":"2.0","id":4,"error":{"code":-32000,"message":"x","data":null}}')
    assert m.has_data and m.data is None


def test_unknown_members_are_ignored():
    m = decode(b'{"jsonrpc":"2.0","id":1,"method":"x","extra":{"deep":[1,2]},"z":null}')
    assert type(m) is Request and m.params is None


def test_member_order_does_not_matter():
    m = decode(b'{"params":{"a":1},"id":"q","method":"m","jsonrpc":"2.0"}')
    assert (m.id, m.method, m.params) == ("q", "m", {"a": 1})


def test_ids():
    assert decode(b'{"jsonrpc":"2.0","id":0,"method":"x"}').id == 0
    assert decode(b'{"jsonrpc":"2.0","id":-5,"method":"x"}').id == -5
    assert decode(b'{"jsonrpc":"2.0","id":"","method":"x"}').id == ""
    assert decode(b'{"jsonrpc":"2.0","id":"\\u00e9\\n","method":"x"}').id == "\u00e9\n"
    big = 2**64 - 1
    assert decode(b'{"jsonrpc":"2.0","id":%d,"method":"x"}' % big).id == big
    low = -(2**63)
    assert decode(b'{"jsonrpc":"2.0","id":%d,"method":"x"}' % low).id == low


# --- duplicates, huge integers, depth: consistent behaviour -----------------------------


@pytest.mark.parametrize("member", [b'"id":2', b'"method":"y"', b'"jsonrpc":"2.0"', b'"params":{}'])
def test_duplicate_envelope_member_is_invalid(member):
    frame = b'{"jsonrpc":"2.0","id":1,"method":"x","params":{},' + member + b"}"
    assert code_of(frame) == INVALID_REQUEST


def test_duplicate_error_members_are_invalid():
    assert code_of(b'{"jsonrpc":"2.0","id":1,"error":{"code":1,"code":2,"message":"m"}}') == INVALID_REQUEST
    assert code_of(b'{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","message":"n"}}') == INVALID_REQUEST


def test_duplicate_keys_inside_payload_last_wins_like_json_loads():
    frame = b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":1,"b":2,"a":3}}'
    assert decode(frame).params == json.loads(frame)["params"] == {"a": 3, "b": 2}


@pytest.mark.parametrize("number", [b"18446744073709551616", b"-9223372036854775809", b"1" + b"0" * 30])
def test_integers_beyond_64_bits_are_parse_errors(number):
    # Everywhere: in the id, in params, in result.
    assert code_of(b'{"jsonrpc":"2.0","id":' + number + b',"method":"x"}') == PARSE_ERROR
    assert code_of(b'{"jsonrpc":"2.0","id":1,"method":"x","params":[' + number + b"]}") == PARSE_ERROR
    assert code_of(b'{"jsonrpc":"2.0","id":1,"result":' + number + b"}") == PARSE_ERROR


def test_integers_at_64_bit_limits():
    frame = b'{"jsonrpc":"2.0","id":1,"result":[18446744073709551615,-9223372036854775808,9223372036854775807]}'
    assert decode(frame).result == [2**64 - 1, -(2**63), 2**63 - 1]


def test_float_overflow_is_parse_error():
    assert code_of(b'{"jsonrpc":"2.0","id":1,"result":1e400}') == PARSE_ERROR


def _nested(depth):
    return b"[" * depth + b"]" * depth


def test_nesting_up_to_the_limit_decodes():
    # the envelope object and "result" count as levels; MAX_DEPTH - 1 arrays fit beneath
    result = _nested(MAX_DEPTH - 1)
    m = decode(b'{"jsonrpc":"2.0","id":1,"result":' + result + b"}")
    value = m.result
    depth = 0
    while value:
        value = value[0]
        depth += 1
    assert depth == MAX_DEPTH - 2


def test_nesting_beyond_the_limit_is_parse_error():
    frame = b'{"jsonrpc":"2.0","id":1,"result":' + _nested(MAX_DEPTH + 5) + b"}"
    with pytest.raises(DecodeError, match="nesting") as info:
        decode(frame)
    assert info.value.code == PARSE_ERROR


# --- malformed input of every kind ------------------------------------------------------


@pytest.mark.parametrize("frame", [
    b"", b"   ", b"\n", b"{", b"}", b"[", b'{"jsonrpc":"2.0",}', b"{'jsonrpc':'2.0'}",
    b'{"jsonrpc":"2.0","id":1,"method":"x"} trailing', b'{"a":1}{"b":2}',
    b'{"jsonrpc":"2.0","id":01,"method":"x"}', b'{"jsonrpc":"2.0","id":1,"method":"x","params":[NaN]}',
    b'{"jsonrpc":"2.0","id":1,"method":"x","params":[Infinity]}',
    b'{"jsonrpc":"2.0","id":1,"method":"x","params":["\x01"]}',          # raw control char
    b'{"jsonrpc":"2.0","id":1,"method":"x","params":["\\x"]}',           # bad escape
    b'{"jsonrpc":"2.0","id":1,"method":"x","params":["\\ud800"]}',       # lone surrogate escape
    b'{"jsonrpc":"2.0","id":1,"method":"x","params":["\\udc00\\ud800"]}',
    b'{"jsonrpc":"2.0","id":1,"method":"x","params":[tru]}',
    b'{"jsonrpc":"2.0","id":1,"method":"x","params":[1.]}',
    b'{"jsonrpc":"2.0","id":1,"method":"x","params":[-]}',
    b'\xef\xbb\xbf{"jsonrpc":"2.0","id":1,"method":"x"}' + b"\xff",
])
def test_parse_errors(frame):
    assert code_of(frame) == PARSE_ERROR


@pytest.mark.parametrize("frame", [
    b'{"jsonrpc":"2.0","id":1,"method":"x","params":["\xff"]}',
    b'{"jsonrpc":"2.0","id":1,"method":"x","params":["\xc3"]}',
    b'{"jsonrpc":"2.0","id":1,"method":"x","params":["\xed\xa0\x80"]}',   # UTF-8 encoded surrogate
    b'{"jsonrpc":"2.0","id":1,"method":"\xc0\xaf"}',                      # overlong
])
def test_invalid_utf8_is_parse_error(frame):
    with pytest.raises(DecodeError, match="UTF-8") as info:
        decode(frame)
    assert info.value.code == PARSE_ERROR


def test_invalid_json_inside_params_is_an_error_at_decode_not_on_access():
    # lazy is not lax: the whole frame is validated when decoded
    assert code_of(b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":[1,2,}}') == PARSE_ERROR
    assert code_of(b'{"jsonrpc":"2.0","id":1,"result":{"a":"\\q"}}') == PARSE_ERROR


def test_a_bad_frame_does_not_disturb_the_next():
    good = b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"k":"v"}}'
    first = decode(good)
    for bad in (b"{", b"\xff", b'{"jsonrpc":"2.0","id":1e999}', b"[]"):
        with pytest.raises(DecodeError):
            decode(bad)
    assert decode(good) == first
    assert first.params == {"k": "v"}


# --- input types ------------------------------------------------------------------------


FRAME = b'{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":"c"}}'


@pytest.mark.parametrize("frame", [
    FRAME, bytearray(FRAME), memoryview(FRAME), FRAME.decode(), memoryview(b"xx" + FRAME + b"yy")[2:-2],
])
def test_input_types(frame):
    m = decode(frame)
    assert (m.id, m.method, m.params) == (7, "tools/list", {"cursor": "c"})


def test_str_with_lone_surrogate_is_refused():
    with pytest.raises((DecodeError, UnicodeEncodeError)):
        decode('{"jsonrpc":"2.0","id":1,"method":"\ud800"}')


def test_non_buffer_input_is_type_error():
    with pytest.raises(TypeError):
        decode(12)
    with pytest.raises(TypeError):
        decode(None)


def test_non_contiguous_buffer_is_refused():
    view = memoryview(b"abcdef")[::2]
    with pytest.raises((BufferError, TypeError, ValueError)):
        decode(view)


# --- laziness and interning -------------------------------------------------------------


def test_payload_is_lazy_and_cached():
    m = decode(b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":[1,{"b":null}]}}')
    assert not m.payload_built
    p = m.params
    assert m.payload_built
    assert p == {"a": [1, {"b": None}]}
    assert m.params is p


def test_payload_survives_later_decodes():
    first = decode(b'{"jsonrpc":"2.0","id":1,"result":{"text":"first","n":[1,2,3]}}')
    for i in range(50):
        decode(b'{"jsonrpc":"2.0","id":%d,"result":{"text":"other %d","zz":[9,9,9,9,9,9]}}' % (i, i))
    assert first.result == {"text": "first", "n": [1, 2, 3]}


def test_unread_payloads_survive_later_decodes_in_any_order():
    # Unread payloads view the parser's buffers until the next decode copies them.
    frames = [b'{"jsonrpc":"2.0","id":%d,"result":{"n":%d,"s":"v%d","l":[%d,"\\u00e9"]}}' % (i, i, i, i)
              for i in range(40)]
    kept = [decode(frame) for frame in frames]
    batch = decode(b"[" + b",".join(frames[:7]) + b"]")
    del kept[::3]  # freed unread, some of them before being copied
    encoded = encode_message(kept[-1])  # written from its copy, still unbuilt
    assert not kept[-1].payload_built
    for m in reversed(kept):
        assert m.result == {"n": m.id, "s": "v%d" % m.id, "l": [m.id, "\u00e9"]}
    assert [m.result["n"] for m in batch] == list(range(7))
    assert encode_message(decode(encoded)) == encoded


def test_a_finalizer_that_decodes_cannot_disturb_a_payload_being_built():
    # Building a payload (or a batch) allocates dicts and lists, which can start a
    # collection, which can run a finalizer that decodes -- reusing the parser's buffers
    # that the payload being built may still be read from.
    frame = json.dumps({"jsonrpc": "2.0", "id": 1,
                        "result": [{"k": i, "v": [str(i)] * 3} for i in range(300)]}).encode()
    other_result = [{"zz": ["w%d" % i, [i, i]]} for i in range(1500)]  # overwrites all of it
    other = json.dumps({"jsonrpc": "2.0", "id": 2, "result": other_result}).encode()
    decode(other)  # the parser's buffers grow once, here, not under the payload
    seen = []

    class Decodes:
        def __del__(self):
            seen.append(decode(other).result == other_result)

    def garbage():
        for _ in range(5):
            cycle = Decodes()
            cycle.self = cycle  # only the collector frees it

    threshold = gc.get_threshold()
    gc.collect()
    gc.set_threshold(1)
    try:
        garbage()  # left for the collector: the next one runs while a payload is built
        single = decode(frame)
        result = single.result
        garbage()
        batch = decode(b"[" + b",".join([frame] * 4) + b"]")
        results = [m.result for m in batch]
    finally:
        gc.set_threshold(*threshold)
        gc.collect()
    expected = json.loads(frame)["result"]
    assert result == expected and results == [expected] * 4
    assert seen and all(seen)


def test_batch_payloads_are_independent():
    out = decode(b'[{"jsonrpc":"2.0","id":1,"result":"a"},{"jsonrpc":"2.0","id":2,"result":{"b":[2]}},'
                 b'{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"m","data":"d"}}]')
    assert out[2].data == "d" and out[1].result == {"b": [2]} and out[0].result == "a"


def test_method_names_are_interned():
    a = decode(b'{"jsonrpc":"2.0","id":1,"method":"tools/call"}')
    b = decode(b'{"jsonrpc":"2.0","method":"tools/call"}')
    assert a.method is b.method is sys.intern("tools/call")


def test_object_keys_are_shared_strings():
    m = decode(b'{"jsonrpc":"2.0","id":1,"result":[{"name":1},{"name":2}]}')
    k1, = m.result[0].keys()
    k2, = m.result[1].keys()
    assert k1 is k2


def test_long_and_non_ascii_strings_and_keys():
    long_key = "k" * 200
    doc = {"jsonrpc": "2.0", "id": 1, "result": {long_key: "v" * 5000, "ключ": "значение 🎉", "": ""}}
    m = decode(json.dumps(doc).encode())
    assert m.result == doc["result"]


def test_large_array_beyond_count_saturation():
    n = 0x1000000 + 3   # more elements than the tape's 24-bit count field holds
    frame = b'{"jsonrpc":"2.0","id":1,"result":[' + b",".join([b"0"] * n) + b"]}"
    m = decode(frame)
    assert len(m.result) == n


# --- property: decode agrees with json.loads on arbitrary JSON payloads ------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=10), children, max_size=5),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(json_values, st.one_of(st.integers(-(2**63), 2**63 - 1), st.text(max_size=20)))
def test_result_matches_json_loads(value, rid):
    frame = json.dumps({"jsonrpc": "2.0", "id": rid, "result": value}, ensure_ascii=False).encode()
    m = decode(frame)
    assert type(m) is Response and m.id == rid
    assert m.result == json.loads(frame)["result"]


# Strings are built from valid UTF-8 eight bytes at a time (runs of ASCII copied whole):
# every kind (ASCII, UCS1, UCS2, UCS4), every length around the 8-byte steps, the wider
# character at every position.
WIDER = ["\u00e9", "\u00ff", "\u0100", "\u07ff", "\u0800", "\uffff", "\U00010000", "\U0010ffff"]


def narrowest_size(text):
    """The size of a str holding text in the narrowest kind, with no cached UTF-8 form
    (which text itself may carry, and 3.12+ counts in its size): that of a new str of it
    twice, less the bytes of one copy's characters."""
    kind = 1 if max(text, default="a") < "\u0100" else 2 if max(text) < "\U00010000" else 4
    return sys.getsizeof(text * 2) - len(text) * kind


@pytest.mark.parametrize("wider", WIDER)
def test_strings_of_every_kind_length_and_position(wider):
    for length in range(0, 26):
        for position in range(length):
            text = "".join(wider if i == position else "abcdefgh"[i % 8] for i in range(length))
            for value in (text, text + "\u00e9", "\u00e9" + text):
                frame = json.dumps({"jsonrpc": "2.0", "id": 1, "result": [value, {value: 1}]},
                                   ensure_ascii=False).encode()
                m = decode(frame)
                assert m.result == [value, {value: 1}], (length, position, value)
                assert sys.getsizeof(m.result[0]) == narrowest_size(value), value


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab~\u0080\u00e9\u00ff\u0100\u20ac\uffff\U0001f600"), max_size=70))
def test_mixed_width_strings_match_json_loads(text):
    frame = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"text": text}}, ensure_ascii=False).encode()
    assert decode(frame).result["text"] == text


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=64))
def test_arbitrary_bytes_never_crash(data):
    try:
        out = decode(data)
    except DecodeError as e:
        assert e.code in (PARSE_ERROR, INVALID_REQUEST)
    else:
        assert out is not None


# --- frames from the LineFramer are parsed in place ------------------------------------


def test_decode_framer_frames_in_place():
    from mcpfast._core.framing import LineFramer

    framer = LineFramer()
    stream = b"".join(
        b'{"jsonrpc":"2.0","id":%d,"method":"m","params":{"i":%d,"s":"%s"}}\n' % (i, i, b"x" * i)
        for i in range(200)
    )
    frames = []
    for k in range(0, len(stream), 777):
        frames.extend(framer.feed(stream[k:k + 777]))
    assert len(frames) == 200
    for i, frame in enumerate(frames):
        m = decode(frame)
        assert (m.id, m.params) == (i, {"i": i, "s": "x" * i})
    # a frame followed directly by garbage in the same buffer still decodes on its own
    frames = framer.feed(b'{"jsonrpc":"2.0","id":1,"method":"a"}\n{"garbage\n')
    assert decode(frames[0]).method == "a"
    with pytest.raises(DecodeError):
        decode(frames[1])


# --- small objects built from shapes (filled copies of model dicts) ---------------------


def test_shapes_are_used_on_current_cpython():
    # Filling model dicts in place is an optimisation with a self-check; on the CPython
    # versions it knows (3.11+, default builds) the self-check must have passed.
    import sysconfig

    if sys.implementation.name == "cpython" and sys.version_info >= (3, 11) \
            and not sysconfig.get_config_var("Py_GIL_DISABLED"):
        assert messages_module._SHAPES is True
    # The copies are clones of the model's keys object on 3.11; on later versions, whose
    # shared empty keys object is immortal, PyDict_Copy makes them.
    assert messages_module._CLONES is (messages_module._SHAPES and sys.version_info[:2] == (3, 11))


@pytest.fixture(params=["shapes", "shapes copied", "PyDict_SetItem"])
def dict_building(request):
    """Every way small dicts are built: filled models (clones of their keys object on 3.11,
    PyDict_Copy after), filled models copied by PyDict_Copy, and PyDict_SetItem only."""
    messages_module._build_dicts_from_shapes(request.param != "PyDict_SetItem",
                                             clones=request.param == "shapes")
    yield request.param
    messages_module._build_dicts_from_shapes(True)


def _results(value, times=4):
    # Decoded several times: a shape gets a model the second time, is filled from then on.
    frame = json.dumps({"jsonrpc": "2.0", "id": 1, "result": value}, ensure_ascii=False).encode()
    return [decode(frame).result for _ in range(times)]


SHAPED = [
    {"a": 1, "b": "two"},
    {"a": [1, {"b": None}], "c": {"d": {"e": [], "f": {}}}, "g": 1.5, "h": True, "i": False},
    {f"k{i}": i for i in range(8)},          # a general keys table if presized (3.11..3.13)
    {f"k{i}": i for i in range(16)},         # the largest shape
    {f"k{i}": i for i in range(17)},         # one member too many: PyDict_SetItem
    {"x": {"x": {"x": {"x": 1, "y": 2}, "y": 2}, "y": 2}, "y": 2},
    [{"type": "text", "text": str(i)} for i in range(20)],
    {"only": 1},
    {},
    {"é": 1, "k" * 100: 2, "": 3},
]


@pytest.mark.parametrize("value", SHAPED)
def test_shaped_objects_equal_json_loads(dict_building, value):
    for result in _results(value):
        assert result == value
        assert json.dumps(result) == json.dumps(value)  # same member order


def test_shaped_objects_are_independent(dict_building):
    first, second, third = _results({"a": {"n": 1}, "b": [1]}, 3)
    third["a"]["n"] = 99
    third["c"] = 3
    del third["b"]
    assert first == second == {"a": {"n": 1}, "b": [1]}
    assert third == {"a": {"n": 99}, "c": 3}
    # the model was not touched: later decodes give the original again
    assert _results({"a": {"n": 1}, "b": [1]}, 2) == [{"a": {"n": 1}, "b": [1]}] * 2


def immortal(obj) -> bool:
    """Whether obj is immortal (CPython 3.12+: a reference count that never changes, as
    interned strings have); sys._is_immortal where the version has it (3.14)."""
    if hasattr(sys, "_is_immortal"):
        return sys._is_immortal(obj)
    return sys.getrefcount(obj) >= 1 << 30  # immortal counts start at 2**30 or more


def test_shaped_objects_hold_one_reference_to_each_key_and_value(dict_building):
    # A filled copy of a model takes over the references the decoder made for its keys and
    # values: as many as the dicts that hold them, and none left when they are gone.
    key = sys.intern("refcount_probe_key")
    frame = b'{"jsonrpc":"2.0","id":1,"result":{"refcount_probe_key":{"refcount_probe_key":1},"n":"probe value"}}'
    _ = [decode(frame).result for _ in range(3)]  # the strings cached, the shapes' models made
    value = _[0]["n"]  # the value cache's str, given to every decode
    del _
    expected = {"refcount_probe_key": {"refcount_probe_key": 1}, "n": "probe value"}
    before_key, before_value = sys.getrefcount(key), sys.getrefcount(value)
    # Interned strings are immortal from 3.12 on: their count never moves.
    key_refs = 0 if immortal(key) else 200
    results = [decode(frame).result for _ in range(100)]
    assert all(r == expected for r in results)
    assert all(r["n"] is value for r in results)
    assert sys.getrefcount(key) == before_key + key_refs
    assert sys.getrefcount(value) == before_value + 100
    del results
    assert sys.getrefcount(key) == before_key
    assert sys.getrefcount(value) == before_value


def test_shaped_objects_grow_and_shrink_like_any_dict(dict_building):
    for result in _results({"a": 1, "b": 2, "c": 3}):
        expected = {"a": 1, "b": 2, "c": 3}
        for d in (result, expected):
            for i in range(20):
                d[f"n{i}"] = i
            del d["b"]
            d.pop("n3")
        assert result == expected and list(result) == list(expected)
        assert result["c"] == 3 and "b" not in result


def test_shaped_objects_with_containers_are_tracked_by_the_collector(dict_building):
    for holder in _results({"list": [1], "n": 1}):
        assert gc.is_tracked(holder)
    for holder in _results({"dict": {}, "n": 1}):
        assert gc.is_tracked(holder)
    # a cycle made through a decoded dict is collected
    for holder in _results({"list": [], "n": 1}):
        holder["list"].append(holder)
    gc.collect()


def test_duplicate_keys_in_a_shaped_object_last_wins(dict_building):
    frame = b'{"jsonrpc":"2.0","id":1,"result":{"a":1,"b":2,"a":3}}'
    for _ in range(4):
        result = decode(frame).result
        assert result == {"a": 3, "b": 2} and list(result) == ["a", "b"]


def test_shapes_with_the_same_keys_in_another_order(dict_building):
    frames = [b'{"jsonrpc":"2.0","id":1,"result":{"a":1,"b":2}}',
              b'{"jsonrpc":"2.0","id":1,"result":{"b":2,"a":1}}']
    for _ in range(4):
        for frame in frames:
            result = decode(frame).result
            assert result == json.loads(frame)["result"]
            assert list(result) == list(json.loads(frame)["result"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from("abcdefghij"), json_values, max_size=9), max_size=6))
def test_shaped_objects_match_json_loads(objects):
    # Few distinct keys, so that shapes repeat and models are made and filled.
    frame = json.dumps({"jsonrpc": "2.0", "id": 1, "result": objects}, ensure_ascii=False).encode()
    expected = json.loads(frame)["result"]
    for _ in range(3):
        result = decode(frame).result
        assert result == expected
        assert json.dumps(result) == json.dumps(expected)


def _dicts_in(value):
    if isinstance(value, dict):
        yield value
        for item in value.values():
            yield from _dicts_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from _dicts_in(item)


@pytest.mark.parametrize("value", SHAPED + [
    {"a": 1, "b": "x"},                      # atoms only: not tracked, as with json.loads
    {"a": {"n": 1}, "b": 2},                 # holds a dict (itself untracked): tracked
    {"a": [], "b": {}},
    [{"a": 1, "b": [2]}, {"a": 1, "b": 2}],  # one shape, tracked in one place only
])
def test_shaped_objects_are_tracked_exactly_as_json_loads_tracks_them(dict_building, value):
    expected = list(_dicts_in(value))
    for result in _results(value):
        got = list(_dicts_in(result))
        assert [gc.is_tracked(d) for d in got] == [gc.is_tracked(json.loads(json.dumps(d))) for d in expected]


def test_shaped_objects_with_escaped_and_non_ascii_keys(dict_building):
    # Keys are compared after unescaping: an escaped key is the same key as its plain form,
    # non-ASCII keys and keys longer than a cache line of the key cache stay exact.
    plain = b'{"jsonrpc":"2.0","id":1,"result":{"name":1,"\xc3\xa9t\xc3\xa9":2,"' + b"k" * 40 + b'":3}}'
    escaped = (b'{"jsonrpc":"2.0","id":1,"result":{"n\\u0061me":1,"\\u00e9t\\u00e9":2,"'
               + b"k" * 39 + b'\\u006b":3}}')
    other = b'{"jsonrpc":"2.0","id":1,"result":{"name":1,"\xc3\xa9t\xc3\xa9":2,"' + b"k" * 39 + b'j":3}}'
    for _ in range(4):
        for frame in (plain, escaped, other):
            result = decode(frame).result
            expected = json.loads(frame)["result"]
            assert result == expected and list(result) == list(expected)
            for key in result:
                assert key is sys.intern(key)  # keys are interned on both paths


# Keys of a row of a listing, of several lengths; a value of every kind a payload carries.
ROW_MEMBERS = [("id", 7), ("name", "Ada"), ("email", "ada@example.org"),
               ("createdAt", "2026-05-01T10:00:00Z"), ("active", True), ("score", 0.75),
               ("tags", ["a"]), ("owner", "team-3"), ("region", "eu-west"), ("plan", "pro"),
               ("seats", 12), ("updatedAt", "2026-06-01T10:00:00Z"), ("locale", "en-GB"),
               ("timezone", "Europe/Berlin"), ("verified", False), ("parentId", None)]


@pytest.mark.parametrize("members", range(1, 17))
def test_objects_of_each_size_are_made_from_their_model(dict_building, members):
    # Ten objects of one shape: the first is seen, the second makes the model, the other
    # eight are filled from it, and every object of a later decode is.  Counted, not
    # compared by value: an object built twice over (a refused model made again for each
    # object) equals the right one.
    rows = [dict(ROW_MEMBERS[:members], id=i) for i in range(10)]
    frame = json.dumps({"jsonrpc": "2.0", "id": 1, "result": rows}).encode()
    # No models where the import check turned shapes off (CPython 3.10's dict layout).
    from_models = (messages_module._SHAPES and dict_building != "PyDict_SetItem"
                   and members in messages_module._SHAPE_KEYS)
    before = messages_module._shape_hits()
    assert decode(frame).result == rows
    first = messages_module._shape_hits()
    assert decode(frame).result == rows
    assert (first - before, messages_module._shape_hits() - first) == ((8, 10) if from_models else (0, 0))


def test_models_cover_the_sizes_worth_one():
    # Two to sixteen members everywhere; one member where models are cloned (3.11), as a
    # PyDict_Copy costs about what a single insertion does.
    if messages_module._SHAPES:
        assert messages_module._SHAPE_KEYS == range(1 if messages_module._CLONES else 2, 17)


# --- message objects come from free lists ------------------------------------------------


def test_reused_message_objects_start_clean():
    # A freed message's memory is reused for the next of its type: nothing of the old one
    # may show through (payload, its tape, the envelope fields).
    with_all = b'{"jsonrpc":"2.0","id":"a","method":"m","params":{"x":[1,2]}}'
    bare = b'{"jsonrpc":"2.0","id":2,"method":"n"}'
    for _ in range(100):
        m = decode(with_all)
        assert not m.payload_built
        del m
        m = decode(bare)
        assert (m.id, m.method, m.params, m.payload_built) == (2, "n", None, True)
        error = decode(b'{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"e"}}')
        assert (error.has_data, error.data) == (False, None)
    kept = [decode(with_all) for _ in range(100)]  # more than a free list holds
    assert all(k.params == {"x": [1, 2]} for k in kept)
    assert len({id(k) for k in kept}) == 100


def test_subclasses_of_message_types_still_work():
    class Tagged(Request):
        tag = "t"

    for _ in range(50):
        t = Tagged(1, "m", {"a": 1})
        assert (t.id, t.method, t.params, t.tag) == (1, "m", {"a": 1}, "t")
        t.extra = [t]  # a cycle through the subclass's __dict__
        del t
    gc.collect()
    assert decode(b'{"jsonrpc":"2.0","id":1,"method":"m"}').method == "m"
