"""Session: JSON-RPC batches -- refused unless allowed; one array of replies when served."""

import asyncio
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from loop import settle
from mcpfast.jsonrpc import Router, Session


def req(id, method, params=None):
    msg = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def note(method, params=None):
    msg = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def batch(*items):
    return json.dumps(list(items)).encode()


def make_session(wire, **kwargs):
    notes = []
    router = Router()
    router.add_request_handler("echo", lambda p, ctx: p)
    router.add_notification_handler("log", lambda p, ctx: notes.append(p))
    session = Session(wire, router=router, **kwargs)
    return session, notes


def test_batches_refused_by_default(wire):
    session, notes = make_session(wire)
    assert session.feed(batch(req(1, "echo", [1]), note("log", {"x": 1}))) is True
    assert wire.messages() == [
        {"jsonrpc": "2.0", "id": None,
         "error": {"code": -32600, "message": "Invalid Request: batches are not supported"}}
    ]
    assert notes == []  # nothing in a refused batch runs


def test_batch_served_when_allowed(wire):
    session, notes = make_session(wire, batches_allowed=True)
    assert session.feed(batch(req(1, "echo", {"a": 1}), note("log", [1]), req("two", "echo", [2]))) is True
    (array,) = wire.messages()
    assert array == [
        {"jsonrpc": "2.0", "id": 1, "result": {"a": 1}},
        {"jsonrpc": "2.0", "id": "two", "result": [2]},
    ]
    assert notes == [[1]]


def test_batches_allowed_can_be_switched_at_runtime(wire):
    session, _ = make_session(wire)
    session.feed(batch(req(1, "echo", [1])))
    session.allow_batches(True)  # what the MCP layer does after negotiating 2025-03-26
    session.feed(batch(req(2, "echo", [2])))
    session.allow_batches(False)
    session.feed(batch(req(3, "echo", [3])))
    first, second, third = wire.messages()
    assert first["error"]["code"] == -32600 and first["id"] is None
    assert second == [{"jsonrpc": "2.0", "id": 2, "result": [2]}]
    assert third["error"]["code"] == -32600


def test_all_notification_batch_gets_no_reply(wire):
    session, notes = make_session(wire, batches_allowed=True)
    assert session.feed(batch(note("log", [1]), note("log", [2]), note("unknown"))) is False
    assert wire.frames == []
    assert notes == [[1], [2]]


def test_mixed_batch_with_invalid_elements(wire):
    session, notes = make_session(wire, batches_allowed=True)
    raw = json.dumps([
        req(1, "echo", [1]),
        1,
        {"jsonrpc": "2.0"},
        note("log", {"n": 1}),
        {"jsonrpc": "2.0", "id": 9, "method": 5},
        req(2, "missing"),
        "text",
    ]).encode()
    assert session.feed(raw) is True
    (array,) = wire.messages()
    assert array[0] == {"jsonrpc": "2.0", "id": 1, "result": [1]}
    invalid = array[1:4]
    assert [m["error"]["code"] for m in invalid] == [-32600, -32600, -32600]
    assert [m["id"] for m in invalid] == [None, None, 9]
    assert array[4] == {"jsonrpc": "2.0", "id": 2,
                        "error": {"code": -32601, "message": "Method not found", "data": {"method": "missing"}}}
    assert array[5]["error"]["code"] == -32600 and array[5]["id"] is None
    assert len(array) == 6
    assert notes == [{"n": 1}]


def test_batch_of_only_invalid_elements(wire):
    session, _ = make_session(wire, batches_allowed=True)
    assert session.feed(b"[1,2,3]") is True
    (array,) = wire.messages()
    assert [m["error"]["code"] for m in array] == [-32600] * 3


def test_empty_batch_single_error(wire):
    session, _ = make_session(wire, batches_allowed=True)
    session.feed(b"[]")
    (msg,) = wire.messages()
    assert isinstance(msg, dict) and msg["id"] is None and msg["error"]["code"] == -32600


def test_batch_waits_for_async_handlers(wire):
    events = {}
    session, _ = make_session(wire, batches_allowed=True)

    @session.router.request("slow")
    async def slow(params, ctx):
        await events[params["k"]].wait()
        return params["k"]

    async def main():
        events["a"] = asyncio.Event()
        events["b"] = asyncio.Event()
        session.feed(batch(req(1, "slow", {"k": "a"}), req(2, "echo", [0]), req(3, "slow", {"k": "b"})))
        await settle()
        assert wire.frames == []  # not before every request is done
        events["b"].set()
        await settle()
        assert wire.frames == []
        events["a"].set()
        await settle()

    asyncio.run(main())
    (array,) = wire.messages()
    by_id = {m["id"]: m["result"] for m in array}
    assert by_id == {1: "a", 2: [0], 3: "b"}
    assert len(array) == 3


