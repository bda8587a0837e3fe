"""Session: a request whose handler hands back a DrivenCall (the rest of its coroutine,
driven by its futures' callbacks, or a future and what settles it: driven_future) is
started, finished and refused by the compiled request path as a request run as a task
is: its answer, its errors, the peer's cancellation, the id and in-flight checks, a
batch, a reply channel."""

import asyncio
import contextvars

import pytest

from jsonrpc_frames import cancelled, frame, request, response
from loop import settle, until
from mcpfast.jsonrpc import JSONRPCError, Router, Session
from mcpfast.jsonrpc.driven import DrivenCall, driven_future
from mcpfast.jsonrpc.errors import INTERNAL_ERROR, INVALID_REQUEST, RATE_LIMITED


def driven_handler(body):
    """A sync handler returning a DrivenCall of ``body(params, ctx)`` after its first step
    (what the server pipeline's inline chain does)."""

    def handle(params, ctx):
        coroutine = body(params, ctx)
        context = contextvars.copy_context()
        try:
            yielded = context.run(coroutine.send, None)
        except StopIteration as stop:
            return stop.value
        return DrivenCall(coroutine, context, yielded)

    return handle


class Gates:
    """Futures the handlers wait on, by request id, and what each handler saw."""

    def __init__(self):
        self.futures = {}
        self.seen = []

    async def __call__(self, params, ctx):
        future = self.futures[ctx.request_id] = asyncio.get_running_loop().create_future()
        try:
            value = await future
        except asyncio.CancelledError as exc:
            self.seen.append(("cancelled", ctx.request_id, exc.args))
            raise
        if isinstance(value, BaseException):
            raise value
        return {"value": value}


    def settled(self, params, ctx):
        """The same handler with no coroutine: a future and what settles it."""
        future = self.futures[ctx.request_id] = asyncio.get_running_loop().create_future()
        return driven_future(future, self._settle, ctx.request_id)

    def _settle(self, future, request_id):
        try:
            value = future.result()
        except asyncio.CancelledError as exc:
            self.seen.append(("cancelled", request_id, exc.args))
            raise
        if isinstance(value, BaseException):
            raise value
        return {"value": value}


@pytest.fixture(params=["coroutine", "future"])
def kind(request):
    """How the handler's DrivenCall is made."""
    return request.param


def session_with(wire, gates, kind, **options):
    router = Router()
    router.add_request_handler("m", driven_handler(gates) if kind == "coroutine" else gates.settled)
    return Session(wire, router=router, **options)


def test_answered_or_failed_as_a_task_s_request_when_its_future_is(wire, kind):
    gates = Gates()
    session = session_with(wire, gates, kind)

    async def main():
        assert session.feed(request(1, "m")) is True
        assert session.in_flight == 1 and wire.frames == []
        gates.futures[1].set_result(7)
        await until(lambda: wire.frames)
        assert wire.take() == [{"jsonrpc": "2.0", "id": 1, "result": {"value": 7}}]
        assert session.in_flight == 0
        for request_id in (2, 3, 4):
            session.feed(request(request_id, "m"))
        gates.futures[2].set_result(JSONRPCError(-32001, "refused", {"why": "no"}))
        gates.futures[3].set_result(ValueError("secret"))
        gates.futures[4].set_result(object())  # a result that cannot be encoded
        await until(lambda: len(wire.frames) == 3)
        errors = {m["id"]: m["error"] for m in wire.take()}
        assert errors[2] == {"code": -32001, "message": "refused", "data": {"why": "no"}}
        assert errors[3] == errors[4] == {"code": INTERNAL_ERROR, "message": "Internal error"}
        assert session.in_flight == 0

    asyncio.run(main())


def test_cancelled_by_the_peer_gets_no_reply(wire, kind):
    gates = Gates()
    session = session_with(wire, gates, kind)

    async def main():
        session.feed(request(1, "m"))
        assert session.feed(cancelled(1, "gave up")) is False
        await settle()
        assert gates.seen == [("cancelled", 1, ("gave up",))]
        assert wire.frames == [] and session.in_flight == 0

    asyncio.run(main())


def test_id_in_use_and_in_flight_limit_refused_while_driven(wire, kind):
    gates = Gates()
    session = session_with(wire, gates, kind, max_in_flight=2)

    async def main():
        session.feed(request(1, "m"))
        session.feed(request(1, "m"))
        assert wire.take()[0]["error"]["code"] == INVALID_REQUEST
        session.feed(request(2, "m"))
        session.feed(request(3, "m"))
        refused = wire.take()[0]
        assert refused["id"] == 3 and refused["error"]["code"] == RATE_LIMITED
        assert refused["error"]["data"] == {"limit": 2}
        gates.futures[1].set_result(1)
        gates.futures[2].set_result(2)
        await until(lambda: len(wire.frames) == 2)
        assert sorted(m["id"] for m in wire.take()) == [1, 2]

    asyncio.run(main())


def test_a_batch_item_driven_joins_the_batch_reply(wire, kind):
    gates = Gates()
    session = session_with(wire, gates, kind, batches_allowed=True)

    async def main():
        session.feed(frame([{"jsonrpc": "2.0", "id": 1, "method": "m"},
                            {"jsonrpc": "2.0", "id": 2, "method": "nope"}]))
        assert wire.frames == []  # held for the driven item
        gates.futures[1].set_result(1)
        await until(lambda: wire.frames)
        replies = wire.take()[0]
        assert sorted(r["id"] for r in replies) == [1, 2]

    asyncio.run(main())


def test_a_reply_channel_gets_the_answer_and_none_when_closed(wire, make_channel, kind):
    gates = Gates()
    session = session_with(wire, gates, kind)

    async def main():
        answered, dropped = make_channel(), make_channel()
        session.feed(request(1, "m"), answered)
        session.feed(request(2, "m"), dropped)
        gates.futures[1].set_result(1)
        await until(lambda: answered.responses)
        assert answered.response_messages() == [{"jsonrpc": "2.0", "id": 1, "result": {"value": 1}}]
        session.close()
        await settle()
        assert dropped.responses == [None]
        assert wire.frames == []

    asyncio.run(main())


def test_responses_to_our_requests_resolve_their_futures(wire):
    session = Session(wire)

    async def main():
        plain = session.send_request("ask", {})
        raw = session.send_request("ask", {}, raw=True)
        assert session.feed(response(plain.id, {"a": 1})) is False
        assert session.feed(response(raw.id, [2])) is False
        assert await plain.future == {"a": 1}
        assert (await raw.future).result == [2]
        # An id no request of ours has: dropped.
        assert session.feed(response(99, 1)) is False
        assert session.pending == 0

    asyncio.run(main())
