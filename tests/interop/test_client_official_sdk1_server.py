"""mcpfast's client against a Streamable HTTP server of the official Python SDK 1.x
(FastMCP on uvicorn, tests/interop/sdk1_server/server.py), the kind most deployed servers
still are. Such a server answers a POST without a session, with an unknown session or with
an unsupported MCP-Protocol-Version with HTTP 400/404 and a JSON-RPC error whose id is
"server-error": the client must fail the request at once, not wait for an answer."""

from __future__ import annotations

import asyncio
import math
import socket
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from mcpfast import connect
from mcpfast.jsonrpc import JSONRPCError
from redis_server import free_port

SERVER = Path(__file__).resolve().parent / "sdk1_server" / "server.py"


class SDK1Server:
    """The SDK 1.x server process on a fixed port: ``start()`` (again, after ``kill()``)."""

    def __init__(self, python: str) -> None:
        self.python = python
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = subprocess.Popen([self.python, str(SERVER), str(self.port)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(600):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if self.process.poll() is not None:
                    raise AssertionError("the SDK 1.x server exited at start") from None
                time.sleep(0.05)
        raise AssertionError("the SDK 1.x server did not listen")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
        self.process = None


@contextmanager
def sdk1_server(python: str) -> Iterator[SDK1Server]:
    server = SDK1Server(python)
    server.start()
    try:
        yield server
    finally:
        server.kill()


@pytest.fixture
def server(sdk1_python: str) -> Iterator[SDK1Server]:
    with sdk1_server(sdk1_python) as running:
        yield running


def test_auto_connects_by_moving_on_from_the_refused_discover(server):
    async def converse() -> None:
        async with connect(server.url, protocol_version="auto") as client:
            assert client.discover_result is None and client.protocol_version is not None
            result = await client.call_tool("echo", {"text": "hi"})
            assert result["content"][0]["text"] == "hi"

    # A bound for a hung test only (unanswered, discover waits for the 60 s initialize timeout).
    asyncio.run(asyncio.wait_for(converse(), 30))


def test_after_the_server_restarts_the_next_request_fails_at_once_with_its_reason(server):
    async def converse() -> None:
        async with connect(server.url) as client:
            await client.list_tools()
            server.kill()
            await asyncio.to_thread(server.start)  # a new process: the session is unknown
            with pytest.raises(JSONRPCError, match=r"HTTP 404 from http://127\.0\.0\.1:\d+/mcp: Session not found"):
                await client.call_tool("echo", {"text": "again"}, timeout=math.inf)

    asyncio.run(asyncio.wait_for(converse(), 30))
