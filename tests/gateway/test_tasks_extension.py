"""Tasks of the 2026-07-28 extension through the gateway: a downstream client declaring
``io.modelcontextprotocol/tasks`` gets the task an upstream makes, under an id of the
gateway's own, and its tasks/get, tasks/update and tasks/cancel reach that upstream --
a 2026-07-28 upstream as they are, a 2025-11-25 one translated (tasks/update
acknowledged, answers to no question ignored); a 2025-11-25 client's task-augmented call
of a 2026-07-28 upstream is refused; a followed task's status reaches the client's
subscriptions/listen; an upstream that dies takes its tasks with it, and the downstream
is told so."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest

import mcpfast
from mcpfast import Context, Server
from mcpfast.jsonrpc.errors import JSONRPCError
from mcpfast.protocol import meta_keys

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent / "helpers"))
from loop import eventually  # noqa: E402

EXTENSIONS = {"extensions": {meta_keys.TASKS_EXTENSION: {}}}
# This file run as a script: the task upstream over stdio (the test that kills it).
SCRIPT = [sys.executable, str(Path(__file__).resolve())]


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 60))


def task_app(name: str, gate: asyncio.Event, events: list) -> Server:
    app = Server(name, task_poll_interval_ms=10)

    @app.tool(task_support="optional")
    async def crunch(n: int, ctx: Context) -> str:
        """Wait for the gate, then say who answered n squared."""
        events.append(("started", ctx.task_id))
        try:
            await gate.wait()
        except asyncio.CancelledError:
            events.append("cancelled")
            raise
        return f"{name}: {n * n}"

    @app.tool(task_support="optional")
    async def ask(ctx: Context) -> str:
        """Ask the user's name (inside the task), then greet."""
        answer = await ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}},
                                  input_key="user_name")
        return f"hello {answer.data['name']}"

    @app.tool(task_support="optional")
    async def broken() -> str:
        """A tool error."""
        raise ValueError("broken on purpose")

    @app.tool()
    def pid() -> int:
        """The process id."""
        return os.getpid()

    return app


def gateway_of(upstream: Server, era: str) -> Server:
    # A gateway mounting ``upstream`` under "w", its session speaking ``era``.
    app = Server("gateway")
    app.mount(upstream, namespace="w", protocol_version=era)
    return app


def raw(client, method: str, params: dict, capabilities: dict = EXTENSIONS) -> asyncio.Future:
    # One 2026-07-28 request as a client sends it, the tasks extension declared.
    meta = {meta_keys.PROTOCOL_VERSION: "2026-07-28", meta_keys.CLIENT_CAPABILITIES: capabilities,
            meta_keys.CLIENT_INFO: {"name": "raw", "version": "1"}}
    return client.session.request(method, {**params, "_meta": meta}, timeout=20)


def acknowledged(result: dict) -> bool:
    # An empty result, as 2026-07-28 shapes every one (resultType, the server's _meta).
    return result.get("resultType") == "complete" and set(result) <= {"resultType", "_meta"}


async def status_of(client, task_id: str) -> dict:
    return await raw(client, "tasks/get", {"taskId": task_id})


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
def test_a_task_is_made_polled_and_ends_with_its_result(era):
    async def main():
        gate, events = asyncio.Event(), []
        upstream_app = task_app("w", gate, events)
        app = Server("gateway")
        app.mount(upstream_app, namespace="w", protocol_version=era)
        async with mcpfast.connect(app, protocol_version="2026-07-28") as client:
            created = await raw(client, "tools/call", {"name": "w_crunch", "arguments": {"n": 7}})
            assert created["resultType"] == "task"
            assert created["status"] == "working" and created["pollIntervalMs"] == 10
            assert "ttlMs" in created and "ttl" not in created
            task_id = created["taskId"]
            working = await status_of(client, task_id)
            assert working["taskId"] == task_id and working["status"] == "working"
            # The gateway's own id, not the upstream's.
            [(_, upstream_id)] = events
            assert isinstance(upstream_id, str) and upstream_id != task_id
            gate.set()
            done = await until_ended(client, task_id)
            assert done["status"] == "completed" and done["taskId"] == task_id
            assert done["result"]["content"][0]["text"] == "w: 49"

    run(main())


