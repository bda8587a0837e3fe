"""The Redis connections every Redis component shares (mcpfast.scaleout.redis_connection),
against a real redis-server: after Redis restarts (kill -9, the same port) the pooled
connections are dead, and the next commands must still be answered."""

from __future__ import annotations

import asyncio
import logging
import socket

import pytest

from loop import eventually
from mcpfast.scaleout import redis_connection
from mcpfast.scaleout.redis_connection import ChannelWriter, Outage, RedisUnavailable, Sequence, command, redis_client
from redis_server import redis_server


def _kill_clients(port: int) -> None:
    """Make Redis close every client connection, from a plain socket: the closes happen
    while the event loop runs nothing, so the pool has not seen them when it hands the
    connections out next."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        conn.sendall(b"CLIENT KILL TYPE normal SKIPME yes\r\n")
        assert conn.recv(64).startswith(b":")


async def _fill_pool(client, count: int) -> None:
    await asyncio.gather(*[client.get(f"warm{i}") for i in range(count)])


def test_pooled_connections_are_replaced_after_a_restart():
    async def main(redis) -> None:
        client = redis_client(redis.url, "test")
        await client.set("k", "v")
        await _fill_pool(client, 60)
        redis.kill()
        await asyncio.to_thread(redis.start)
        await client.set("k", "v")  # the new Redis is empty
        answers = await asyncio.gather(*[command(lambda: client.get("k"), redis.url, idempotent=False)
                                         for _ in range(60)], return_exceptions=True)
        assert answers == [b"v"] * 60
        await client.aclose()

    with redis_server() as redis:
        asyncio.run(main(redis))


def test_an_idempotent_command_whose_connection_broke_is_run_again():
    async def main(redis) -> None:
        client = redis_client(redis.url, "test")
        await client.set("k", "v")
        await _fill_pool(client, 20)
        _kill_clients(redis.port)
        answers = await asyncio.gather(*[command(lambda: client.get("k"), redis.url, idempotent=True)
                                         for _ in range(20)])
        assert answers == [b"v"] * 20
        # Not an idempotent one: its first attempt may have been carried out.
        _kill_clients(redis.port)
        with pytest.raises(RedisUnavailable, match=r"cannot reach Redis at redis://127\.0\.0\.1"):
            await command(lambda: client.incr("n"), redis.url, idempotent=False)
        assert await client.get("n") is None
        await client.aclose()

    with redis_server() as redis:
        asyncio.run(main(redis))


def test_a_channel_writer_resends_what_failed_once_redis_answers(caplog):
    async def main(redis) -> None:
        client = redis_client(redis.url, "test")
        got: list[bytes] = []
        sub = await redis_connection.subscribe(redis.url, "c", got.append, "test")
        writer = ChannelWriter(client, "c", redis.url, Outage("test"), failure="down {url} {error}",
                               recovery="up {url}")
        # Redis refuses the publishes (the subscription stays up): they wait, in order.
        await client.execute_command("ACL", "SETUSER", "default", "-publish")
        with caplog.at_level(logging.WARNING, logger="mcpfast.server"):
            for i in range(5):
                writer.send(f"m{i}")
            await eventually(lambda: "down redis://" in caplog.text)
            writer.send("m5")
            await client.execute_command("ACL", "SETUSER", "default", "+publish")
            await eventually(lambda: len(got) >= 6)
            # The subscriber may hear the resent messages before the writer reads Redis's answer
            # and logs the recovery.
            await eventually(lambda: "up redis://" in caplog.text)
        assert got == [f"m{i}".encode() for i in range(6)]
        await redis_connection.close_redis(writer.finish(), sub, client)

    with redis_server() as redis:
        asyncio.run(main(redis))


def test_a_closing_writer_gives_up_on_an_absent_redis():
    async def main(redis) -> None:
        client = redis_client(redis.url, "test")
        writer = ChannelWriter(client, "c", redis.url, Outage("test"), failure="down {url} {error}",
                               recovery="up {url}")
        redis.kill()
        writer.send("lost")
        await redis_connection.close_redis(writer.finish(), None, client)
        assert writer.pending() == []

    with redis_server() as redis:
        asyncio.run(main(redis))


def test_the_backlog_is_bounded_with_one_warning(caplog):
    with pytest.raises(ValueError, match="max_unsent must be an int >= 1"):
        ChannelWriter(None, "c", "redis://127.0.0.1", Outage("test"), "", "", max_unsent=0)

    async def main(redis) -> None:
        client = redis_client(redis.url, "test")
        writer = ChannelWriter(client, "c", redis.url, Outage("test"), failure="down {url} {error}",
                               recovery="up {url}", max_unsent=3)
        redis.kill()
        with caplog.at_level(logging.WARNING, logger="mcpfast.server"):
            for i in range(10):
                writer.send(f"m{i}")
            await asyncio.sleep(0)
        assert caplog.text.count("dropping the oldest") == 1
        await redis_connection.close_redis(writer.finish(), None, client)

    with redis_server() as redis:
        asyncio.run(main(redis))


def test_sequence_skips_repeats_per_origin():
    sender, receiver = Sequence(), Sequence()
    first, second = sender.stamp(), sender.stamp()
    assert receiver.fresh("a", first) and receiver.fresh("a", second)
    assert not receiver.fresh("a", second) and not receiver.fresh("a", first)
    assert receiver.fresh("b", first)  # another sender counts on its own
    assert receiver.fresh("a", None)  # a sender that does not number its messages
