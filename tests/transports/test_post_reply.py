"""The compiled reply channel of one POST, the stateless legs' connections and the feeding
of a POST (mcpfast.transports.http.post_reply), with plain objects standing in for the
endpoint, the session and the connection: every rule checked without a server."""

from __future__ import annotations

import asyncio
from typing import Any, Optional

import pytest

from mcpfast._core.codec import decode
from mcpfast._core.encode import encode_error, encode_response
from mcpfast.transports.http import HTTPResponse
from mcpfast.transports.http.post_reply import (
    IDLE_CONNECTIONS,
    DeferredAnswer,
    ErrorStatuses,
    Leg,
    PostReply,
    bind_token,
    feed_leased,
    feed_post,
    single_lease,
    trace_context_of,
)


class Stream:
    """What PostReply needs of an SSE stream."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []
        self.attached = False
        self.finished = False

    def attach(self) -> None:
        self.attached = True

    def push(self, frame: bytes) -> None:
        self.frames.append(frame)

    def finish(self) -> None:
        self.finished = True


def reply(json_only: bool = False, headers: Optional[dict[str, str]] = None
          ) -> tuple[PostReply, list[bytes], list[Stream]]:
    side: list[bytes] = []
    streams: list[Stream] = []

    def new_stream() -> Stream:
        streams.append(Stream())
        return streams[-1]

    return PostReply(json_only, side.append, new_stream, headers), side, streams


# -- PostReply -------------------------------------------------------------------------


def test_a_response_first_is_a_json_answer():
    channel, side, streams = reply(headers={"mcp-method": "tools/call"})
    assert channel.outcome is None and channel.stream is None
    assert channel.headers == {"mcp-method": "tools/call"}
    channel.respond(b'{"jsonrpc":"2.0","id":1,"result":{}}')
    assert channel.outcome == ("json", b'{"jsonrpc":"2.0","id":1,"result":{}}')
    assert streams == [] and side == []
    assert repr(channel) == "<PostReply json>"


def test_a_related_message_first_makes_a_stream_that_ends_with_the_response():
    channel, side, streams = reply()
    channel.send(b"progress")
    assert channel.outcome == ("sse", None) and channel.stream is streams[0]
    assert streams[0].attached
    channel.send(b"more")
    channel.respond(b"response")
    assert streams[0].frames == [b"progress", b"more", b"response"] and streams[0].finished
    assert side == [] and repr(channel) == "<PostReply sse>"


def test_json_only_sends_related_messages_aside():
    channel, side, streams = reply(json_only=True)
    channel.send(b"progress")
    assert side == [b"progress"] and streams == [] and channel.outcome is None
    channel.respond(b"response")
    assert channel.outcome == ("json", b"response")


def test_no_response_on_a_stream_just_ends_it():
    channel, _, streams = reply()
    channel.to_stream()
    channel.respond(None)
    assert streams[0].frames == [] and streams[0].finished


def test_the_first_outcome_stays():
    channel, _, _ = reply()
    channel.respond(b"first")
    channel.respond(b"second")
    assert channel.outcome == ("json", b"first")


def test_wait_returns_once_answered():
    async def main() -> None:
        channel, _, _ = reply()
        waiting = asyncio.ensure_future(channel.wait(None))
        await asyncio.sleep(0)
        assert not waiting.done()
        channel.respond(b"late")
        await asyncio.wait_for(waiting, 1)
        assert channel.outcome == ("json", b"late")

    asyncio.run(main())


def test_a_long_wait_becomes_a_stream_unless_json_only():
    async def main() -> None:
        channel, _, streams = reply()
        await channel.wait(0.01)
        assert channel.outcome == ("sse", None) and streams[0].attached
        channel.respond(b"late")
        assert streams[0].frames == [b"late"] and streams[0].finished

        only, _, only_streams = reply(json_only=True)
        waiting = asyncio.ensure_future(only.wait(0.01))
        await asyncio.sleep(0.05)
        assert not waiting.done() and only_streams == []
        only.respond(b"late")
        await asyncio.wait_for(waiting, 1)
        assert only.outcome == ("json", b"late")

    asyncio.run(main())


def test_wait_when_answered_already_returns_at_once():
    async def main() -> None:
        channel, _, _ = reply()
        channel.respond(b"done")
        await asyncio.wait_for(channel.wait(None), 1)

    asyncio.run(main())


# -- Leg and Lease ---------------------------------------------------------------------


class Connection:
    """A connection with the contract's optional stateless methods."""

    def __init__(self, reusable: bool = True) -> None:
        self.reusable = reusable
        self.revived = 0
        self.recycled = 0
        self.closed = False

    def revive(self) -> None:
        self.revived += 1

    def recycle(self) -> bool:
        self.recycled += 1
        return self.reusable

    def close(self) -> None:
        self.closed = True


