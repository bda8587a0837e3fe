"""MCP over WebSocket (picows): mcpfast's client and server over real loopback sockets,
close codes, subprotocol and Host checks, malformed frames, disconnects."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import picows
import pytest

from mcpfast import Context, Server, connect


def make_server(cancelled: list) -> Server:
    app = Server("ws")

    @app.tool()
    def echo(text: str) -> str:
        return text

    @app.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.sample("hello?")
        return answer.text or ""

    @app.tool()
    async def hang() -> str:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.append("hang")
            raise
        return "never"

    return app


async def serving(app: Server, **options: Any) -> tuple[asyncio.Task, int]:
    ready: asyncio.Future = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(app.serve_websocket("127.0.0.1", 0, ready=lambda h, p: ready.set_result(p),
                                                   **options))
    return task, await ready


async def stop(task: asyncio.Task) -> None:
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


class RawListener(picows.WSListener):
    """A bare client recording what the server sends."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[dict] = []
        self.close_code: Any = None
        self.got: asyncio.Queue = asyncio.Queue()

    def on_ws_frame(self, transport, frame) -> None:
        if frame.msg_type == picows.WSMsgType.TEXT:
            self.got.put_nowait(json.loads(frame.get_payload_as_bytes()))
        elif frame.msg_type == picows.WSMsgType.CLOSE:
            self.close_code = frame.get_close_code()
            self.got.put_nowait(("close", self.close_code))


async def raw(port: int, **headers: str) -> tuple[Any, RawListener]:
    extra = {"Sec-WebSocket-Protocol": "mcp", **headers}
    return await picows.ws_connect(RawListener, f"ws://127.0.0.1:{port}/mcp", extra_headers=extra)


INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}


def test_the_mcpfast_client_over_websocket():
    async def main():
        app = make_server([])
        task, port = await serving(app)
        try:
            def sample(params: Any) -> dict:
                return {"role": "assistant", "content": {"type": "text", "text": "hi!"}, "model": "m"}

            async with connect(f"ws://127.0.0.1:{port}/mcp", sampling=sample) as client:
                assert client.server_info["name"] == "ws"
                assert (await client.call_tool("echo", {"text": "over ws"}))["content"][0]["text"] == "over ws"
                # A request to the client, answered over the same socket.
                assert (await client.call_tool("ask", {}))["content"][0]["text"] == "hi!"
                results = await asyncio.gather(*(client.call_tool("echo", {"text": str(i)}) for i in range(50)))
                assert [r["content"][0]["text"] for r in results] == [str(i) for i in range(50)]
        finally:
            await stop(task)

    asyncio.run(main())


def test_malformed_text_is_answered_and_the_socket_goes_on():
    async def main():
        task, port = await serving(make_server([]))
        try:
            transport, listener = await raw(port)
            transport.send(picows.WSMsgType.TEXT, b"{not json")
            error = await asyncio.wait_for(listener.got.get(), 5)
            assert error["error"]["code"] == -32700
            transport.send(picows.WSMsgType.TEXT, json.dumps(INIT).encode())
            answer = await asyncio.wait_for(listener.got.get(), 5)
            assert answer["result"]["serverInfo"]["name"] == "ws"
            transport.disconnect()
        finally:
            await stop(task)

    asyncio.run(main())


def test_a_message_in_several_frames_is_joined_and_whole_frames_follow():
    async def main():
        task, port = await serving(make_server([]))
        try:
            transport, listener = await raw(port)
            text = json.dumps(INIT).encode()
            # One message in three frames (TEXT, CONTINUATION, CONTINUATION with fin).
            transport.send(picows.WSMsgType.TEXT, text[:10], fin=False)
            transport.send(picows.WSMsgType.CONTINUATION, text[10:30], fin=False)
            transport.send(picows.WSMsgType.CONTINUATION, text[30:], fin=True)
            answer = await asyncio.wait_for(listener.got.get(), 5)
            assert answer["id"] == 0 and answer["result"]["serverInfo"]["name"] == "ws"
            # Then whole frames, each its own message.
            for i in range(1, 4):
                transport.send(picows.WSMsgType.TEXT, json.dumps(
                    {"jsonrpc": "2.0", "id": i, "method": "ping"}).encode())
                pong = await asyncio.wait_for(listener.got.get(), 5)
                assert pong == {"jsonrpc": "2.0", "id": i, "result": {}}
            transport.disconnect()
        finally:
            await stop(task)

    asyncio.run(main())


def test_binary_frames_close_with_1003_and_oversize_with_1009():
    async def main():
        task, port = await serving(make_server([]), max_frame_size=1024)
        try:
            transport, listener = await raw(port)
            transport.send(picows.WSMsgType.BINARY, b"\x00\x01")
            assert await asyncio.wait_for(listener.got.get(), 5) == ("close", picows.WSCloseCode.UNSUPPORTED_DATA)
            await transport.wait_disconnected()
            transport, listener = await raw(port)
            transport.send(picows.WSMsgType.TEXT, json.dumps({**INIT, "pad": "x" * 4096}).encode())
            closed = await asyncio.wait_for(listener.got.get(), 5)
            assert closed == ("close", picows.WSCloseCode.MESSAGE_TOO_BIG)
            await transport.wait_disconnected()
        finally:
            await stop(task)

    asyncio.run(main())


@pytest.mark.parametrize("headers, path, status", [
    ({"Sec-WebSocket-Protocol": "graphql-ws"}, "/mcp", 400),
    ({}, "/other", 404),
    ({"Origin": "http://evil.example"}, "/mcp", 403),
])
def test_upgrades_are_checked(headers, path, status):
    async def main():
        task, port = await serving(make_server([]))
        try:
            with pytest.raises(picows.WSError) as refused:
                await picows.ws_connect(RawListener, f"ws://127.0.0.1:{port}{path}", extra_headers=headers)
            assert str(status) in str(refused.value)
        finally:
            await stop(task)

    asyncio.run(main())


def test_a_client_that_goes_away_cancels_its_requests():
    async def main():
        cancelled: list = []
        task, port = await serving(make_server(cancelled))
        try:
            transport, listener = await raw(port)
            transport.send(picows.WSMsgType.TEXT, json.dumps(INIT).encode())
            await asyncio.wait_for(listener.got.get(), 5)
            transport.send(picows.WSMsgType.TEXT, b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
            call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "hang", "arguments": {}}}
            transport.send(picows.WSMsgType.TEXT, json.dumps(call).encode())
            await asyncio.sleep(0.05)
            transport.disconnect()
            for _ in range(50):
                if cancelled:
                    break
                await asyncio.sleep(0.02)
            assert cancelled == ["hang"]
        finally:
            await stop(task)

    asyncio.run(main())


def test_mcpfast_run_serves_websocket(tmp_path):
    import os
    import subprocess
    import sys

    script = tmp_path / "server.py"
    script.write_text("from mcpfast import Server\napp = Server('cli-ws')\n\n"
                      "@app.tool()\ndef echo(text: str) -> str:\n    return text\n")
    process = subprocess.Popen([sys.executable, "-m", "mcpfast", "run", str(script), "--transport",
                                "websocket", "--port", "0"],
                               stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        assert " over websocket on ws://" in line, line
        url = line.strip().rsplit(" ", 1)[1]

        async def main() -> str:
            async with connect(url) as client:
                return (await client.call_tool("echo", {"text": "cli"}))["content"][0]["text"]

        assert asyncio.run(main()) == "cli"
    finally:
        process.terminate()
        process.wait(10)
