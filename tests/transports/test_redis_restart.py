"""Redis killed (kill -9) and restarted on the same port under load: every Redis
component -- session directory, event store, task store, fan-out -- answers the first
requests after Redis answers again, and no event published once it is back is lost."""

from __future__ import annotations

import asyncio
import socket

from loop import eventually
from mcpfast.scaleout.redis_event_store import RedisEventStore
from mcpfast.scaleout.redis_publisher import RedisPublisher
from mcpfast.scaleout.redis_session_directory import RedisSessionDirectory
from mcpfast.scaleout.redis_task_store import RedisTaskStore
from mcpfast.server.publisher import ResourceUpdated
from mcpfast.server.tasks.record import TaskRecord
from redis_server import redis_server


class Collecting:
    def __init__(self) -> None:
        self.events: list = []

    def deliver(self, event) -> bool:
        self.events.append(event)
        return True


def _subscribers(port: int, channel: str) -> int:
    """PUBSUB NUMSUB of ``channel``, asked on a plain socket."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        conn.sendall(f"PUBSUB NUMSUB {channel}\r\n".encode())
        reply = conn.recv(256).split(b"\r\n")
    return int(reply[-2][1:])


def test_requests_and_events_that_need_redis_work_again_once_it_answers_after_kill_9():
    async def main(redis) -> None:
        directory = RedisSessionDirectory(redis.url, prefix="r1:")
        store = RedisEventStore(redis.url, prefix="r1:")
        tasks = RedisTaskStore(redis.url, prefix="r1:")
        sender, receiver = RedisPublisher(redis.url, channel="r1"), RedisPublisher(redis.url, channel="r1")
        await directory.start(lambda message: None)
        await store.start()
        await tasks.start(lambda *relayed: None)
        await sender.start()
        await receiver.start()
        heard = Collecting()
        receiver.attach(heard)

        async def seed() -> None:
            await directory.create("s1", {"owner": "a"}, 60)
            await tasks.put(TaskRecord("t1", "tools/call", "experimental", None, 60_000, 500))

        async def burst() -> list:
            return await asyncio.gather(
                *[directory.lookup("s1") for _ in range(60)],
                *[tasks.get("t1") for _ in range(60)],
                return_exceptions=True)

        await seed()
        # Load: every pooled connection in use and a stream of events.
        assert not [a for a in await burst() if isinstance(a, BaseException)]
        for i in range(20):
            sender.publish(ResourceUpdated(f"test://before/{i}"))
            store.store("stream", f"data: {i}\n\n".encode())
        await eventually(lambda: len(heard.events) == 20)
        await store.written()

        redis.kill()
        for i in range(5):
            sender.publish(ResourceUpdated(f"test://during/{i}"))
        await asyncio.to_thread(redis.start)  # returns once the new Redis answers PING
        await seed()  # the new Redis starts empty
        answers = await burst()
        failed = [a for a in answers if isinstance(a, BaseException)]
        assert failed == [], f"{len(failed)} of {len(answers)} failed: {failed[:1]}"
        assert answers[0] == {"owner": "a"} and answers[60].task_id == "t1"

        # The fan-out: resubscribed (one pub/sub connection per process and Redis), events
        # published from now on all arrive, in order, once each.
        await eventually(lambda: _subscribers(redis.port, "r1") == 1)
        for i in range(50):
            sender.publish(ResourceUpdated(f"test://after/{i}"))
        after = [ResourceUpdated(f"test://after/{i}") for i in range(50)]
        await eventually(lambda: after[-1] in heard.events)
        assert [e for e in heard.events if e in after] == after
        assert len(heard.events) == len(set(heard.events))

        # The event store writes and replays again.
        first = store.store("stream2", b"data: a\n\n")
        store.store("stream2", b"data: b\n\n")
        await store.written()
        replay = await store.replay_after(first)
        assert replay is not None and [frame for _, frame in replay[1]] == [b"data: b\n\n"]

        for component in (receiver, sender, tasks, store, directory):
            await component.close()

    with redis_server() as redis:
        asyncio.run(main(redis))
