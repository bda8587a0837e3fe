"""Tasks through the gateway (the 2025-11-25 tasks utility): a task-augmented call of a
mounted tool makes a task upstream, shown under the gateway's own id; tasks/get,
tasks/result, tasks/list and tasks/cancel reach it for the client that made it only; its
status notifications reach that client."""

from __future__ import annotations

import asyncio

import pytest

import mcpfast
from mcpfast import Context, Server
from mcpfast.jsonrpc.errors import JSONRPCError


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 30))


def task_app(gate: asyncio.Event, events: list, started: list | None = None) -> Server:
    app = Server("worker")

    @app.tool(task_support="optional")
    async def crunch(n: int, ctx: Context) -> int:
        """Wait for the gate, then answer n squared."""
        if started is not None:
            started.append(ctx.task_id)
        try:
            await gate.wait()
        except asyncio.CancelledError:
            events.append("cancelled")
            raise
        return n * n

    return app


def test_a_task_made_through_the_gateway_belongs_to_its_client():
    async def main():
        gate, events, started = asyncio.Event(), [], []
        app = Server("gateway")
        app.mount(task_app(gate, events, started), namespace="w")
        async with app.running():
            owner = await mcpfast.connect(app)
            other = await mcpfast.connect(app)
            try:
                assert owner.protocol_version == "2025-11-25"
                assert "tasks" in owner.server_capabilities
                statuses = []
                owner.on_notification("notifications/tasks/status", statuses.append)
                created = await owner.request("tools/call", {"name": "w_crunch", "arguments": {"n": 7},
                                                             "task": {"ttl": 60000}})
                task_id = created["task"]["taskId"]
                assert (await owner.request("tasks/get", {"taskId": task_id}))["status"] == "working"
                # Shown under the gateway's own id; the upstream's is unknown downstream.
                [upstream_id] = started
                assert upstream_id != task_id
                with pytest.raises(JSONRPCError) as caught:
                    await owner.request("tasks/get", {"taskId": upstream_id})
                assert caught.value.code == -32602
                listed = await owner.request("tasks/list", {})
                assert [task["taskId"] for task in listed["tasks"]] == [task_id]
                # Another client of the gateway knows nothing of it.
                with pytest.raises(JSONRPCError) as caught:
                    await other.request("tasks/get", {"taskId": task_id})
                assert caught.value.code == -32602
                assert (await other.request("tasks/list", {}))["tasks"] == []

                waiting = asyncio.ensure_future(owner.request("tasks/result", {"taskId": task_id}))
                gate.set()
                result = await waiting
                assert result["structuredContent"] == {"result": 49}
                done = await owner.request("tasks/get", {"taskId": task_id})
                assert done["status"] == "completed"
                # The upstream's status notifications reached the client that owns the task.
                deadline = asyncio.get_running_loop().time() + 10
                while not any(s.get("taskId") == task_id and s.get("status") == "completed" for s in statuses):
                    assert asyncio.get_running_loop().time() < deadline, statuses
                    await asyncio.sleep(0.01)
            finally:
                await owner.aclose()
                await other.aclose()

    run(main())


def test_a_task_cancelled_through_the_gateway_is_cancelled_upstream():
    async def main():
        gate, events = asyncio.Event(), []
        app = Server("gateway")
        app.mount(task_app(gate, events), namespace="w")
        async with mcpfast.connect(app) as client:
            created = await client.request("tools/call", {"name": "w_crunch", "arguments": {"n": 2},
                                                          "task": {"ttl": 60000}})
            task_id = created["task"]["taskId"]
            await asyncio.sleep(0)
            cancelled = await client.request("tasks/cancel", {"taskId": task_id})
            assert cancelled["status"] == "cancelled"
            deadline = asyncio.get_running_loop().time() + 10
            while events != ["cancelled"]:
                assert asyncio.get_running_loop().time() < deadline
                await asyncio.sleep(0.01)

    run(main())
