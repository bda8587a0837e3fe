"""Session: routing of incoming requests and notifications, errors on the wire."""

import asyncio
import inspect
import json
import logging
import types

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jsonrpc_frames import notification, request
from loop import until
from mcpfast._core.codec import DecodeError
from mcpfast._core.framing import LineFramer
from mcpfast.jsonrpc import (
    ConnectionClosed,
    InvalidParams,
    JSONRPCError,
    RequestContext,
    Router,
    Session,
)


def result(id, value):
    return {"jsonrpc": "2.0", "id": id, "result": value}


def error(id, code, message, **data):
    err = {"code": code, "message": message}
    if data:
        err["data"] = data["data"]
    return {"jsonrpc": "2.0", "id": id, "error": err}


# -- routing ---------------------------------------------------------------------------


def test_sync_handler_answers_before_feed_returns_without_a_loop(wire):
    seen = []
    router = Router()

    @router.request("tools/call")
    def call(params, ctx):
        seen.append((params, ctx.request_id, ctx.method))
        return {"content": [{"type": "text", "text": params["name"]}]}

    session = Session(wire, router=router)
    # No event loop exists here: a sync handler needs none (no task is created).
    assert session.feed(request(7, "tools/call", {"name": "x"})) is True
    assert wire.messages() == [result(7, {"content": [{"type": "text", "text": "x"}]})]
    assert seen == [({"name": "x"}, 7, "tools/call")]
    assert session.in_flight == 0


def test_sync_handler_creates_no_task(wire):
    router = Router()
    router.add_request_handler("ping", lambda params, ctx: {})
    session = Session(wire, router=router)

    async def main():
        before = asyncio.all_tasks()
        session.feed(request(1, "ping"))
        assert asyncio.all_tasks() == before
        assert wire.messages() == [result(1, {})]

    asyncio.run(main())


@pytest.mark.parametrize("value", [{}, [], None, 0, 1.5, "s", True, [1, {"a": None}], {"nested": {"x": [1]}}])
def test_any_json_result(wire, value):
    router = Router()
    router.add_request_handler("m", lambda params, ctx: value)
    Session(wire, router=router).feed(request("abc", "m"))
    assert wire.messages() == [result("abc", value)]


@pytest.mark.parametrize("params", [None, {}, {"a": 1}, [1, 2, 3], []])
def test_params_passed_as_decoded(wire, params):
    got = []
    router = Router()
    router.add_request_handler("m", lambda p, ctx: got.append(p) or "ok")
    Session(wire, router=router).feed(request(1, "m", params))
    assert got == [params]
    assert wire.messages() == [result(1, "ok")]


@pytest.mark.parametrize("make", [bytes, bytearray, memoryview, lambda b: b.decode()])
def test_frame_types(wire, make):
    router = Router()
    router.add_request_handler("m", lambda p, ctx: p)
    Session(wire, router=router).feed(make(request(1, "m", {"k": "v"})))
    assert wire.messages() == [result(1, {"k": "v"})]


def test_frames_from_the_line_framer(wire):
    router = Router()
    router.add_request_handler("m", lambda p, ctx: p["n"])
    session = Session(wire, router=router)
    framer = LineFramer()
    data = b"".join(request(i, "m", {"n": i}) + b"\n" for i in range(5))
    for f in framer.feed(data):
        session.feed(f)
    assert wire.messages() == [result(i, i) for i in range(5)]


def test_string_and_int_ids_kept(wire):
    router = Router()
    router.add_request_handler("m", lambda p, ctx: ctx.request_id)
    session = Session(wire, router=router)
    session.feed(request("1", "m"))
    session.feed(request(1, "m"))
    session.feed(request(-5, "m"))
    assert wire.messages() == [result("1", "1"), result(1, 1), result(-5, -5)]


def test_unknown_method(wire):
    session = Session(wire)
    assert session.feed(request(3, "tools/nope")) is True
    assert wire.messages() == [error(3, -32601, "Method not found", data={"method": "tools/nope"})]


def test_notification_is_not_routed_as_request(wire):
    router = Router()
    router.add_request_handler("m", lambda p, ctx: 1)
    session = Session(wire, router=router)
    assert session.feed(notification("m")) is False
    assert wire.frames == []


def test_request_is_not_routed_to_notification_handler(wire):
    router = Router()
    router.add_notification_handler("n", lambda p, ctx: None)
    Session(wire, router=router).feed(request(1, "n"))
    assert wire.messages()[0]["error"]["code"] == -32601


