"""Handshake-era sessions shared by several endpoints ("processes") through a session
directory, without sockets: two endpoints of two servers joined by an in-memory
directory (the Redis one is tested in tests/transports/test_redis_sessions.py)."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Optional

from endpoint_requests import answer, initialize, post, request
from mcpfast import Context, Server
from mcpfast.server.publisher import LocalPublisher
from mcpfast.transports.http import HTTPRequest, MemoryEventStore
from mcpfast.transports.http.session_directory import MemoryDirectoryHub
from mcpfast.transports.http.shared_sessions import ID_SPACING
from mcpfast.transports.http.sse import split_events

NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def make_server(publisher: Any, gate: Optional[asyncio.Event] = None) -> Server:
    app = Server("shared", publisher=publisher)

    @app.tool()
    async def long(ctx: Context) -> str:
        await ctx.report_progress(1, 3)
        if gate is not None:
            await gate.wait()
        await ctx.report_progress(2, 3)
        return "finished"

    @app.tool()
    def echo(text: str) -> str:
        return text

    @app.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", NAME)
        return f"hello {answer.content['name']}"

    @app.tool()
    async def slow(ctx: Context) -> str:
        await ctx.report_progress(1, 2)
        await asyncio.sleep(0)
        return "done"

    @app.resource("test://watched")
    def watched() -> str:
        return "watched"

    return app


def deployment(count: int = 2, gate: Optional[asyncio.Event] = None,
               **options: Any) -> tuple[list[Any], MemoryDirectoryHub]:
    """``count`` endpoints of ``count`` servers sharing a directory and a publisher (the
    fan-out a RedisPublisher gives processes)."""
    hub = MemoryDirectoryHub()
    publisher = LocalPublisher()
    endpoints = [make_server(publisher, gate).http_endpoint(session_directory=hub.member(), **options)
                 for _ in range(count)]
    return endpoints, hub


def get(session: str, last_event_id: Optional[str] = None) -> HTTPRequest:
    headers = {"host": "localhost", "accept": "text/event-stream", "mcp-session-id": session}
    if last_event_id is not None:
        headers["last-event-id"] = last_event_id
    return HTTPRequest("GET", "/mcp", headers)


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


async def started(endpoints: list[Any]) -> None:
    for endpoint in endpoints:
        await endpoint.start()


async def turns(n: int = 3) -> None:
    for _ in range(n):
        await asyncio.sleep(0)


def test_a_session_made_on_one_endpoint_is_served_by_another_and_deleted_everywhere():
    async def main():
        (a, b), hub = deployment()
        await started([a, b])
        session = await initialize(a)
        assert session in hub.records and "initialize" in hub.records[session][0]["init"]
        echo = {"name": "echo", "arguments": {"text": "hi"}}
        response = await answer(b.handle(post(request(1, "tools/call", echo), session)))
        assert response.status == 200 and json.loads(response.body)["result"]["content"][0]["text"] == "hi"
        assert b.shared.adopted == 1 and session in b.sessions
        # The copy replayed the handshake: it is initialized, with the client's capabilities.
        copy = b.sessions[session].connection
        assert copy.state.initialized and copy.state.client_capabilities == {"sampling": {}}
        unknown = await answer(b.handle(post(request(2, "tools/list"), "feedface" * 4)))
        assert unknown.status == 404
        deleted = await answer(b.handle(HTTPRequest("DELETE", "/mcp", {"host": "localhost",
                                                                       "mcp-session-id": session})))
        assert deleted.status == 200 and session not in hub.records
        await turns()
        assert session not in a.sessions
        for endpoint in (a, b):
            assert (await answer(endpoint.handle(post(request(3, "tools/list"), session)))).status == 404
        a.close(), b.close()

    run(main())


def test_a_delete_reaching_a_process_without_a_copy_ends_the_session():
    async def main():
        (a, b), hub = deployment()
        await started([a, b])
        session = await initialize(a)
        deleted = await answer(b.handle(HTTPRequest("DELETE", "/mcp", {"host": "localhost",
                                                                       "mcp-session-id": session})))
        assert deleted.status == 200
        await turns()
        assert session not in a.sessions and session not in hub.records

    run(main())


def test_the_clients_answer_reaches_the_copy_that_asked_wherever_it_is_posted():
    async def main():
        (a, b), _ = deployment()
        await started([a, b])
        session = await initialize(a, {**INIT_ELICIT})
        asked = await answer(b.handle(post(request(5, "tools/call", {"name": "ask", "arguments": {}}), session)))
        stream = asked.stream
        question = json.loads((await stream.__anext__()).split(b"data: ", 1)[1])
        assert question["method"] == "elicitation/create"
        # The copies number their requests to the client apart.
        assert question["id"] % ID_SPACING == 1 and question["id"] >= 1
        reply = {"jsonrpc": "2.0", "id": question["id"],
                 "result": {"action": "accept", "content": {"name": "Ada"}}}
        passed = await answer(a.handle(post(reply, session)))
        assert passed.status == 202
        rest = b"".join([chunk async for chunk in stream])
        asked.close()
        result = json.loads(rest.split(b"data: ", 1)[1])
        assert result["id"] == 5 and result["result"]["content"][0]["text"] == "hello Ada"
        # An answer nobody awaits is dropped quietly, still with 202.
        stray = {"jsonrpc": "2.0", "id": 12345, "result": {}}
        assert (await answer(a.handle(post(stray, session)))).status == 202
        a.close(), b.close()

    run(main())


INIT_ELICIT = {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
               "clientInfo": {"name": "t", "version": "1"}}


def test_broadcasts_reach_the_get_stream_once_and_state_changes_reach_every_copy():
    async def main():
        (a, b), _ = deployment()
        await started([a, b])
        session = await initialize(a)
        # A subscription and a log level set through A; the GET stream opened on B.
        subscribed = await answer(a.handle(post(request(1, "resources/subscribe", {"uri": "test://watched"}), session)))
        assert subscribed.status == 200
        level = await answer(a.handle(post(request(2, "logging/setLevel", {"level": "error"}), session)))
        assert level.status == 200
        stream = await answer(b.handle(get(session)))
        assert stream.status == 200
        await turns()
        copy = b.sessions[session].connection
        assert copy.subscriptions == {"test://watched"}
        assert copy.state.log_level == a.sessions[session].connection.state.log_level
        app_a = a.sessions[session].connection.server
        app_a.notify_resource_updated("test://watched")
        app_a.broadcast_log("warning", "below the level")
        app_a.broadcast_log("error", "above it")
        app_a.notify_resource_updated("test://other")
        text = b""
        while b"above it" not in text:
            text += await asyncio.wait_for(stream.stream.__anext__(), 5)
        assert text.count(b"notifications/resources/updated") == 1 and b"test://watched" in text
        assert b"above it" in text and b"below the level" not in text
        # Unsubscribing through A reaches B's copy too.
        await answer(a.handle(post(request(3, "resources/unsubscribe", {"uri": "test://watched"}), session)))
        await turns()
        assert copy.subscriptions == set()
        stream.close(disconnected=True)
        a.close(), b.close()

    run(main())


def test_a_requests_notifications_in_json_mode_reach_the_get_stream_held_elsewhere():
    async def main():
        (a, b), _ = deployment(json_response=True)
        await started([a, b])
        session = await initialize(a)
        stream = await answer(a.handle(get(session)))
        params = {"name": "slow", "arguments": {}, "_meta": {"progressToken": "p"}}
        response = await answer(b.handle(post(request(8, "tools/call", params), session, accept="application/json")))
        assert response.status == 200 and json.loads(response.body)["id"] == 8
        chunk = await asyncio.wait_for(stream.stream.__anext__(), 5)
        assert b"notifications/progress" in chunk
        stream.close(disconnected=True)
        a.close(), b.close()

    run(main())


def test_the_get_stream_resumes_on_another_process_with_nothing_lost():
    async def main():
        store = MemoryEventStore()  # one store for both: the shared store of a deployment
        (a, b), _ = deployment(event_store=store, keepalive_interval=30)
        await started([a, b])
        session = await initialize(a)
        first = await answer(a.handle(get(session)))
        priming = await first.stream.__anext__()
        assert priming.startswith(b"id: ")
        app = a.sessions[session].connection.server
        app.broadcast_log("warning", "one")
        seen = await first.stream.__anext__()
        last_id = seen.split(b"\n")[0][4:].decode()
        app.broadcast_log("warning", "two")  # stored by A; the client never reads it
        await turns()
        # Process A dies (nothing of it runs any more: its endpoint is simply dropped).
        a.shared.directory.hub.members.remove(a.shared.directory)
        resumed = await answer(b.handle(get(session, last_id)))
        assert resumed.status == 200
        replayed = await resumed.stream.__anext__()
        assert b'"two"' in replayed and b'"one"' not in replayed
        # B holds the stream now: the next broadcast arrives on it once.
        b.sessions[session].connection.server.broadcast_log("warning", "three")
        live = await asyncio.wait_for(resumed.stream.__anext__(), 5)
        assert b'"three"' in live and live.count(b"notifications/message") == 1
        resumed.close(disconnected=True)
        b.close()

    run(main())


def test_a_get_stream_opened_elsewhere_takes_over():
    async def main():
        (a, b), _ = deployment()
        await started([a, b])
        session = await initialize(a)
        old = await answer(a.handle(get(session)))
        new = await answer(b.handle(get(session)))
        assert old.status == new.status == 200
        await turns()
        # The old stream ends; broadcasts go to the new one only.
        assert [chunk async for chunk in old.stream] == []
        a.sessions[session].connection.server.broadcast_log("warning", "once")
        chunk = await asyncio.wait_for(new.stream.__anext__(), 5)
        assert chunk.count(b"once") == 1
        new.close(disconnected=True)
        a.close(), b.close()

    run(main())


class Unreachable:
    origin = "x"

    async def start(self, on_message: Any) -> None:
        pass

    async def create(self, session_id: str, record: dict, ttl: float) -> None:
        raise ConnectionError("cannot reach Redis at redis://127.0.0.1:1")

    async def lookup(self, session_id: str) -> None:
        raise ConnectionError("cannot reach Redis at redis://127.0.0.1:1")

    async def update(self, *args: Any) -> None:
        raise ConnectionError("cannot reach Redis at redis://127.0.0.1:1")

    publish = update

    def touch(self, *args: Any) -> None:
        pass

    remove = broadcast = touch

    async def close(self) -> None:
        pass


def test_an_unreachable_directory_answers_503_and_keeps_no_session():
    async def main():
        endpoint = make_server(LocalPublisher()).http_endpoint(session_directory=Unreachable())
        await endpoint.start()
        response = await answer(endpoint.handle(post(request(0, "initialize", INIT_ELICIT), version=None)))
        assert response.status == 503 and b"cannot reach Redis" in response.body
        assert endpoint.sessions == {} and response.header("mcp-session-id") is None
        lookup = await answer(endpoint.handle(post(request(1, "tools/list"), "ab" * 16)))
        assert lookup.status == 503 and lookup.header("retry-after") == "5"
        # Stateless requests need no directory.
        endpoint.close()

    run(main())


def test_a_copy_refuses_another_subject():
    from mcpfast.auth import AccessToken
    from mcpfast.transports.http.auth import BearerAuth

    tokens = {"t1": AccessToken("alice", set()), "t2": AccessToken("bob", set())}

    async def main():
        hub = MemoryDirectoryHub()
        publisher = LocalPublisher()
        auth = BearerAuth(tokens.get, resource="http://localhost/mcp",
                          authorization_servers=["https://issuer.example"])
        a, b = (make_server(publisher).http_endpoint(session_directory=hub.member(), auth=auth)
                for _ in range(2))
        await started([a, b])
        init = post(request(0, "initialize", INIT_ELICIT), version=None, authorization="Bearer t1")
        session = (await answer(a.handle(init))).header("mcp-session-id")
        assert session is not None
        other = await answer(b.handle(post(request(1, "tools/list"), session, authorization="Bearer t2")))
        assert other.status == 404
        mine = await answer(b.handle(post(request(1, "tools/list"), session, authorization="Bearer t1")))
        assert mine.status == 200
        a.close(), b.close()

    run(main())


def test_stateless_mode_ignores_the_directory():
    hub = MemoryDirectoryHub()
    endpoint = make_server(LocalPublisher()).http_endpoint(session_directory=hub.member(), stateless=True)
    assert endpoint.shared is None


def events_of(chunks: bytes) -> list[tuple[Optional[str], dict]]:
    """(event id, message) of the message events in an SSE response's bytes (the
    transport's own SSE reader; priming events and comments carry no message)."""
    events, _ = split_events(chunks)
    return [(event.id, json.loads(event.data)) for event in events if event.data]


