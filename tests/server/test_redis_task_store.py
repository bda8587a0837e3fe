"""RedisTaskStore: task records in a real Redis (Debian's redis-server on loopback), so
that any process answers for a task, and cancel/update relayed to the task's owner."""

from __future__ import annotations

import asyncio
import time

import pytest

from mcpfast.jsonrpc.errors import INVALID_PARAMS
from mcpfast.scaleout.redis_task_store import RedisTaskStore
from mcpfast.server.tasks.record import TaskRecord
from redis_server import redis_server

from .test_tasks import Client2026, make_server


def run(coroutine):
    return asyncio.run(coroutine)


def test_records_round_trip_expire_and_list_by_principal():
    async def main(url: str) -> None:
        store = RedisTaskStore(url, prefix="t1:")
        records = [TaskRecord(f"id{i}", "tools/call", "experimental", "alice", 60_000, 500) for i in range(5)]
        for index, record in enumerate(records):
            record.created_at = time.time() + index / 1000
            await store.put(record)
        await store.put(TaskRecord("other", "tools/call", "experimental", "bob", 60_000, 500))
        got = await store.get("id2")
        assert got is not None and got.to_json() == records[2].to_json()
        assert await store.get("missing") is None
        first, cursor = await store.list("alice", None, 2)
        assert [r.task_id for r in first] == ["id0", "id1"] and cursor == "id1"
        second, cursor = await store.list("alice", cursor, 2)
        third, last = await store.list("alice", cursor, 2)
        assert [r.task_id for r in second + third] == ["id2", "id3", "id4"] and last is None
        with pytest.raises(Exception, match="cursor"):
            await store.list("alice", "nope", 2)
        short = TaskRecord("short", "tools/call", "extension", None, 1000, None)
        await store.put(short)
        assert await store.get("short") is not None
        await asyncio.sleep(2.2)
        assert await store.get("short") is None
        await store.close()

    with redis_server() as redis:
        run(main(redis.url))


def test_any_process_answers_for_a_task_and_relays_cancel_and_update(mcp_schema):
    async def main(url: str) -> None:
        owner, other = make_server(), make_server()
        for app in (owner, other):
            app.tasks.store = RedisTaskStore(url, prefix="t2:")
            await app.tasks.start()
        here, there = Client2026(owner, mcp_schema), Client2026(other, mcp_schema)
        # Created on one process, polled on the other: found at once, then completed there too.
        created = await here.create("waits")
        assert (await there.get(created["taskId"]))["status"] == "working"
        owner.gate.set()
        done = await there.wait_status(created["taskId"], "completed")
        assert done["result"]["content"][0]["text"].startswith(f"done in {created['taskId']}")
        # Cancel on the other process: marked at once, and the owner stops the work.
        owner.gate.clear()
        running = await here.create("waits")
        await there.ack("tasks/cancel", {"taskId": running["taskId"]})
        assert (await there.get(running["taskId"]))["status"] == "cancelled"
        for _ in range(100):
            if owner.events == ["cancelled"]:
                break
            await asyncio.sleep(0.02)
        assert owner.events == ["cancelled"]
        # Answers sent to the other process reach the owner's waiting questions.
        asking = await here.create("asks")
        task = await there.wait_status(asking["taskId"], "input_required")
        for _ in range(100):
            if len(task["inputRequests"]) == 2:
                break
            task = await there.get(asking["taskId"])
        yes = {"action": "accept", "content": {"confirm": True}}
        await there.ack("tasks/update", {"taskId": asking["taskId"], "inputResponses": {"one": yes, "two": yes}})
        task = await there.wait_status(asking["taskId"], "input_required")
        for _ in range(100):
            if list(task["inputRequests"]) == ["one.3"]:
                break
            await asyncio.sleep(0.02)
            task = await there.get(asking["taskId"])
        assert list(task["inputRequests"]) == ["one.3"]
        await there.ack("tasks/update", {"taskId": asking["taskId"], "inputResponses": {"one.3": yes}})
        done = await there.wait_status(asking["taskId"], "completed")
        assert done["result"]["content"][0]["text"] == "True True True"
        assert (await there.error("tasks/get", {"taskId": "unknown"}))["code"] == INVALID_PARAMS
        for app in (owner, other):
            await app.tasks.store.close()

    with redis_server() as redis:
        run(main(redis.url))


def test_a_request_needing_the_store_says_it_is_out_of_reach(mcp_schema):
    async def main(redis) -> None:
        app = make_server()
        app.tasks.store = RedisTaskStore(redis.url, prefix="t3:")
        await app.tasks.start()
        client = Client2026(app, mcp_schema)
        redis.kill()
        error = await client.error("tasks/get", {"taskId": "any"})
        assert error == {"code": -32603, "message": "Internal error: the task store is out of reach"}
        await asyncio.to_thread(redis.start)
        assert (await client.error("tasks/get", {"taskId": "any"}))["code"] == INVALID_PARAMS  # answers again
        await app.tasks.store.close()

    with redis_server() as redis:
        run(main(redis))