# -- handler errors --------------------------------------------------------------------


def test_handler_exception_is_internal_error_without_details(wire, jsonrpc_logs):
    def broken(params, ctx):
        raise RuntimeError("secret-detail-123 at /srv/app/config.py")

    router = Router()
    router.add_request_handler("tools/call", broken)
    Session(wire, router=router).feed(request(9, "tools/call", {}))
    assert wire.messages() == [error(9, -32603, "Internal error")]
    raw = wire.frames[0]
    for leak in (b"secret-detail", b"Traceback", b"RuntimeError", b".py", b"broken"):
        assert leak not in raw
    records = [r for r in jsonrpc_logs.records if r.exc_info]
    assert len(records) == 1
    assert records[0].levelno == logging.ERROR
    assert records[0].exc_info[0] is RuntimeError
    assert "tools/call" in records[0].getMessage()
    assert "secret-detail-123" in jsonrpc_logs.text  # the traceback is logged locally


def test_wrong_handler_signature_does_not_leak(wire, jsonrpc_logs):
    router = Router()
    router.add_request_handler("m", lambda: 1)  # takes no arguments
    Session(wire, router=router).feed(request(1, "m", {"a": 1}))
    assert wire.messages() == [error(1, -32603, "Internal error")]
    assert b"argument" not in wire.frames[0] and b"lambda" not in wire.frames[0]
    assert any(r.exc_info and r.exc_info[0] is TypeError for r in jsonrpc_logs.records)


def test_unencodable_result_is_internal_error(wire, jsonrpc_logs):
    router = Router()
    router.add_request_handler("m", lambda p, ctx: {"s": {1, 2}})
    session = Session(wire, router=router)
    session.feed(request(1, "m"))
    assert wire.messages() == [error(1, -32603, "Internal error")]
    assert any(r.exc_info for r in jsonrpc_logs.records)
    # The session goes on.
    router.add_request_handler("ok", lambda p, ctx: 1)
    session.feed(request(2, "ok"))
    assert wire.messages()[-1] == result(2, 1)


def test_jsonrpc_error_passthrough_with_data(wire, jsonrpc_logs):
    def handler(params, ctx):
        raise JSONRPCError(-32002, "Resource not found", {"uri": params["uri"]})

    router = Router()
    router.add_request_handler("resources/read", handler)
    Session(wire, router=router).feed(request(4, "resources/read", {"uri": "file:///a"}))
    assert wire.messages() == [error(4, -32002, "Resource not found", data={"uri": "file:///a"})]
    # Deliberate errors are not logged as failures.
    assert not [r for r in jsonrpc_logs.records if r.levelno >= logging.ERROR]


def test_jsonrpc_error_without_data_and_with_null_data(wire):
    router = Router()

    def no_data(params, ctx):
        raise JSONRPCError(-32010, "Rate limit exceeded")

    def null_data(params, ctx):
        raise JSONRPCError(-32010, "Rate limit exceeded", None)

    router.add_request_handler("a", no_data)
    router.add_request_handler("b", null_data)
    session = Session(wire, router=router)
    session.feed(request(1, "a"))
    session.feed(request(2, "b"))
    first, second = wire.messages()
    assert first == error(1, -32010, "Rate limit exceeded")
    assert "data" not in first["error"]
    assert second["error"] == {"code": -32010, "message": "Rate limit exceeded", "data": None}


def test_invalid_params_from_handler(wire):
    def handler(params, ctx):
        if not isinstance(params, dict) or "name" not in params:
            raise InvalidParams("Missing required argument: name")
        return {}

    router = Router()
    router.add_request_handler("prompts/get", handler)
    session = Session(wire, router=router)
    session.feed(request(1, "prompts/get", {}))
    session.feed(request(2, "prompts/get", ["positional"]))
    session.feed(request(3, "prompts/get", {"name": "x"}))
    assert wire.messages() == [
        error(1, -32602, "Missing required argument: name"),
        error(2, -32602, "Missing required argument: name"),
        result(3, {}),
    ]


def test_error_with_unencodable_data_falls_back(wire, jsonrpc_logs):
    def handler(params, ctx):
        raise JSONRPCError(-32000, "x", {"bad": object()})

    router = Router()
    router.add_request_handler("m", handler)
    Session(wire, router=router).feed(request(1, "m"))
    assert wire.messages() == [error(1, -32603, "Internal error")]
    assert any(r.levelno == logging.ERROR for r in jsonrpc_logs.records)


