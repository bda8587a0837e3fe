"""mcpfast's client and the 2026-07-28 tasks extension: declared with ``tasks=True``, a
tools/call the server turns into a task is followed (tasks/get, tasks/update with the
client's own handlers) and the caller gets the call's own result -- over TCP and
Streamable HTTP, against mcpfast's server."""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

import pytest

from mcpfast import Context, Server, connect
from mcpfast.jsonrpc import INTERNAL_ERROR, JSONRPCError

V2026 = "2026-07-28"
CONFIRM = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}


def make_server() -> Server:
    app = Server("tasks-client", task_poll_interval_ms=20)
    app.seen = []  # type: ignore[attr-defined]
    app.cancelled = asyncio.Event()  # type: ignore[attr-defined]

    @app.tool(task_support="optional")
    async def slow(ms: int = 50) -> str:
        await asyncio.sleep(ms / 1000)
        return f"slept {ms} ms"

    @app.tool(task_support="optional")
    async def asks(ctx: Context) -> str:
        one, two = await asyncio.gather(ctx.elicit("One?", CONFIRM), ctx.elicit("Two?", CONFIRM))
        return f"{one.content['confirm']} {two.content['confirm']}"

    @app.tool(task_support="optional")
    async def breaks() -> str:
        raise JSONRPCError(INTERNAL_ERROR, "Internal error: broke", {"where": "task"})

    @app.tool(task_support="optional")
    async def forever() -> str:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            app.cancelled.set()  # type: ignore[attr-defined]
            raise
        return "never"

    @app.tool()
    def plain() -> str:
        return "plain"

    return app


@asynccontextmanager
async def serving(app: Server, transport: str) -> AsyncIterator[str]:
    ready: asyncio.Future = asyncio.get_running_loop().create_future()
    serve = app.serve_tcp if transport == "tcp" else app.serve_http
    task = asyncio.create_task(serve("127.0.0.1", 0, ready=lambda h, p: ready.set_result(p)))
    try:
        port = await ready
        yield f"tcp://127.0.0.1:{port}" if transport == "tcp" else f"http://127.0.0.1:{port}/mcp"
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def elicited(params: Any) -> dict:
    return {"action": "accept", "content": {"confirm": True}}


@pytest.mark.parametrize("transport", ["tcp", "http"])
def test_calls_the_server_turns_into_tasks_return_their_own_results(transport):
    async def main() -> None:
        app = make_server()
        async with serving(app, transport) as url:
            async with connect(url, protocol_version=V2026, tasks=True, elicitation=elicited) as client:
                assert (await client.call_tool("slow", {"ms": 60}))["content"][0]["text"] == "slept 60 ms"
                # Questions the task waits on are answered by the client's own handlers.
                assert (await client.call_tool("asks"))["content"][0]["text"] == "True True"
                assert (await client.call_tool("plain"))["content"][0]["text"] == "plain"
                with pytest.raises(JSONRPCError) as failed:
                    await client.call_tool("breaks")
                assert failed.value.code == INTERNAL_ERROR and failed.value.data == {"where": "task"}
                # The caller giving up cancels the task on the server.
                waiting = asyncio.ensure_future(client.call_tool("forever"))
                await asyncio.sleep(0.2)
                waiting.cancel()
                await asyncio.wait_for(app.cancelled.wait(), 5)  # type: ignore[attr-defined]
            # Every task-capable call went through a task (its record is in the store).
            made = len(app.tasks.store)
            assert made == 4
            # Without tasks=True the same calls run as plain calls: no task made.
            async with connect(url, protocol_version=V2026, elicitation=elicited) as client:
                assert (await client.call_tool("slow", {"ms": 10}))["content"][0]["text"] == "slept 10 ms"
            assert len(app.tasks.store) == made

    asyncio.run(main())


@pytest.mark.parametrize("transport", ["tcp", "http"])
def test_listening_to_a_task_yields_its_status_notifications(transport):
    async def main() -> None:
        app = make_server()
        async with serving(app, transport) as url:
            async with connect(url, protocol_version=V2026, tasks=True) as client:
                waiting = asyncio.ensure_future(client.call_tool("forever"))
                for _ in range(500):
                    if app.tasks.running:
                        break
                    await asyncio.sleep(0.01)
                [task_id] = list(app.tasks.running)
                async with client.listen(task_ids=[task_id, "not-a-task"], timeout=5) as stream:
                    assert stream.acknowledged == {"taskIds": [task_id]}
                    first = await asyncio.wait_for(stream.__anext__(), 5)
                    assert first["method"] == "notifications/tasks"
                    assert first["params"]["taskId"] == task_id and first["params"]["status"] == "working"
                    # The caller giving up cancels the task: the stream hears it.
                    waiting.cancel()
                    second = await asyncio.wait_for(stream.__anext__(), 5)
                    assert second["params"]["status"] == "cancelled"
            # Without the extension the client refuses before asking.
            async with connect(url, protocol_version=V2026) as client:
                with pytest.raises(Exception, match="tasks=True"):
                    client.listen(task_ids=[task_id])

    asyncio.run(main())
