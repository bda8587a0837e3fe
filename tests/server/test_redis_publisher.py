"""RedisPublisher: events published in one process reach the clients of another, through
a real Redis server (Debian's redis-server on loopback)."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

from loop import eventually
from mcpfast import Server
from mcpfast.scaleout.redis_publisher import RedisPublisher, RedisUnavailable
from mcpfast.server.publisher import ListChanged, LogMessage, ResourceUpdated
from redis_server import free_port, redis_server


class Collecting:
    """A subscriber that keeps what it is given."""

    def __init__(self) -> None:
        self.events: list[Any] = []

    def deliver(self, event: Any) -> bool:
        self.events.append(event)
        return True


def test_events_cross_processes_and_are_not_delivered_twice():
    async def main(url: str) -> None:
        a, b = RedisPublisher(url, channel="t1"), RedisPublisher(url, channel="t1")
        await a.start()
        await b.start()
        on_a, on_b = Collecting(), Collecting()
        a.attach(on_a)
        b.attach(on_b)
        await asyncio.sleep(0.05)
        assert b.publish(ResourceUpdated("test://x")) == 1  # delivered locally at once
        a.publish(LogMessage("info", {"n": 1}, "app"))
        a.publish(ListChanged("tools"))
        await eventually(lambda: len(on_a.events) == 3 and len(on_b.events) == 3)
        expected = {repr(e) for e in (LogMessage("info", {"n": 1}, "app"), ListChanged("tools"),
                                      ResourceUpdated("test://x"))}
        assert {repr(e) for e in on_a.events} == expected == {repr(e) for e in on_b.events}
        await asyncio.sleep(0.1)
        assert len(on_a.events) == 3 and len(on_b.events) == 3  # no echo of one's own events
        assert a.received == 1 and b.received == 2
        # Another channel is another deployment.
        other = RedisPublisher(url, channel="t2")
        await other.start()
        seen = Collecting()
        other.attach(seen)
        a.publish(ResourceUpdated("test://y"))
        await asyncio.sleep(0.2)
        assert seen.events == []
        for publisher in (a, b, other):
            await publisher.close()

    with redis_server() as redis:
        asyncio.run(main(redis.url))


def test_a_burst_of_events_reaches_another_process_whole_and_in_order():
    # More events at once than the client's connection pool has connections (a log flood).
    async def main(url: str) -> None:
        a, b = RedisPublisher(url, channel="t3"), RedisPublisher(url, channel="t3")
        await a.start()
        await b.start()
        on_b = Collecting()
        b.attach(on_b)
        await asyncio.sleep(0.05)
        for n in range(500):
            a.publish(LogMessage("info", {"n": n}, "app"))
        await eventually(lambda: len(on_b.events) >= 500)
        assert [event.data["n"] for event in on_b.events] == list(range(500))
        await a.close(), await b.close()

    with redis_server() as redis:
        asyncio.run(main(redis.url))


def test_a_server_client_gets_an_update_published_by_another_server(make_client):
    async def main(url: str) -> None:
        first, second = Server("one"), Server("two")
        for app in (first, second):
            app.publisher = RedisPublisher(url, channel="servers")
            await app._start_shared()

            @app.resource("test://watched")
            def watched() -> str:
                return "x"

        client = make_client(first, "2025-11-25")
        client.initialize()
        client.result("resources/subscribe", {"uri": "test://watched"})
        await asyncio.sleep(0.05)
        second.notify_resource_updated("test://watched")
        await eventually(lambda: any(m.get("method") == "notifications/resources/updated" for m in client.messages))
        (note,) = client.notifications("notifications/resources/updated")
        assert note["params"] == {"uri": "test://watched"}
        for app in (first, second):
            await app.publisher.close()

    with redis_server() as redis:
        asyncio.run(main(redis.url))


def test_redis_down_at_start_is_a_clear_error():
    async def main() -> None:
        publisher = RedisPublisher(f"redis://:secret@127.0.0.1:{free_port()}/0")
        with pytest.raises(RedisUnavailable, match=r"cannot reach Redis at redis://\*\*\*@127\.0\.0\.1") as info:
            await publisher.start()
        assert "secret" not in str(info.value)
        await publisher.close()

    asyncio.run(main())
    with pytest.raises(ValueError, match="redis://"):
        RedisPublisher("http://127.0.0.1:6379")


def test_redis_lost_at_run_time_costs_only_the_cross_process_part(caplog):
    async def main(redis) -> None:
        a, b = RedisPublisher(redis.url, channel="t3"), RedisPublisher(redis.url, channel="t3")
        await a.start()
        await b.start()
        on_a, on_b = Collecting(), Collecting()
        a.attach(on_a)
        b.attach(on_b)
        redis.stop()
        with caplog.at_level(logging.WARNING, logger="mcpfast.server"):
            assert a.publish(ResourceUpdated("test://during")) == 1  # local delivery goes on
            await eventually(lambda: "cannot send events" in caplog.text)
        assert on_a.events == [ResourceUpdated("test://during")] and on_b.events == []
        redis.start()
        # The subscriptions come back by themselves; events cross again.
        for _ in range(100):
            a.publish(ResourceUpdated("test://after"))
            await asyncio.sleep(0.1)
            if ResourceUpdated("test://after") in on_b.events:
                break
        assert ResourceUpdated("test://after") in on_b.events
        for publisher in (a, b):
            await publisher.close()

    with redis_server() as redis:
        asyncio.run(main(redis))


def test_malformed_messages_on_the_channel_are_ignored(caplog):
    async def main(url: str) -> None:
        import redis.asyncio as redis_asyncio

        publisher = RedisPublisher(url, channel="t4")
        await publisher.start()
        seen = Collecting()
        publisher.attach(seen)
        raw = redis_asyncio.Redis.from_url(url)
        await asyncio.sleep(0.05)
        with caplog.at_level(logging.WARNING, logger="mcpfast.server"):
            for junk in ("not json", json.dumps({"o": "x", "t": "Nope", "v": []}), json.dumps([1])):
                await raw.publish("t4", junk)
            await raw.publish("t4", json.dumps({"o": "other", "t": "ResourceUpdated", "v": ["test://ok"]}))
            await eventually(lambda: seen.events == [ResourceUpdated("test://ok")])
        assert caplog.text.count("ignored a malformed message") == 3
        await raw.aclose()
        await publisher.close()

    with redis_server() as redis:
        asyncio.run(main(redis.url))


def test_an_event_received_twice_is_delivered_once():
    # A ChannelWriter resends a batch whose connection broke, which Redis may have
    # carried out already: the receiver skips a number of its sender seen before.
    async def main(url: str) -> None:
        import redis.asyncio as redis_asyncio

        publisher = RedisPublisher(url, channel="t5")
        await publisher.start()
        seen = Collecting()
        publisher.attach(seen)
        raw = redis_asyncio.Redis.from_url(url)
        for number, uri in ((1, "test://a"), (1, "test://a"), (2, "test://b"), (2, "test://b")):
            await raw.publish("t5", json.dumps({"o": "other", "n": number, "t": "ResourceUpdated", "v": [uri]}))
        await raw.publish("t5", json.dumps({"o": "other", "n": 3, "t": "ResourceUpdated", "v": ["test://end"]}))
        await eventually(lambda: ResourceUpdated("test://end") in seen.events)
        assert seen.events == [ResourceUpdated("test://a"), ResourceUpdated("test://b"),
                               ResourceUpdated("test://end")]
        await raw.aclose()
        await publisher.close()

    with redis_server() as redis:
        asyncio.run(main(redis.url))