def test_base_exceptions_are_not_swallowed(wire):
    def handler(params, ctx):
        raise KeyboardInterrupt

    router = Router()
    router.add_request_handler("m", handler)
    with pytest.raises(KeyboardInterrupt):
        Session(wire, router=router).feed(request(1, "m"))


# -- decoding errors -------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw, code, id",
    [
        (b"{not json", -32700, None),
        (b"", -32700, None),
        (b'{"jsonrpc":"2.0","id":1,"method":', -32700, None),
        (b'{"jsonrpc":"1.0","id":5,"method":"m"}', -32600, 5),
        (b'{"jsonrpc":"2.0","id":"x7"}', -32600, "x7"),
        (b'{"jsonrpc":"2.0","id":{"a":1},"method":"m"}', -32600, None),
        (b'{"jsonrpc":"2.0","id":2,"method":5}', -32600, 2),
        (b'{"jsonrpc":"2.0","id":3,"method":"m","params":"str"}', -32600, 3),
        (b"42", -32600, None),
        (b"[]", -32600, None),
    ],
)
def test_decode_errors_answered(wire, raw, code, id):
    session = Session(wire)
    assert session.feed(raw) is True
    (msg,) = wire.messages()
    assert set(msg) == {"jsonrpc", "id", "error"}
    assert msg["id"] == id
    assert msg["error"]["code"] == code
    assert isinstance(msg["error"]["message"], str) and msg["error"]["message"]
    # Nothing broken: the next message is served.
    session.router.add_request_handler("ok", lambda p, ctx: True)
    session.feed(request(10, "ok"))
    assert wire.messages()[-1] == result(10, True)


def test_empty_batch_is_a_single_error_even_when_batches_are_allowed(wire):
    Session(wire, batches_allowed=True).feed(b"[]")
    (msg,) = wire.messages()
    assert msg["id"] is None and msg["error"]["code"] == -32600


# -- feed_error ------------------------------------------------------------------------


def test_feed_error_frame_too_large(wire):
    framer = LineFramer(max_frame_size=64)
    router = Router()
    router.add_request_handler("m", lambda p, ctx: "ok")
    session = Session(wire, router=router)
    data = b'{"big":"' + b"x" * 200 + b'"}\n' + request(1, "m") + b"\n"
    for item in framer.feed(data):
        if isinstance(item, Exception):
            assert session.feed_error(item) is True
        else:
            session.feed(item)
    too_large, ok = wire.messages()
    assert too_large["id"] is None
    assert too_large["error"]["code"] == -32012
    assert too_large["error"]["message"] == "Message too large"
    assert too_large["error"]["data"]["limit"] == 64
    assert too_large["error"]["data"]["size"] > 64
    assert ok == result(1, "ok")


def test_feed_error_decode_error_and_jsonrpc_error(wire):
    session = Session(wire)
    session.feed_error(DecodeError(-32600, "Invalid Request: whatever", 12))
    session.feed_error(JSONRPCError(-32600, "Body is not JSON-RPC", {"why": "x"}))
    session.feed_error(JSONRPCError(-32700, "Parse error"))
    assert wire.messages() == [
        error(12, -32600, "Invalid Request: whatever"),
        error(None, -32600, "Body is not JSON-RPC", data={"why": "x"}),
        error(None, -32700, "Parse error"),
    ]


def test_feed_error_refuses_other_exceptions(wire):
    with pytest.raises(TypeError):
        Session(wire).feed_error(ValueError("x"))
    assert wire.frames == []


# -- duplicate ids ---------------------------------------------------------------------


def test_request_id_in_progress_is_refused(wire):
    release = None
    router = Router()

    @router.request("slow")
    async def slow(params, ctx):
        await release.wait()
        return "done"

    session = Session(wire, router=router)

    async def main():
        nonlocal release
        release = asyncio.Event()
        session.feed(request(1, "slow"))
        await asyncio.sleep(0)
        session.feed(request(1, "slow"))
        (dup,) = wire.take()
        assert dup["id"] == 1 and dup["error"]["code"] == -32600
        release.set()
        await until(lambda: wire.frames)
        assert wire.take() == [result(1, "done")]
        # The id is free again.
        session.feed(request(1, "slow"))
        await until(lambda: wire.frames)
        assert wire.take() == [result(1, "done")]

    asyncio.run(main())