def test_cancelled_request_is_left_out_of_the_batch_reply(wire):
    session, _ = make_session(wire, batches_allowed=True)
    gate = {}

    @session.router.request("slow")
    async def slow(params, ctx):
        await gate["e"].wait()
        return "late"

    async def main():
        gate["e"] = asyncio.Event()
        session.feed(batch(req(1, "slow"), req(2, "echo", [2]), req(3, "slow")))
        await settle()
        session.feed(json.dumps(note("notifications/cancelled", {"requestId": 1})).encode())
        await settle()
        gate["e"].set()
        await settle()

    asyncio.run(main())
    (array,) = wire.messages()
    assert sorted(m["id"] for m in array) == [2, 3]


def test_batch_whose_requests_are_all_cancelled_sends_nothing(wire):
    session, _ = make_session(wire, batches_allowed=True)

    @session.router.request("slow")
    async def slow(params, ctx):
        await asyncio.Event().wait()

    async def main():
        assert session.feed(batch(req(1, "slow"), req(2, "slow"))) is True
        await settle()
        session.feed(batch(note("notifications/cancelled", {"requestId": 1}),
                           note("notifications/cancelled", {"requestId": 2})))
        await settle()

    asyncio.run(main())
    assert wire.frames == []


def test_cancellation_inside_the_same_batch(wire):
    session, _ = make_session(wire, batches_allowed=True)
    ran = []

    @session.router.request("slow")
    async def slow(params, ctx):
        ran.append(ctx.request_id)
        return "x"

    async def main():
        session.feed(batch(req(1, "slow"), note("notifications/cancelled", {"requestId": 1}), req(2, "echo", [2])))
        await settle()

    asyncio.run(main())
    assert ran == []
    assert wire.messages() == [[{"jsonrpc": "2.0", "id": 2, "result": [2]}]]


def test_duplicate_ids_in_one_batch(wire):
    session, _ = make_session(wire, batches_allowed=True)

    @session.router.request("slow")
    async def slow(params, ctx):
        await asyncio.sleep(0)
        return "ok"

    async def main():
        session.feed(batch(req(1, "slow"), req(1, "slow")))
        await settle()

    asyncio.run(main())
    (array,) = wire.messages()
    assert sorted(json.dumps(m, sort_keys=True) for m in array) == sorted([
        json.dumps({"jsonrpc": "2.0", "id": 1, "result": "ok"}, sort_keys=True),
        json.dumps({"jsonrpc": "2.0", "id": 1, "error": {
            "code": -32600, "message": "Request id 1 is already in use by a request in progress"}},
            sort_keys=True),
    ])


def test_responses_in_a_batch_resolve_requests(wire):
    session, _ = make_session(wire, batches_allowed=True)

    async def main():
        first = asyncio.ensure_future(session.request("a"))
        second = asyncio.ensure_future(session.request("b"))
        await settle()
        ids = [m["id"] for m in wire.take()]
        assert session.feed(batch(
            {"jsonrpc": "2.0", "id": ids[1], "result": "B"},
            {"jsonrpc": "2.0", "id": ids[0], "error": {"code": -32000, "message": "no A"}},
        )) is False
        assert await second == "B"
        try:
            await first
        except Exception as exc:  # noqa: BLE001 - checked below
            return exc

    exc = asyncio.run(main())
    assert exc.code == -32000 and exc.message == "no A"
    assert wire.frames == []


# A batch element: a request with a unique id, a notification, or an invalid value.
element = st.one_of(
    st.tuples(st.just("request"), st.one_of(st.integers(-(2**53), 2**53), st.text(max_size=5))),
    st.tuples(st.just("notification"), st.none()),
    # (integers beyond 64 bits make the whole frame a parse error: the codec refuses them)
    st.tuples(st.just("invalid"), st.one_of(st.integers(-(2**63), 2**63 - 1), st.text(max_size=3),
                                            st.none(), st.booleans())),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(element, min_size=1, max_size=30))
def test_batch_property_one_reply_per_request_or_invalid_element(items):
    sent = []
    router = Router()
    router.add_request_handler("echo", lambda p, ctx: p)
    router.add_notification_handler("log", lambda p, ctx: None)
    session = Session(sent.append, router=router, batches_allowed=True)
    payload, expected_ids, invalid = [], [], 0
    used = set()
    for kind, value in items:
        if kind == "request":
            if value in used:
                continue
            used.add(value)
            payload.append(req(value, "echo", [value]))
            expected_ids.append(value)
        elif kind == "notification":
            payload.append(note("log", {}))
        else:
            payload.append(value)
            invalid += 1
    if not payload:
        return
    owed = session.feed(json.dumps(payload).encode())
    assert owed == bool(expected_ids or invalid)
    if not owed:
        assert sent == []
        return
    (array,) = [json.loads(f) for f in sent]
    assert isinstance(array, list) and len(array) == len(expected_ids) + invalid
    results = [m for m in array if "result" in m]
    assert [m["id"] for m in results] == expected_ids
    assert all(m["result"] == [m["id"]] for m in results)
    errors = [m for m in array if "error" in m]
    assert len(errors) == invalid
    assert all(m["id"] is None and m["error"]["code"] == -32600 for m in errors)
