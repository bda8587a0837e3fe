"""MCP over WebSocket (picows): mcpfast's client and server over real loopback sockets,
close codes, subprotocol and Host checks, malformed frames, disconnects."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any, AsyncIterator, Awaitable, Callable

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
    async def later(text: str) -> str:
        # Reads its arguments after other frames reused picows's receive buffer.
        await asyncio.sleep(0.02)
        return text

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


@contextlib.asynccontextmanager
async def raw_session(serve: Callable[[Callable[[str, int], None]], Awaitable[None]],
                      ) -> AsyncIterator[tuple[asyncio.Task, int, Any, RawListener]]:
    """A server run by ``serve(ready)`` and a raw client connected to it; both stopped at
    the end, whatever happened."""
    ready: asyncio.Future = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(serve(lambda host, port: ready.set_result(port)))
    try:
        port = await ready
        transport, listener = await raw(port)
        try:
            yield task, port, transport, listener
        finally:
            transport.disconnect()
    finally:
        await stop(task)


def app_session(app: Server) -> contextlib.AbstractAsyncContextManager[
        tuple[asyncio.Task, int, Any, RawListener]]:
    """``app`` served over WebSocket and a raw client connected to it (raw_session)."""
    return raw_session(lambda ready: app.serve_websocket("127.0.0.1", 0, ready=ready))


INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
# 2025-03-26: the last version with JSON-RPC batches.
INIT_SAMPLING = {**INIT, "params": {**INIT["params"], "protocolVersion": "2025-03-26",
                                    "capabilities": {"sampling": {}}}}


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


def test_every_kind_of_message_reaches_the_connection():
    # The listener decodes a whole frame itself: requests, notifications, batches, a
    # response to the server's own request, and frames that do not decode or are not
    # JSON-RPC each reach the connection and get the answers a newline stream gets.
    async def main():
        async with app_session(make_server([])) as (_, _, transport, listener):
            def send(message: Any) -> None:
                transport.send(picows.WSMsgType.TEXT,
                               message if isinstance(message, bytes) else json.dumps(message).encode())

            async def got() -> Any:
                return await asyncio.wait_for(listener.got.get(), 5)

            send(INIT_SAMPLING)
            assert (await got())["result"]["serverInfo"]["name"] == "ws"
            send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            send([{"jsonrpc": "2.0", "id": "a", "method": "ping"},
                  {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "zz"}},
                  {"jsonrpc": "2.0", "id": "b", "method": "tools/call",
                   "params": {"name": "echo", "arguments": {"text": "in a batch"}}}])
            batch = await got()
            assert [item["id"] for item in batch] == ["a", "b"]
            assert batch[1]["result"]["content"][0]["text"] == "in a batch"
            send({"jsonrpc": "2.0", "id": 7})  # no method: invalid request, its id kept
            invalid = await got()
            assert invalid["id"] == 7 and invalid["error"]["code"] == -32600
            send(b"[]")
            assert (await got())["error"]["code"] == -32600
            send({"jsonrpc": "2.0", "id": 8, "method": "no/such"})
            assert (await got())["error"]["code"] == -32601
            # A request to the client, answered by a response frame.
            send({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "ask", "arguments": {}}})
            asked = await got()
            assert asked["method"] == "sampling/createMessage"
            send({"jsonrpc": "2.0", "id": asked["id"], "result": {
                "role": "assistant", "content": {"type": "text", "text": "yes"}, "model": "m"}})
            answer = await got()
            assert answer["id"] == 9 and answer["result"]["content"][0]["text"] == "yes"

    asyncio.run(main())


def test_requests_answered_later_keep_their_own_arguments():
    # A frame is read where picows holds it: a handler that reads its arguments after
    # later frames arrived must see its own.
    async def main():
        async with app_session(make_server([])) as (_, _, transport, listener):
            transport.send(picows.WSMsgType.TEXT, json.dumps(INIT).encode())
            await asyncio.wait_for(listener.got.get(), 5)
            transport.send(picows.WSMsgType.TEXT, b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
            texts = {i: f"text {i} " + "x" * (i * 37 % 300) for i in range(1, 41)}
            for i, text in texts.items():
                transport.send(picows.WSMsgType.TEXT, json.dumps({
                    "jsonrpc": "2.0", "id": i, "method": "tools/call",
                    "params": {"name": "later", "arguments": {"text": text}}}).encode())
            answers = {}
            while len(answers) < len(texts):
                answer = await asyncio.wait_for(listener.got.get(), 5)
                answers[answer["id"]] = answer["result"]["content"][0]["text"]
            assert answers == texts

    asyncio.run(main())


def test_a_connection_with_only_feed_gets_every_frame():
    # The transport contract's required methods only: every whole message goes to feed.
    from mcpfast.transports.websocket import serve_websocket

    class Recorder:
        def __init__(self, send: Any) -> None:
            self.send = send
            self.fed: list = []
            self.closed: list = []

        def feed(self, frame: Any, channel: Any = None) -> bool:
            self.fed.append(bytes(frame))
            self.send(b'{"fed":%d}' % len(self.fed))
            return True

        def feed_error(self, exc: BaseException, channel: Any = None) -> bool:
            return True

        def close(self, exc: Any = None) -> None:
            self.closed.append(exc)

    async def main():
        made: list = []

        def factory(send: Any) -> Recorder:
            made.append(Recorder(send))
            return made[-1]

        async with raw_session(lambda ready: serve_websocket(factory, "127.0.0.1", 0, ready=ready)) as (
                _, _, transport, listener):
            frames = [json.dumps(INIT).encode(), b"{not json", b'[{"jsonrpc":"2.0","method":"x"}]']
            for frame in frames:
                transport.send(picows.WSMsgType.TEXT, frame)
            transport.send(picows.WSMsgType.TEXT, b'{"a":', fin=False)
            transport.send(picows.WSMsgType.CONTINUATION, b"1}", fin=True)
            for n in range(1, 5):
                assert await asyncio.wait_for(listener.got.get(), 5) == {"fed": n}
            assert made[0].fed == frames + [b'{"a":1}']
            transport.disconnect()
            await transport.wait_disconnected()
            for _ in range(100):
                if made[0].closed:
                    break
                await asyncio.sleep(0.01)
            assert made[0].closed == [None]

    asyncio.run(main())


@pytest.mark.parametrize("frames, code", [
    # A message in pieces is bounded as a whole: 3 x 400 bytes past a 1024-byte limit.
    ([("text", b"[" + b" " * 399, False), ("cont", b" " * 400, False), ("cont", b" " * 400, True)],
     picows.WSCloseCode.MESSAGE_TOO_BIG),
    # Out of order: a continuation with no message begun, a new text before the last ended.
    ([("cont", b"{}", True)], picows.WSCloseCode.PROTOCOL_ERROR),
    ([("text", b"{", False), ("text", b"}", True)], picows.WSCloseCode.PROTOCOL_ERROR),
])
def test_a_message_in_pieces_is_bounded_and_in_order(frames, code):
    kinds = {"text": picows.WSMsgType.TEXT, "cont": picows.WSMsgType.CONTINUATION}

    async def main():
        app = make_server([])
        serve = lambda ready: app.serve_websocket("127.0.0.1", 0, ready=ready, max_frame_size=1024)  # noqa: E731
        async with raw_session(serve) as (_, port, transport, listener):
            for kind, payload, fin in frames:
                transport.send(kinds[kind], payload, fin=fin)
            assert await asyncio.wait_for(listener.got.get(), 5) == ("close", code)
            await asyncio.wait_for(transport.wait_disconnected(), 5)
            # The server goes on: a new socket is answered, a message in pieces within the
            # limit included.
            transport, listener = await raw(port)
            text = json.dumps(INIT).encode()
            transport.send(picows.WSMsgType.TEXT, text[:100], fin=False)
            transport.send(picows.WSMsgType.CONTINUATION, text[100:], fin=True)
            assert (await asyncio.wait_for(listener.got.get(), 5))["result"]["serverInfo"]["name"] == "ws"
            transport.disconnect()

    asyncio.run(main())


def test_the_message_limit_is_checked():
    from mcpfast._core.framing import DEFAULT_MAX_FRAME_SIZE
    from mcpfast.transports.ws_listener import MCPListener

    assert MCPListener(print).max_message_size == DEFAULT_MAX_FRAME_SIZE
    assert MCPListener(print, None, 10).max_message_size == 10
    with pytest.raises(ValueError, match="max_message_size must be >= 1"):
        MCPListener(print, None, 0)


def test_the_compiled_listener_refuses_another_picows():
    # It reads picows's classes by the C layout of the release it was built with.
    import subprocess
    import sys

    from mcpfast.transports.ws_listener import PICOWS_BUILT_WITH

    assert PICOWS_BUILT_WITH == picows.__version__
    code = ("import picows\npicows.__version__ = '0.0.1'\n"
            "try:\n    import mcpfast.transports.ws_listener\n"
            "except ImportError as exc:\n    print(exc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert f"built with picows {PICOWS_BUILT_WITH}, but picows 0.0.1 is installed" in out.stdout, out
    assert f"install picows=={PICOWS_BUILT_WITH}" in out.stdout


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


def test_stopping_the_server_closes_open_sockets_with_1001():
    # Shutdown does not wait for clients to leave: each open socket is closed (going
    # away), which cancels what its requests still run.
    async def main():
        cancelled: list = []
        async with app_session(make_server(cancelled)) as (task, port, transport, listener):
            transport.send(picows.WSMsgType.TEXT, json.dumps(INIT).encode())
            await asyncio.wait_for(listener.got.get(), 5)
            transport.send(picows.WSMsgType.TEXT, b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
            call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "hang", "arguments": {}}}
            transport.send(picows.WSMsgType.TEXT, json.dumps(call).encode())
            idle_transport, idle_listener = await raw(port)
            await asyncio.sleep(0.05)
            task.cancel()
            done, _ = await asyncio.wait([task], timeout=5)
            assert done, "the server still runs with clients connected"
            for got in (listener.got, idle_listener.got):
                assert await asyncio.wait_for(got.get(), 5) == ("close", picows.WSCloseCode.GOING_AWAY)
            await asyncio.wait_for(transport.wait_disconnected(), 5)
            await asyncio.wait_for(idle_transport.wait_disconnected(), 5)
            for _ in range(50):
                if cancelled:
                    break
                await asyncio.sleep(0.02)
            assert cancelled == ["hang"]

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
