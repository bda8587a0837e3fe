"""Session core without an event loop: a FakeRuntime gives futures, tasks, timers and the
clock; no test here starts an asyncio loop."""

import asyncio
import math

import pytest

from fake_runtime import FakeRuntime
from jsonrpc_frames import cancelled, notification, request, response
from mcpfast.jsonrpc import (
    AsyncioRuntime,
    Connection,
    ConnectionClosed,
    ReplyChannel,
    RequestTimeout,
    Router,
    Runtime,
    Session,
)


def no_running_loop():
    with pytest.raises(RuntimeError):
        asyncio.get_running_loop()


def make(wire, **kwargs):
    runtime = FakeRuntime()
    router = Router()
    router.add_request_handler("echo", lambda p, ctx: p)
    gates = {}

    @router.request("wait")
    async def wait(params, ctx):
        gate = gates[ctx.request_id] = runtime.create_future()
        return await gate

    session = Session(wire, router=router, runtime=runtime, **kwargs)
    return session, runtime, gates


def test_the_contract_protocols_fit_a_session_and_the_runtimes(wire, make_channel):
    session, runtime, _ = make(wire)
    assert isinstance(session, Connection)
    assert isinstance(make_channel(), ReplyChannel)
    assert isinstance(runtime, Runtime)
    assert isinstance(AsyncioRuntime(), Runtime)
    assert session.runtime is runtime


def test_sync_handlers_need_no_loop_and_no_runtime_call(wire):
    no_running_loop()
    session = Session(wire, router=Router())
    session.router.add_request_handler("echo", lambda p, ctx: p)
    assert session.feed(request(1, "echo", {"a": 1})) is True
    assert wire.take() == [{"jsonrpc": "2.0", "id": 1, "result": {"a": 1}}]


def test_async_handler_runs_on_the_fake_runtime(wire):
    no_running_loop()
    session, runtime, gates = make(wire)
    assert session.feed(request(7, "wait")) is True
    runtime.run_ready()
    assert session.in_flight == 1 and wire.frames == []
    gates[7].set_result("released")
    runtime.run_ready()
    assert wire.take() == [{"jsonrpc": "2.0", "id": 7, "result": "released"}]
    assert session.in_flight == 0


def test_peer_cancellation_on_the_fake_runtime(wire):
    session, runtime, gates = make(wire)
    session.feed(request(1, "wait"))
    runtime.run_ready()
    session.feed(cancelled(1, "stop"))
    runtime.run_ready()
    assert gates[1].done() is False  # the handler was cancelled, not its gate
    assert session.in_flight == 0 and wire.frames == []


def test_outgoing_request_times_out_on_the_fake_clock(wire):
    session, runtime, _ = make(wire)
    out = session.send_request("slow/thing", {"x": 1}, timeout=5)
    (sent,) = wire.take()
    assert runtime.timers[0].when == runtime.now + 5
    runtime.advance(4.999)
    assert not out.done
    runtime.advance(0.001)
    assert out.done and session.pending == 0
    exc = out.future.exception()
    assert isinstance(exc, RequestTimeout) and exc.timeout == 5 and exc.request_id == sent["id"]
    assert wire.take() == [{"jsonrpc": "2.0", "method": "notifications/cancelled",
                            "params": {"requestId": sent["id"], "reason": "Request timed out"}}]
    assert runtime.timers == []  # nothing left to wake up for


def test_expiry_goes_in_deadline_order_with_one_timer(wire):
    session, runtime, _ = make(wire, request_timeout=10)
    late = session.send_request("late")  # the session's default: 10 s
    early = session.send_request("early", timeout=1)
    never = session.send_request("never", timeout=math.inf)
    wire.take()
    assert len(runtime.timers) == 1 and runtime.timers[0].when == runtime.now + 1
    runtime.advance(1)
    assert early.done and not late.done and not never.done
    assert [t.when for t in runtime.timers] == [runtime.now + 9]
    runtime.advance(9)
    assert late.done and isinstance(late.future.exception(), RequestTimeout)
    assert not never.done and runtime.timers == []
    session.feed(response(never.id, "whenever"))
    assert never.future.result() == "whenever"


def test_response_before_the_deadline_settles_and_the_timer_finds_nothing(wire):
    session, runtime, _ = make(wire)
    out = session.send_request("x", timeout=2)
    session.feed(response(out.id, [1, 2]))
    assert out.future.result() == [1, 2]
    runtime.advance(2)
    assert [m.get("method") for m in wire.messages()] == ["x"]  # no cancellation sent


def test_awaiting_a_request_inside_a_fake_task(wire):
    session, runtime, _ = make(wire)

    async def caller():
        return await session.request("ping", None, timeout=3)

    task = runtime.create_task(caller())
    runtime.run_ready()
    (sent,) = wire.take()
    session.feed(response(sent["id"], {}))
    runtime.run_ready()
    assert task.result() == {}


def test_close_fails_waiting_requests_and_stops_the_timer(wire):
    session, runtime, gates = make(wire)
    out = session.send_request("x", timeout=2)
    session.feed(request(1, "wait"))
    runtime.run_ready()
    session.close(ConnectionResetError("gone"))
    runtime.run_ready()
    assert isinstance(out.future.exception(), ConnectionClosed)
    assert runtime.timers == []
    runtime.advance(5)
    assert [m.get("method") for m in wire.messages()] == ["x"]


def test_notification_handler_task_on_the_fake_runtime(wire):
    session, runtime, _ = make(wire)
    seen = []

    async def on_note(params, ctx):
        await runtime.sleep(0)
        seen.append(params)

    session.router.add_notification_handler("note", on_note)
    assert session.feed(notification("note", {"n": 1})) is False
    runtime.run_ready()
    assert seen == [{"n": 1}]


def test_loop_argument_still_accepted_and_wrapped(wire):
    loop = asyncio.new_event_loop()
    try:
        session = Session(wire, loop=loop)
        assert isinstance(session.runtime, AsyncioRuntime) and session.runtime.loop is loop
        out = session.send_request("x", timeout=1)  # no running loop needed: it was given
        assert out.future.get_loop() is loop
        session.close()
        with pytest.raises(ConnectionClosed):
            out.future.result()
    finally:
        loop.close()


def test_runtime_and_loop_together_are_refused(wire):
    loop = asyncio.new_event_loop()
    try:
        with pytest.raises(TypeError, match="runtime= or loop="):
            Session(wire, runtime=FakeRuntime(), loop=loop)
    finally:
        loop.close()
    with pytest.raises(TypeError, match="runtime must have"):
        Session(wire, runtime=object())


def test_async_handler_without_any_loop_is_an_internal_error(wire, jsonrpc_logs):
    # The default runtime outside a running loop cannot start a task: the request is
    # answered (not lost) and the failure logged.
    no_running_loop()
    router = Router()

    @router.request("a")
    async def handler(params, ctx):
        return 1

    session = Session(wire, router=router)
    assert session.feed(request(3, "a")) is True
    assert wire.take() == [{"jsonrpc": "2.0", "id": 3,
                            "error": {"code": -32603, "message": "Internal error"}}]
    assert session.in_flight == 0
