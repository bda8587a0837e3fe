"""subscriptions/listen (2026-07-28): acknowledged first, then only the requested
notifications, each tagged with the subscription id; cancelled by the client."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from mcpfast import Server
from mcpfast.jsonrpc.errors import INVALID_PARAMS, METHOD_NOT_FOUND
from mcpfast.protocol import meta_keys
from mcpfast.server.publisher import ListChanged

from .test_stateless_era import V2026, Wire, meta

SUB = meta_keys.SUBSCRIPTION_ID


def make_server() -> Server:
    app = Server("listen")

    @app.tool()
    def echo(text: str) -> str:
        return text

    @app.resource("note://one")
    def one() -> str:
        return "first"

    return app


async def settle() -> None:
    for _ in range(10):
        await asyncio.sleep(0)


def listen_frame(request_id: Any, notifications: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "subscriptions/listen",
                       "params": {"_meta": meta(), "notifications": notifications}}).encode()


def notes(wire: Wire, method: str) -> list[dict]:
    return [f for f in wire.frames if f.get("method") == method]


def test_acknowledged_then_only_what_was_asked_for(mcp_schema):
    async def main():
        app = make_server()
        wire = Wire(app, mcp_schema)
        wire.conn.feed(listen_frame(7, {"toolsListChanged": True, "promptsListChanged": True,
                                        "resourceSubscriptions": ["note://one"]}))
        await settle()
        ack = wire.frames[0]
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        # The server has no prompts: that part is not honoured.
        assert ack["params"] == {"_meta": {SUB: 7}, "notifications": {
            "toolsListChanged": True, "resourceSubscriptions": ["note://one"]}}
        mcp_schema(V2026).check_message(ack)
        wire.frames.clear()
        app.publisher.publish(ListChanged("tools"))
        app.publisher.publish(ListChanged("resources"))  # not asked for
        app.notify_resource_updated("note://one")
        app.notify_resource_updated("note://other")  # not asked for
        await settle()
        assert [(f["method"], f["params"]) for f in wire.frames] == [
            ("notifications/tools/list_changed", {"_meta": {SUB: 7}}),
            ("notifications/resources/updated", {"_meta": {SUB: 7}, "uri": "note://one"}),
        ]
        for frame in wire.frames:
            mcp_schema(V2026).check_message(frame)
        # Cancelled by the client: nothing more, and no answer to the listen request.
        wire.frames.clear()
        wire.conn.feed(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}')
        await settle()
        app.publisher.publish(ListChanged("tools"))
        await settle()
        assert wire.frames == []
        assert len(app.publisher) == 1  # only the connection itself is left

    asyncio.run(main())


def test_two_subscriptions_on_one_connection_are_told_apart(mcp_schema):
    async def main():
        app = make_server()
        wire = Wire(app, mcp_schema)
        wire.conn.feed(listen_frame("a", {"toolsListChanged": True}))
        wire.conn.feed(listen_frame("b", {"resourceSubscriptions": ["note://one"]}))
        await settle()
        wire.frames.clear()
        @app.tool()  # registering a tool at run time publishes the change
        def late() -> str:
            return "late"

        app.notify_resource_updated("note://one")
        await settle()
        assert [(f["method"], f["params"]["_meta"][SUB]) for f in wire.frames] == [
            ("notifications/tools/list_changed", "a"), ("notifications/resources/updated", "b")]
        wire.conn.close()

    asyncio.run(main())


@pytest.mark.parametrize("notifications, fragment", [
    ([], "must be an object"),
    ({"toolsListChanged": "yes"}, "boolean"),
    ({"resourceSubscriptions": "note://one"}, "array"),
])
def test_a_malformed_filter_is_invalid_params(mcp_schema, notifications, fragment):
    wire = Wire(make_server(), mcp_schema)
    error = wire.call("subscriptions/listen", {"_meta": meta(), "notifications": notifications})["error"]
    assert error["code"] == INVALID_PARAMS and fragment in error["message"]


def test_listen_does_not_exist_before_2026(mcp_schema, ready_client):
    client = ready_client(make_server(), "2025-11-25")
    response = client.request("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    assert response["error"]["code"] == METHOD_NOT_FOUND


def test_a_listen_cancelled_before_its_task_runs_leaves_the_publisher(mcp_schema):
    async def main():
        app = make_server()
        wire = Wire(app, mcp_schema)
        cancel = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}'
        wire.conn.feed(listen_frame(9, {"toolsListChanged": True}))
        wire.conn.feed(cancel)  # before the loop ran the listen task
        await settle()
        wire.frames.clear()
        app.publisher.publish(ListChanged("tools"))
        await settle()
        assert wire.frames == [] and len(app.publisher) == 1

    asyncio.run(main())


def test_the_server_ends_a_stream_with_a_completion_result(mcp_schema):
    async def main():
        app = make_server()
        wire = Wire(app, mcp_schema)
        wire.methods[5] = ("subscriptions/listen", V2026)
        wire.conn.feed(listen_frame(5, {"toolsListChanged": True}))
        await settle()
        assert app.end_subscriptions() == 1
        await settle()
        answer = [f for f in wire.frames if f.get("id") == 5][0]
        assert answer["result"]["resultType"] == "complete"
        assert answer["result"]["_meta"][SUB] == 5
        assert app.listen_streams == set() and len(app.publisher) == 1

    asyncio.run(main())
