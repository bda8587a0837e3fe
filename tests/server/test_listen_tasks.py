"""subscriptions/listen with ``taskIds`` (the 2026-07-28 tasks extension): the
acknowledgement names the tasks the caller may follow, then ``notifications/tasks`` carry
each followed task's DetailedTask -- its state at once, then every change -- tagged with
the subscription id; refusals with the extension's error codes."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Optional

import jsonschema
import pytest

from mcpfast import AccessToken
from mcpfast.jsonrpc.errors import INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY
from mcpfast.protocol import meta_keys
from mcpfast.server.listen import MAX_TASK_IDS
from mcpfast.server.publisher import TaskStatus
from redis_server import redis_server

from .test_tasks import _TASK, DETAILED_TASK, EXT, Client2026, make_server, meta

SUB = meta_keys.SUBSCRIPTION_ID
# A notification's params: the DetailedTask (tasks/get's answer without resultType) and
# the subscription's _meta.
TASK_NOTIFICATION = {"allOf": [_TASK, DETAILED_TASK["allOf"][2], {
    "required": ["_meta"], "not": {"required": ["resultType"]}}]}
YES = {"action": "accept", "content": {"confirm": True}}


def listen(client: Client2026, request_id: str, notifications: Any,
           capabilities: Optional[dict] = None) -> None:
    client.conn.feed(json.dumps({
        "jsonrpc": "2.0", "id": request_id, "method": "subscriptions/listen",
        "params": {"_meta": meta(capabilities), "notifications": notifications}}).encode())


async def frames_for(client: Client2026, subscription: str, count: int) -> list[dict]:
    """The first ``count`` notifications of a subscription (in order), waiting for them."""
    for _ in range(2000):
        mine = [frame for frame in client.frames if "method" in frame
                and frame.get("params", {}).get("_meta", {}).get(SUB) == subscription]
        if len(mine) >= count:
            return mine
        await asyncio.sleep(0.001)
    raise AssertionError(f"subscription {subscription}: {len(mine)} of {count} notifications: {mine}")


def task_notes(frames: list[dict]) -> list[dict]:
    notes = [frame["params"] for frame in frames if frame["method"] == "notifications/tasks"]
    for params in notes:
        jsonschema.validate(params, TASK_NOTIFICATION)
    return notes


async def answer(client: Client2026, request_id: str) -> dict:
    for _ in range(2000):
        for frame in client.frames:
            if frame.get("id") == request_id and "method" not in frame:
                return frame
        await asyncio.sleep(0.001)
    raise AssertionError(f"no answer to {request_id}")


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def test_a_followed_task_is_sent_at_once_then_at_every_change(mcp_schema):
    async def main():
        app = make_server()
        client = Client2026(app, mcp_schema)
        created = await client.create("waits")
        task_id = created["taskId"]
        listen(client, "s900", {"taskIds": [task_id, "unknown", task_id], "toolsListChanged": True})
        ack, first = await frames_for(client, "s900", 2)
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        # The core schema's filter (closed by the test schemas) plus the extension's taskIds.
        core = {k: v for k, v in ack["params"]["notifications"].items() if k != "taskIds"}
        mcp_schema("2026-07-28").check_message({**ack, "params": {**ack["params"], "notifications": core}})
        # Only the task it may follow, once; the tool list kind as before.
        assert ack["params"]["notifications"] == {"toolsListChanged": True, "taskIds": [task_id]}
        [working] = task_notes([first])
        assert working["taskId"] == task_id and working["status"] == "working"
        assert working["_meta"] == {SUB: "s900"}
        app.gate.set()
        frames = await frames_for(client, "s900", 3)
        [_, done] = task_notes(frames[1:])
        assert done["status"] == "completed"
        assert done["result"]["content"][0]["text"].startswith(f"done in {task_id}")
        # What tasks/get answers now, but for resultType and the subscription's _meta.
        got = await client.get(task_id)
        assert {k: v for k, v in got.items() if k not in ("resultType", "_meta")} == \
            {k: v for k, v in done.items() if k != "_meta"}
        # Another task's changes are not sent on this stream.
        app.gate.clear()
        other = await client.create("waits")
        await client.ack("tasks/cancel", {"taskId": other["taskId"]})
        await asyncio.sleep(0.01)
        assert len(await frames_for(client, "s900", 3)) == 3

    run(main())


def test_questions_and_answers_and_cancel_are_notified(mcp_schema):
    async def main():
        app = make_server()
        client = Client2026(app, mcp_schema)
        created = await client.create("asks")
        task_id = created["taskId"]
        await client.wait_status(task_id, "input_required")
        listen(client, "s5", {"taskIds": [task_id]})
        frames = await frames_for(client, "s5", 2)
        # The state at the time: both questions pending, carried in the notification.
        notes = task_notes(frames[1:])
        for _ in range(200):
            if sorted(notes[-1].get("inputRequests", {})) == ["one", "two"]:
                break
            notes = task_notes((await frames_for(client, "s5", len(notes) + 2))[1:])
        assert notes[-1]["status"] == "input_required"
        assert sorted(notes[-1]["inputRequests"]) == ["one", "two"]
        seen = len(notes)
        await client.ack("tasks/update", {"taskId": task_id, "inputResponses": {"two": YES}})
        notes = task_notes((await frames_for(client, "s5", seen + 2))[1:])
        assert notes[seen]["status"] == "input_required" and list(notes[seen]["inputRequests"]) == ["one"]
        await client.ack("tasks/update", {"taskId": task_id, "inputResponses": {"one": YES}})
        # Both answered: working, then the third question (a key of its own).
        notes = task_notes((await frames_for(client, "s5", seen + 4))[1:])
        assert [note["status"] for note in notes[seen + 1:seen + 3]] == ["working", "input_required"]
        assert list(notes[seen + 2]["inputRequests"]) == ["one.3"]
        await client.ack("tasks/cancel", {"taskId": task_id})
        notes = task_notes((await frames_for(client, "s5", seen + 5))[1:])
        assert notes[-1]["status"] == "cancelled" and "inputRequests" not in notes[-1]
        assert notes[-1]["statusMessage"] == "Cancelled by the client"

    run(main())


def test_an_ended_task_is_sent_once_and_a_failed_one_carries_its_error(mcp_schema):
    async def main():
        app = make_server()
        client = Client2026(app, mcp_schema)
        failed = await client.create("protocol_error")
        await client.wait_status(failed["taskId"], "failed")
        listen(client, "s3", {"taskIds": [failed["taskId"]]})
        _, note = await frames_for(client, "s3", 2)
        [params] = task_notes([note])
        assert params["status"] == "failed" and params["error"]["message"] == "Internal error: gone"

    run(main())


def test_refusals(mcp_schema):
    async def main():
        app = make_server()
        client = Client2026(app, mcp_schema)
        created = await client.create("waits")
        # Without the extension on this request: -32021 naming it; nothing acknowledged.
        listen(client, "s1", {"taskIds": [created["taskId"]]}, capabilities={})
        refused = await answer(client, "s1")
        assert refused["error"]["code"] == MISSING_REQUIRED_CLIENT_CAPABILITY
        assert refused["error"]["data"]["requiredCapabilities"] == {"extensions": {EXT: {}}}
        for bad in ("id", [1], [["x"]], {"a": "b"}):
            listen(client, "s2", {"taskIds": bad})
            error = (await answer(client, "s2"))["error"]
            assert error["code"] == INVALID_PARAMS and error["data"] == {"param": "taskIds"}, bad
            client.frames.clear()
        listen(client, "s4", {"taskIds": [f"t{i}" for i in range(MAX_TASK_IDS + 1)]})
        assert (await answer(client, "s4"))["error"]["code"] == INVALID_PARAMS
        assert not [f for f in client.frames if f.get("method") == "notifications/subscriptions/acknowledged"]
        # An empty list asks for nothing: no extension needed.
        listen(client, "s6", {"taskIds": [], "toolsListChanged": True}, capabilities={})
        [ack] = await frames_for(client, "s6", 1)
        assert ack["params"]["notifications"] == {"toolsListChanged": True}
        app.gate.set()

    run(main())


def test_only_the_callers_own_tasks_are_followed(mcp_schema):
    async def main():
        app = make_server()
        alice, bob = Client2026(app, mcp_schema), Client2026(app, mcp_schema)
        alice.conn.auth = AccessToken("alice")
        bob.conn.auth = AccessToken("bob")
        created = await alice.create("waits")
        listen(bob, "s8", {"taskIds": [created["taskId"]]})
        [ack] = await frames_for(bob, "s8", 1)
        assert ack["params"]["notifications"] == {}
        app.gate.set()
        await alice.wait_status(created["taskId"], "completed")
        await asyncio.sleep(0.01)
        assert len(await frames_for(bob, "s8", 1)) == 1

    run(main())


def test_closing_the_stream_stops_the_notifications(mcp_schema):
    async def main():
        app = make_server()
        client = Client2026(app, mcp_schema)
        created = await client.create("waits")
        listen(client, "s11", {"taskIds": [created["taskId"]]})
        await frames_for(client, "s11", 2)
        client.conn.feed(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s11"}}')
        for _ in range(10):
            await asyncio.sleep(0)
        assert not app.listen_streams
        app.gate.set()
        await client.wait_status(created["taskId"], "completed")
        assert len(await frames_for(client, "s11", 2)) == 2

    run(main())


def test_a_change_in_another_process_reaches_the_stream(mcp_schema):
    """Two servers sharing a RedisTaskStore and a RedisPublisher, as two worker processes
    do: a task running on one, followed on the other, cancelled on the other."""
    from mcpfast.scaleout.redis_publisher import RedisPublisher
    from mcpfast.scaleout.redis_task_store import RedisTaskStore

    async def main(url: str) -> None:
        owner, other = make_server(), make_server()
        for app in (owner, other):
            app.tasks.store = RedisTaskStore(url, prefix="lt:")
            app.publisher = RedisPublisher(url, channel="lt")
            await app.publisher.start()
            await app.tasks.start()
        here, there = Client2026(owner, mcp_schema), Client2026(other, mcp_schema)
        created = await here.create("waits")
        listen(there, "s21", {"taskIds": [created["taskId"]]})
        frames = await frames_for(there, "s21", 2)
        assert frames[0]["params"]["notifications"] == {"taskIds": [created["taskId"]]}
        owner.gate.set()
        notes = task_notes((await frames_for(there, "s21", 3))[1:])
        assert [note["status"] for note in notes] == ["working", "completed"]
        owner.gate.clear()
        running = await here.create("waits")
        listen(there, "s22", {"taskIds": [running["taskId"]]})
        await frames_for(there, "s22", 2)
        # Cancelled through the owner: the other process's stream hears it.
        await here.ack("tasks/cancel", {"taskId": running["taskId"]})
        notes = task_notes((await frames_for(there, "s22", 3))[1:])
        assert notes[-1]["status"] == "cancelled"
        for app in (owner, other):
            await app.publisher.close()
            await app.tasks.store.close()

    with redis_server() as redis:
        run(main(redis.url))


def test_a_task_status_event_crosses_redis_as_json():
    from mcpfast.scaleout.redis_publisher import _EVENTS

    event = TaskStatus({"taskId": "t", "status": "working"})
    assert _EVENTS[type(event).__name__](*json.loads(json.dumps(list(event)))) == event


@pytest.mark.parametrize("ids", [[], ["a", "b"]])
def test_client_filter_carries_task_ids(ids):
    from mcpfast.client.listening import listen_filter

    if ids:
        assert listen_filter(False, False, False, (), ids) == {"taskIds": ids}
    else:
        with pytest.raises(ValueError):
            listen_filter(False, False, False, (), ids)
    with pytest.raises(TypeError):
        listen_filter(False, False, False, (), "abc")
