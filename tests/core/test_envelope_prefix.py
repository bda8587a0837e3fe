"""Reading the id and kind of an oversize line from its first bytes."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from mcpfast._core.envelope_prefix import read_prefix

BIG = "x" * 2000


def line(*members: tuple[str, object]) -> bytes:
    return ("{" + ",".join(f"{json.dumps(k)}:{json.dumps(v)}" for k, v in members) + "}").encode()


def test_request_with_its_id_before_params():
    data = line(("jsonrpc", "2.0"), ("id", 7), ("method", "tools/call"), ("params", {"a": BIG}))
    assert read_prefix(data[:1024]) == ("request", 7)


def test_request_without_method_before_params_is_still_a_request():
    data = line(("id", "abc"), ("params", [BIG]), ("method", "x"))
    assert read_prefix(data[:1024]) == ("request", "abc")


def test_response_with_result_or_error():
    assert read_prefix(line(("jsonrpc", "2.0"), ("id", 3), ("result", {"t": BIG}))[:1024]) == (
        "response", 3)
    assert read_prefix(line(("id", "e"), ("error", {"code": 1, "message": BIG}))[:1024]) == (
        "response", "e")


def test_no_id_before_the_large_member():
    assert read_prefix(line(("jsonrpc", "2.0"), ("method", "m"), ("params", [BIG]), ("id", 1))[:1024]) == (
        None, None)


def test_ids_that_are_not_request_ids_are_ignored():
    for bad in (True, None, 1.5, [1], {"a": 1}):
        assert read_prefix(line(("id", bad), ("method", "m"), ("params", [BIG]))[:1024])[1] is None


def test_a_number_cut_by_the_end_of_the_prefix_is_not_taken():
    data = b'{"jsonrpc":"2.0","id":123456'
    assert read_prefix(data) == (None, None)
    assert read_prefix(data + b"789,") == (None, 123456789)


def test_garbage_and_non_objects():
    for data in (b"", b"[1,2]", b"not json", b'{"id":', b"\xff\xfe{", b'{"id" 1}', b"{1:2}"):
        assert read_prefix(data) == (None, None)


def test_whitespace_and_escapes():
    data = b' { "id" : "a\\"b" , "method" : "m\\u00e9" , "params" : [' + BIG.encode()
    assert read_prefix(data) == ("request", 'a"b')


ids = st.one_of(st.integers(min_value=-(2**63), max_value=2**63 - 1), st.text(max_size=40))


@given(ids, st.integers(min_value=0, max_value=200), st.booleans())
def test_a_cut_prefix_never_yields_a_wrong_id(request_id, cut, response):
    last = ("result", {"v": BIG}) if response else ("params", {"v": BIG})
    data = line(("jsonrpc", "2.0"), ("id", request_id), *([] if response else [("method", "m")]), last)
    kind, found = read_prefix(data[:cut])
    assert found is None or found == request_id
    if found is not None:
        assert kind in (None, "response" if response else "request")
