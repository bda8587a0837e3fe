"""messages.Verbatim: a decoded message's payload written where it stands, from its tape
while unbuilt (the gateway's results passed through as bytes) -- the same bytes as the
built payload, under another id, at any depth, for every kind of message."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpfast._core.codec import Verbatim as CodecVerbatim
from mcpfast._core.decode import decode
from mcpfast._core.encode import MAX_DEPTH, EncodeError, dumps, encode_response
from mcpfast._core.messages import ErrorResponse, Request, Response, Verbatim

UNICODE = {"content": [{"type": "text", "text": "é ünïcödé \u2028 😀 \x00 \" \\ \n 漢字"}], "isError": False}
NESTED = {"a": [[[{"b": [1, -2, 1.5, 18446744073709551615, -9223372036854775808, None, True]}]]],
          "c": {"d": {"e": {"f": "g"}}}, "empty": [{}, [], ""]}
LARGE = {"content": [{"type": "text", "text": "x" * 200_000 + "é" * 5_000}],
         "structuredContent": {"items": list(range(20_000))}}


def upstream(result, id=7):
    """A decoded Response, as a client reads an upstream's answer (payload unbuilt)."""
    message = decode(encode_response(id, result))
    assert type(message) is Response and not message.payload_built
    return message


@pytest.mark.parametrize("result", [UNICODE, NESTED, LARGE, 5, "s", None, [], {}],
                         ids=["unicode", "nested", "large", "int", "str", "null", "list", "dict"])
def test_a_result_passes_under_another_id_byte_identical_and_unbuilt(result):
    message = upstream(result)
    passed = encode_response("downstream-1", Verbatim(message))
    assert passed == encode_response("downstream-1", result)
    assert not message.payload_built  # written from the tape: no Python objects built
    assert encode_response(99, Verbatim(message)) == encode_response(99, result)


def test_a_view_copied_by_the_next_decode_still_passes():
    message = upstream(NESTED)
    decode(encode_response(1, {"other": ["document"] * 50}))  # copies the view first
    assert not message.payload_built
    assert encode_response(2, Verbatim(message)) == encode_response(2, NESTED)


def test_a_built_payload_gives_the_same_bytes():
    message = upstream(UNICODE)
    passed = Verbatim(message)
    assert passed.value == UNICODE  # builds it
    assert message.payload_built
    assert passed.message is message
    assert encode_response(3, passed) == encode_response(3, UNICODE)
    # A message made in Python (an in-process upstream's) too.
    assert encode_response(3, Verbatim(Response(1, NESTED))) == encode_response(3, NESTED)


def test_it_stands_anywhere_a_value_does():
    message = upstream(NESTED)
    assert dumps({"wrapped": [Verbatim(message)]}) == dumps({"wrapped": [NESTED]})
    assert dumps(Verbatim(message)) == dumps(NESTED)
    assert not message.payload_built


def test_the_payload_of_each_kind_of_message():
    request = decode(b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":["\\u00e9"]}}')
    assert dumps(Verbatim(request)) == '{"x":["é"]}'.encode()
    error = decode(b'{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":[1,{"a":2}]}}')
    assert dumps(Verbatim(error)) == b'[1,{"a":2}]'
    # No payload: null.
    assert dumps(Verbatim(ErrorResponse(1, 1, "m"))) == b"null"
    assert dumps(Verbatim(Request(1, "ping"))) == b"null"


def test_nesting_is_counted_from_where_it_stands():
    deep = [[]]
    for _ in range(MAX_DEPTH - 3):
        deep = [deep]
    message = upstream(deep)
    assert encode_response(1, Verbatim(message)) == encode_response(1, deep)
    with pytest.raises(EncodeError) as info:
        dumps([[Verbatim(message)]])
    assert "nesting deeper" in info.value.message
    assert not message.payload_built


def test_only_messages_are_wrapped():
    with pytest.raises(TypeError):
        Verbatim({"a": 1})  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Verbatim(None)  # type: ignore[arg-type]
    assert CodecVerbatim is Verbatim
    assert repr(Verbatim(Response(1, 2))) == "Verbatim(Response(id=1, result=2))"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=30)


@settings(max_examples=300)
@given(json_values, st.one_of(st.integers(0, 2**63 - 1), st.text(max_size=10)))
def test_any_result_passes_as_building_and_encoding_it_would(result, id):
    message = upstream(result)
    assert encode_response(id, Verbatim(message)) == encode_response(id, result)
    assert not message.payload_built