async def until_ended(client, task_id: str, capabilities: dict = EXTENSIONS) -> dict:
    # tasks/get until the task has ended (bounded in requests, not in time).
    for _ in range(2000):
        task = await raw(client, "tasks/get", {"taskId": task_id}, capabilities)
        if task["status"] in ("completed", "failed", "cancelled"):
            return task
    raise AssertionError(f"task {task_id!r} did not end: {task}")


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
def test_the_client_with_tasks_gets_the_calls_own_result(era):
    async def main():
        gate, events = asyncio.Event(), []
        gate.set()
        app = gateway_of(task_app("w", gate, events), era)
        async with mcpfast.connect(app, client=mcpfast.Client(tasks=True, protocol_version="2026-07-28")) as client:
            result = await client.call_tool("w_crunch", {"n": 3})
            assert result["content"][0]["text"] == "w: 9"
            [(_, upstream_id)] = events  # it ran as a task upstream
            assert isinstance(upstream_id, str)
            # A tool error: completed with its isError result (2026-07-28), also from a
            # 2025-11-25 upstream, where it is a failed task.
            broken = await client.call_tool("w_broken")
            assert broken["isError"] is True and "broken on purpose" in broken["content"][0]["text"]

    run(main())


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
def test_a_task_cancelled_through_the_gateway_is_cancelled_upstream(era):
    async def main():
        gate, events = asyncio.Event(), []
        app = gateway_of(task_app("w", gate, events), era)
        async with mcpfast.connect(app, protocol_version="2026-07-28") as client:
            created = await raw(client, "tools/call", {"name": "w_crunch", "arguments": {"n": 2}})
            task_id = created["taskId"]
            assert acknowledged(await raw(client, "tasks/cancel", {"taskId": task_id}))
            await eventually(lambda: events[-1:] == ["cancelled"])
            assert (await status_of(client, task_id))["status"] == "cancelled"
            # Cancelling an ended task is acknowledged (2026-07-28), also across the eras.
            assert acknowledged(await raw(client, "tasks/cancel", {"taskId": task_id}))

    run(main())


# A 2026-07-28 upstream's own input key; a 2025-11-25 one's question, asked on its
# session within the task, under a key of the gateway's.
@pytest.mark.parametrize("era,key", [("2026-07-28", "user_name"), ("2025-11-25", "elicitation_1")])
def test_a_tasks_questions_are_answered_through_tasks_update(era, key):
    async def main():
        gate, events = asyncio.Event(), []
        app = gateway_of(task_app("w", gate, events), era)
        async with mcpfast.connect(app, protocol_version="2026-07-28") as client:
            capabilities = {**EXTENSIONS, "elicitation": {"form": {}}}
            created = await raw(client, "tools/call", {"name": "w_ask"}, capabilities)
            task_id = created["taskId"]
            asked: dict = {}

            async def asking() -> bool:
                asked.update(await raw(client, "tasks/get", {"taskId": task_id}, capabilities))
                return asked["status"] == "input_required"

            for _ in range(2000):
                if await asking():
                    break
            assert asked["status"] == "input_required" and asked["taskId"] == task_id
            assert list(asked["inputRequests"]) == [key]
            question = asked["inputRequests"][key]
            assert question["method"] == "elicitation/create"
            assert question["params"]["message"] == "Your name?"
            answer = {key: {"action": "accept", "content": {"name": "Ada"}}}
            assert acknowledged(await raw(client, "tasks/update", {"taskId": task_id, "inputResponses": answer},
                                          capabilities))
            done = await until_ended(client, task_id, capabilities)
            assert done["status"] == "completed" and done["result"]["content"][0]["text"] == "hello Ada"
            # The extension declared, elicitation not: the task's question is refused.
            task_id = (await raw(client, "tools/call", {"name": "w_ask"}))["taskId"]
            ended = await until_ended(client, task_id)
            assert ended["status"] == "failed" and ended["error"]["code"] == -32021
            assert "elicitation" in ended["error"]["message"]

        # The client's own handler answers them, through the gateway, in call_tool.
        async with mcpfast.connect(app, client=mcpfast.Client(
                tasks=True, protocol_version="2026-07-28",
                elicitation=lambda params: {"action": "accept", "content": {"name": "Bob"}})) as client:
            assert (await client.call_tool("w_ask"))["content"][0]["text"] == "hello Bob"

    run(main())


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
def test_a_legacy_task_param_of_a_2026_07_28_request_makes_no_task(era):
    async def main():
        gate, events = asyncio.Event(), []
        app = gateway_of(task_app("w", gate, events), era)
        async with mcpfast.connect(app, protocol_version="2026-07-28") as client:
            # Without the extension declared: the call's own result, no task upstream.
            result = await raw(client, "tools/call", {"name": "w_pid", "task": {"ttl": 60000}}, {})
            assert result["resultType"] == "complete" and isinstance(result["structuredContent"]["result"], int)
            gate.set()
            result = await raw(client, "tools/call", {"name": "w_crunch", "arguments": {"n": 6},
                                                      "task": {"ttl": 60000}}, {})
            assert result["resultType"] == "complete" and result["content"][0]["text"] == "w: 36"
            assert events == [("started", None)]

    run(main())


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
def test_a_tasks_status_reaches_the_listen_streams_following_it(era):
    async def main():
        gate, events = asyncio.Event(), []
        app = gateway_of(task_app("w", gate, events), era)
        async with mcpfast.connect(app, client=mcpfast.Client(tasks=True, protocol_version="2026-07-28")) as client:
            task_id = (await raw(client, "tools/call", {"name": "w_crunch", "arguments": {"n": 8}}))["taskId"]
            async with client.listen(task_ids=[task_id]) as stream:
                # The gateway's id is followed as one of the server's own tasks.
                assert stream.acknowledged["taskIds"] == [task_id]
                statuses = []
                async for note in stream:
                    assert note["method"] == "notifications/tasks"
                    task = note["params"]
                    assert task["taskId"] == task_id
                    statuses.append(task["status"])
                    if statuses == ["working"]:
                        gate.set()  # its state at once, then its end
                    if task["status"] == "completed":
                        break
                assert statuses == ["working", "completed"]
                assert task["result"]["content"][0]["text"] == "w: 64"
            # A question: the stream shows it pending, then the task's end once answered.
            capabilities = {**EXTENSIONS, "elicitation": {"form": {}}}
            task_id = (await raw(client, "tools/call", {"name": "w_ask"}, capabilities))["taskId"]
            async with client.listen(task_ids=[task_id]) as stream:
                async for note in stream:
                    task = note["params"]
                    if task["status"] == "input_required":
                        [key] = task["inputRequests"]
                        await raw(client, "tasks/update", {"taskId": task_id, "inputResponses": {
                            key: {"action": "accept", "content": {"name": "Ann"}}}}, capabilities)
                    if task["status"] not in ("working", "input_required"):
                        break
                assert task["status"] == "completed" and task["result"]["content"][0]["text"] == "hello Ann"

    run(main())


