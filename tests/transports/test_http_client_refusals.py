"""The HTTP client transport: a POST answered with a status other than 2xx fails the
requests it carried, whatever its body says -- as servers of the official SDK 1.x answer
(HTTP 400 / 404 and a JSON-RPC error whose id is "server-error") -- unless the body is the
server's error answer to one of them by id."""

from __future__ import annotations

import asyncio
import json
import math
from typing import Optional

import pytest

from mcpfast import connect
from mcpfast.jsonrpc import JSONRPCError
from raw_http import serve_requests, write_whole

SESSION = "refusing-session"
INITIALIZED = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
               "serverInfo": {"name": "refusing", "version": "1"}}


class RefusingServer:
    """A raw HTTP/1.1 server playing an SDK 1.x endpoint: it refuses server/discover (no
    session), answers initialize, then answers ``refusal`` (status, body) to the rest."""

    def __init__(self, refusal: tuple[str, bytes]) -> None:
        self.refusal = refusal
        self.methods: list[str] = []
        self.server: Optional[asyncio.base_events.Server] = None

    async def start(self) -> str:
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", 0)
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/mcp"

    async def stop(self) -> None:
        assert self.server is not None
        self.server.close()
        await self.server.wait_closed()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await serve_requests(reader, writer, self.answer, keep_alive=False)

    async def answer(self, method: str, target: str, headers: dict, body: bytes,
                     writer: asyncio.StreamWriter) -> None:
        if method != "POST":
            write_whole(writer, "405 Method Not Allowed", b"", SESSION, close=True)
            return
        message = json.loads(body)
        self.methods.append(message.get("method", "answer"))
        if message.get("method") == "server/discover":
            write_whole(writer, "400 Bad Request", sdk1_error("Bad Request: Missing session ID"), SESSION, close=True)
        elif message.get("method") == "initialize":
            answer = {"jsonrpc": "2.0", "id": message["id"], "result": INITIALIZED}
            write_whole(writer, "200 OK", json.dumps(answer).encode(), SESSION, close=True)
        elif "id" not in message:
            write_whole(writer, "202 Accepted", b"", SESSION, close=True)
        else:
            status, refusal = self.refusal
            write_whole(writer, status, refusal.replace(b"$ID", json.dumps(message["id"]).encode()), SESSION,
                        close=True)


def sdk1_error(message: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": "server-error",
                       "error": {"code": -32600, "message": message}}).encode()


def run(refusal: tuple[str, bytes], check) -> list[str]:
    async def main() -> list[str]:
        scripted = RefusingServer(refusal)
        url = await scripted.start()
        try:
            # The hang guard only: an unanswered call would wait for ever (timeout=inf).
            async with connect(url, protocol_version="auto") as client:
                await asyncio.wait_for(check(client), 30)
        finally:
            await scripted.stop()
        return scripted.methods

    return asyncio.run(main())


def test_auto_moves_on_to_initialize_when_discover_gets_an_sdk1_refusal():
    async def check(client) -> None:
        assert client.protocol_version == "2025-11-25"

    methods = run(("404 Not Found", sdk1_error("Session not found")), check)
    assert methods[:2] == ["server/discover", "initialize"]


def test_an_unknown_session_fails_the_request_with_the_status_and_the_servers_message():
    async def check(client) -> None:
        with pytest.raises(JSONRPCError, match=r"HTTP 404 from http://127\.0\.0\.1:\d+/mcp: Session not found"):
            await client.list_tools(timeout=math.inf)

    run(("404 Not Found", sdk1_error("Session not found")), check)


def test_a_refusal_without_a_json_rpc_body_fails_the_request_too():
    async def check(client) -> None:
        with pytest.raises(JSONRPCError, match="HTTP 503 from .*: overloaded"):
            await client.list_tools(timeout=math.inf)

    run(("503 Service Unavailable", b"overloaded"), check)


def test_the_servers_own_error_answer_to_the_request_is_kept():
    async def check(client) -> None:
        with pytest.raises(JSONRPCError, match="no such thing") as info:
            await client.list_tools(timeout=math.inf)
        assert info.value.code == -32602

    error = b'{"jsonrpc":"2.0","id":$ID,"error":{"code":-32602,"message":"no such thing"}}'
    run(("400 Bad Request", error), check)


def test_a_2xx_answer_that_answers_nothing_fails_the_request():
    # JSON naming another id (as a non-JSON page): the call fails instead of waiting for ever.
    async def page(client) -> None:
        with pytest.raises(JSONRPCError, match=r"HTTP 200 from .*/mcp with no answer to it"):
            await client.list_tools(timeout=math.inf)

    run(("200 OK", b'{"jsonrpc":"2.0","id":"server-error","result":{}}'), page)