# -- async handlers --------------------------------------------------------------------


def test_async_handler_runs_as_task(wire):
    router = Router()
    gate = {}

    @router.request("tools/call")
    async def call(params, ctx):
        await gate["event"].wait()
        return {"n": params["n"]}

    session = Session(wire, router=router)

    async def main():
        gate["event"] = asyncio.Event()
        assert session.feed(request(1, "tools/call", {"n": 1})) is True
        assert wire.frames == []  # not answered inline
        assert session.in_flight == 1
        gate["event"].set()
        await until(lambda: wire.frames)
        assert wire.messages() == [result(1, {"n": 1})]
        assert session.in_flight == 0

    asyncio.run(main())


def test_async_handlers_complete_out_of_order(wire):
    router = Router()
    events = {}

    @router.request("wait")
    async def wait(params, ctx):
        await events[params["k"]].wait()
        return params["k"]

    session = Session(wire, router=router)

    async def main():
        for k in "abc":
            events[k] = asyncio.Event()
            session.feed(request(k, "wait", {"k": k}))
        for k in "cab":
            events[k].set()
            await until(lambda k=k: len(wire.frames) == "cab".index(k) + 1)
        assert wire.messages() == [result("c", "c"), result("a", "a"), result("b", "b")]

    asyncio.run(main())


def test_async_handler_errors(wire, jsonrpc_logs):
    router = Router()

    @router.request("fail")
    async def fail(params, ctx):
        await asyncio.sleep(0)
        raise ValueError("hidden-internal-path")

    @router.request("refuse")
    async def refuse(params, ctx):
        raise InvalidParams("no", {"field": "x"})

    @router.request("wrong")
    async def wrong():
        return 1

    session = Session(wire, router=router)

    async def main():
        session.feed(request(1, "fail"))
        session.feed(request(2, "refuse"))
        session.feed(request(3, "wrong", {}))
        await until(lambda: len(wire.frames) == 3)

    asyncio.run(main())
    by_id = {m["id"]: m for m in wire.messages()}
    assert by_id[1] == error(1, -32603, "Internal error")
    assert by_id[2] == error(2, -32602, "no", data={"field": "x"})
    assert by_id[3] == error(3, -32603, "Internal error")
    assert b"hidden-internal-path" not in b"".join(wire.frames)
    logged = {r.exc_info[0] for r in jsonrpc_logs.records if r.exc_info}
    assert logged == {ValueError, TypeError}


def test_sync_handler_returning_awaitable_runs_as_task(wire):
    router = Router()

    async def compute(n):
        await asyncio.sleep(0)
        return n * 2

    router.add_request_handler("m", lambda p, ctx: compute(p["n"]))
    session = Session(wire, router=router)

    async def main():
        session.feed(request(1, "m", {"n": 21}))
        assert wire.frames == []
        await until(lambda: wire.frames)
        assert wire.messages() == [result(1, 42)]

    asyncio.run(main())


class _Answer:
    """Awaitable by its type (an ``__await__``)."""

    answer = "custom"

    def __await__(self):
        return (yield from asyncio.sleep(0, self.answer).__await__())


class _AnswerToo(_Answer):
    answer = "subclass"


class _NotAwaitable:
    pass


@types.coroutine
def _generator_coroutine():
    return (yield from asyncio.sleep(0, "generator-coroutine"))


def _plain_generator():
    yield 1


async def _coroutine():
    return "coroutine"


# What a sync handler may return: awaitable by its type, by its code (a generator marked
# with types.coroutine, a plain generator of the same type is not), or not at all.
_RETURNED = {"coroutine": _coroutine, "custom": _Answer, "subclass": _AnswerToo,
             "generator-coroutine": _generator_coroutine, "generator": _plain_generator,
             "object": _NotAwaitable}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(sorted(_RETURNED)), min_size=1, max_size=12))