def test_a_leg_reuses_a_released_connection():
    made: list[Connection] = []
    leg = Leg(lambda: made.append(Connection()) or made[-1])
    first = leg.lease()
    assert made == [first.connection] and len(leg) == 0
    first.release()
    assert len(leg) == 1 and made[0].recycled == 1 and not made[0].closed
    again = leg.lease()
    assert again is first and made[0].revived == 1 and len(made) == 1
    # Two at once: a second connection.
    other = leg.lease()
    assert other.connection is not first.connection and len(made) == 2


def test_a_leases_connection_is_read_only():
    leg = Leg(Connection)
    lease = leg.lease()
    assert isinstance(lease.connection, Connection)
    with pytest.raises(AttributeError):
        lease.connection = Connection()  # type: ignore[misc]


def test_a_connection_that_cannot_serve_again_is_closed():
    leg = Leg(lambda: Connection(reusable=False))
    lease = leg.lease()
    lease.release()
    assert lease.connection.closed and len(leg) == 0


def test_a_connection_without_recycle_serves_once():
    class Plain:
        closed = False

        def close(self) -> None:
            self.closed = True

    leg = Leg(Plain)
    lease = leg.lease()
    lease.release()
    assert lease.connection.closed and len(leg) == 0


def test_idle_connections_are_bounded():
    leg = Leg(Connection)
    leases = [leg.lease() for _ in range(IDLE_CONNECTIONS + 3)]
    for lease in leases:
        lease.release()
    assert len(leg) == IDLE_CONNECTIONS
    assert sum(lease.connection.closed for lease in leases) == 3
    idle = leg.take_idle()
    assert len(idle) == IDLE_CONNECTIONS and len(leg) == 0
    assert all(isinstance(c, Connection) and not c.closed for c in idle)


def test_the_idle_connections_are_served_last_released_first_as_the_pool_shrinks_and_grows():
    leg = Leg(Connection)
    a, b, c = leg.lease(), leg.lease(), leg.lease()
    for lease in (a, b, c):
        lease.release()
    assert len(leg) == 3
    assert leg.lease() is c and leg.lease() is b and len(leg) == 1
    c.release()
    assert len(leg) == 2
    assert leg.lease() is c and leg.lease() is a and len(leg) == 0
    fresh = leg.lease()
    assert fresh not in (a, b, c)
    for lease in (a, fresh):
        lease.release()
    # What is idle is exactly what was released since, nothing left from before.
    assert leg.take_idle() == [a.connection, fresh.connection]
    assert len(leg) == 0 and leg.lease() not in (a, b, c, fresh)
    assert not any(lease.connection.closed for lease in (a, b, c, fresh))


def test_a_single_lease_closes_its_connection_when_released():
    connection = Connection()
    lease = single_lease(connection)
    lease.release()
    assert connection.closed and connection.recycled == 0


def test_close_closes():
    leg = Leg(Connection)
    lease = leg.lease()
    lease.close()
    assert lease.connection.closed and len(leg) == 0


# -- feed_post -------------------------------------------------------------------------