async def read_until(stream: Any, done: Any) -> bytes:
    text = b""
    while not done(text):
        text += await asyncio.wait_for(stream.__anext__(), 5)
    return text


async def dropped_long_call(gate: asyncio.Event) -> tuple[list[Any], MemoryDirectoryHub, str, bytes]:
    """Two endpoints sharing an event store, and a session whose ``long`` call (id 4) was
    made on the first: its stream read up to the first progress notification, then
    dropped (the tool runs on, waiting for ``gate``). Returns the endpoints, the hub, the
    session and what was read."""
    (a, b), hub = deployment(gate=gate, event_store=MemoryEventStore(), keepalive_interval=30)
    await started([a, b])
    session = await initialize(a)
    params = {"name": "long", "arguments": {}, "_meta": {"progressToken": "p"}}
    response = await answer(a.handle(post(request(4, "tools/call", params), session)))
    text = await read_until(response.stream, lambda t: b"notifications/progress" in t)
    response.close(disconnected=True)  # the connection to A is lost
    await response.stream.aclose()
    return [a, b], hub, session, text


def test_a_posts_stream_resumed_on_another_process_follows_the_request_live():
    async def main():
        gate = asyncio.Event()
        (a, b), _, session, text = await dropped_long_call(gate)
        first_id = events_of(text)[-1][0]
        resumed = await answer(b.handle(get(session, first_id)))
        assert resumed.status == 200
        gate.set()  # the tool goes on in A; B relays what A sends on the stream
        rest = events_of(b"".join([chunk async for chunk in resumed.stream]))
        resumed.close()
        assert [message.get("method") for _, message in rest] == ["notifications/progress", None]
        assert rest[-1][1]["id"] == 4 and rest[-1][1]["result"]["content"][0]["text"] == "finished"
        assert all(event_id is not None and event_id != first_id for event_id, _ in rest)
        assert b.shared.relays == {}
        # Resumed once more, after the end: the stored events, then the end, at once.
        again = await answer(b.handle(get(session, first_id)))
        assert [m.get("id") for _, m in events_of(b"".join([c async for c in again.stream]))] == [None, 4]
        a.close(), b.close()

    run(main())


def test_a_resumed_stream_of_a_process_that_died_ends_after_what_was_stored():
    async def main():
        (a, b), hub, session, text = await dropped_long_call(asyncio.Event())
        first = events_of(text)
        hub.members.remove(a.shared.directory)  # process A is gone
        priming_id = text.split(b"id: ")[1].split(b"\n")[0].decode()
        resumed = await answer(b.handle(get(session, priming_id)))
        replayed = events_of(b"".join([chunk async for chunk in resumed.stream]))
        assert replayed == first
        b.close()

    run(main())