def test_what_a_sync_handler_returns_is_awaited_when_inspect_says_awaitable(kinds):
    """The request path remembers the last awaitable type it saw (SessionCore): in any
    order of returns, a value is awaited exactly when inspect.isawaitable says so."""
    frames = []
    router = Router()
    made = []

    def handler(params, ctx):
        made.append(_RETURNED[params["kind"]]())
        return made[-1]

    router.add_request_handler("m", handler)
    session = Session(frames.append, router=router)

    inline = []

    async def main():
        for number, kind in enumerate(kinds):
            session.feed(request(number, "m", {"kind": kind}))
            # Answered before feed returns: not awaited (an awaited one runs as a task).
            inline.append(len(frames) == number + 1)
            await until(lambda count=number + 1: len(frames) == count)

    logging.disable(logging.ERROR)  # the refused encodes are logged with their tracebacks
    try:
        asyncio.run(main())
    finally:
        logging.disable(logging.NOTSET)
    for number, (kind, value, frame) in enumerate(zip(kinds, made, frames)):
        answer = json.loads(frame)
        assert inline[number] is not inspect.isawaitable(value), kind
        if inspect.isawaitable(value):
            assert answer == result(number, kind), kind
        else:
            # Not awaited: encoded as it is, which such a value cannot be.
            assert answer["error"]["code"] == -32603, kind


def test_sync_handler_returning_future(wire):
    router = Router()
    futures = []

    def handler(params, ctx):
        fut = asyncio.get_running_loop().create_future()
        futures.append(fut)
        return fut

    router.add_request_handler("m", handler)
    session = Session(wire, router=router)

    async def main():
        session.feed(request(1, "m"))
        await asyncio.sleep(0)
        futures[0].set_result({"ok": True})
        await until(lambda: wire.frames)
        assert wire.messages() == [result(1, {"ok": True})]

    asyncio.run(main())


def test_async_handler_without_loop_is_internal_error(wire, jsonrpc_logs):
    router = Router()

    async def handler(params, ctx):
        return 1

    router.add_request_handler("m", handler)
    with _no_warnings():
        Session(wire, router=router).feed(request(1, "m"))
    assert wire.messages() == [error(1, -32603, "Internal error")]
    assert any(r.exc_info and r.exc_info[0] is RuntimeError for r in jsonrpc_logs.records)


class _no_warnings:
    """Fail on any warning (a 'coroutine was never awaited' one in particular)."""

    def __enter__(self):
        import warnings

        self._catch = warnings.catch_warnings()
        self._catch.__enter__()
        warnings.simplefilter("error")

    def __exit__(self, *exc):
        import gc

        gc.collect()
        return self._catch.__exit__(*exc)


def test_sync_handler_returning_coroutine_without_loop_is_closed(wire, jsonrpc_logs):
    async def compute():
        return 1

    router = Router()
    router.add_request_handler("m", lambda p, ctx: compute())
    with _no_warnings():
        Session(wire, router=router).feed(request(1, "m"))
    assert wire.messages() == [error(1, -32603, "Internal error")]


def test_locally_cancelled_handler_still_answers(wire, jsonrpc_logs):
    router = Router()

    @router.request("m")
    async def handler(params, ctx):
        raise asyncio.CancelledError()

    session = Session(wire, router=router)

    async def main():
        session.feed(request(1, "m"))
        await until(lambda: wire.frames)

    asyncio.run(main())
    assert wire.messages() == [error(1, -32603, "Request cancelled")]


# -- context ---------------------------------------------------------------------------


def test_context_fields(wire):
    seen = {}
    router = Router()

    @router.request("m")
    def handler(params, ctx):
        seen.update(
            session=ctx.session, id=ctx.request_id, method=ctx.method, params=ctx.params,
            meta=ctx.meta, progress=ctx.progress, cancelled=ctx.cancelled,
            is_notification=ctx.is_notification,
        )
        return None

    session = Session(wire, router=router)
    params = {"a": 1, "_meta": {"traceId": "t"}}
    session.feed(request(5, "m", params))
    assert seen == {
        "session": session, "id": 5, "method": "m", "params": params,
        "meta": {"traceId": "t"}, "progress": None, "cancelled": False,
        "is_notification": False,
    }
    session.feed(request(6, "m", [1]))
    assert seen["meta"] == {}
    session.feed(request(7, "m", {"_meta": "not an object"}))
    assert seen["meta"] == {}