class Endpoint:
    """The endpoint methods feed_post falls back on, recording their calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def _new_lone_stream(self) -> Stream:
        return Stream()

    keepalive_interval = 15.0

    def _answer(self, session: Any, connection: Any, reply: Any, message: Any, admit: Any,
                lease: Any) -> str:
        self.calls.append(("answer", reply))
        return "answered"

    def _cancel(self, connection: Any, message: Any, reason: str) -> None:
        self.calls.append(("cancel", reason))


class Fed(Connection):
    """A connection answering what it is fed as told."""

    def __init__(self, behaviour: str) -> None:
        super().__init__()
        self.behaviour = behaviour
        self.fed: list[Any] = []

    def feed_message(self, message: Any, channel: PostReply) -> bool:
        self.fed.append((message, channel))
        if self.behaviour == "notification":
            return False
        if self.behaviour == "inline":
            channel.respond(b'{"jsonrpc":"2.0","id":1,"result":{}}')
        elif self.behaviour == "stream":
            channel.send(b"progress")
        elif self.behaviour == "raise":
            raise RuntimeError("broken")
        return True


def lease_of(connection: Connection) -> Any:
    leg = Leg(lambda: connection)
    return leg, leg.lease()


def test_a_request_answered_while_fed_is_a_json_response_and_the_lease_goes_back():
    endpoint = Endpoint()
    connection = Fed("inline")
    leg, lease = lease_of(connection)
    response = feed_post(endpoint, None, connection, "message", b"body", False, None, lease,
                         {"mcp-method": "tools/call"})
    assert isinstance(response, HTTPResponse) and response.status == 200
    assert response.headers == [("content-type", "application/json")]
    assert response.body == b'{"jsonrpc":"2.0","id":1,"result":{}}'
    assert connection.fed[0][0] == "message" and connection.fed[0][1].headers == {"mcp-method": "tools/call"}
    assert len(leg) == 1 and endpoint.calls == []


class FedRequests(Fed):
    """A connection that also takes requests alone (the contract's feed_request)."""

    def __init__(self) -> None:
        super().__init__("notification")  # feed_message: only notifications here
        self.requests: list[Any] = []

    def feed_request(self, request: Any, channel: PostReply) -> None:
        self.requests.append(request)
        channel.respond(b'{"jsonrpc":"2.0","id":7,"result":{}}')


@pytest.mark.parametrize("leased", [True, False])
def test_a_request_goes_to_feed_request_and_anything_else_to_feed_message(leased):
    connection = FedRequests()
    leg, lease = lease_of(connection) if leased else (None, None)
    request = decode(b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{}}')
    response = feed_post(Endpoint(), None, connection, request, b"", False, None, lease)
    assert response.status == 200 and response.body == b'{"jsonrpc":"2.0","id":7,"result":{}}'
    assert connection.requests == [request] and connection.fed == []
    lease = leg.lease() if leased else None
    notification = decode(b'{"jsonrpc":"2.0","method":"notifications/x"}')
    response = feed_post(Endpoint(), None, connection, notification, b"", False, None, lease)
    assert response.status == 202
    assert connection.requests == [request] and [m for m, _ in connection.fed] == [notification]


class Bound(Fed):
    """A Fed connection that answers with the token it was bound to when fed."""

    auth: Any = None

    def feed_message(self, message: Any, channel: PostReply) -> bool:
        self.fed.append((message, self.auth))
        channel.respond(b'{"jsonrpc":"2.0","id":1,"result":{}}')
        return True


def test_feed_leased_binds_the_token_first_and_feeds_the_leased_connection():
    connection = Bound("inline")
    leg, lease = lease_of(connection)
    admitted = []

    def admit(response: HTTPResponse, frame: Optional[bytes]) -> HTTPResponse:
        admitted.append(frame)
        return response

    response = feed_leased(Endpoint(), lease, "m", b"", False, admit, "token-1", {"h": "v"})
    assert response.status == 200 and connection.fed == [("m", "token-1")]
    assert admitted == [b'{"jsonrpc":"2.0","id":1,"result":{}}'] and len(leg) == 1
    # Without a token the connection keeps what it had (the leg's recycle resets it).
    feed_leased(Endpoint(), leg.lease(), "n", b"", False, None, None)
    assert connection.fed[-1] == ("n", "token-1")
    bind_token(connection, None)
    assert connection.auth is None


def test_admit_sees_the_response_and_its_frame():
    seen = []

    def admit(response: HTTPResponse, frame: Optional[bytes]) -> HTTPResponse:
        seen.append(frame)
        response.status = 201
        return response

    response = feed_post(Endpoint(), None, Fed("inline"), "m", b"", False, admit)
    assert response.status == 201 and seen == [b'{"jsonrpc":"2.0","id":1,"result":{}}']


def test_each_json_response_gets_its_own_header_list():
    first = feed_post(Endpoint(), None, Fed("inline"), "m", b"", False, None)
    second = feed_post(Endpoint(), None, Fed("inline"), "m", b"", False, None)
    first.headers.append(("mcp-session-id", "x"))
    assert second.headers == [("content-type", "application/json")]


def test_nothing_owed_is_202():
    connection = Fed("notification")
    leg, lease = lease_of(connection)
    response = feed_post(Endpoint(), None, connection, "n", b"", False, None, lease)
    assert response.status == 202 and response.body == b"" and response.headers == []
    assert len(leg) == 1


def test_an_answer_not_known_yet_is_deferred():
    endpoint = Endpoint()
    connection = Fed("later")
    leg, lease = lease_of(connection)
    deferred = feed_post(endpoint, None, connection, "m", b"", False, None, lease)
    assert isinstance(deferred, DeferredAnswer) and endpoint.calls == [] and len(leg) == 0  # still leased
    assert deferred.reply is connection.fed[0][1] and deferred.lease is lease and deferred.message == "m"
    with pytest.raises(TypeError):
        DeferredAnswer()


def deferred_post(json_only: bool = False, endpoint: Optional[Endpoint] = None) -> tuple[Endpoint, Any, Any]:
    """(the endpoint, the DeferredAnswer of a POST not answered while fed, its lease)."""
    endpoint = endpoint or Endpoint()
    connection = Fed("later")
    _, lease = lease_of(connection)
    return endpoint, feed_post(endpoint, None, connection, "m", b"", json_only, None, lease), lease


def test_a_deferred_answer_is_made_on_the_loop_turn_after_its_reply_is_decided():
    async def main() -> None:
        endpoint, deferred, _ = deferred_post()
        heard: list[Any] = []
        deferred.listen(heard.append, asyncio.get_running_loop())
        await asyncio.sleep(0)
        assert heard == [] and endpoint.calls == []  # undecided: nothing yet
        deferred.reply.respond(b'{"jsonrpc":"2.0","id":1,"result":{}}')
        assert heard == []  # not while the session is still finishing the request
        await asyncio.sleep(0)
        assert heard == ["answered"] and endpoint.calls == [("answer", deferred.reply)]
        assert deferred.reply.outcome == ("json", b'{"jsonrpc":"2.0","id":1,"result":{}}')
        with pytest.raises(RuntimeError, match="once"):
            deferred.listen(heard.append, asyncio.get_running_loop())
        deferred.cancel()  # answered: nothing happens
        assert endpoint.calls == [("answer", deferred.reply)]

    asyncio.run(main())


def test_a_reply_decided_before_anyone_listens_is_answered_when_listened_to():
    async def main() -> None:
        endpoint, deferred, _ = deferred_post()
        deferred.reply.respond(None)
        heard: list[Any] = []
        deferred.listen(heard.append, asyncio.get_running_loop())
        await asyncio.sleep(0)
        assert heard == ["answered"]

    asyncio.run(main())


class Timer:
    def __init__(self, delay: float, callback: Any) -> None:
        self.delay = delay
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class FakeLoop:
    """What a DeferredAnswer asks of its loop, run by hand: a fake clock for its timer."""

    def __init__(self) -> None:
        self.ready: list[Any] = []
        self.timers: list[Timer] = []

    def call_soon(self, callback: Any) -> None:
        self.ready.append(callback)

    def call_later(self, delay: float, callback: Any) -> Timer:
        self.timers.append(Timer(delay, callback))
        return self.timers[-1]

    def run_ready(self) -> None:
        ready, self.ready = self.ready, []
        for callback in ready:
            callback()

    def fire_timers(self) -> None:
        for timer in self.timers:
            if not timer.cancelled:
                timer.cancelled = True
                timer.callback()


def test_a_deferred_answer_undecided_for_the_keepalive_interval_becomes_a_stream():
    endpoint, deferred, _ = deferred_post()
    loop, heard = FakeLoop(), []
    deferred.listen(heard.append, loop)
    assert [timer.delay for timer in loop.timers] == [endpoint.keepalive_interval]
    loop.run_ready()
    assert heard == []
    loop.fire_timers()
    assert deferred.reply.outcome == ("sse", None)
    loop.run_ready()
    assert heard == ["answered"]


def test_a_decided_deferred_answer_stops_its_timer():
    endpoint, deferred, _ = deferred_post()
    loop, heard = FakeLoop(), []
    deferred.listen(heard.append, loop)
    deferred.reply.respond(b"{}")
    assert loop.timers[0].cancelled
    loop.run_ready()
    assert heard == ["answered"] and deferred.reply.outcome == ("json", b"{}")


def test_a_json_only_deferred_answer_has_no_timer():
    endpoint, deferred, _ = deferred_post(json_only=True)
    loop, heard = FakeLoop(), []
    deferred.listen(heard.append, loop)
    assert loop.timers == []
    deferred.reply.respond(b"{}")
    loop.run_ready()
    assert heard == ["answered"] and deferred.reply.outcome == ("json", b"{}")


def test_a_cancelled_deferred_answer_cancels_the_request_and_closes_its_lease():
    async def main() -> None:
        endpoint, deferred, lease = deferred_post()
        closed: list[bool] = []
        lease.connection.close = lambda: closed.append(True)
        heard: list[Any] = []
        deferred.listen(heard.append, asyncio.get_running_loop())
        deferred.cancel()
        assert endpoint.calls == [("cancel", "the HTTP client disconnected")] and closed == [True]
        deferred.reply.respond(b"{}")  # the session's answer after all: nobody is told
        await asyncio.sleep(0)
        assert heard == [] and endpoint.calls == [("cancel", "the HTTP client disconnected")]
        deferred.cancel()
        assert closed == [True]

    asyncio.run(main())


def test_a_deferred_answer_can_be_awaited_and_its_awaiter_cancelled():
    async def main() -> None:
        endpoint, deferred, _ = deferred_post()
        waiting = asyncio.ensure_future(deferred)
        await asyncio.sleep(0)
        deferred.reply.respond(b"{}")
        assert await waiting == "answered"
        endpoint, deferred, _ = deferred_post()
        waiting = asyncio.ensure_future(deferred)
        await asyncio.sleep(0)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert endpoint.calls == [("cancel", "the HTTP client disconnected")]

    asyncio.run(main())


def test_a_failing_answer_becomes_a_500():
    class Failing(Endpoint):
        def _answer(self, *args: Any) -> str:
            raise RuntimeError("broken")

    async def main() -> None:
        _, deferred, _ = deferred_post(endpoint=Failing())
        heard: list[Any] = []
        deferred.listen(heard.append, asyncio.get_running_loop())
        deferred.reply.respond(b"{}")
        await asyncio.sleep(0)
        assert heard[0].status == 500

    asyncio.run(main())


def test_a_stream_answer_is_the_endpoints():
    endpoint = Endpoint()
    assert feed_post(endpoint, None, Fed("stream"), "m", b"", False, None) == "answered"
    assert endpoint.calls[0][1].outcome == ("sse", None)


def test_a_failed_feed_closes_the_lease_and_raises():
    connection = Fed("raise")
    leg, lease = lease_of(connection)
    with pytest.raises(RuntimeError, match="broken"):
        feed_post(Endpoint(), None, connection, "m", b"", False, None, lease)
    assert connection.closed and len(leg) == 0


def test_a_connection_without_feed_message_is_fed_the_body():
    class BodyOnly:
        def __init__(self) -> None:
            self.fed: list[bytes] = []

        def feed(self, body: bytes, channel: PostReply) -> bool:
            self.fed.append(body)
            channel.respond(b"answer")
            return True

    connection = BodyOnly()
    response = feed_post(Endpoint(), None, connection, "decoded", b"raw body", False, None)
    assert connection.fed == [b"raw body"] and response.body == b"answer"


def test_a_session_gives_the_reply_its_side_channel_and_streams():
    class Session:
        def __init__(self) -> None:
            self.unrelated: list[bytes] = []
            self.streams: list[Stream] = []

        def send_unrelated(self, frame: bytes) -> None:
            self.unrelated.append(frame)

        def new_stream(self) -> Stream:
            self.streams.append(Stream())
            return self.streams[-1]

    session = Session()
    feed_post(Endpoint(), session, Fed("stream"), "m", b"", True, None)
    assert session.unrelated == [b"progress"] and session.streams == []
    endpoint = Endpoint()
    feed_post(endpoint, session, Fed("stream"), "m", b"", False, None)
    assert len(session.streams) == 1 and session.streams[0].frames == [b"progress"]


# -- ErrorStatuses ---------------------------------------------------------------------


class Answering(Connection):
    """A connection answering every request with a given frame while fed."""

    def __init__(self, frame: bytes) -> None:
        super().__init__()
        self.frame = frame

    def feed_message(self, message: Any, channel: PostReply) -> bool:
        channel.respond(self.frame)
        return True


@pytest.mark.parametrize("frame, status", [
    (encode_error(1, -32601, "Method not found"), 404),
    (encode_error("x", -32602, "Invalid params", {"param": "name"}), 400),
    (encode_error(None, -32603, "Internal error"), 200),   # not in the table
    (encode_response(1, {"error": {"code": -32601}}), 200),  # a result, whatever it holds
    (b'{"id": 1, "jsonrpc": "2.0", "error": {"message": "m", "code": -32601}}', 404),
])
def test_error_statuses_map_an_error_answers_code(frame, status):
    table = {-32601: 404, -32602: 400}
    admit = ErrorStatuses(table)
    # Inline (feed_post applies it without a Python call) and called as any admit is
    # (the endpoint's awaited answers): the same status.
    inline = feed_post(Endpoint(), None, Answering(frame), "m", b"", False, admit)
    assert inline.status == status and inline.body == frame
    called = admit(HTTPResponse(200, [], frame), frame)
    assert called.status == status
    table[-32603] = 500  # the table was copied
    assert feed_post(Endpoint(), None, Answering(frame), "m", b"", False, admit).status == status
    assert admit.statuses == {-32601: 404, -32602: 400}


def test_error_statuses_leave_other_answers_alone():
    admit = ErrorStatuses({-32601: 404})
    frame = encode_error(1, -32601, "Method not found")
    assert admit(HTTPResponse(202), None).status == 202
    assert admit(HTTPResponse(204), frame).status == 204


# -- trace context headers ---------------------------------------------------------------


def test_trace_context_of_keeps_the_two_trace_headers_only():
    headers = {"traceparent": "00-a-b-01", "tracestate": "k=v", "baggage": "x=1",
               "authorization": "Bearer secret", "host": "h"}
    found = trace_context_of(headers)
    assert found == {"traceparent": "00-a-b-01", "tracestate": "k=v"}
    found["traceparent"] = "changed"  # a dict of its own: the request's is untouched
    assert headers["traceparent"] == "00-a-b-01"
    assert trace_context_of({"traceparent": "00-a-b-01"}) == {"traceparent": "00-a-b-01"}
    # No traceparent: nothing (a tracestate alone is no parent).
    assert trace_context_of({"tracestate": "k=v", "host": "h"}) is None
    assert trace_context_of({}) is None


def test_feed_post_and_feed_leased_give_the_reply_its_trace_headers():
    trace = {"traceparent": "00-a-b-01"}
    connection = Fed("inline")
    leg, lease = lease_of(connection)
    feed_leased(Endpoint(), lease, "m", b"", False, None, None, None, None, trace)
    channel = connection.fed[-1][1]
    assert channel.trace_headers is trace and channel.headers is None
    feed_post(Endpoint(), None, connection, "m", b"", False, None, leg.lease())
    assert connection.fed[-1][1].trace_headers is None
    assert PostReply(False, print, print, None, trace).trace_headers is trace
