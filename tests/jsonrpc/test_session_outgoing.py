"""Session: outgoing requests -- correlation, errors, timeouts, cancellation, close."""

import asyncio
import json
import logging
import math
import random

import pytest

from fake_runtime import FakeRuntime
from jsonrpc_frames import error_response, frame, response
from loop import settle
from mcpfast.jsonrpc import (
    ConnectionClosed,
    InvalidParams,
    JSONRPCError,
    MethodNotFound,
    RequestCancelled,
    RequestTimeout,
    Router,
    Session,
)


def start(coro):
    return asyncio.ensure_future(coro)


def test_request_resolves_with_result(wire):
    session = Session(wire)

    async def main():
        task = start(session.request("roots/list", {"a": 1}))
        await settle()
        (sent,) = wire.take()
        assert sent == {"jsonrpc": "2.0", "id": sent["id"], "method": "roots/list", "params": {"a": 1}}
        assert isinstance(sent["id"], int)
        assert session.pending == 1
        assert session.feed(response(sent["id"], {"roots": []})) is False
        assert await task == {"roots": []}
        assert session.pending == 0

    asyncio.run(main())
    assert wire.frames == []


def test_request_without_params_omits_them(wire):
    session = Session(wire)

    async def main():
        task = start(session.request("ping"))
        await settle()
        (sent,) = wire.take()
        assert "params" not in sent
        session.feed(response(sent["id"], {}))
        assert await task == {}

    asyncio.run(main())


def test_error_response_raises_with_code_message_data(wire):
    session = Session(wire)

    async def main():
        tasks = [start(session.request(m)) for m in ("a", "b", "c", "d")]
        await settle()
        ids = [m["id"] for m in wire.take()]
        session.feed(error_response(ids[0], -32002, "Resource not found", {"uri": "x"}))
        session.feed(error_response(ids[1], -32601, "Method not found"))
        session.feed(error_response(ids[2], -32602, "Invalid params"))
        session.feed(frame({"jsonrpc": "2.0", "id": ids[3],
                            "error": {"code": 5, "message": "m", "data": None}}))
        return await asyncio.gather(*tasks, return_exceptions=True)

    first, second, third, fourth = asyncio.run(main())
    assert type(first) is JSONRPCError
    assert (first.code, first.message, first.data, first.has_data) == (-32002, "Resource not found", {"uri": "x"}, True)
    assert type(second) is MethodNotFound and second.has_data is False
    assert type(third) is InvalidParams
    assert fourth.has_data is True and fourth.data is None


def test_unknown_id_responses_are_logged_and_dropped(wire, jsonrpc_logs):
    session = Session(wire)

    async def main():
        task = start(session.request("x"))
        await settle()
        (sent,) = wire.take()
        rid = sent["id"]
        for stray in (response(rid + 1000, 1), response(str(rid), 1), response(-1, 1),
                      error_response(rid + 1, -32000, "x"), response(2**62, 1), response("abc", 1)):
            assert session.feed(stray) is False
        assert not task.done()
        session.feed(response(rid, "right"))
        assert await task == "right"
        # A second response for the same id is unknown by now.
        session.feed(response(rid, "again"))

    asyncio.run(main())
    assert wire.frames == []
    dropped = [r for r in jsonrpc_logs.records if "unknown request id" in r.getMessage()]
    assert len(dropped) == 7
    assert all(r.levelno == logging.DEBUG for r in dropped)


def test_error_with_null_id_is_logged(wire, jsonrpc_logs):
    session = Session(wire)

    async def main():
        task = start(session.request("x"))
        await settle()
        session.feed(error_response(None, -32700, "Parse error"))
        assert not task.done()
        task.cancel()
        await settle()

    asyncio.run(main())
    assert any(r.levelno == logging.WARNING and "-32700" in r.getMessage() for r in jsonrpc_logs.records)


def test_many_concurrent_requests_correlate(wire):
    session = Session(wire)
    count = 500

    async def main():
        tasks = [start(session.request("double", {"n": i})) for i in range(count)]
        await settle()
        sent = wire.take()
        assert len(sent) == count
        assert len({m["id"] for m in sent}) == count  # unique ids
        random.Random(7).shuffle(sent)
        for m in sent:
            session.feed(response(m["id"], {"n": m["params"]["n"] * 2}))
        return await asyncio.gather(*tasks)

    results = asyncio.run(main())
    assert results == [{"n": i * 2} for i in range(count)]
    assert session.pending == 0


# Timeouts run on a fake clock (FakeRuntime): no test waits on, or races, a real timer.


