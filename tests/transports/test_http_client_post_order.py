"""The order in which the HTTP clients' messages leave (mcpfast/transports/http/post_order.py):
a notification or a response is answered before anything the client sends after it
leaves; requests go side by side. Checked against a raw HTTP server that answers
notifications late and notes when each POST arrived."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Optional

from mcpfast import connect
from mcpfast._core.decode import decode
from mcpfast.transports.http import post_order
from mcpfast.transports.http.post_order import PostOrder, request_ids_of, wait_turn
from raw_http import serve_requests, write_whole

LATE = 0.3  # seconds the server takes to accept a notification


class RecordingServer:
    """A raw HTTP/1.1 MCP server, Streamable HTTP at /mcp and the 2024-11-05 HTTP+SSE
    transport at /sse + /messages: it answers initialize, accepts notifications LATE
    seconds after they arrive, answers tools/call ``slow`` LATE seconds late, anything
    else at once; ``log`` holds (event, what, loop time) of every POST."""

    def __init__(self) -> None:
        self.log: list[tuple[str, str, float]] = []
        self.server: Optional[asyncio.base_events.Server] = None
        self.stream: Optional[asyncio.StreamWriter] = None  # the legacy SSE stream

    async def start(self) -> int:
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", 0)
        return self.server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        assert self.server is not None
        if self.stream is not None:
            self.stream.close()
        self.server.close()

    def note(self, event: str, what: str) -> None:
        self.log.append((event, what, asyncio.get_running_loop().time()))

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await serve_requests(reader, writer, self.answer, keep_alive=True)

    @staticmethod
    def whole(writer: asyncio.StreamWriter, status: str, body: bytes = b"") -> None:
        write_whole(writer, status, body, "s1", close=False)

    def answer_of(self, message: dict) -> bytes:
        if message["method"] == "initialize":
            result: dict[str, Any] = {"protocolVersion": "2025-11-25" if self.stream is None else "2024-11-05",
                                      "capabilities": {"tools": {}}, "serverInfo": {"name": "r", "version": "1"}}
        elif message["method"] == "tools/list":
            result = {"tools": []}
        else:
            result = {"content": [{"type": "text", "text": message["params"]["name"]}]}
        return json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()

    async def answer(self, method: str, target: str, headers: dict, body: bytes,
                     writer: asyncio.StreamWriter) -> None:
        if method == "GET" and target == "/sse":
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
                         b"event: endpoint\ndata: /messages?session_id=s1\n\n")
            self.stream = writer
            await asyncio.sleep(3600)
        if method != "POST":
            self.whole(writer, "405 Method Not Allowed")
            return
        message = json.loads(body)
        what = message.get("method") or "response"
        if message.get("params", {}).get("name"):
            what += " " + message["params"]["name"]
        self.note("arrived", what)
        if "id" not in message or "method" not in message or what == "tools/call slow":
            await asyncio.sleep(LATE)
        if target.startswith("/messages"):  # legacy: accepted here, answered on the stream
            if "id" in message and "method" in message:
                assert self.stream is not None
                self.stream.write(b"event: message\ndata: " + self.answer_of(message) + b"\n\n")
            self.whole(writer, "202 Accepted")
        elif "id" in message and "method" in message:
            self.whole(writer, "200 OK", self.answer_of(message))
        else:
            self.whole(writer, "202 Accepted")
        self.note("answered", what)

    def at(self, event: str, what: str) -> float:
        return next(t for e, w, t in self.log if e == event and w == what)


async def run_client(path: str) -> RecordingServer:
    server = RecordingServer()
    port = await server.start()
    try:
        async with connect(f"http://127.0.0.1:{port}{path}") as client:
            # Sent by connect() right after initialize: initialized, then this request.
            assert await client.list_tools() == []
            # Two requests side by side: the fast one is not held up by the slow one.
            slow = asyncio.ensure_future(client.call_tool("slow", {}))
            fast = asyncio.ensure_future(client.call_tool("fast", {}))
            assert (await fast)["content"][0]["text"] == "fast"
            assert not slow.done()
            assert (await slow)["content"][0]["text"] == "slow"
    finally:
        await server.stop()
    return server


def check(server: RecordingServer) -> None:
    # The request sent after notifications/initialized left once that was accepted.
    assert server.at("arrived", "tools/list") >= server.at("answered", "notifications/initialized")
    assert server.at("arrived", "tools/call fast") < server.at("answered", "tools/call slow")


def test_streamable_http_client_sends_a_notification_before_what_follows_it():
    check(asyncio.run(run_client("/mcp")))


def test_legacy_sse_client_sends_a_notification_before_what_follows_it():
    check(asyncio.run(run_client("/sse")))


def test_a_notification_long_unanswered_holds_what_follows_for_a_while_only(monkeypatch):
    monkeypatch.setattr(post_order, "HOLD", 0.2)

    async def main() -> tuple[list[str], float]:
        order = PostOrder()
        sent: list[str] = []
        hung = asyncio.ensure_future(asyncio.sleep(5))  # a notification's POST, unanswered for long
        order.posted(decode(b'{"jsonrpc":"2.0","method":"n"}'), hung)
        start = asyncio.get_running_loop().time()
        await wait_turn(order.turn())
        sent.append("request leaves")
        waited = asyncio.get_running_loop().time() - start
        hung.cancel()
        return sent, waited

    sent, waited = asyncio.run(main())
    assert sent == ["request leaves"] and 0.15 < waited < 2.0


def test_post_order_holds_back_only_what_follows_a_message_owing_no_answer():
    async def main() -> list[str]:
        order = PostOrder()
        sent: list[str] = []

        async def post(name: str, before: Optional[asyncio.Task[Any]], delay: float) -> None:
            await wait_turn(before)
            sent.append(name + " leaves")
            await asyncio.sleep(delay)
            sent.append(name + " answered")

        def send(name: str, frame: bytes, delay: float = 0.0) -> asyncio.Task[Any]:
            task = asyncio.ensure_future(post(name, order.turn(), delay))
            order.posted(decode(frame), task)
            return task

        tasks = [send("r1", b'{"jsonrpc":"2.0","id":1,"method":"a"}', 0.2),
                 send("n1", b'{"jsonrpc":"2.0","method":"n"}', 0.1),
                 send("r2", b'{"jsonrpc":"2.0","id":2,"method":"b"}'),
                 send("answer", b'{"jsonrpc":"2.0","id":"s1","result":{}}', 0.1),
                 send("r3", b'{"jsonrpc":"2.0","id":3,"method":"c"}')]
        tasks[1].cancel()  # a notification whose POST is cancelled holds nothing back
        await asyncio.gather(*tasks, return_exceptions=True)
        assert order.turn() is None
        return sent

    sent = asyncio.run(main())
    assert sent.index("r2 leaves") < sent.index("answer leaves") < sent.index("answer answered") \
        < sent.index("r3 leaves")
    assert "n1 leaves" not in sent
    assert sent.index("r2 leaves") < sent.index("r1 answered")  # requests do not wait for requests
    assert request_ids_of(decode(b'[{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":1,"method":"a"}]'))
    assert not request_ids_of(decode(b'[{"jsonrpc":"2.0","method":"n"}]')) and not request_ids_of(None)
