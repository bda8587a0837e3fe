"""Serving over real transports: stdio (a child process) and TCP, end to end; run() choices."""

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mcpfast.jsonrpc import Session
from mcpfast.server import Server
from mcpfast.transports import open_stdio

ROOT = Path(__file__).resolve().parents[2]
ECHO = ROOT / "examples" / "echo_server.py"


def child_env():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def line(message):
    return (json.dumps(message) + "\n").encode()


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "raw", "version": "0"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def test_echo_server_over_raw_stdio_pipes(mcp_schema):
    requests = [
        INITIALIZE,
        INITIALIZED,
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "echo", "arguments": {"text": "ünï\ncode"}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "echo", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 5, "method": "ping"},
    ]
    completed = subprocess.run(
        [sys.executable, str(ECHO)], input=b"".join(line(m) for m in requests) + b"not json\n",
        capture_output=True, timeout=60, env=child_env(),
    )
    assert completed.returncode == 0, completed.stderr.decode()
    lines = completed.stdout.splitlines()
    replies = [json.loads(raw) for raw in lines]
    schema = mcp_schema("2025-06-18")
    answers = {1: "initialize", 2: "tools/list", 3: "tools/call", 4: "tools/call", 5: "ping"}
    for reply in replies:
        schema.check_message(reply, answers=answers.get(reply.get("id")))
    by_id = {reply["id"]: reply for reply in replies}
    assert by_id[1]["result"]["protocolVersion"] == "2025-06-18"
    assert by_id[2]["result"]["tools"][0]["name"] == "echo"
    assert by_id[3]["result"] == {"content": [{"type": "text", "text": "ünï\ncode"}]}
    assert by_id[4]["result"]["isError"] is True
    assert by_id[5]["result"] == {}
    assert by_id[None]["error"]["code"] == -32700
    assert len(replies) == 6


class CheckedSession:
    """A client Session that validates every frame the server sends before reading it."""

    def __init__(self, send, schema):
        self.session = Session(send)
        self.schema = schema
        self.feed_error = self.session.feed_error
        self.close = self.session.close
        self.checked = 0

    def feed(self, frame):
        message = json.loads(bytes(frame))
        answers = "initialize" if "protocolVersion" in message.get("result", {}) else "tools/call"
        self.schema.check_message(message, answers=answers)
        self.checked += 1
        return self.session.feed(frame)


def test_echo_server_through_mcpfast_stdio_client_transport(mcp_schema):
    async def main():
        factory = lambda send: CheckedSession(send, mcp_schema("2025-06-18"))  # noqa: E731
        async with await open_stdio(sys.executable, [str(ECHO)], factory,
                                    env={"PYTHONPATH": str(ROOT)}) as connection:
            checked = connection.conn
            session = checked.session
            result = await session.request("initialize", INITIALIZE["params"], timeout=30)
            assert result["serverInfo"] == {"name": "echo", "version": "1.0.0"}
            session.notify("notifications/initialized")
            calls = [session.request("tools/call", {"name": "echo", "arguments": {"text": str(i)}})
                     for i in range(50)]
            results = await asyncio.gather(*calls)
            assert [r["content"][0]["text"] for r in results] == [str(i) for i in range(50)]
            assert checked.checked == 51

    asyncio.run(main())


def test_print_in_a_tool_does_not_corrupt_stdio(tmp_path):
    script = tmp_path / "noisy_server.py"
    script.write_text(textwrap.dedent("""
        from mcpfast.server import Server

        app = Server("noisy")

        @app.tool()
        def noisy() -> str:
            print("this goes to stderr, not into the protocol")
            return "quiet result"

        app.run()
    """))
    requests = [INITIALIZE, INITIALIZED,
                {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "noisy"}}]
    completed = subprocess.run([sys.executable, str(script)], input=b"".join(map(line, requests)),
                               capture_output=True, timeout=60, env=child_env())
    assert completed.returncode == 0, completed.stderr.decode()
    replies = [json.loads(raw) for raw in completed.stdout.splitlines()]
    assert replies[-1]["result"] == {"content": [{"type": "text", "text": "quiet result"}]}
    assert b"this goes to stderr" in completed.stderr


def test_tcp_serves_several_clients(mcp_schema):
    app = Server("tcp")

    @app.tool()
    async def double(n: int) -> int:
        return n * 2

    async def client(port, value):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(line({**INITIALIZE, "params": {**INITIALIZE["params"], "protocolVersion": "2025-11-25"}}))
        writer.write(line(INITIALIZED))
        writer.write(line({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                           "params": {"name": "double", "arguments": {"n": value}}}))
        await writer.drain()
        replies = [json.loads(await reader.readline()) for _ in range(2)]
        writer.close()
        await writer.wait_closed()
        return replies

    async def main():
        bound = asyncio.get_running_loop().create_future()
        server = asyncio.ensure_future(app.serve_tcp("127.0.0.1", 0, ready=lambda h, p: bound.set_result(p)))
        port = await asyncio.wait_for(bound, 10)
        try:
            results = await asyncio.gather(*(client(port, i) for i in range(5)))
        finally:
            server.cancel()
            with pytest.raises(asyncio.CancelledError):
                await server
        return results

    results = asyncio.run(main())
    schema = mcp_schema("2025-11-25")
    for value, (init, call) in enumerate(results):
        schema.check_message(init, answers="initialize")
        schema.check_message(call, answers="tools/call")
        assert call["result"]["structuredContent"] == {"result": value * 2}
    assert app.connections == ()


@pytest.mark.parametrize("transport", ["sse", "SSE"])
def test_transports_not_available_yet_say_so(transport):
    with pytest.raises(ValueError, match=f"the {transport} transport is not available yet"):
        Server("x").run(transport)


def test_unknown_transports_are_refused():
    with pytest.raises(ValueError, match="unknown transport 'carrier-pigeon'"):
        Server("x").run("carrier-pigeon")
    with pytest.raises(TypeError):
        Server("x").run(5)


def test_connection_factory_is_connect(mcp_schema):
    app = Server("f")
    frames = []
    conn = app.connection_factory(frames.append)
    assert conn.server is app.core and conn in app.connections
    assert conn.feed(b'{"jsonrpc":"2.0","id":1,"method":"ping"}') is True
    assert frames == [b'{"jsonrpc":"2.0","id":1,"result":{}}']
    mcp_schema("2025-11-25").check_message(frames[0], answers="ping")
    conn.close()
