"""The HTTP client transport: resuming a POST's event stream that ended before its
response (Last-Event-ID after the server's retry delay), and the HTTPAuth hook."""

from __future__ import annotations

import asyncio
import json
from typing import Optional

import pytest

from loop import eventually
from mcpfast import AccessToken, Context, Server, connect
from mcpfast.client import with_request
from mcpfast.jsonrpc import JSONRPCError
from mcpfast.transports.http import BearerAuth
from mcpfast.transports.http.client_auth import (
    MAX_AUTH_RETRIES,
    BearerToken,
    HTTPAuth,
    Unauthorized,
)
from raw_http import serve_requests, write_whole

SESSION = "resume-session"


class ScriptedServer:
    """A raw HTTP/1.1 server playing an MCP endpoint whose tools/call stream ends after
    a priming event (``resumable``: with an id and ``retry``; else without an id)."""

    def __init__(self, resumable: bool, ask: bool = False) -> None:
        self.resumable = resumable
        # ask: the resumed stream carries a roots/list request before the response.
        self.ask = ask
        self.answers: list[dict] = []  # the client's responses to it
        self.gets: list[Optional[str]] = []  # Last-Event-ID of each GET
        self.pending_id = None
        self.server: Optional[asyncio.base_events.Server] = None

    async def start(self) -> str:
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/mcp"

    async def stop(self) -> None:
        assert self.server is not None
        self.server.close()
        await self.server.wait_closed()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        async def answer(method: str, target: str, headers: dict, body: bytes,
                         writer: asyncio.StreamWriter) -> None:
            await self.answer(method, target, headers, body, writer, reader)

        await serve_requests(reader, writer, answer, keep_alive=False)

    @staticmethod
    def whole(writer: asyncio.StreamWriter, status: str, body: bytes = b"") -> None:
        write_whole(writer, status, body, SESSION, close=True)

    @staticmethod
    def sse_head(writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")

    async def answer(self, method: str, target: str, headers: dict, body: bytes,
                     writer: asyncio.StreamWriter, reader: asyncio.StreamReader) -> None:
        if method == "DELETE":
            self.whole(writer, "200 OK")
            return
        if method == "GET":
            last = headers.get("last-event-id")
            self.gets.append(last)
            self.sse_head(writer)
            writer.write(b"id: g1\ndata: \n\n")
            if last is not None and self.pending_id is not None:
                if self.ask:
                    question = {"jsonrpc": "2.0", "id": "s1", "method": "roots/list"}
                    writer.write(b"event: message\nid: g1a\ndata: " + json.dumps(question).encode() + b"\n\n")
                response = {"jsonrpc": "2.0", "id": self.pending_id,
                            "result": {"content": [{"type": "text", "text": "resumed"}]}}
                writer.write(b"event: message\nid: g2\ndata: " + json.dumps(response).encode() + b"\n\n")
                self.pending_id = None
            await writer.drain()
            # A live stream until the client goes: its end of file, not a timer (from 3.12
            # on, stop()'s wait_closed waits for every connection to be closed).
            await reader.read()
            return
        message = json.loads(body)
        if message.get("method") == "initialize":
            result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                      "serverInfo": {"name": "scripted", "version": "1"}}
            self.whole(writer, "200 OK", json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode())
        elif "id" not in message:
            self.whole(writer, "202 Accepted")
        elif "method" not in message:
            self.answers.append(message)
            self.whole(writer, "202 Accepted")
        elif message.get("method") == "tools/call":
            self.pending_id = message["id"]
            self.sse_head(writer)
            writer.write(b"id: p1\nretry: 100\ndata: \n\n" if self.resumable else b"data: \n\n")
            await writer.drain()
        else:
            self.whole(writer, "200 OK", json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {}}).encode())


def test_a_post_stream_ending_early_is_resumed_with_last_event_id():
    async def main():
        scripted = ScriptedServer(resumable=True)
        url = await scripted.start()
        try:
            async with connect(url) as client:
                result = await asyncio.wait_for(client.call_tool("anything", {}), 10)
                assert result["content"][0]["text"] == "resumed"
            assert "p1" in scripted.gets  # resumed from the POST stream's last event
        finally:
            await scripted.stop()

    asyncio.run(main())