def test_context_factory_and_before_dispatch(wire):
    class McpContext(RequestContext):
        __slots__ = ("protocol_version",)

        def __init__(self, session, request_id, method, params, channel=None):
            super().__init__(session, request_id, method, params, channel)
            self.protocol_version = None

    state = {"initialized": False}
    dispatched = []

    def before_dispatch(ctx):
        dispatched.append((ctx.method, ctx.request_id))
        if not state["initialized"] and ctx.method not in ("initialize", "ping"):
            raise JSONRPCError(-32005, "Server not initialized")
        ctx.protocol_version = "2025-06-18"

    router = Router()
    router.add_request_handler("initialize", lambda p, ctx: state.update(initialized=True) or {})
    router.add_request_handler("tools/list", lambda p, ctx: {"v": ctx.protocol_version})
    router.add_request_handler("ping", lambda p, ctx: {})
    notes = []
    router.add_notification_handler("notifications/x", lambda p, ctx: notes.append(ctx.protocol_version))
    session = Session(wire, router=router, context_factory=McpContext, before_dispatch=before_dispatch)

    session.feed(request(1, "tools/list"))
    session.feed(request(2, "unknown"))
    session.feed(notification("notifications/x"))
    session.feed(request(3, "ping"))
    session.feed(request(4, "initialize", {}))
    session.feed(request(5, "tools/list"))
    session.feed(notification("notifications/x"))
    assert wire.messages() == [
        error(1, -32005, "Server not initialized"),
        error(2, -32005, "Server not initialized"),
        result(3, {}),
        result(4, {}),
        result(5, {"v": "2025-06-18"}),
    ]
    assert notes == ["2025-06-18"]  # the first was dropped by the hook
    assert dispatched == [
        ("tools/list", 1), ("unknown", 2), ("notifications/x", None), ("ping", 3),
        ("initialize", 4), ("tools/list", 5), ("notifications/x", None),
    ]


def test_before_dispatch_failure_is_internal_error(wire, jsonrpc_logs):
    def hook(ctx):
        raise LookupError("hook-bug")

    Session(wire, before_dispatch=hook).feed(request(1, "m"))
    assert wire.messages() == [error(1, -32603, "Internal error")]
    assert b"hook-bug" not in wire.frames[0]


def test_failing_context_factory_is_internal_error(wire, jsonrpc_logs):
    def factory(session, request_id, method, params, channel):
        raise RuntimeError("factory-bug")

    router = Router()
    router.add_request_handler("m", lambda p, ctx: 1)
    router.add_notification_handler("n", lambda p, ctx: None)
    session = Session(wire, router=router, context_factory=factory)
    session.feed(request(1, "m"))
    session.feed(notification("n"))
    assert wire.messages() == [error(1, -32603, "Internal error")]
    logged = [r for r in jsonrpc_logs.records if r.exc_info]
    assert [str(r.exc_info[1]) for r in logged] == ["factory-bug", "factory-bug"]


# -- notifications ---------------------------------------------------------------------


def test_notification_handlers_sync_and_async(wire):
    got = []
    router = Router()
    router.add_notification_handler("notifications/initialized", lambda p, ctx: got.append(("sync", p, ctx.request_id)))

    @router.notification("notifications/roots/list_changed")
    async def changed(params, ctx):
        await asyncio.sleep(0)
        got.append(("async", params))

    session = Session(wire, router=router)

    async def main():
        assert session.feed(notification("notifications/initialized", {"a": 1})) is False
        assert got == [("sync", {"a": 1}, None)]
        assert session.feed(notification("notifications/roots/list_changed")) is False
        await until(lambda: len(got) == 2)

    asyncio.run(main())
    assert got[1] == ("async", None)
    assert wire.frames == []


def test_notification_errors_are_logged_never_answered(wire, jsonrpc_logs):
    router = Router()

    def broken(params, ctx):
        raise RuntimeError("boom")

    async def broken_async(params, ctx):
        raise RuntimeError("boom async")

    def refused(params, ctx):
        raise InvalidParams("nope")

    router.add_notification_handler("a", broken)
    router.add_notification_handler("b", broken_async)
    router.add_notification_handler("c", refused)
    session = Session(wire, router=router)

    async def main():
        session.feed(notification("a"))
        session.feed(notification("b"))
        session.feed(notification("c"))
        session.feed(notification("unknown/method"))
        await until(lambda: not session._tasks)

    asyncio.run(main())
    assert wire.frames == []
    failures = [r for r in jsonrpc_logs.records if r.exc_info]
    assert sorted(str(r.exc_info[1]) for r in failures) == ["boom", "boom async"]
    assert any("unknown/method" in r.getMessage() for r in jsonrpc_logs.records)


# -- feed after close ------------------------------------------------------------------


