"""The 2024-11-05 HTTP+SSE transport: the endpoint without sockets, then the official
Python SDK's SSE client against mcpfast's HTTP server (legacy_sse=True)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from mcpfast import Server
from mcpfast.transports.http import HTTPRequest, HTTPResponse, LegacySSEEndpoint

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}}}


def make_server(cancelled: list) -> Server:
    app = Server("legacy")

    @app.tool()
    def echo(text: str) -> str:
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


def host(**extra: str) -> dict[str, str]:
    return {"host": "127.0.0.1:8000", **extra}


def post(endpoint: LegacySSEEndpoint, session_id: str, message: Any, **headers: str) -> HTTPResponse:
    request = HTTPRequest("POST", "/messages", host(**{"content-type": "application/json", **headers}),
                          json.dumps(message).encode(), query=f"session_id={session_id}")
    outcome = endpoint.handle(request)
    assert isinstance(outcome, HTTPResponse)
    return outcome


async def next_event(events: Any) -> tuple[str, str]:
    chunk = (await asyncio.wait_for(events.__anext__(), 5)).decode()
    fields = dict(line.split(": ", 1) for line in chunk.strip().splitlines() if ": " in line)
    return fields.get("event", "message"), fields["data"]


def test_a_session_from_its_stream_to_its_end():
    async def main():
        cancelled: list = []
        endpoint = make_server(cancelled).http_endpoint(legacy_sse=True)
        assert isinstance(endpoint, LegacySSEEndpoint)
        opened = endpoint.handle(HTTPRequest("GET", "/sse", host(accept="text/event-stream")))
        assert isinstance(opened, HTTPResponse) and opened.status == 200
        assert opened.header("content-type") == "text/event-stream"
        events = opened.stream
        kind, url = await next_event(events)
        assert kind == "endpoint" and url.startswith("/messages?session_id=")
        session_id = url.split("=", 1)[1]
        assert len(session_id) == 32 and session_id in endpoint.sessions
        assert post(endpoint, session_id, INIT).status == 202
        kind, data = await next_event(events)
        assert kind == "message" and json.loads(data)["result"]["protocolVersion"] == "2024-11-05"
        post(endpoint, session_id, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        post(endpoint, session_id, {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                    "params": {"name": "echo", "arguments": {"text": "hi"}}})
        _, data = await next_event(events)
        assert json.loads(data)["result"]["content"][0]["text"] == "hi"
        # A request still running when the stream closes is cancelled with the session.
        post(endpoint, session_id, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                    "params": {"name": "hang", "arguments": {}}})
        await asyncio.sleep(0.01)
        opened.close(disconnected=True)
        await asyncio.sleep(0.01)
        assert cancelled == ["hang"] and endpoint.sessions == {}
        assert post(endpoint, session_id, INIT).status == 404
        endpoint.close()

    asyncio.run(main())


@pytest.mark.parametrize("request_, status", [
    (HTTPRequest("POST", "/messages", host(**{"content-type": "application/json"}), b"{}"), 400),
    (HTTPRequest("POST", "/messages", host(**{"content-type": "application/json"}), b"{}",
                 query="session_id=feedface"), 404),
    (HTTPRequest("PUT", "/sse", host()), 405),
    (HTTPRequest("GET", "/messages", host()), 405),
    (HTTPRequest("GET", "/sse", {"host": "evil.example"}), 421),
    (HTTPRequest("GET", "/sse", host(origin="http://evil.example")), 403),
])
def test_bad_requests_get_their_status(request_, status):
    endpoint = make_server([]).http_endpoint(legacy_sse=True)
    response = endpoint.handle(request_)
    assert isinstance(response, HTTPResponse) and response.status == status
    assert json.loads(response.body)["error"]["message"]


def test_bad_posts_to_a_live_session():
    async def main():
        endpoint = make_server([]).http_endpoint(legacy_sse=True, max_body_size=200)
        opened = endpoint.handle(HTTPRequest("GET", "/sse", host()))
        _, url = await next_event(opened.stream)
        session_id = url.split("=", 1)[1]
        assert post(endpoint, session_id, INIT, **{"content-type": "text/plain"}).status == 415
        big = {**INIT, "pad": "x" * 300}
        assert post(endpoint, session_id, big).status == 413
        broken = HTTPRequest("POST", "/messages", host(**{"content-type": "application/json"}),
                             b"{not json", query=f"session_id={session_id}")
        response = endpoint.handle(broken)
        assert response.status == 400 and json.loads(response.body)["error"]["code"] == -32700
        # The session goes on after the bad ones.
        assert post(endpoint, session_id, INIT).status == 202
        opened.close(disconnected=True)
        endpoint.close()

    asyncio.run(main())


def test_the_streamable_endpoint_still_answers_its_path():
    endpoint = make_server([]).http_endpoint(legacy_sse=True)
    response = endpoint.handle(HTTPRequest("DELETE", "/mcp", host()))
    assert isinstance(response, HTTPResponse) and response.status == 400  # no session id
    assert endpoint.handle(HTTPRequest("GET", "/other", host())).status == 404


def test_the_official_sdk_sse_client_talks_to_mcpfast():
    from mcp import ClientSession
    from mcp.client.sse import sse_client

    async def main():
        app = make_server([])
        ready: asyncio.Future = asyncio.get_running_loop().create_future()
        server = asyncio.create_task(app.serve_http("127.0.0.1", 0, legacy_sse=True,
                                                    ready=lambda h, p: ready.set_result(p)))
        port = await ready
        try:
            async with sse_client(f"http://127.0.0.1:{port}/sse") as (read, write):
                async with ClientSession(read, write) as session:
                    result = await session.initialize()
                    assert result.server_info.name == "legacy"
                    tools = await session.list_tools()
                    assert {tool.name for tool in tools.tools} == {"echo", "hang"}
                    called = await session.call_tool("echo", {"text": "from an old client"})
                    assert called.content[0].text == "from an old client"
        finally:
            server.cancel()
            await asyncio.gather(server, return_exceptions=True)

    asyncio.run(main())


def test_mcpfast_run_serves_legacy_clients_with_a_flag(tmp_path):
    import os
    import subprocess
    import sys

    script = tmp_path / "server.py"
    script.write_text("from mcpfast import Server\napp = Server('cli-legacy')\n\n"
                      "@app.tool()\ndef echo(text: str) -> str:\n    return text\n")
    process = subprocess.Popen([sys.executable, "-m", "mcpfast", "run", str(script), "--transport",
                                "http", "--port", "0", "--legacy-sse"],
                               stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        line = process.stderr.readline()
        base = line.strip().rsplit(" ", 1)[1].rsplit("/", 1)[0]

        async def main():
            reader, writer = await asyncio.open_connection(*base[len("http://"):].split(":"))
            writer.write(b"GET /sse HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
            data = b""
            while b"event: endpoint" not in data:
                data += await asyncio.wait_for(reader.read(4096), 10)
            writer.close()
            return data

        data = asyncio.run(main())
        assert b"200 OK" in data and b"data: /messages?session_id=" in data
    finally:
        process.terminate()
        process.wait(10)


def test_the_mcpfast_client_reaches_a_legacy_server_by_its_sse_url():
    from mcpfast import connect

    async def main():
        cancelled: list = []
        app = make_server(cancelled)
        ready: asyncio.Future = asyncio.get_running_loop().create_future()
        server = asyncio.create_task(app.serve_http("127.0.0.1", 0, legacy_sse=True,
                                                    ready=lambda h, p: ready.set_result(p)))
        port = await ready
        try:
            async with connect(f"http://127.0.0.1:{port}/sse") as client:
                assert client.protocol_version == "2025-11-25"
                assert (await client.call_tool("echo", {"text": "via sse"}))["content"][0]["text"] == "via sse"
                call = asyncio.create_task(client.call_tool("hang", {}))
                await asyncio.sleep(0.05)
            # Leaving closed the stream: the session ended and its request was cancelled.
            await asyncio.sleep(0.05)
            assert cancelled == ["hang"]
            assert call.done()
            with pytest.raises(ConnectionError):
                async with connect(f"http://127.0.0.1:{port}/nothing/sse"):
                    pass
        finally:
            server.cancel()
            await asyncio.gather(server, return_exceptions=True)

    asyncio.run(main())


def test_the_mcpfast_client_reaches_the_official_sdks_sse_server(tmp_path):
    import subprocess
    import sys
    import textwrap

    from everything_http import free_port, wait_for_port
    from mcpfast import connect

    script = tmp_path / "official_sse.py"
    script.write_text(textwrap.dedent('''
        import sys
        from mcp.server.mcpserver import MCPServer

        mcp = MCPServer("official-sse")

        @mcp.tool()
        def add(a: int, b: int) -> int:
            return a + b

        mcp.run("sse", host="127.0.0.1", port=int(sys.argv[1]))
    '''))
    port = free_port()
    process = subprocess.Popen([sys.executable, str(script), str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    async def main():
        await wait_for_port(port)
        async with connect(f"http://127.0.0.1:{port}/sse") as client:
            assert client.server_info["name"] == "official-sse"
            result = await client.call_tool("add", {"a": 2, "b": 40})
            assert result["content"][0]["text"] == "42"

    try:
        asyncio.run(main())
    finally:
        process.terminate()
        process.wait(10)
