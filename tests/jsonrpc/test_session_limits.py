"""Session limits and oversize frames: the in-flight cap (issue 11, defect 3) and
FrameTooLarge with the id and kind the framer read (issue 11, defect 1)."""

import asyncio

import pytest

from fake_runtime import FakeRuntime
from jsonrpc_frames import cancelled, error_response, request, response
from mcpfast._core.framing import FrameTooLarge, LineFramer
from mcpfast.jsonrpc import (
    DEFAULT_MAX_IN_FLIGHT,
    MESSAGE_TOO_LARGE,
    RATE_LIMITED,
    JSONRPCError,
    MessageTooLarge,
    RequestTimeout,
    Router,
    Session,
    error_from_response,
)


def slow_session(wire, **kwargs):
    runtime = FakeRuntime()
    router = Router()
    gates = {}

    @router.request("slow")
    async def slow(params, ctx):
        gate = gates[ctx.request_id] = runtime.create_future()
        return await gate

    router.add_request_handler("ping", lambda p, ctx: {})
    return Session(wire, router=router, runtime=runtime, **kwargs), runtime, gates


# -- max_in_flight -----------------------------------------------------------------------


def test_default_cap_is_safe_and_reported():
    assert DEFAULT_MAX_IN_FLIGHT == 10_000
    session = Session(lambda frame: None)
    assert session.max_in_flight == DEFAULT_MAX_IN_FLIGHT


def test_request_over_the_cap_is_answered_at_once_and_the_others_complete(wire):
    n = 5
    session, runtime, gates = slow_session(wire, max_in_flight=n)
    for i in range(n):
        assert session.feed(request(i, "slow")) is True
    runtime.run_ready()
    assert session.in_flight == n and wire.frames == []
    # The (N+1)th: answered before feed returns, its handler never started.
    assert session.feed(request("extra", "slow")) is True
    assert wire.take() == [{
        "jsonrpc": "2.0", "id": "extra",
        "error": {"code": RATE_LIMITED, "message": "Too many requests in progress",
                  "data": {"limit": n}},
    }]
    assert "extra" not in gates
    for i in range(n):
        gates[i].set_result(i * 10)
    runtime.run_ready()
    assert sorted(m["id"] for m in wire.messages()) == list(range(n))
    assert all(m["result"] == m["id"] * 10 for m in wire.messages())
    wire.take()
    # Slots free again: the next request runs.
    session.feed(request("later", "slow"))
    runtime.run_ready()
    gates["later"].set_result("ok")
    runtime.run_ready()
    assert wire.take() == [{"jsonrpc": "2.0", "id": "later", "result": "ok"}]


def test_cancelled_requests_free_their_slot(wire):
    session, runtime, gates = slow_session(wire, max_in_flight=1)
    session.feed(request(1, "slow"))
    runtime.run_ready()
    session.feed(cancelled(1))
    runtime.run_ready()
    session.feed(request(2, "slow"))
    runtime.run_ready()
    assert session.in_flight == 1 and 2 in gates and wire.frames == []


def test_at_the_cap_even_sync_requests_are_refused(wire):
    # The rule is simple to state: while max_in_flight requests run, every further
    # request gets RATE_LIMITED -- a peer flooding with cheap calls is bounded too.
    session, runtime, _ = slow_session(wire, max_in_flight=1)
    session.feed(request(1, "slow"))
    runtime.run_ready()
    session.feed(request(2, "ping"))
    (refused,) = wire.take()
    assert refused["id"] == 2 and refused["error"]["code"] == RATE_LIMITED


def test_notifications_and_responses_are_not_capped(wire):
    session, runtime, _ = slow_session(wire, max_in_flight=1)
    out = session.send_request("x")
    wire.take()
    session.feed(request(1, "slow"))
    runtime.run_ready()
    assert session.feed(response(out.id, "fine")) is False
    assert out.future.result() == "fine"
    assert wire.frames == []


def test_batch_elements_count_against_the_cap(wire):
    session, runtime, gates = slow_session(wire, max_in_flight=2, batches_allowed=True)
    batch = b"[" + b",".join(request(i, "slow") for i in range(3)) + b"]"
    assert session.feed(batch) is True
    runtime.run_ready()
    assert sorted(gates) == [0, 1]
    gates[0].set_result("a")
    gates[1].set_result("b")
    runtime.run_ready()
    (reply,) = wire.messages()
    assert sorted(map(str, (m["id"] for m in reply))) == ["0", "1", "2"]
    (over,) = [m for m in reply if m["id"] == 2]
    assert over["error"]["code"] == RATE_LIMITED


def test_no_cap_when_none(wire):
    session, runtime, gates = slow_session(wire, max_in_flight=None)
    for i in range(DEFAULT_MAX_IN_FLIGHT + 5):
        session.feed(request(i, "slow"))
    runtime.run_ready()
    assert session.in_flight == DEFAULT_MAX_IN_FLIGHT + 5 and wire.frames == []
    assert session.feed(request("one more", "ping")) is True
    assert wire.take() == [{"jsonrpc": "2.0", "id": "one more", "result": {}}]
    assert session.max_in_flight is None
    session.close()


@pytest.mark.parametrize("bad, error", [(0, ValueError), (-3, ValueError), (1.5, TypeError),
                                        ("10", TypeError), (True, TypeError)])
def test_bad_caps_are_refused(wire, bad, error):
    with pytest.raises(error, match="max_in_flight"):
        Session(wire, max_in_flight=bad)


# -- oversize frames: FrameTooLarge with request_id / kind ------------------------------