def test_feed_after_close_raises(wire):
    session = Session(wire)
    session.close()
    session.close()  # idempotent
    assert session.closed
    with pytest.raises(ConnectionClosed):
        session.feed(request(1, "m"))
    with pytest.raises(ConnectionClosed):
        session.feed_error(JSONRPCError(-32600, "x"))
    with pytest.raises(ConnectionClosed):
        session.notify("notifications/x")
    assert wire.frames == []


def test_session_arguments_checked(wire):
    with pytest.raises(TypeError):
        Session("not callable")
    with pytest.raises(TypeError):
        Session(wire, router={"m": print})
    with pytest.raises(ValueError):
        Session(wire, request_timeout=0)
    with pytest.raises(TypeError):
        Session(wire, request_timeout="5")


def test_feed_message_takes_what_the_transport_decoded(wire):
    from mcpfast._core.codec import decode

    router = Router()
    router.add_request_handler("echo", lambda params, ctx: params)
    noted = []
    router.add_notification_handler("notifications/x", lambda params, ctx: noted.append(params))
    session = Session(wire, router=router)
    session.allow_batches(True)
    assert session.feed_message(decode(request(1, "echo", {"a": 1}))) is True
    assert session.feed_message(decode(notification("notifications/x", {"b": 2}))) is False
    batch = b"[" + request(2, "echo", [3]) + b"," + request(3, "nope") + b"]"
    assert session.feed_message(decode(batch)) is True
    assert wire.messages()[0] == result(1, {"a": 1})
    assert wire.messages()[1] == [result(2, [3]), error(3, -32601, "Method not found",
                                                        data={"method": "nope"})]
    assert noted == [{"b": 2}]
    session.close()
    with pytest.raises(ConnectionClosed):
        session.feed_message(decode(request(4, "echo")))


def test_feed_request_takes_a_decoded_request_alone(wire, make_channel):
    from mcpfast._core.codec import decode

    router = Router()
    router.add_request_handler("echo", lambda params, ctx: params)
    session = Session(wire, router=router)
    assert session.idle and session.is_idle()
    assert session.feed_request(decode(request(1, "echo", {"a": 1}))) is None
    channel = make_channel()
    session.feed_request(decode(request(2, "nope")), channel)
    assert wire.messages() == [result(1, {"a": 1})]
    assert channel.response_messages() == [error(2, -32601, "Method not found",
                                                 data={"method": "nope"})]
    assert session.idle and session.is_idle()
    session.close()
    assert not session.idle and not session.is_idle()
    with pytest.raises(ConnectionClosed):
        session.feed_request(decode(request(3, "echo")))
    assert wire.messages() == [result(1, {"a": 1})]  # nothing more


def test_a_handler_run_inline_that_raises_cancelled_error_is_answered(wire):
    router = Router()

    def give_up(params, ctx):
        raise asyncio.CancelledError()

    router.add_request_handler("give_up", give_up)
    router.add_request_handler("echo", lambda params, ctx: params)
    session = Session(wire, router=router)
    assert session.feed(request(1, "give_up")) is True
    assert session.feed(request(2, "echo", {"x": 1})) is True
    assert wire.messages() == [error(1, -32603, "Request cancelled"), result(2, {"x": 1})]
    assert session.in_flight == 0


def test_an_inline_answer_finishes_its_context_and_detaches_its_channel(wire, make_channel):
    # The session finishes an inline-answered request itself where the context keeps
    # RequestContext.finish (no progress reporter), and calls finish where its class has
    # its own or a reporter is to close: the channel is detached either way.
    finished = []
    made = []

    class Counting(RequestContext):
        __slots__ = ()

        def finish(self):
            finished.append(self.request_id)
            return super().finish()

    def plain(session, request_id, method, params, channel=None):
        ctx = RequestContext(session, request_id, method, params, channel)
        made.append(ctx)
        return ctx

    def counting(session, request_id, method, params, channel=None):
        ctx = Counting(session, request_id, method, params, channel)
        made.append(ctx)
        return ctx

    router = Router()
    router.add_request_handler("m", lambda params, ctx: {"ok": True})
    router.add_request_handler("bad", lambda params, ctx: 1 / 0)
    for factory in (plain, counting):
        session = Session(wire, router=router, context_factory=factory)
        channel = make_channel()
        session.feed(request(1, "m"), channel)
        session.feed(request(2, "bad"), channel)
        session.feed(request(3, "m", {"_meta": {"progressToken": "p"}}), channel)
        assert all(ctx._channel is None for ctx in made) and len(made) == 3
        assert all(ctx.progress is None or ctx.progress.closed for ctx in made)
        made.clear()
    assert finished == [1, 2, 3]


