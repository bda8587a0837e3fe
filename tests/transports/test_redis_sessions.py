"""RedisEventStore and RedisSessionDirectory against a real Redis (Debian's redis-server
on loopback): events kept for resumption by any process, sessions found by any process,
and the clear errors of a Redis out of reach."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from endpoint_requests import answer, initialize, post, request
from loop import eventually
from mcpfast import Context, Server
from mcpfast.scaleout.redis_connection import RedisUnavailable
from mcpfast.scaleout.redis_event_store import RedisEventStore
from mcpfast.scaleout.redis_publisher import RedisPublisher
from mcpfast.scaleout.redis_session_directory import RedisSessionDirectory
from mcpfast.transports.http import HTTPRequest
from redis_server import free_port, redis_server


def run(coroutine):
    return asyncio.run(coroutine)


def test_events_are_replayed_after_an_id_by_another_store_and_trimmed():
    async def main(url: str) -> None:
        writer = RedisEventStore(url, prefix="e1:", max_events_per_stream=5)
        reader = RedisEventStore(url, prefix="e1:")  # another process
        await writer.start()
        priming = writer.store("s1.get", None)
        ids = [writer.store("s1.get", b'{"n":%d}' % n) for n in range(3)]
        writer.store("s2.get", b'{"other":1}')
        await writer.written()
        stream_id, events = await reader.replay_after(ids[0])
        assert stream_id == "s1.get" and events == [(ids[1], b'{"n":1}'), (ids[2], b'{"n":2}')]
        # From the priming event: every message (the priming event itself carries none).
        assert [frame for _, frame in (await reader.replay_after(priming))[1]] == [b'{"n":0}', b'{"n":1}', b'{"n":2}']
        # Another process appends to the same stream (the GET stream moved there).
        moved = reader.store("s1.get", b'{"n":3}')
        await reader.written()
        assert (await writer.replay_after(ids[2]))[1] == [(moved, b'{"n":3}')]
        # Only the newest five are kept; an id trimmed away resumes after its process's
        # newest older entry still kept, else from the start of what is kept.
        more = [writer.store("s1.get", b'{"n":%d}' % n) for n in range(4, 8)]
        await writer.written()
        kept = (await reader.replay_after("s1.get.none-0"))[1]
        assert [event_id for event_id, _ in kept] == [moved] + more
        assert [event_id for event_id, _ in (await reader.replay_after(ids[0]))[1]] == [moved] + more
        assert [event_id for event_id, _ in (await reader.replay_after(more[1]))[1]] == more[2:]
        assert await reader.replay_after("unknown.get.x-1") is None
        writer.forget("s1.get")
        await writer.written()
        assert await reader.replay_after(ids[0]) is None
        await writer.close(), await reader.close()

    with redis_server() as redis:
        run(main(redis.url))


def test_a_write_lost_before_redis_got_it_resumes_after_the_same_process_older_events():
    from mcpfast.scaleout.redis_event_store import _resume_index

    tags = ["a-1", "a-2", "b-1", "a-5", "b-2"]
    assert _resume_index(tags, "a-2") == 2  # found
    assert _resume_index(tags, "a-4") == 2  # missing: after a-2, its process's last older one
    assert _resume_index(tags, "a-9") == 4  # after a-5
    assert _resume_index(tags, "c-3") == 0  # nothing of that process: everything kept
    assert _resume_index(tags, "garbage") == 0


def test_the_event_store_and_directory_say_when_redis_is_out_of_reach():
    async def main() -> None:
        url = f"redis://127.0.0.1:{free_port()}/0"
        store = RedisEventStore(url)
        with pytest.raises(RedisUnavailable, match="cannot reach Redis at redis://127.0.0.1"):
            await store.start()
        with pytest.raises(RedisUnavailable):
            await store.replay_after("s.get.a-1")
        store.store("s.get", b"{}")  # a failed background write is logged, nothing raised
        await store.written()
        directory = RedisSessionDirectory(url)
        with pytest.raises(RedisUnavailable):
            await directory.start(lambda message: None)
        with pytest.raises(RedisUnavailable):
            await directory.lookup("x")
        with pytest.raises(RedisUnavailable):
            await directory.create("x", {"init": "{}"}, 10)
        with pytest.raises(RedisUnavailable, match="cannot reach Redis at redis://127.0.0.1"):
            await directory.publish({"k": "end", "s": "x"})
        directory.broadcast({"k": "end", "s": "x"})  # logged once, nothing raised
        await store.close(), await directory.close()

    run(main())


def test_records_expire_update_only_live_records_and_messages_skip_their_sender():
    async def main(url: str) -> None:
        one, two = RedisSessionDirectory(url, prefix="d1:"), RedisSessionDirectory(url, prefix="d1:")
        got_one: list[dict] = []
        got_two: list[dict] = []
        await one.start(got_one.append)
        await two.start(got_two.append)
        await one.create("s1", {"init": "{}", "prime": "1"}, 1.0)
        assert await two.lookup("s1") == {"init": "{}", "prime": "1"}
        await one.update("s1", "level", "debug")
        await one.update("gone", "level", "debug")  # no record: none is made
        one.broadcast({"k": "state", "s": "s1", "b": "{}"})
        await one.publish({"k": "end", "s": "s9"})
        await eventually(lambda: len(got_two) == 2)
        assert (await two.lookup("s1"))["level"] == "debug" and await two.lookup("gone") is None
        # (the broadcast, sent in the background, is still ahead of the one published after it)
        assert sorted(got_two, key=lambda m: m["k"]) == [{"k": "end", "s": "s9", "o": one.origin},
                                                         {"k": "state", "s": "s1", "b": "{}", "o": one.origin}]
        assert got_one == []
        await one.update("s1", "level", None)
        assert "level" not in await two.lookup("s1")
        two.touch("s1", 3.0)
        await asyncio.sleep(1.3)
        assert await one.lookup("s1") is not None  # touched: lives on
        two.remove("s1")  # sent in the background
        for _ in range(500):
            if await one.lookup("s1") is None:
                break
            await asyncio.sleep(0.01)
        assert await one.lookup("s1") is None
        await one.create("s2", {"init": "{}"}, 1.0)
        await asyncio.sleep(2.2)
        assert await one.lookup("s2") is None  # expired
        await one.close(), await two.close()

    with redis_server() as redis:
        run(main(redis.url))


def test_messages_reach_the_other_processes_in_the_order_they_were_sent_even_in_a_burst():
    # A relayed POST stream's last event and its end are sent one after the other: the end
    # must not overtake the event. And a burst larger than the client's connection pool
    # must not fail.
    async def main(url: str) -> None:
        one, two = RedisSessionDirectory(url, prefix="d2:"), RedisSessionDirectory(url, prefix="d2:")
        got: list[dict] = []
        await one.start(lambda message: None)
        await two.start(got.append)
        for n in range(300):
            one.broadcast({"k": "ev", "t": "s.1", "n": n})
        await one.publish({"k": "fin", "t": "s.1"})  # waits: everything before it is out
        for n in range(300, 310):
            one.broadcast({"k": "ev", "t": "s.1", "n": n})
        deadline = asyncio.get_running_loop().time() + 5
        while len(got) < 311 and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.01)
        assert [m.get("n", "fin") for m in got] == [*range(300), "fin", *range(300, 310)]
        await one.close(), await two.close()

    with redis_server() as redis:
        run(main(redis.url))


def test_a_burst_of_lookups_waits_for_the_pool_instead_of_failing():
    # More concurrent commands than a component's pool has connections: they queue for one
    # (redis-py's default pool refused the 101st with "Too many connections", a 503 here).
    async def main(url: str) -> None:
        directory = RedisSessionDirectory(url, prefix="d3:")
        store = RedisEventStore(url, prefix="d3:")
        await directory.start(lambda message: None)
        await store.start()
        await directory.create("s1", {"init": "{}"}, 60)
        event_id = store.store("s1.get", b'{"n":1}')
        store.store("s1.get", b'{"n":2}')
        await store.written()
        found = await asyncio.gather(*(directory.lookup("s1") for _ in range(500)),
                                     *(store.replay_after(event_id) for _ in range(300)))
        assert found[:500] == [{"init": "{}"}] * 500
        assert all(replay[1] == [(replay[1][0][0], b'{"n":2}')] for replay in found[500:])
        await directory.close(), await store.close()

    with redis_server() as redis:
        run(main(redis.url))


NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
INIT_ELICIT = {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
               "clientInfo": {"name": "t", "version": "1"}}


def make_server(url: str) -> Server:
    app = Server("redis-shared", publisher=RedisPublisher(url, channel="rs:events"))

    @app.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", NAME)
        return f"hello {answer.content['name']}"

    return app


async def two_endpoints(url: str, prefix: str) -> list[Any]:
    """Two endpoints of two servers on one Redis: two processes of a deployment."""
    endpoints = []
    for _ in range(2):
        app = make_server(url)
        await app.publisher.start()
        endpoint = app.http_endpoint(session_directory=RedisSessionDirectory(url, prefix=prefix),
                                     event_store=RedisEventStore(url, prefix=prefix))
        await endpoint.start()
        endpoints.append(endpoint)
    return endpoints


def test_two_endpoints_on_one_redis_share_sessions_answers_and_the_get_stream():
    async def main(url: str) -> None:
        endpoints = a, b = await two_endpoints(url, "rs:")
        session = await initialize(a, INIT_ELICIT)
        # B serves the session; its question's answer is posted to A.
        asked = await answer(b.handle(post(request(5, "tools/call", {"name": "ask", "arguments": {}}), session)))
        chunks = asked.stream
        text = b""
        while b"elicitation/create" not in text:
            text += await asyncio.wait_for(chunks.__anext__(), 5)
        question = json.loads(text.split(b"data: ")[-1])
        reply = {"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept", "content": {"name": "Lin"}}}
        assert (await answer(a.handle(post(reply, session)))).status == 202
        rest = b""
        while b'"id":5' not in rest:
            rest += await asyncio.wait_for(chunks.__anext__(), 5)
        asked.close()
        assert b"hello Lin" in rest
        # The GET stream, opened on A, then resumed on B after A is gone.
        headers = {"host": "localhost", "accept": "text/event-stream", "mcp-session-id": session}
        stream = await answer(a.handle(HTTPRequest("GET", "/mcp", dict(headers))))
        priming = await asyncio.wait_for(stream.stream.__anext__(), 5)
        last_id = priming.split(b"id: ")[1].split(b"\n")[0].decode()
        a_app = a.sessions[session].connection.server
        a_app.broadcast_log("warning", "missed")
        await asyncio.sleep(0.2)
        stream.close(disconnected=True)
        resumed = await answer(b.handle(HTTPRequest("GET", "/mcp", {**headers, "last-event-id": last_id})))
        assert resumed.status == 200
        got = await asyncio.wait_for(resumed.stream.__anext__(), 5)
        assert b'"missed"' in got
        b.sessions[session].connection.server.broadcast_log("warning", "live")
        got = b""
        while b'"live"' not in got:
            got += await asyncio.wait_for(resumed.stream.__anext__(), 5)
        assert got.count(b"notifications/message") == 1
        resumed.close(disconnected=True)
        for endpoint in endpoints:
            endpoint.close()
        await asyncio.sleep(0.1)

    with redis_server() as redis:
        run(main(redis.url))


def test_redis_lost_at_run_time_fails_only_what_needs_it_and_comes_back():
    async def main(redis: Any) -> None:
        url = redis.url
        endpoints = a, b = await two_endpoints(url, "rl:")
        session = await initialize(a, INIT_ELICIT)
        redis.stop()
        # A session this process holds goes on; one it would have to look up is refused
        # with the reason, as is a new session.
        assert (await answer(a.handle(post(request(1, "tools/list"), session)))).status == 200
        refused = await answer(b.handle(post(request(2, "tools/list"), session)))
        assert refused.status == 503 and b"cannot reach Redis" in refused.body
        new = await answer(a.handle(post(request(0, "initialize", INIT_ELICIT), version=None)))
        assert new.status == 503 and new.header("mcp-session-id") is None
        redis.start()  # (a Redis without persistence: the records are gone)
        await asyncio.sleep(0.2)
        assert (await answer(b.handle(post(request(3, "tools/list"), session)))).status == 404
        fresh = await initialize(a, INIT_ELICIT)
        assert (await answer(b.handle(post(request(4, "tools/list"), fresh)))).status == 200
        for endpoint in endpoints:
            endpoint.close()
        await asyncio.sleep(0.1)

    with redis_server() as redis:
        run(main(redis))