def test_across_the_eras_update_is_acknowledged_and_a_required_task_needs_the_extension():
    async def main():
        gate, events = asyncio.Event(), []
        upstream_app = task_app("w", gate, events)

        @upstream_app.tool(task_support="required")
        async def long_job() -> str:
            """Runs only as a task."""
            return "done"

        app = Server("gateway")
        app.mount(upstream_app, namespace="old", protocol_version="2025-11-25")
        async with mcpfast.connect(app, protocol_version="2026-07-28") as client:
            task_id = (await raw(client, "tools/call", {"name": "old_crunch", "arguments": {"n": 1}}))["taskId"]
            # The 2025-11-25 task shows no question: answers to none are ignored.
            assert acknowledged(await raw(client, "tasks/update", {"taskId": task_id, "inputResponses": {
                "nothing": {"action": "accept", "content": {}}}}))
            gate.set()
            assert (await until_ended(client, task_id))["result"]["content"][0]["text"] == "w: 1"
            # Without the extension, a tool that runs only as a task: -32021, as a
            # 2026-07-28 server says (the 2025-11-25 upstream would say -32601).
            with pytest.raises(JSONRPCError) as caught:
                await raw(client, "tools/call", {"name": "old_long_job"}, {})
            assert caught.value.code == -32021
            assert meta_keys.TASKS_EXTENSION in caught.value.message
            created = await raw(client, "tools/call", {"name": "old_long_job"})
            assert (await until_ended(client, created["taskId"]))["result"]["content"][0]["text"] == "done"

    run(main())


def test_ids_of_two_upstreams_reach_their_own_and_unknown_ids_are_refused():
    async def main():
        gate, events = asyncio.Event(), []
        first, second = task_app("a", gate, events), task_app("b", gate, events)
        app = Server("gateway")
        app.mount(first, namespace="a", protocol_version="2026-07-28")
        app.mount(second, namespace="b", protocol_version="2025-11-25")
        async with mcpfast.connect(app, protocol_version="2026-07-28") as client:
            on_a = (await raw(client, "tools/call", {"name": "a_crunch", "arguments": {"n": 2}}))["taskId"]
            on_b = (await raw(client, "tools/call", {"name": "b_crunch", "arguments": {"n": 3}}))["taskId"]
            assert on_a != on_b
            gate.set()
            texts = {task_id: (await until_ended(client, task_id))["result"]["content"][0]["text"]
                     for task_id in (on_a, on_b)}
            assert texts == {on_a: "a: 4", on_b: "b: 9"}
            # The upstreams' own ids, and made-up ones, are unknown to the gateway.
            upstream_ids = [task_id for kind, task_id in events if kind == "started"]
            assert len(upstream_ids) == 2 and not {on_a, on_b} & set(upstream_ids)
            for task_id in [*upstream_ids, "no-such-task"]:
                for method in ("tasks/get", "tasks/cancel", "tasks/update"):
                    with pytest.raises(JSONRPCError) as caught:
                        await raw(client, method, {"taskId": task_id, "inputResponses": {}})
                    assert caught.value.code == -32602, (method, caught.value)
            # A client that did not declare the extension reaches no task.
            with pytest.raises(JSONRPCError) as caught:
                await raw(client, "tasks/get", {"taskId": on_a}, {})
            assert caught.value.code == -32021

    run(main())