def test_a_context_of_any_class_and_a_route_of_any_class_are_served(wire, make_channel):
    # context_factory may be any callable returning an object with the context's fields,
    # and the router's dict may hold any object with a handler and is_async: the
    # compiled request path reads them by attribute when they are not its own classes.
    class Loose:
        def __init__(self, session, request_id, method, params, channel=None):
            self.request_id = request_id
            self.shape_result = lambda result: {"shaped": result}
            self.progress = None
            self._channel = channel
            self.finished = False

        def finish(self):
            self.finished = True
            channel, self._channel = self._channel, None
            return channel

    class LooseRoute:
        is_async = False

        @staticmethod
        def handler(params, ctx):
            return params["x"]

    made = []

    def factory(*args):
        made.append(Loose(*args))
        return made[-1]

    session = Session(wire, context_factory=factory)
    session.router.requests["m"] = LooseRoute()
    channel = make_channel()
    session.feed(request(1, "m", {"x": 7}), channel)
    assert channel.response_messages() == [{"jsonrpc": "2.0", "id": 1, "result": {"shaped": 7}}]
    assert made[0].finished and made[0]._channel is None


def test_a_hook_set_after_construction_runs(wire):
    # before_dispatch and context_factory are read per request (the server's connection
    # changes its checks while serving).
    seen = []
    router = Router()
    router.add_request_handler("m", lambda params, ctx: ctx.request_id)
    session = Session(wire, router=router)
    session.feed(request(1, "m"))
    session.before_dispatch = lambda ctx: seen.append(ctx.method)
    session.feed(request(2, "m"))
    session.before_dispatch = None
    session.feed(request(3, "m"))
    assert seen == ["m"]
    assert wire.messages() == [result(1, 1), result(2, 2), result(3, 3)]


def test_an_extension_shaper_appends_its_members_while_the_response_is_encoded(wire):
    # A context's shape_result that is an Extension (mcpfast._core.encode) is applied by
    # the encoder itself: the same bytes as the shaped copy, or its ``otherwise`` for a
    # value it does not extend.
    from mcpfast._core.encode import Extension

    otherwise_got = []

    def otherwise(value):
        otherwise_got.append(value)
        return {"other": value}

    extension = Extension({"resultType": "complete", "_meta": {"k": [1, 2]}}, otherwise)

    def factory(*args):
        ctx = RequestContext(*args)
        ctx.shape_result = extension
        return ctx

    results = {"a": {"x": 1}, "b": {}, "c": {"resultType": "other"}, "d": [1], "e": "s"}
    router = Router()
    for name in results:
        router.add_request_handler(name, lambda params, ctx: results[ctx.method])
    session = Session(wire, router=router, context_factory=factory)
    for i, name in enumerate(results):
        session.feed(request(i, name))
    assert wire.messages() == [
        result(0, {"x": 1, "resultType": "complete", "_meta": {"k": [1, 2]}}),
        result(1, {"resultType": "complete", "_meta": {"k": [1, 2]}}),
        result(2, {"other": {"resultType": "other"}}),
        result(3, {"other": [1]}),
        result(4, {"other": "s"}),
    ]
    assert otherwise_got == [{"resultType": "other"}, [1], "s"]
    # The handler's dict is left as it was.
    assert results["a"] == {"x": 1} and results["b"] == {}


@pytest.mark.parametrize("meta, request_id, made", [
    ({"progressToken": "t"}, 1, True),
    ({"progressToken": 0}, "r", True),
    ({"progressToken": True}, 1, False),
    ({"progressToken": 1.5}, 1, False),
    ({"progressToken": None}, 1, False),
    ({"progressToken": "t"}, None, False),
    ({"other": 1}, 1, False),
])
def test_a_context_has_a_progress_reporter_only_for_a_valid_token_of_a_request(
        wire, meta, request_id, made):
    from mcpfast.jsonrpc.progress import ProgressReporter, reporter_for

    session = Session(wire)
    reporter = reporter_for(meta, request_id, session, None)
    ctx = RequestContext(session, request_id, "m", {"_meta": meta})
    assert (type(reporter) is ProgressReporter) is made
    assert (type(ctx.progress) is ProgressReporter) is made
    if made:
        assert ctx.progress.token == meta["progressToken"]