def test_a_servers_request_on_a_resumed_post_stream_names_the_posts_request():
    async def main():
        scripted = ScriptedServer(resumable=True, ask=True)
        url = await scripted.start()
        seen = []

        def roots(request):
            seen.append((request.id, request.related_request_id))
            return ["file:///w"]

        try:
            async with connect(url, roots=with_request(roots)) as client:
                session = client.session
                call = session.send_request("tools/call", {"name": "anything", "arguments": {}})
                result = await asyncio.wait_for(call.wait(), 10)
                assert result["content"][0]["text"] == "resumed"
                # Asked on the stream resumed for the call: it belongs to the call.
                assert seen == [("s1", call.id)]
                await eventually(lambda: bool(scripted.answers))
                assert scripted.answers == [{"jsonrpc": "2.0", "id": "s1", "result": {"roots": [{"uri": "file:///w"}]}}]
        finally:
            await scripted.stop()

    asyncio.run(main())


def test_a_post_stream_ending_early_without_event_ids_fails_the_call():
    async def main():
        scripted = ScriptedServer(resumable=False)
        url = await scripted.start()
        try:
            async with connect(url) as client:
                with pytest.raises(JSONRPCError, match="not resumable"):
                    await asyncio.wait_for(client.call_tool("anything", {}), 10)
        finally:
            await scripted.stop()

    asyncio.run(main())


# -- the auth hook ------------------------------------------------------------------------

TOKENS = {"good": AccessToken("alice", {"mcp"}), "more": AccessToken("alice", {"mcp", "admin"})}


def make_app() -> Server:
    app = Server("auth-hook")

    @app.tool()
    def whoami(ctx: Context) -> str:
        assert ctx.auth is not None
        return f"{ctx.auth.subject}:{ctx.auth.token}"

    return app


class Refreshing:
    """Starts without a token; gets one when refused (a stand-in for an OAuth flow)."""

    def __init__(self, give: Optional[str], forever: bool = False) -> None:
        self.token: Optional[str] = None
        self.give = give
        self.forever = forever
        self.refusals: list[Unauthorized] = []

    async def authorization(self) -> Optional[str]:
        return None if self.token is None else f"Bearer {self.token}"

    async def unauthorized(self, refusal: Unauthorized) -> bool:
        self.refusals.append(refusal)
        if self.token is not None and not self.forever:
            return False
        self.token = self.give
        return True


async def serve(required=("mcp",)) -> tuple[asyncio.Task, str]:
    auth = BearerAuth(TOKENS.get, resource="http://127.0.0.1/mcp",
                      authorization_servers=["https://auth.example"], required_scopes=required)
    ready: asyncio.Future = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(make_app().serve_http("127.0.0.1", 0, auth=auth,
                                                     ready=lambda h, p: ready.set_result(p)))
    return task, f"http://127.0.0.1:{await ready}/mcp"


def test_a_refused_request_is_sent_again_with_new_credentials():
    async def main():
        server, url = await serve()
        try:
            auth = Refreshing("good")
            assert isinstance(auth, HTTPAuth)
            async with connect(url, auth=auth) as client:
                result = await client.call_tool("whoami", {})
                assert result["content"][0]["text"] == "alice:good"
            assert len(auth.refusals) == 1
            refusal = auth.refusals[0]
            assert refusal.status == 401 and refusal.url == url
            assert refusal.challenge is not None and "resource_metadata=" in refusal.challenge
            # A str is a fixed bearer token.
            async with connect(url, auth="good") as client:
                assert (await client.call_tool("whoami", {}))["content"][0]["text"] == "alice:good"
        finally:
            server.cancel()
            await asyncio.gather(server, return_exceptions=True)

    asyncio.run(main())


def test_retries_after_refusals_are_bounded():
    async def main():
        server, url = await serve(required=("mcp", "admin"))
        try:
            auth = Refreshing("good", forever=True)  # never gets the admin scope
            with pytest.raises(JSONRPCError, match="403"):
                async with connect(url, auth=auth):
                    pass
            # 1 + MAX_AUTH_RETRIES attempts; the last refusal is final, not handed over.
            assert [r.status for r in auth.refusals] == [401] + [403] * (MAX_AUTH_RETRIES - 1)
            assert "insufficient_scope" in (auth.refusals[-1].challenge or "")
            # A fixed token is not retried.
            with pytest.raises(JSONRPCError, match="401"):
                async with connect(url, auth="unknown"):
                    pass
        finally:
            server.cancel()
            await asyncio.gather(server, return_exceptions=True)

    asyncio.run(main())


def test_auth_arguments_are_checked():
    with pytest.raises(ValueError):
        BearerToken("two words")
    with pytest.raises(TypeError, match="http"):
        connect("tcp://127.0.0.1:1", auth="x")

    async def main():
        with pytest.raises(TypeError, match="HTTPAuth"):
            await connect("http://127.0.0.1:1/mcp", auth=object())

    asyncio.run(main())