def test_a_2025_11_25_clients_task_of_a_2026_07_28_upstream_is_refused():
    async def main():
        gate, events = asyncio.Event(), []
        gate.set()
        app = Server("gateway")
        app.mount(task_app("w", gate, events), namespace="new", protocol_version="2026-07-28")
        async with mcpfast.connect(app) as client:
            assert client.protocol_version == "2025-11-25"
            with pytest.raises(JSONRPCError) as caught:
                await client.request("tools/call", {"name": "new_crunch", "arguments": {"n": 2},
                                                    "task": {"ttl": 60000}})
            assert caught.value.code == -32602
            assert "params.task" in caught.value.message and "upstream 'new'" in caught.value.message
            # Without params.task the call runs as any other.
            assert (await client.call_tool("new_crunch", {"n": 2}))["content"][0]["text"] == "w: 4"

    run(main())


async def serve_http(app: Server) -> tuple[str, asyncio.Task]:
    bound: asyncio.Future = asyncio.get_running_loop().create_future()
    task = asyncio.ensure_future(app.serve_http("127.0.0.1", 0, ready=lambda h, p: bound.set_result(p)))
    return f"http://127.0.0.1:{await bound}/mcp", task


def test_both_legs_over_http():
    # Over HTTP a 2026-07-28 request is its own: tasks are not bound to a connection.
    async def main():
        gate, events = asyncio.Event(), []
        gate.set()
        upstream_url, upstream_served = await serve_http(task_app("w", gate, events))
        app = Server("gateway")
        app.mount(upstream_url, namespace="w", protocol_version="2026-07-28")
        url, served = await serve_http(app)
        try:
            async with mcpfast.connect(url, client=mcpfast.Client(
                    tasks=True, protocol_version="2026-07-28",
                    elicitation=lambda params: {"action": "accept", "content": {"name": "Eve"}})) as client:
                assert meta_keys.TASKS_EXTENSION in client.server_capabilities.get("extensions", {})
                assert (await client.call_tool("w_crunch", {"n": 4}))["content"][0]["text"] == "w: 16"
                assert (await client.call_tool("w_ask"))["content"][0]["text"] == "hello Eve"
                # It ran as a task upstream (the call's own result came through tasks/get).
                [(_, upstream_id)] = events
                assert isinstance(upstream_id, str)
        finally:
            for task in (served, upstream_served):
                task.cancel()
            await asyncio.gather(served, upstream_served, return_exceptions=True)

    run(main())


def test_an_upstream_dying_mid_task_takes_its_task_and_says_so():
    async def main():
        app = Server("gateway")
        upstream = app.mount(SCRIPT, namespace="w", protocol_version="2026-07-28")
        upstream.backoff = 0.05
        async with app.running():
            async with mcpfast.connect(app, client=mcpfast.Client(tasks=True, protocol_version="2026-07-28")) as client:
                pid = (await client.call_tool("w_pid"))["structuredContent"]["result"]
                created = await raw(client, "tools/call", {"name": "w_crunch", "arguments": {"n": 5}})
                task_id = created["taskId"]
                assert (await status_of(client, task_id))["status"] == "working"
                async with client.listen(task_ids=[task_id]) as stream:
                    assert (await anext(stream))["params"]["status"] == "working"
                    os.kill(pid, signal.SIGKILL)
                    # Its followers are told when the new session starts without it.
                    ended = (await anext(stream))["params"]
                assert ended["status"] == "failed" and ended["error"]["code"] == -32008
                assert "upstream 'w' restarted" in ended["error"]["message"]
                await eventually(lambda: upstream.state == "ready" and upstream.starts == 2, timeout=20)
                with pytest.raises(JSONRPCError) as caught:
                    await status_of(client, task_id)
                assert caught.value.code == -32602
                assert "restarted" in caught.value.message and "upstream 'w'" in caught.value.message

    run(main())


if __name__ == "__main__":
    task_app("w", asyncio.Event(), []).run()