def test_timeout_raises_and_tells_the_peer(wire):
    runtime = FakeRuntime()
    session = Session(wire, runtime=runtime)

    async def main():
        with pytest.raises(RequestTimeout) as info:
            await session.request("sampling/createMessage", {"m": 1}, timeout=0.01)
        return info.value

    task = runtime.create_task(main())
    runtime.advance(0.009)
    assert not task.done()
    runtime.advance(0.001)
    exc = task.result()
    assert exc.method == "sampling/createMessage" and exc.timeout == 0.01
    sent, cancel = wire.messages()
    assert exc.request_id == sent["id"]
    assert cancel == {"jsonrpc": "2.0", "method": "notifications/cancelled",
                      "params": {"requestId": sent["id"], "reason": "Request timed out"}}
    assert session.pending == 0


def test_session_default_timeout_and_infinite_override(wire):
    runtime = FakeRuntime()
    session = Session(wire, request_timeout=0.01, runtime=runtime)

    async def main():
        forever = runtime.create_task(session.request("wait", timeout=math.inf))
        with pytest.raises(RequestTimeout):
            await session.request("quick")
        assert not forever.done()
        (wait_id,) = [m["id"] for m in wire.take() if m.get("method") == "wait"]
        session.feed(response(wait_id, "late but fine"))
        assert await forever == "late but fine"

    task = runtime.create_task(main())
    runtime.advance(3600)
    task.result()


def test_response_after_timeout_is_dropped(wire, jsonrpc_logs):
    runtime = FakeRuntime()
    session = Session(wire, runtime=runtime)

    async def main():
        with pytest.raises(RequestTimeout):
            await session.request("x", timeout=0.01)
        rid = wire.messages()[0]["id"]
        session.feed(response(rid, "too late"))

    task = runtime.create_task(main())
    runtime.advance(0.01)
    task.result()
    assert any("unknown request id" in r.getMessage() for r in jsonrpc_logs.records)


def test_initialize_timeout_sends_no_cancellation(wire):
    # The MCP layers pass {"initialize"}: the specification forbids cancelling it.
    runtime = FakeRuntime()
    session = Session(wire, runtime=runtime, uncancellable={"initialize"})

    async def main():
        with pytest.raises(RequestTimeout):
            await session.request("initialize", {}, timeout=0.01)

    task = runtime.create_task(main())
    runtime.advance(0.01)
    task.result()
    assert [m.get("method") for m in wire.messages()] == ["initialize"]


def test_one_timer_serves_all_deadlines(wire):
    runtime = FakeRuntime()
    session = Session(wire, runtime=runtime)
    armed = runtime.armed  # the `when` of every call_at the session made

    slow = [runtime.create_task(session.request("a", timeout=30)) for _ in range(50)]
    runtime.run_ready()
    assert len(armed) == 1  # one timer for 50 requests
    quick = runtime.create_task(session.request("b", timeout=0.02))
    runtime.run_ready()
    assert len(armed) == 2  # re-armed for the earlier deadline
    runtime.advance(0.02)
    with pytest.raises(RequestTimeout):
        quick.result()
    # After it fired, the timer is re-armed for the next deadline only.
    assert len(armed) == 3 and armed[2] == armed[0]
    for task in slow:
        task.cancel()
    runtime.run_ready()
    assert session.pending == 0


def test_one_timer_serves_all_deadlines_on_the_asyncio_loop(wire):
    # The same with the default runtime: the session arms loop.call_at once for many
    # deadlines (nothing here waits for a timer to fire).
    session = Session(wire)
    armed = []

    async def main():
        loop = asyncio.get_running_loop()
        real_call_at = loop.call_at

        def counting_call_at(when, callback, *args, **kwargs):
            armed.append(when)
            return real_call_at(when, callback, *args, **kwargs)

        loop.call_at = counting_call_at
        try:
            slow = [start(session.request("a", timeout=30)) for _ in range(50)]
            await settle()
            assert len(armed) == 1
            for task in slow:
                task.cancel()
            await settle()
        finally:
            loop.call_at = real_call_at

    asyncio.run(main())
    assert session.pending == 0


def test_timer_rearms_after_the_earliest_request_completes(wire):
    runtime = FakeRuntime()
    session = Session(wire, runtime=runtime)

    async def main():
        first = runtime.create_task(session.request("first", timeout=0.01))
        second = runtime.create_task(session.request("second", timeout=0.05))
        await runtime.sleep(0)
        first_id = wire.messages()[0]["id"]
        session.feed(response(first_id, 1))
        assert await first == 1
        # The timer armed for `first` fires with nothing due and must re-arm for `second`.
        with pytest.raises(RequestTimeout):
            await second

    task = runtime.create_task(main())
    runtime.advance(0.01)
    assert not task.done()
    runtime.advance(0.04)
    task.result()


