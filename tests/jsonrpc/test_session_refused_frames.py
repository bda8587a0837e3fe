"""Valid JSON the decoder refuses: the request is answered by its id, the response fails
the call it answers; anything unreadable stays a parse error with id null."""

from __future__ import annotations

import pytest

from fake_runtime import FakeRuntime
from mcpfast.jsonrpc import JSONRPCError, Router, Session
from mcpfast.jsonrpc.errors import INVALID_PARAMS, PARSE_ERROR

BIG_INT = b"123456789012345678901234567890"
REFUSED_VALUES = [BIG_INT, b'"\\ud800"', b"1e999", b"-" + BIG_INT]


def echo_session(wire, **options):
    router = Router()
    router.add_request_handler("echo", lambda params, ctx: params)
    return Session(wire, router=router, **options)


@pytest.mark.parametrize("value", REFUSED_VALUES)
def test_request_with_an_undecodable_value_is_answered_by_its_id(wire, value):
    session = echo_session(wire)
    frame = b'{"jsonrpc":"2.0","id":"q1","method":"echo","params":{"n":' + value + b"}}"
    assert session.feed(frame) is True
    (reply,) = wire.take()
    assert reply["id"] == "q1"
    error = reply["error"]
    assert error["code"] == INVALID_PARAMS
    assert error["data"]["method"] == "echo" and error["data"]["reason"]
    assert "cannot be decoded" in error["message"]
    # The session goes on.
    assert session.feed(b'{"jsonrpc":"2.0","id":2,"method":"echo","params":[1]}') is True
    assert wire.take() == [{"jsonrpc": "2.0", "id": 2, "result": [1]}]


def test_integer_reason_is_named(wire):
    session = echo_session(wire)
    session.feed(b'{"jsonrpc":"2.0","id":5,"method":"echo","params":[' + BIG_INT + b"]}")
    (reply,) = wire.take()
    assert "64 bits" in reply["error"]["data"]["reason"]


@pytest.mark.parametrize("frame", [
    b'{"jsonrpc":"2.0","id":' + BIG_INT + b',"method":"echo"}',  # the id itself is refused
    b'{"jsonrpc":"2.0","id":1,"method":"echo","params":[1,]}',  # not JSON at all
    b'[{"jsonrpc":"2.0","id":1,"method":"echo","params":[' + BIG_INT + b"]}]",  # a batch
    b'{"jsonrpc":"2.0","id":1,"method":"echo","params":"\xff"}',  # invalid UTF-8
    b'{"jsonrpc":"1.0","id":1,"method":"echo","params":[' + BIG_INT + b"]}",
])
def test_unreadable_frames_stay_parse_errors_with_id_null(wire, frame):
    session = echo_session(wire)
    assert session.feed(frame) is True
    (reply,) = wire.take()
    assert reply["id"] is None and reply["error"]["code"] in (PARSE_ERROR, -32600)


def test_notification_with_an_undecodable_value_is_dropped(wire):
    session = echo_session(wire)
    assert session.feed(b'{"jsonrpc":"2.0","method":"echo","params":[' + BIG_INT + b"]}") is False
    assert wire.take() == []


def test_response_with_an_undecodable_value_fails_the_call_at_once(wire):
    runtime = FakeRuntime()
    session = echo_session(wire, runtime=runtime)
    out = session.send_request("tools/call", {"name": "n"}, timeout=60)
    other = session.send_request("tools/call", {"name": "m"}, timeout=60)
    wire.take()
    frame = b'{"jsonrpc":"2.0","id":' + str(out.id).encode() + b',"result":{"n":' + BIG_INT + b"}}"
    assert session.feed(frame) is False
    runtime.run_ready()
    assert out.future.done() and not other.future.done()
    exc = out.future.exception()
    assert isinstance(exc, JSONRPCError) and exc.code == PARSE_ERROR
    assert "tools/call" in str(exc) and "64 bits" in str(exc)
    assert wire.take() == []  # nothing is owed to the peer for a response


@pytest.mark.parametrize("frame", [
    b'{"jsonrpc":"2.0","id":"\\ud800","method":"echo","params":[' + BIG_INT + b"]}",
    b'{"jsonrpc":"2.0","id":1,"method":"\\udc00","params":[' + BIG_INT + b"]}",
])
def test_envelopes_that_cannot_be_written_back_stay_parse_errors(wire, frame):
    session = echo_session(wire)
    assert session.feed(frame) is True
    (reply,) = wire.take()
    assert reply["id"] is None and reply["error"]["code"] == PARSE_ERROR
