"""Session: notifications/cancelled for incoming requests, and progress reporting."""

import asyncio

import pytest

from jsonrpc_frames import cancelled, frame, request
from loop import settle, until
from mcpfast.jsonrpc import ProgressClosed, Router, Session


class Blocking:
    """An async handler that blocks until released and records what happened to it."""

    def __init__(self):
        self.started = []
        self.cancelled = []
        self.finished = []
        self.contexts = {}
        self.release = None

    async def __call__(self, params, ctx):
        self.started.append(ctx.request_id)
        self.contexts[ctx.request_id] = ctx
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled.append((ctx.request_id, ctx.cancelled, ctx.cancel_reason))
            raise
        self.finished.append(ctx.request_id)
        return {"done": ctx.request_id}


def session_with(wire, uncancellable=frozenset(), **handlers):
    router = Router()
    for method, handler in handlers.items():
        router.add_request_handler(method.replace("__", "/"), handler)
    return Session(wire, router=router, uncancellable=uncancellable)


# -- cancellation ----------------------------------------------------------------------


def test_cancel_in_flight_async_handler_sends_no_response(wire):
    slow = Blocking()
    session = session_with(wire, tools__call=slow)

    async def main():
        slow.release = asyncio.Event()
        session.feed(request(1, "tools/call"))
        session.feed(request(2, "tools/call"))
        await settle()
        assert session.feed(cancelled(1, "user gave up")) is False
        await settle()
        assert slow.cancelled == [(1, True, "user gave up")]
        assert session.in_flight == 1
        slow.release.set()
        await until(lambda: wire.frames)
        await settle()

    asyncio.run(main())
    # Only request 2 is answered; request 1 gets nothing at all.
    assert wire.messages() == [{"jsonrpc": "2.0", "id": 2, "result": {"done": 2}}]
    assert slow.finished == [2]


def test_cancel_before_the_task_starts(wire):
    slow = Blocking()
    session = session_with(wire, m=slow)

    async def main():
        slow.release = asyncio.Event()
        slow.release.set()
        # Same loop turn: the handler task has not run yet when the cancellation comes.
        session.feed(request(1, "m"))
        session.feed(cancelled(1))
        await settle()

    asyncio.run(main())
    assert slow.started == []  # the handler never ran
    assert wire.frames == []
    assert session.in_flight == 0


def test_handler_swallowing_cancellation_still_gets_no_response(wire):
    router = Router()

    @router.request("stubborn")
    async def stubborn(params, ctx):
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            return {"ignored": "cancellation"}

    session = Session(wire, router=router)

    async def main():
        session.feed(request(1, "stubborn"))
        await settle()
        session.feed(cancelled(1))
        await settle()

    asyncio.run(main())
    assert wire.frames == []


