"""Forwarded tools/call requests run without an asyncio task each (the pipeline's
without_task, mcpfast.jsonrpc.driven): answered, cancelled by the client (the upstream is
told), and many in flight at once; a plain call by the gateway's direct route (one call,
no coroutine), every other call by the chain."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

import mcpfast
from mcpfast import Server
from mcpfast.jsonrpc.errors import JSONRPCError
from mcpfast.protocol.error_codes import REQUEST_TIMEOUT, TRANSPORT_ERROR
from mcpfast.server.middleware import Middleware

sys.path.insert(0, str(Path(__file__).parent))
from gateway_apps import faulty_app, files_app  # noqa: E402

from loop import eventually  # noqa: E402


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 30))


def test_forwarded_calls_in_flight_hold_no_task_of_their_own_and_cancel_upstream():
    events: list = []
    app = Server("gateway")
    app.mount(files_app(events=events), namespace="fs")

    async def main():
        async with mcpfast.connect(app) as client:
            await client.call_tool("fs_read_file", {"path": "/etc/motd"})  # warm
            before = len(asyncio.all_tasks())
            calls = [asyncio.ensure_future(client.call_tool("fs_wait_forever")) for _ in range(20)]
            await eventually(lambda: events.count("started") == 20)
            # 20 client tasks and the upstream's 20 handler tasks; none at the gateway.
            assert len(asyncio.all_tasks()) == before + 40
            for call in calls:
                call.cancel()
            await eventually(lambda: events.count("cancelled") == 20)
            result = await client.call_tool("fs_read_file", {"path": "/etc/motd"})
            assert result["content"][0]["text"] == "contents of /etc/motd"

    run(main())


def test_an_upstream_timeout_reaches_the_client_through_a_driven_call():
    app = Server("gateway")
    app.mount(faulty_app(), namespace="f", timeout=0.2)

    async def main():
        async with mcpfast.connect(app) as client:
            with pytest.raises(JSONRPCError) as caught:
                await client.call_tool("f_hang")
            assert caught.value.code == REQUEST_TIMEOUT
            assert "did not answer tools/call" in caught.value.message

    run(main())


def routes_taken(upstream):
    """The upstream's forward_plain watched: one entry per call the gateway's direct route
    made, True where it was sent that way (False: the route fell back to the chain)."""
    taken: list = []
    forward = upstream.forward_plain

    def watched(method, params, origin):
        call = forward(method, params, origin)
        taken.append(call is not None)
        return call

    upstream.forward_plain = watched
    return taken


def test_plain_calls_take_the_direct_route_and_every_other_call_the_chain():
    class Outer(Middleware):
        eager = True

        async def on_call_tool(self, ctx, call_next):
            return await call_next(ctx)

    async def main():
        app = Server("gateway")
        upstream = app.mount(files_app(), namespace="fs")
        taken = routes_taken(upstream)
        async with mcpfast.connect(app) as client:
            result = await client.call_tool("fs_read_file", {"path": "/a"})
            assert result["content"][0]["text"] == "contents of /a" and taken == [True]
            assert upstream.passed_through == 1
            # Progress asked, _meta given, a tool of the server's own: on_call_tool's path.
            steps: list = []
            counted = await client.call_tool("fs_slow_count", {"n": 3},
                                             progress=lambda *step: steps.append(step))
            assert counted["structuredContent"] == {"result": 3} and len(steps) == 3
            seen = await client.request("tools/call", {"name": "fs_meta_seen", "arguments": {},
                                                       "_meta": {"trace": "t1", "progressToken": 9}})
            # (The downstream's progressToken is replaced by the gateway's own upstream.)
            assert seen["structuredContent"]["trace"] == "t1"
            assert seen["structuredContent"].get("progressToken") != 9
            assert taken == [True]
        # A middleware outside the gateway's that hooks tools/call: never the direct route.
        outer = Server("gateway", middleware=[Outer()])
        watched = routes_taken(outer.mount(files_app(), namespace="fs"))
        async with mcpfast.connect(outer) as client:
            result = await client.call_tool("fs_read_file", {"path": "/b"})
            assert result["content"][0]["text"] == "contents of /b" and watched == []

    run(main())


def test_a_direct_call_to_an_upstream_that_is_down_gets_the_chain_s_error():
    app = Server("gateway")
    upstream = app.mount(faulty_app(), namespace="f")
    taken = routes_taken(upstream)

    async def main():
        async with mcpfast.connect(app) as client:
            assert (await client.call_tool("f_pid"))["structuredContent"]["result"] > 0
            await upstream.client.aclose()  # the session ends: restarting, no client yet
            await eventually(lambda: upstream.client is None)
            with pytest.raises(JSONRPCError) as caught:
                await client.call_tool("f_pid")
            assert caught.value.code == TRANSPORT_ERROR
            assert caught.value.data["upstream"] == "f"
            assert taken == [True, False]

    run(main())


def test_the_mount_table_finds_a_mounted_tool_unless_the_server_has_one_of_that_name():
    from mcpfast.gateway.gateway import gateway_of

    app = Server("gateway")
    upstream = app.mount(files_app(), namespace="fs")

    async def main():
        async with mcpfast.connect(app):
            table = gateway_of(app)
            found = table.tool("fs_read_file")
            assert found is not None and found[0] is upstream
            assert found[1].upstream_name == "read_file"
            assert table.tool("read_file") is None and table.tool(7) is None and table.tool(None) is None

            @app.tool(name="fs_read_file")
            def own(path: str) -> str:
                return "own"

            assert table.tool("fs_read_file") is None  # the server's own tool wins

    run(main())