def test_cancelled_await_sends_notifications_cancelled(wire):
    session = Session(wire)

    async def main():
        task = start(session.request("tools/call", {"name": "x"}))
        plain = start(session.request("tools/call", {"name": "y"}))
        await settle()
        ids = [m["id"] for m in wire.take()]
        task.cancel("user pressed stop")
        plain.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        with pytest.raises(asyncio.CancelledError):
            await plain
        assert session.pending == 0
        # The response arriving afterwards is dropped.
        session.feed(response(ids[0], "ignored"))
        return ids

    ids = asyncio.run(main())
    assert wire.messages() == [
        {"jsonrpc": "2.0", "method": "notifications/cancelled",
         "params": {"requestId": ids[0], "reason": "user pressed stop"}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": ids[1]}},
    ]


def test_cancelled_initialize_is_not_announced(wire):
    session = Session(wire, uncancellable={"initialize"})

    async def main():
        task = start(session.request("initialize", {}))
        await settle()
        task.cancel()
        await settle()
        assert session.pending == 0

    asyncio.run(main())
    assert [m.get("method") for m in wire.messages()] == ["initialize"]


def test_cancel_after_response_arrived_sends_nothing(wire):
    session = Session(wire)

    async def main():
        task = start(session.request("x"))
        await settle()
        rid = wire.take()[0]["id"]
        session.feed(response(rid, "value"))
        task.cancel()  # the result is there but the task has not resumed yet
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert wire.frames == []


def test_outgoing_request_handle(wire):
    session = Session(wire)

    async def main():
        handle = session.send_request("elicitation/create", {"message": "?"})
        assert wire.messages()[0]["id"] == handle.id  # sent at once
        assert not handle.done
        assert handle.cancel("not needed any more") is True
        assert handle.done
        assert handle.cancel() is False  # already settled
        with pytest.raises(RequestCancelled) as info:
            await handle.wait()
        assert info.value.reason == "not needed any more" and info.value.request_id == handle.id

        quiet = session.send_request("x")
        assert quiet.cancel(notify=False) is True
        with pytest.raises(RequestCancelled):
            await quiet.future

        waited = session.send_request("y")
        waiter = start(waited.wait())
        await settle()
        waiter.cancel()
        await settle()
        return handle, waited

    handle, waited = asyncio.run(main())
    methods = [(m.get("method"), m.get("params")) for m in wire.messages()]
    assert methods == [
        ("elicitation/create", {"message": "?"}),
        ("notifications/cancelled", {"requestId": handle.id, "reason": "not needed any more"}),
        ("x", None),
        ("y", None),
        ("notifications/cancelled", {"requestId": waited.id}),
    ]


def test_close_fails_every_waiter(wire):
    session = Session(wire)

    async def main():
        tasks = [start(session.request("a", timeout=60)) for _ in range(10)]
        tasks.append(start(session.request("b")))
        await settle()
        cause = OSError("pipe broken")
        session.close(cause)
        results = await asyncio.gather(*tasks, return_exceptions=True)
        assert session.pending == 0
        with pytest.raises(ConnectionClosed):
            await session.request("after")
        with pytest.raises(ConnectionClosed):
            session.send_request("after")
        return results, cause

    results, cause = asyncio.run(main())
    assert all(type(r) is ConnectionClosed for r in results)
    assert all(r.__cause__ is cause for r in results)
    assert "pipe broken" in results[0].message
    assert len({id(r) for r in results}) == len(results)  # one exception object per waiter
    # Nothing is sent for requests failed by close (no cancellations to a closed peer).
    assert [m["method"] for m in wire.messages()] == ["a"] * 10 + ["b"]


def test_close_cancels_incoming_handlers_without_replies(wire):
    router = Router()
    cancelled = []

    @router.request("slow")
    async def slow(params, ctx):
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(ctx.request_id)
            raise

    @router.notification("n")
    async def n(params, ctx):
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append("notification")
            raise

    session = Session(wire, router=router)

    async def main():
        session.feed(frame({"jsonrpc": "2.0", "id": 1, "method": "slow"}))
        session.feed(frame({"jsonrpc": "2.0", "method": "n"}))
        await settle()
        session.feed(frame({"jsonrpc": "2.0", "id": 2, "method": "slow"}))  # not started yet
        session.close()
        await settle()

    asyncio.run(main())
    assert sorted(map(str, cancelled)) == ["1", "notification"]
    assert wire.frames == []
    assert session.in_flight == 0


def test_progress_callback_receives_peer_progress(wire):
    session = Session(wire)
    seen = []

    async def main():
        task = start(session.request("tools/call", {"name": "t", "_meta": {"trace": 1}},
                                     progress=lambda p, total, msg: seen.append((p, total, msg))))
        await settle()
        (sent,) = wire.take()
        rid = sent["id"]
        assert sent["params"] == {"name": "t", "_meta": {"trace": 1, "progressToken": rid}}

        def progress(**params):
            return frame({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})

        session.feed(progress(progressToken=rid, progress=1, total=3))
        session.feed(progress(progressToken=rid, progress=2.5, message="more"))
        session.feed(progress(progressToken=rid, progress="bad"))  # ignored
        session.feed(progress(progressToken=rid + 1, progress=9))  # not ours: ignored
        session.feed(response(rid, "done"))
        session.feed(progress(progressToken=rid, progress=3))  # after the response: ignored
        return await task

    assert asyncio.run(main()) == "done"
    assert seen == [(1, 3, None), (2.5, None, "more")]


def test_async_progress_callback_and_failures_logged(wire, jsonrpc_logs):
    session = Session(wire)
    seen = []

    async def on_progress(p, total, message):
        await asyncio.sleep(0)
        seen.append(p)
        if p == 2:
            raise RuntimeError("callback bug")

    def sync_bad(p, total, message):
        raise ValueError("sync callback bug")

    async def main():
        a = start(session.request("a", progress=on_progress))
        b = start(session.request("b", progress=sync_bad))
        await settle()
        ida, idb = [m["id"] for m in wire.take()]
        for token, value in ((ida, 1), (ida, 2), (idb, 1)):
            session.feed(frame({"jsonrpc": "2.0", "method": "notifications/progress",
                                "params": {"progressToken": token, "progress": value}}))
        await settle()
        session.feed(response(ida, "A"))
        session.feed(response(idb, "B"))
        return await a, await b

    assert asyncio.run(main()) == ("A", "B")
    assert seen == [1, 2]
    errors = sorted(str(r.exc_info[1]) for r in jsonrpc_logs.records if r.exc_info)
    assert errors == ["callback bug", "sync callback bug"]


def test_progress_requires_dict_params(wire):
    session = Session(wire)

    async def main():
        with pytest.raises(TypeError):
            await session.request("x", [1, 2], progress=lambda *a: None)
        with pytest.raises(TypeError):
            await session.request("x", {"_meta": 5}, progress=lambda *a: None)
        with pytest.raises(TypeError):
            await session.request("x", progress="not callable")
        with pytest.raises(ValueError):
            await session.request("x", timeout=-1)
        assert session.pending == 0

    asyncio.run(main())
    assert wire.frames == []


def test_unencodable_params_raise_before_anything_is_sent(wire):
    session = Session(wire)

    async def main():
        with pytest.raises(ValueError):
            await session.request("x", {"bad": {1, 2}})
        assert session.pending == 0

    asyncio.run(main())
    assert wire.frames == []


def test_send_failure_unregisters_the_request():
    def broken_send(frame):
        raise BrokenPipeError("gone")

    session = Session(broken_send)

    async def main():
        with pytest.raises(BrokenPipeError):
            await session.request("x", timeout=5, progress=lambda *a: None)
        assert session.pending == 0
        assert session.outgoing.listening == 0

    asyncio.run(main())


def test_response_delivered_reentrantly_from_send():
    # An in-memory transport may answer while send() is still running.
    holder = {}

    def loopback(frame):
        msg = json.loads(frame)
        if "method" in msg and "id" in msg:
            holder["session"].feed(response(msg["id"], {"echo": msg["method"]}))

    session = Session(loopback)
    holder["session"] = session

    async def main():
        return await session.request("hello")

    assert asyncio.run(main()) == {"echo": "hello"}


def test_notify(wire):
    session = Session(wire)
    session.notify("notifications/initialized")
    session.notify("notifications/message", {"level": "info", "data": [1]})
    assert wire.messages() == [
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": [1]}},
    ]


def test_handler_makes_a_request_to_the_peer(wire):
    """A server-side handler asking the client something (sampling) while it runs."""
    router = Router()

    @router.request("tools/call")
    async def call(params, ctx):
        answer = await ctx.request("sampling/createMessage", {"messages": []})
        return {"content": [{"type": "text", "text": answer["text"]}]}

    session = Session(wire, router=router)

    async def main():
        session.feed(frame({"jsonrpc": "2.0", "id": "c1", "method": "tools/call", "params": {}}))
        await settle()
        (sampling,) = wire.take()
        assert sampling["method"] == "sampling/createMessage"
        session.feed(response(sampling["id"], {"text": "hi"}))
        await settle()

    asyncio.run(main())
    assert wire.messages() == [
        {"jsonrpc": "2.0", "id": "c1", "result": {"content": [{"type": "text", "text": "hi"}]}}
    ]