def test_cancel_unknown_id_is_ignored(wire, jsonrpc_logs):
    slow = Blocking()
    session = session_with(wire, m=slow)

    async def main():
        slow.release = asyncio.Event()
        session.feed(request(1, "m"))
        await settle()
        for bad in (cancelled(99), cancelled("1"), cancelled(None),
                    frame({"jsonrpc": "2.0", "method": "notifications/cancelled"}),
                    frame({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": [1]}}),
                    frame({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": True}})):
            assert session.feed(bad) is False
        await settle()
        assert slow.cancelled == []
        slow.release.set()
        await until(lambda: wire.frames)

    asyncio.run(main())
    assert wire.messages() == [{"jsonrpc": "2.0", "id": 1, "result": {"done": 1}}]
    assert any("unknown request id 99" in r.getMessage() for r in jsonrpc_logs.records)


def test_cancel_completed_sync_request_is_ignored(wire):
    session = session_with(wire, m=lambda p, ctx: 1)
    session.feed(request(1, "m"))
    session.feed(cancelled(1))
    assert wire.messages() == [{"jsonrpc": "2.0", "id": 1, "result": 1}]


def test_initialize_is_never_cancelled(wire):
    # The MCP layers pass {"initialize"}: the specification forbids cancelling it.
    slow = Blocking()
    session = session_with(wire, initialize=slow, uncancellable={"initialize"})

    async def main():
        slow.release = asyncio.Event()
        session.feed(request(0, "initialize", {}))
        await settle()
        session.feed(cancelled(0, "please"))
        await settle()
        assert slow.cancelled == []
        assert slow.contexts[0].cancelled is False
        slow.release.set()
        await until(lambda: wire.frames)

    asyncio.run(main())
    assert wire.messages() == [{"jsonrpc": "2.0", "id": 0, "result": {"done": 0}}]


def test_unmatched_cancellation_reaches_a_registered_handler(wire):
    seen = []
    router = Router()
    router.add_notification_handler("notifications/cancelled", lambda p, ctx: seen.append(p))
    slow = Blocking()
    router.add_request_handler("m", slow)
    session = Session(wire, router=router)

    async def main():
        slow.release = asyncio.Event()
        session.feed(request(1, "m"))
        await settle()
        session.feed(cancelled(1))  # consumed by the session
        session.feed(cancelled(42, "listen stream over"))  # not ours: handed on
        await settle()

    asyncio.run(main())
    assert seen == [{"requestId": 42, "reason": "listen stream over"}]
    assert slow.cancelled == [(1, True, None)]


def test_same_id_can_be_reused_after_cancellation(wire):
    slow = Blocking()
    session = session_with(wire, m=slow)

    async def main():
        slow.release = asyncio.Event()
        session.feed(request(1, "m"))
        await settle()
        session.feed(cancelled(1))
        session.feed(request(1, "m"))  # the peer reuses the id at once
        await settle()
        slow.release.set()
        await until(lambda: wire.frames)
        await settle()

    asyncio.run(main())
    assert wire.messages() == [{"jsonrpc": "2.0", "id": 1, "result": {"done": 1}}]


# -- progress --------------------------------------------------------------------------


def progress_request(id, token, params=None):
    params = dict(params or {})
    params["_meta"] = {"progressToken": token}
    return request(id, "work", params)


def test_progress_reporter_sends_strictly_increasing_notifications(wire):
    outcomes = []

    def work(params, ctx):
        assert ctx.progress is not None and ctx.progress.token == "tok"
        ctx.progress.report(1, total=10)
        ctx.progress.report(2.5, message="half way")
        for bad in (2.5, 2, -1):
            with pytest.raises(ValueError):
                ctx.progress.report(bad)
        assert ctx.progress.last == 2.5
        ctx.progress.report(10, total=10, message="done")
        outcomes.append(ctx.report_progress(11))
        return {}

    session_with(wire, work=work).feed(progress_request(1, "tok"))
    assert wire.messages() == [
        {"jsonrpc": "2.0", "method": "notifications/progress",
         "params": {"progressToken": "tok", "progress": 1, "total": 10}},
        {"jsonrpc": "2.0", "method": "notifications/progress",
         "params": {"progressToken": "tok", "progress": 2.5, "message": "half way"}},
        {"jsonrpc": "2.0", "method": "notifications/progress",
         "params": {"progressToken": "tok", "progress": 10, "total": 10, "message": "done"}},
        {"jsonrpc": "2.0", "method": "notifications/progress",
         "params": {"progressToken": "tok", "progress": 11}},
        {"jsonrpc": "2.0", "id": 1, "result": {}},
    ]
    assert outcomes == [True]


def test_progress_value_error_propagates_to_handler_and_nothing_is_sent(wire):
    def work(params, ctx):
        ctx.progress.report(5)
        ctx.progress.report(5)  # not increasing: raises out of the handler
        return "unreachable"

    session_with(wire, work=work).feed(progress_request(1, 7))
    msgs = wire.messages()
    assert msgs[0]["params"] == {"progressToken": 7, "progress": 5}
    assert len(msgs) == 2
    assert msgs[1] == {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "Internal error"}}


@pytest.mark.parametrize(
    "args, exc",
    [
        (("1",), TypeError),
        ((True,), TypeError),
        ((None,), TypeError),
        ((float("nan"),), ValueError),
        ((float("inf"),), ValueError),
        ((1, "10"), TypeError),
        ((1, float("nan")), ValueError),
        ((1, None, 5), TypeError),
    ],
)
def test_progress_argument_checks(wire, args, exc):
    raised = []

    def work(params, ctx):
        try:
            ctx.progress.report(*args)
        except Exception as e:  # noqa: BLE001 - recorded for the assertion
            raised.append(type(e))
        return {}

    session_with(wire, work=work).feed(progress_request(1, "t"))
    assert raised == [exc]
    assert wire.messages() == [{"jsonrpc": "2.0", "id": 1, "result": {}}]


def test_no_progress_token_means_no_reporter(wire):
    seen = []

    def work(params, ctx):
        seen.append(ctx.progress)
        seen.append(ctx.report_progress(1))
        return {}

    session = session_with(wire, work=work)
    session.feed(request(1, "work"))
    session.feed(request(2, "work", {"_meta": {}}))
    for bad_token in (None, True, 1.5, {"a": 1}, [1]):
        session.feed(progress_request(3, bad_token))
    assert seen == [None, False] * 7
    assert [m.get("id") for m in wire.messages()] == [1, 2, 3, 3, 3, 3, 3]


def test_progress_after_completion_is_refused(wire):
    kept = []

    def work(params, ctx):
        kept.append(ctx)
        return {}

    session_with(wire, work=work).feed(progress_request(1, "t"))
    ctx = kept[0]
    assert ctx.progress.closed
    with pytest.raises(ProgressClosed):
        ctx.progress.report(1)
    with pytest.raises(ProgressClosed):
        ctx.report_progress(1)
    assert len(wire.frames) == 1


def test_progress_from_async_handler_and_closing_after_cancel(wire):
    kept = []
    gate = {}

    async def work(params, ctx):
        kept.append(ctx)
        ctx.progress.report(1)
        await gate["e"].wait()
        ctx.progress.report(2)
        return "ok"

    session = session_with(wire, work=work)

    async def main():
        gate["e"] = asyncio.Event()
        session.feed(progress_request(1, "a"))
        session.feed(progress_request(2, "b"))
        await settle()
        session.feed(cancelled(2))
        await settle()
        gate["e"].set()
        await until(lambda: any("result" in m for m in wire.messages()))

    asyncio.run(main())
    msgs = wire.messages()
    assert msgs == [
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "a", "progress": 1}},
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "b", "progress": 1}},
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "a", "progress": 2}},
        {"jsonrpc": "2.0", "id": 1, "result": "ok"},
    ]
    assert kept[1].progress.closed  # the cancelled request's reporter is closed


def test_notifications_get_no_progress_reporter(wire):
    seen = []
    router = Router()
    router.add_notification_handler("n", lambda p, ctx: seen.append(ctx.progress))
    Session(wire, router=router).feed(
        frame({"jsonrpc": "2.0", "method": "n", "params": {"_meta": {"progressToken": 1}}})
    )
    assert seen == [None]


def test_ctx_notify_sends_a_notification(wire):
    def work(params, ctx):
        ctx.notify("notifications/message", {"level": "info", "data": "hello"})
        return {}

    session_with(wire, work=work).feed(request(1, "work"))
    assert wire.messages() == [
        {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hello"}},
        {"jsonrpc": "2.0", "id": 1, "result": {}},
    ]