def too_large(limit=64, size=100, request_id=None, kind=None, set_attributes=True):
    exc = FrameTooLarge(limit, size)
    if set_attributes:
        exc.request_id = request_id
        exc.kind = kind
    return exc


def test_oversize_request_is_answered_with_its_id(wire):
    session = Session(wire)
    assert session.feed_error(too_large(request_id=41, kind="request")) is True
    assert session.feed_error(too_large(request_id="s-1", kind="request")) is True
    assert wire.take() == [
        {"jsonrpc": "2.0", "id": 41, "error": {"code": MESSAGE_TOO_LARGE,
                                               "message": "Message too large",
                                               "data": {"limit": 64, "size": 100}}},
        {"jsonrpc": "2.0", "id": "s-1", "error": {"code": MESSAGE_TOO_LARGE,
                                                  "message": "Message too large",
                                                  "data": {"limit": 64, "size": 100}}},
    ]


def test_oversize_request_reaches_its_channel_with_its_id(wire, make_channel):
    session = Session(wire)
    channel = make_channel()
    assert session.feed_error(too_large(request_id=5, kind="request"), channel) is True
    (reply,) = channel.response_messages()
    assert reply["id"] == 5 and reply["error"]["code"] == MESSAGE_TOO_LARGE
    assert wire.frames == []


@pytest.mark.parametrize("exc", [
    too_large(set_attributes=False),  # a framer that predates the attributes
    too_large(request_id=None, kind="request"),  # the id was not in the prefix read
    too_large(request_id=3, kind=None),  # id seen, kind unknown: could be either way
    too_large(request_id=True, kind="request"),  # not a request id
    too_large(request_id=1.5, kind="request"),
])
def test_oversize_frame_without_a_usable_id_is_answered_with_id_null(wire, exc):
    session = Session(wire)
    assert session.feed_error(exc) is True
    (reply,) = wire.messages()
    assert reply["id"] is None and reply["error"]["code"] == MESSAGE_TOO_LARGE
    assert reply["error"]["data"] == {"limit": 64, "size": 100}


def test_oversize_response_fails_the_waiting_request_at_once(wire):
    runtime = FakeRuntime()
    session = Session(wire, runtime=runtime)
    out = session.send_request("tools/call", {"name": "big"}, timeout=60)
    other = session.send_request("tools/call", {"name": "small"}, timeout=60)
    wire.take()
    assert session.feed_error(too_large(limit=1024, size=5000, request_id=out.id,
                                        kind="response")) is True
    # Failed at once, long before its own timeout.
    exc = out.future.exception()
    assert type(exc) is MessageTooLarge and isinstance(exc, JSONRPCError)
    assert exc.code == MESSAGE_TOO_LARGE and exc.limit == 1024 and exc.size == 5000
    assert "1024" in exc.message and "5000" in exc.message and "tools/call" in exc.message
    assert not other.done and session.pending == 1
    # The peer is told with id null: the id named our request, not one of the peer's.
    (reply,) = wire.take()
    assert reply["id"] is None and reply["error"]["code"] == MESSAGE_TOO_LARGE
    # A late duplicate of the response is dropped; the timer only serves `other` now.
    session.feed(response(out.id, "late"))
    runtime.advance(60)
    assert isinstance(other.future.exception(), RequestTimeout)


def test_oversize_response_fails_an_awaiting_caller(wire):
    session = Session(wire)

    async def main():
        task = asyncio.ensure_future(session.request("x", timeout=30))
        await asyncio.sleep(0)
        (sent,) = wire.take()
        session.feed_error(too_large(request_id=sent["id"], kind="response"))
        with pytest.raises(MessageTooLarge):
            await task

    asyncio.run(main())


def test_oversize_response_with_an_unknown_id_only_answers_id_null(wire, jsonrpc_logs):
    session = Session(wire)
    assert session.feed_error(too_large(request_id=999, kind="response")) is True
    (reply,) = wire.messages()
    assert reply["id"] is None
    assert session.pending == 0
    assert any("unknown request id 999" in r.getMessage() for r in jsonrpc_logs.records)


def test_real_framer_errors_are_accepted_with_or_without_the_new_attributes(wire):
    # Whatever the framer version: its FrameTooLarge goes straight to feed_error.
    framer = LineFramer(max_frame_size=64)
    session = Session(wire)
    line = b'{"jsonrpc":"2.0","id":12,"method":"m","params":{"pad":"' + b"x" * 200 + b'"}}\n'
    (item,) = framer.feed(line)
    assert isinstance(item, FrameTooLarge)
    assert session.feed_error(item) is True
    (reply,) = wire.messages()
    assert reply["error"]["code"] == MESSAGE_TOO_LARGE
    # With the prefix read (newer framers) the id is the request's, else null.
    expected = 12 if getattr(item, "kind", None) == "request" else None
    assert reply["id"] == expected


def test_peer_error_minus_32012_raises_message_too_large(wire):
    session = Session(wire, runtime=FakeRuntime())
    out = session.send_request("x")
    session.feed(error_response(out.id, MESSAGE_TOO_LARGE, "Message too large",
                                {"limit": 10, "size": 20}))
    exc = out.future.exception()
    assert type(exc) is MessageTooLarge and exc.limit == 10 and exc.size == 20
    assert type(error_from_response(MESSAGE_TOO_LARGE, "m")) is MessageTooLarge
    assert error_from_response(MESSAGE_TOO_LARGE, "m").limit is None


def test_message_too_large_pickles():
    import pickle

    exc = MessageTooLarge("too big", {"limit": 1, "size": 2})
    back = pickle.loads(pickle.dumps(exc))
    assert type(back) is MessageTooLarge and back.limit == 1 and back.size == 2

