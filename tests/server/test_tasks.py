"""Tasks: a tools/call answered with a handle while the tool goes on in the background.

Both wire forms: the 2026-07-28 extension io.modelcontextprotocol/tasks (its shapes are
not in the revision's schema, so they are checked against the JSON Schemas below, written
from SEP-2663) and the 2025-11-25 experimental tasks (every frame checked against that
revision's schema by the FakeClient)."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Optional

import jsonschema
import pytest

from mcpfast import AccessToken, Context, Server
from mcpfast.jsonrpc import INTERNAL_ERROR, JSONRPCError
from mcpfast.jsonrpc.errors import INVALID_PARAMS, METHOD_NOT_FOUND, MISSING_REQUIRED_CLIENT_CAPABILITY
from mcpfast.protocol import meta_keys
from mcpfast.server import ToolResult
from mcpfast.server.tasks.record import TaskRecord
from mcpfast.server.tasks.store import MemoryTaskStore, TaskStoreFull

V2026 = "2026-07-28"
EXT = meta_keys.TASKS_EXTENSION
WITH_TASKS = {"elicitation": {}, "extensions": {EXT: {}}}
ISO = r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$"
_TASK = {
    "type": "object",
    "required": ["taskId", "status", "createdAt", "lastUpdatedAt", "ttlMs"],
    "properties": {
        "taskId": {"type": "string", "minLength": 1},
        "status": {"enum": ["working", "input_required", "completed", "cancelled", "failed"]},
        "statusMessage": {"type": "string"},
        "createdAt": {"type": "string", "pattern": ISO},
        "lastUpdatedAt": {"type": "string", "pattern": ISO},
        "ttlMs": {"type": ["integer", "null"], "minimum": 1},
        "pollIntervalMs": {"type": "integer", "minimum": 1},
    },
    "not": {"anyOf": [{"required": ["ttl"]}, {"required": ["pollInterval"]}, {"required": ["task"]},
                      {"required": ["requestState"]}]},
}
CREATE_TASK_RESULT = {"allOf": [_TASK, {
    "properties": {"resultType": {"const": "task"}}, "required": ["resultType"],
    "not": {"anyOf": [{"required": ["result"]}, {"required": ["error"]}, {"required": ["inputRequests"]}]}}]}
DETAILED_TASK = {"allOf": [_TASK, {"properties": {"resultType": {"const": "complete"}}, "required": ["resultType"]}, {
    "oneOf": [
        {"properties": {"status": {"enum": ["working", "cancelled"]}},
         "not": {"anyOf": [{"required": ["result"]}, {"required": ["error"]}, {"required": ["inputRequests"]}]}},
        {"properties": {"status": {"const": "input_required"},
                        "inputRequests": {"type": "object", "minProperties": 1,
                                          "additionalProperties": {"type": "object", "required": ["method"]}}},
         "required": ["inputRequests"]},
        {"properties": {"status": {"const": "completed"}, "result": {"type": "object"}},
         "required": ["result"], "not": {"required": ["error"]}},
        {"properties": {"status": {"const": "failed"},
                        "error": {"type": "object", "required": ["code", "message"]}},
         "required": ["error"], "not": {"required": ["result"]}},
    ]}]}
ACK = {"type": "object", "properties": {"resultType": {"const": "complete"}}, "required": ["resultType"],
       "not": {"anyOf": [{"required": k} for k in (["taskId"], ["status"], ["result"], ["error"],
                                                  ["inputRequests"])]}}
CONFIRM = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}


def make_server(**options: Any) -> Server:
    app = Server("tasks", **options)
    app.events = []  # type: ignore[attr-defined]
    gate = asyncio.Event()
    app.gate = gate  # type: ignore[attr-defined]

    @app.tool()
    def greet(name: str) -> str:
        return f"Hello, {name}!"

    @app.tool(task_support="optional")
    async def waits(ctx: Context) -> str:
        sent = ctx.info("inside the task")
        try:
            await gate.wait()
        except asyncio.CancelledError:
            app.events.append("cancelled")
            raise
        return f"done in {ctx.task_id} (log sent: {bool(sent)})"

    @app.tool(task_support="required")
    async def tool_error() -> ToolResult:
        return ToolResult("broke", is_error=True)

    @app.tool(task_support="optional")
    async def protocol_error() -> str:
        raise JSONRPCError(INTERNAL_ERROR, "Internal error: gone", {"why": "test"})

    @app.tool(task_support="optional")
    async def asks(ctx: Context) -> str:
        first, second = await asyncio.gather(ctx.elicit("One?", CONFIRM, input_key="one"),
                                             ctx.elicit("Two?", CONFIRM, input_key="two"))
        third = await ctx.elicit("One again?", CONFIRM, input_key="one")
        return f"{first.content['confirm']} {second.content['confirm']} {third.content['confirm']}"

    @app.tool(task_support="required", task_start="handler")
    async def escalates(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", {"type": "object", "properties": {"name": {"type": "string"}}},
                                  input_key="user_name")
        became = await ctx.run_as_task()
        app.events.append(("became task", became))
        return f"Hello, {answer.content['name']}!"

    @app.tool(task_support="optional", task_start="handler")
    async def maybe(ctx: Context) -> str:
        return f"task: {await ctx.run_as_task()}"

    return app


def meta(capabilities: Optional[dict] = None) -> dict:
    return {meta_keys.PROTOCOL_VERSION: V2026,
            meta_keys.CLIENT_CAPABILITIES: WITH_TASKS if capabilities is None else capabilities}


class Client2026:
    """2026-07-28 requests on one connection; answers collected by id."""

    def __init__(self, server: Server, mcp_schema: Any, capabilities: Optional[dict] = None) -> None:
        self.frames: list[dict] = []
        self.conn = server.connect(lambda frame: self.frames.append(json.loads(frame)))
        self.schema = mcp_schema(V2026)
        self.capabilities = capabilities
        self.ids = iter(range(1, 10_000))

    async def send(self, method: str, params: Optional[dict] = None, capabilities: Optional[dict] = None) -> dict:
        request_id = next(self.ids)
        params = {**(params or {}), "_meta": meta(capabilities if capabilities is not None else self.capabilities)}
        self.conn.feed(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method,
                                   "params": params}).encode())
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 10
        rounds = 0
        while loop.time() < deadline:
            for index, frame in enumerate(self.frames):
                if frame.get("id") == request_id and "method" not in frame:
                    return self.frames.pop(index)
            rounds += 1
            # A few turns of the loop answer in-process requests; a shared store takes I/O.
            await asyncio.sleep(0 if rounds < 200 else 0.001)
        raise AssertionError(f"no answer to {method}")

    async def result(self, method: str, params: Optional[dict] = None, **options: Any) -> dict:
        answer = await self.send(method, params, **options)
        assert "result" in answer, answer
        return answer["result"]

    async def error(self, method: str, params: Optional[dict] = None, **options: Any) -> dict:
        answer = await self.send(method, params, **options)
        assert "error" in answer, answer
        return answer["error"]

    async def create(self, name: str, arguments: Optional[dict] = None) -> dict:
        created = await self.result("tools/call", {"name": name, "arguments": arguments or {}})
        jsonschema.validate(created, CREATE_TASK_RESULT)
        return created

    async def get(self, task_id: str) -> dict:
        task = await self.result("tasks/get", {"taskId": task_id})
        jsonschema.validate(task, DETAILED_TASK)
        assert task["taskId"] == task_id
        return task

    async def wait_status(self, task_id: str, *statuses: str) -> dict:
        for _ in range(500):
            task = await self.get(task_id)
            if task["status"] in statuses:
                return task
            await asyncio.sleep(0.001)
        raise AssertionError(f"task {task_id} never reached {statuses}: {task}")

    async def ack(self, method: str, params: dict) -> None:
        jsonschema.validate(await self.result(method, params), ACK)


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


# -- 2026-07-28: the extension ------------------------------------------------------------


def test_discover_advertises_the_extension_only_with_task_tools(mcp_schema):
    async def main():
        client = Client2026(make_server(), mcp_schema)
        caps = (await client.result("server/discover"))["capabilities"]
        assert caps["extensions"] == {EXT: {}} and "tasks" not in caps
        plain = Server("plain")
        plain.tool()(lambda: "x")
        caps = (await Client2026(plain, mcp_schema).result("server/discover"))["capabilities"]
        assert "extensions" not in caps

    run(main())


def test_a_task_is_created_stored_first_and_completes(mcp_schema):
    async def main():
        app = make_server()
        client = Client2026(app, mcp_schema)
        created = await client.create("waits")
        assert created["status"] == "working" and created["pollIntervalMs"] == 500
        assert created["ttlMs"] == 3_600_000
        assert meta_keys.SERVER_INFO in created["_meta"]
        # Durable before the answer: a tasks/get sent at once finds it.
        task = await client.get(created["taskId"])
        assert task["status"] == "working" and task["createdAt"] == created["createdAt"]
        app.gate.set()
        done = await client.wait_status(created["taskId"], "completed")
        text = done["result"]["content"][0]["text"]
        # ctx.task_id inside; no log notification from a task.
        assert text == f"done in {created['taskId']} (log sent: False)"
        assert meta_keys.RELATED_TASK not in done["result"].get("_meta", {})
        assert not [f for f in client.frames if f.get("method") == "notifications/message"]

    run(main())


def test_a_tool_error_completes_and_a_jsonrpc_error_fails(mcp_schema):
    async def main():
        client = Client2026(make_server(), mcp_schema)
        broke = await client.create("tool_error")
        done = await client.wait_status(broke["taskId"], "completed", "failed")
        assert done["status"] == "completed" and done["result"]["isError"] is True
        failed = await client.create("protocol_error")
        done = await client.wait_status(failed["taskId"], "completed", "failed")
        assert done["status"] == "failed"
        assert done["error"] == {"code": INTERNAL_ERROR, "message": "Internal error: gone", "data": {"why": "test"}}

    run(main())


def test_cancel_stops_the_function_and_is_idempotent(mcp_schema):
    async def main():
        app = make_server()
        client = Client2026(app, mcp_schema)
        created = await client.create("waits")
        await client.ack("tasks/cancel", {"taskId": created["taskId"]})
        task = await client.get(created["taskId"])
        assert task["status"] == "cancelled"
        for _ in range(5):
            await asyncio.sleep(0)
        assert app.events == ["cancelled"]
        app.gate.set()  # nothing left to wake
        await client.ack("tasks/cancel", {"taskId": created["taskId"]})
        assert (await client.get(created["taskId"]))["status"] == "cancelled"
        unknown = await client.error("tasks/cancel", {"taskId": "nope"})
        assert unknown["code"] == INVALID_PARAMS

    run(main())


def test_questions_wait_in_input_requests_and_are_answered_one_by_one(mcp_schema):
    async def main():
        client = Client2026(make_server(), mcp_schema)
        created = await client.create("asks")
        task_id = created["taskId"]
        task = await client.wait_status(task_id, "input_required")
        for _ in range(50):
            if len(task["inputRequests"]) == 2:
                break
            task = await client.get(task_id)
        assert sorted(task["inputRequests"]) == ["one", "two"]
        assert task["inputRequests"]["one"]["method"] == "elicitation/create"
        yes = {"action": "accept", "content": {"confirm": True}}
        # Unknown keys are ignored; a partial answer leaves the rest pending.
        await client.ack("tasks/update", {"taskId": task_id, "inputResponses": {"zzz": {"x": 1}, "two": yes}})
        task = await client.get(task_id)
        assert task["status"] == "input_required" and list(task["inputRequests"]) == ["one"]
        await client.ack("tasks/update", {"taskId": task_id, "inputResponses": {"one": yes}})
        # The same input_key asked again is a new key: a key names one question for life.
        task = await client.wait_status(task_id, "input_required")
        assert list(task["inputRequests"]) == ["one.3"]
        await client.ack("tasks/update", {"taskId": task_id, "inputResponses": {"one": yes}})
        assert (await client.get(task_id))["status"] == "input_required"
        await client.ack("tasks/update", {"taskId": task_id, "inputResponses": {"one.3": yes}})
        done = await client.wait_status(task_id, "completed")
        assert done["result"]["content"][0]["text"] == "True True True"
        bad = await client.error("tasks/update", {"taskId": task_id, "inputResponses": ["no"]})
        assert bad["code"] == INVALID_PARAMS

    run(main())


def test_without_the_extension_no_task_and_the_tasks_methods_refuse(mcp_schema):
    async def main():
        app = make_server()
        client = Client2026(app, mcp_schema, capabilities={})
        app.gate.set()
        plain = await client.result("tools/call", {"name": "waits", "arguments": {}})
        client.schema.check_message({"jsonrpc": "2.0", "id": 1, "result": plain}, answers="tools/call")
        assert plain["resultType"] == "complete" and "taskId" not in plain
        required = await client.error("tools/call", {"name": "tool_error", "arguments": {}})
        assert required["code"] == MISSING_REQUIRED_CLIENT_CAPABILITY
        assert required["data"]["requiredCapabilities"] == {"extensions": {EXT: {}}}
        for method in ("tasks/get", "tasks/update", "tasks/cancel"):
            refused = await client.error(method, {"taskId": "x", "inputResponses": {}})
            assert refused["code"] == MISSING_REQUIRED_CLIENT_CAPABILITY, method
        # tasks/result and tasks/list do not exist in the extension.
        for method in ("tasks/result", "tasks/list"):
            gone = await client.error(method, {"taskId": "x"}, capabilities=WITH_TASKS)
            assert gone["code"] == METHOD_NOT_FOUND, method
        # The per-request capabilities decide: the same connection may opt in per call.
        created = await client.result("tools/call", {"name": "waits", "arguments": {}}, capabilities=WITH_TASKS)
        assert created["resultType"] == "task"
        # A legacy task param does not make a task of a plain tool.
        greeted = await client.result("tools/call", {"name": "greet", "arguments": {"name": "x"},
                                                     "task": {"ttl": 1000}}, capabilities=WITH_TASKS)
        assert greeted["resultType"] == "complete" and greeted["content"][0]["text"] == "Hello, x!"

    run(main())


def test_input_on_the_request_then_the_task(mcp_schema):
    async def main():
        app = make_server()
        client = Client2026(app, mcp_schema)
        first = await client.result("tools/call", {"name": "escalates", "arguments": {}})
        assert first["resultType"] == "input_required" and "taskId" not in first
        assert list(first["inputRequests"]) == ["user_name"]
        second = await client.result("tools/call", {
            "name": "escalates", "arguments": {}, "requestState": first["requestState"],
            "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Alice"}}}})
        jsonschema.validate(second, CREATE_TASK_RESULT)
        done = await client.wait_status(second["taskId"], "completed")
        assert done["result"]["content"][0]["text"] == "Hello, Alice!"
        assert app.events == [("became task", True)]
        # run_as_task() without the extension: False, and the call goes on as a plain one.
        plain = await client.result("tools/call", {"name": "maybe", "arguments": {}}, capabilities={})
        assert plain["content"][0]["text"] == "task: False"

    run(main())


def test_unknown_and_other_callers_tasks_are_invalid_params(mcp_schema):
    async def main():
        app = make_server()
        alice = Client2026(app, mcp_schema)
        alice.conn.auth = AccessToken("alice")
        bob = Client2026(app, mcp_schema)
        bob.conn.auth = AccessToken("bob")
        created = await alice.create("waits")
        assert (await alice.get(created["taskId"]))["status"] == "working"
        for method in ("tasks/get", "tasks/cancel"):
            refused = await bob.error(method, {"taskId": created["taskId"]})
            assert refused["code"] == INVALID_PARAMS and refused["data"] == {"taskId": created["taskId"]}
        assert (await alice.error("tasks/get", {"taskId": "missing"}))["code"] == INVALID_PARAMS
        assert (await alice.error("tasks/get", {}))["code"] == INVALID_PARAMS
        app.gate.set()

    run(main())


def test_records_expire_after_their_ttl_and_the_store_is_bounded(mcp_schema):
    async def main():
        # Bounded: two running tasks fill a store of two; a third is refused, "try later".
        app = make_server(task_ttl_ms=60_000, task_store=MemoryTaskStore(max_tasks=2))
        client = Client2026(app, mcp_schema)
        await client.create("waits")
        await client.create("waits")
        full = await client.error("tools/call", {"name": "waits", "arguments": {}})
        assert full["code"] == INTERNAL_ERROR and "try later" in full["message"]
        app.gate.set()
        # Expired: a record is gone once its TTL has passed.
        short = make_server(task_ttl_ms=50)
        client = Client2026(short, mcp_schema)
        first = await client.create("waits")
        await asyncio.sleep(0.2)
        assert (await client.error("tasks/get", {"taskId": first["taskId"]}))["code"] == INVALID_PARAMS
        short.gate.set()

    run(main())


def test_memory_store_evicts_the_oldest_ended_task_when_full():
    async def main():
        store = MemoryTaskStore(max_tasks=2)
        records = [TaskRecord(f"t{i}", "tools/call", "extension", None, None, None) for i in range(3)]
        await store.put(records[0])
        await store.put(records[1])
        with pytest.raises(TaskStoreFull):
            await store.put(records[2])
        records[0].touch("completed")
        await store.put(records[0])
        await store.put(records[2])
        assert await store.get("t0") is None and (await store.get("t2")).task_id == "t2"
        # get returns a copy: changing it changes nothing until put.
        copy = await store.get("t1")
        copy.touch("failed")
        assert (await store.get("t1")).status == "working"

    run(main())


def test_task_options_are_checked():
    app = Server("x")
    with pytest.raises(ValueError, match="task_support"):
        app.tool(task_support="sometimes")(lambda: "x")
    with pytest.raises(ValueError, match="task_start"):
        app.tool(task_support="optional", task_start="later")(lambda: "x")
    with pytest.raises(ValueError, match="task_ttl_ms"):
        Server("x", task_ttl_ms=0)


# -- 2025-11-25: experimental tasks -------------------------------------------------------


async def wait_for(condition: Any, rounds: int = 500) -> None:
    for _ in range(rounds):
        if condition():
            return
        await asyncio.sleep(0.001)
    raise AssertionError("condition never held")


def test_experimental_capability_and_tool_execution(ready_client):
    app = make_server()
    client = ready_client(app, "2025-11-25")
    assert client.conn.capabilities["tasks"] == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    tools = {tool["name"]: tool for tool in client.result("tools/list")["tools"]}
    assert tools["waits"]["execution"] == {"taskSupport": "optional"}
    assert tools["tool_error"]["execution"] == {"taskSupport": "required"}
    assert "execution" not in tools["greet"]
    older = ready_client(app, "2025-06-18")
    assert "tasks" not in older.conn.capabilities
    assert all("execution" not in tool for tool in older.result("tools/list")["tools"])


def test_experimental_task_lifecycle(ready_client):
    async def main():
        app = make_server(task_ttl_ms=60_000)
        client = ready_client(app, "2025-11-25")
        created = await client.aresult("tools/call", {"name": "waits", "arguments": {}, "task": {"ttl": 5000}})
        task = created["task"]
        assert task["status"] == "working" and task["ttl"] == 5000 and task["pollInterval"] == 500
        got = await client.aresult("tasks/get", {"taskId": task["taskId"]})
        assert got["taskId"] == task["taskId"] and got["status"] == "working"
        listed = await client.aresult("tasks/list", {})
        assert [t["taskId"] for t in listed["tasks"]] == [task["taskId"]]
        # tasks/result waits for the end.
        waiting = client.send_request("tasks/result", {"taskId": task["taskId"]})
        for _ in range(5):
            await asyncio.sleep(0)
        assert client.response(waiting) is None
        app.gate.set()
        answer = await client.wait_response(waiting)
        assert answer["result"]["content"][0]["text"].startswith("done in")
        assert answer["result"]["_meta"][meta_keys.RELATED_TASK] == {"taskId": task["taskId"]}
        statuses = [n["params"]["status"] for n in client.notifications("notifications/tasks/status")]
        assert statuses[-1] == "completed"
        ended = await client.aresult("tasks/get", {"taskId": task["taskId"]})
        assert ended["status"] == "completed"
        refused = await client.arequest("tasks/cancel", {"taskId": task["taskId"]})
        assert refused["error"]["code"] == INVALID_PARAMS

    run(main())


def test_experimental_failures_and_cancel(ready_client):
    async def main():
        client = ready_client(make_server(), "2025-11-25")
        broke = (await client.aresult("tools/call", {"name": "tool_error", "arguments": {}, "task": {}}))["task"]
        answer = await client.arequest("tasks/result", {"taskId": broke["taskId"]})
        assert answer["result"]["isError"] is True
        assert (await client.aresult("tasks/get", {"taskId": broke["taskId"]}))["status"] == "failed"
        gone = (await client.aresult("tools/call", {"name": "protocol_error", "arguments": {}, "task": {}}))["task"]
        answer = await client.arequest("tasks/result", {"taskId": gone["taskId"]})
        assert answer["error"]["code"] == INTERNAL_ERROR and answer["error"]["data"] == {"why": "test"}
        running = (await client.aresult("tools/call", {"name": "waits", "arguments": {}, "task": {}}))["task"]
        cancelled = await client.aresult("tasks/cancel", {"taskId": running["taskId"]})
        assert cancelled["status"] == "cancelled" and cancelled["taskId"] == running["taskId"]

    run(main())


def test_experimental_refusals_and_scoping(ready_client):
    async def main():
        app = make_server()
        client = ready_client(app, "2025-11-25")
        required = await client.arequest("tools/call", {"name": "tool_error", "arguments": {}})
        assert required["error"]["code"] == METHOD_NOT_FOUND
        forbidden = await client.arequest("tools/call", {"name": "greet", "arguments": {"name": "x"}, "task": {}})
        assert forbidden["error"]["code"] == METHOD_NOT_FOUND
        bad_ttl = await client.arequest("tools/call", {"name": "waits", "arguments": {}, "task": {"ttl": -1}})
        assert bad_ttl["error"]["code"] == INVALID_PARAMS
        assert (await client.arequest("tasks/update", {"taskId": "x", "inputResponses": {}}))["error"]["code"] \
            == METHOD_NOT_FOUND
        task = (await client.aresult("tools/call", {"name": "waits", "arguments": {}, "task": {}}))["task"]
        # Another connection (no authentication) sees neither the task nor it in its list.
        other = ready_client(app, "2025-11-25")
        assert (await other.arequest("tasks/get", {"taskId": task["taskId"]}))["error"]["code"] == INVALID_PARAMS
        assert (await other.aresult("tasks/list", {}))["tasks"] == []
        older = ready_client(app, "2025-06-18")
        assert (await older.arequest("tasks/get", {"taskId": task["taskId"]}))["error"]["code"] == METHOD_NOT_FOUND
        # Without params.task a task-capable tool runs as a plain call.
        app.gate.set()
        plain = await client.aresult("tools/call", {"name": "waits", "arguments": {}})
        assert plain["content"][0]["text"] == "done in None (log sent: True)"

    run(main())


def test_experimental_task_asks_the_client_tagged_with_the_task(ready_client):
    async def main():
        client = ready_client(make_server(), "2025-11-25", capabilities={"elicitation": {}})
        task = (await client.aresult("tools/call", {"name": "asks", "arguments": {}, "task": {}}))["task"]
        yes = {"action": "accept", "content": {"confirm": True}}
        for expected in (2, 1):  # two questions side by side, then one
            await wait_for(lambda n=expected: sum(m.get("method") == "elicitation/create"
                                                  for m in client.messages) >= n)
            asked = client.requests("elicitation/create")
            assert len(asked) == expected
            assert (await client.aresult("tasks/get", {"taskId": task["taskId"]}))["status"] == "input_required"
            for request in asked:
                assert request["params"]["_meta"][meta_keys.RELATED_TASK] == {"taskId": task["taskId"]}
                client.respond(request["id"], yes)
        answer = await client.arequest("tasks/result", {"taskId": task["taskId"]})
        assert answer["result"]["content"][0]["text"] == "True True True"

    run(main())


def test_a_server_without_task_tools_has_no_tasks_methods(ready_client, mcp_schema):
    async def main():
        plain = Server("plain")
        plain.tool()(lambda: "x")
        client = Client2026(plain, mcp_schema)
        assert (await client.error("tasks/get", {"taskId": "x"}))["code"] == METHOD_NOT_FOUND

    run(main())
    app = Server("plain")
    app.tool()(lambda: "x")
    client = ready_client(app, "2025-11-25")
    assert "tasks" not in client.conn.capabilities
    assert client.error("tasks/list")["code"] == METHOD_NOT_FOUND


def test_experimental_tasks_list_pages_with_cursors(ready_client):
    async def main():
        client = ready_client(make_server(page_size=2), "2025-11-25")
        ids = [(await client.aresult("tools/call", {"name": "waits", "arguments": {}, "task": {}}))["task"]["taskId"]
               for _ in range(3)]
        first = await client.aresult("tasks/list", {})
        assert [t["taskId"] for t in first["tasks"]] == ids[:2]
        second = await client.aresult("tasks/list", {"cursor": first["nextCursor"]})
        assert [t["taskId"] for t in second["tasks"]] == ids[2:] and "nextCursor" not in second
        bad = await client.arequest("tasks/list", {"cursor": "not-a-cursor"})
        assert bad["error"]["code"] == INVALID_PARAMS

    run(main())


def test_tasks_are_offered_while_a_task_tool_is_registered():
    app = Server("offers")

    @app.tool()
    def plain() -> str:
        return "x"

    assert not app.offers_tasks()

    @app.tool(task_support="optional")
    async def long() -> str:
        return "done"

    assert app.offers_tasks()
    app.remove_tool("long")
    assert not app.offers_tasks()
