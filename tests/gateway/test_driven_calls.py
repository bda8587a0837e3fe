"""Forwarded tools/call requests run without an asyncio task each (the pipeline's
without_task, mcpfast.jsonrpc.driven): answered, cancelled by the client (the upstream is
told), and many in flight at once."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

import mcpfast
from mcpfast import Server
from mcpfast.jsonrpc.errors import JSONRPCError
from mcpfast.protocol.error_codes import REQUEST_TIMEOUT

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
