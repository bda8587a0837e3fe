"""The HTTP client's plain POSTs (mcpfast/transports/http/client_plain.pyx): a request
with a plain JSON answer is written on a pooled connection and answered from the
connection's callbacks, with no task -- sequentially, and with many in flight over few
connections (queued for a slot) --; its answer is read in place, decoded once; an answer
that breaks off fails the call at once; the slots' bookkeeping."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpfast import connect
from mcpfast.client.client import Client
from mcpfast.jsonrpc import JSONRPCError
from mcpfast.transports.http.client import open_http
from mcpfast.transports.http.client_plain import PostSlots, answers
from raw_http import serve_requests, write_whole

ROOT = Path(__file__).resolve().parents[2]
ECHO = ROOT / "bench" / "servers" / "mcpfast_echo.py"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def echo_url():
    """bench/servers/mcpfast_echo.py over Streamable HTTP, in a process of its own (so
    that the tasks of this process are the client's only)."""
    port = free_port()
    process = subprocess.Popen([sys.executable, str(ECHO), "http", str(port)], stderr=subprocess.DEVNULL,
                               env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)


async def connected(url: str, max_connections: Any = None):
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    for _ in range(600):  # the server process is starting: its port opens when it serves
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.05)
            continue
        writer.close()
        if max_connections is None:
            return await connect(url)
        client = Client()
        client.own_stream(await open_http(url, client.bind, max_connections=max_connections))
        await client.start(timeout=30)
        return client
    raise AssertionError(f"nothing serves {url}")


def task_names_made(loop: asyncio.AbstractEventLoop) -> list[str]:
    """Start recording the coroutine names of the tasks made on ``loop`` from now on."""
    made: list[str] = []

    def factory(loop: Any, coroutine: Any, **kwargs: Any) -> asyncio.Task:
        made.append(getattr(coroutine, "__qualname__", repr(coroutine)))
        return asyncio.Task(coroutine, loop=loop, **kwargs)

    loop.set_task_factory(factory)
    return made


def test_sequential_calls_make_no_task(echo_url):
    async def main():
        client = await connected(echo_url)
        try:
            await client.call_tool("echo", {"text": "warm"})  # the pooled connection is made
            made = task_names_made(asyncio.get_running_loop())
            for i in range(30):
                result = await client.call_tool("echo", {"text": f"é {i}"})
                assert result["content"][0]["text"] == f"é {i}"
            assert made == []
        finally:
            await client.aclose()

    asyncio.run(asyncio.wait_for(main(), 60))


def test_many_in_flight_over_two_connections_are_queued_not_tasked(echo_url):
    async def main():
        client = await connected(echo_url, max_connections=2)
        try:
            await asyncio.gather(*(client.call_tool("echo", {"text": "warm"}) for _ in range(2)))
            made = task_names_made(asyncio.get_running_loop())
            texts = [f"call {i}" for i in range(100)]
            results = await asyncio.gather(*(client.call_tool("echo", {"text": text}) for text in texts))
            assert [result["content"][0]["text"] for result in results] == texts
            # Only gather's own tasks (one per call): none of the transport's.
            assert not [name for name in made if "HTTPClientStream" in name]
        finally:
            await client.aclose()

    asyncio.run(asyncio.wait_for(main(), 60))


class BreakingServer:
    """A raw endpoint: initialize and the first call answered, then each call's answer
    broken off after ``cut`` bytes of its body, or (``cut`` None) answered with a body
    that answers no request."""

    def __init__(self, cut: Any) -> None:
        self.cut = cut
        self.calls = 0

    async def start(self) -> str:
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", 0)
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/mcp"

    async def handle(self, reader, writer) -> None:
        await serve_requests(reader, writer, self.answer, keep_alive=True)

    async def answer(self, method, target, headers, body, writer) -> None:
        if method != "POST":
            write_whole(writer, "405 Method Not Allowed", b"", "s", close=True)
            return
        message = json.loads(body)
        if message.get("method") == "initialize":
            result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                      "serverInfo": {"name": "breaking", "version": "1"}}
            write_whole(writer, "200 OK", json.dumps({"jsonrpc": "2.0", "id": message["id"],
                                                      "result": result}).encode(), "s", close=False)
        elif "id" not in message or "method" not in message:
            writer.write(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n")
        elif self.calls == 0:
            self.calls += 1
            write_whole(writer, "200 OK", json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {
                "content": []}}).encode(), "s", close=False)
        elif self.cut is None:
            write_whole(writer, "200 OK", b'{"jsonrpc":"2.0","id":424242,"result":{}}', "s", close=False)
        else:
            answer = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {"content": []}}).encode()
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                         b"Content-Length: %d\r\n\r\n%s" % (len(answer), answer[:self.cut]))
            await writer.drain()
            writer.close()


@pytest.mark.parametrize("cut", [0, 10])
def test_an_answer_broken_off_fails_the_call_at_once(cut):
    async def main():
        server = BreakingServer(cut)
        url = await server.start()
        client = await connect(url)
        try:
            # After one whole answer: on the pooled connection, then on a new one.
            assert await client.call_tool("anything", {}, timeout=30) == {"content": []}
            for _ in range(2):
                with pytest.raises(JSONRPCError, match="cannot reach .*: the HTTP connection was lost"):
                    await client.call_tool("anything", {}, timeout=30)
        finally:
            await client.aclose()
            server.server.close()

    asyncio.run(asyncio.wait_for(main(), 30))


def test_an_answer_to_another_id_fails_the_call():
    async def main():
        server = BreakingServer(None)
        url = await server.start()
        client = await connect(url)
        try:
            assert await client.call_tool("anything", {}, timeout=30) == {"content": []}
            with pytest.raises(JSONRPCError, match="HTTP 200 from .* with no answer to it"):
                await client.call_tool("anything", {}, timeout=30)
        finally:
            await client.aclose()
            server.server.close()

    asyncio.run(asyncio.wait_for(main(), 30))


class HostileServer(BreakingServer):
    """BreakingServer whose calls after the first are answered with ``raw``, bytes as
    they are, the connection kept open."""

    def __init__(self, raw: bytes) -> None:
        super().__init__(None)
        self.raw = raw

    async def answer(self, method, target, headers, body, writer) -> None:
        message = json.loads(body) if method == "POST" else {}
        if self.calls == 0 or "id" not in message or message.get("method") == "initialize":
            await super().answer(method, target, headers, body, writer)
        else:
            writer.write(self.raw)


@pytest.mark.parametrize("raw, reason", [
    (b"HTTP/1.1 2x0 OK\r\nContent-Length: 2\r\n\r\n{}", "malformed HTTP answer: .*status"),
    (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Pad: " + b"p" * 70000
     + b"\r\nContent-Length: 2\r\n\r\n{}", "malformed HTTP answer: the answer's head is over 65536 bytes"),
])
def test_a_malformed_or_oversized_answer_fails_the_call_naming_why(raw, reason):
    async def main():
        server = HostileServer(raw)
        url = await server.start()
        client = await connect(url)
        try:
            assert await client.call_tool("anything", {}, timeout=30) == {"content": []}
            with pytest.raises(JSONRPCError, match=f"cannot reach .*: {reason}"):
                await client.call_tool("anything", {}, timeout=30)
        finally:
            await client.aclose()
            server.server.close()

    asyncio.run(asyncio.wait_for(main(), 30))


def test_answers_reads_the_response_layout_in_place():
    assert answers(b'{"jsonrpc":"2.0","id":7,"result":{"a":1}}', 7)
    assert answers(b'{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"m"}}', 7)
    assert not answers(b'{"jsonrpc":"2.0","id":70,"result":{}}', 7)
    assert not answers(b'{"jsonrpc":"2.0","id":7,"method":"ping"}', 7)  # a request of the server's
    assert not answers(b'{"jsonrpc":"2.0","id":7,"result":{', 7)  # cut short
    assert not answers(b'{"result":{},"jsonrpc":"2.0","id":7}', 7)  # another layout: decoded instead
    assert not answers(b'{"jsonrpc":"2.0","id":"7","result":{}}', "7")  # str ids: decoded
    assert not answers(b'{"jsonrpc":"2.0","id":true,"result":{}}', True)


def _answers_rule(payload: bytes, request_id: Any) -> bool:
    """The layout rule answers() applies in C, as Python: the response's first bytes as
    encode_response / encode_error write them, and its closing brace."""
    if type(request_id) is not int:
        return False
    prefix = b'{"jsonrpc":"2.0","id":%d,"' % request_id
    if not payload.startswith(prefix) or not payload.endswith(b"}"):
        return False
    return payload.startswith(b'result":', len(prefix)) or payload.startswith(b'error":', len(prefix))


INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)


@settings(max_examples=400, deadline=None)
@given(request_id=st.one_of(INT64, st.booleans(), st.text(max_size=3)), other=INT64,
       member=st.sampled_from(["result", "error", "method", "res"]),
       tail=st.binary(max_size=12), same=st.booleans())
def test_answers_agrees_with_the_layout_rule(request_id, other, member, tail, same):
    shown = request_id if same and type(request_id) is int else other
    payload = b'{"jsonrpc":"2.0","id":%d,"%s":%s' % (shown, member.encode(), tail)
    assert answers(payload, request_id) == _answers_rule(payload, request_id)
    assert answers(payload + b"}", request_id) == _answers_rule(payload + b"}", request_id)


def test_post_slots_pass_on_in_turn():
    async def main():
        slots = PostSlots(2)
        assert slots.try_take() and slots.try_take() and not slots.try_take()
        order: list[int] = []

        async def waiter(n: int) -> None:
            await slots.take()
            order.append(n)

        first = asyncio.ensure_future(waiter(1))
        second = asyncio.ensure_future(waiter(2))
        cancelled = asyncio.ensure_future(waiter(3))
        await asyncio.sleep(0)
        assert slots.waiting and not slots.try_take()  # a task waits: nobody jumps the queue
        cancelled.cancel()
        slots.give()
        slots.give()
        await asyncio.gather(first, second)
        assert order == [1, 2] and slots.busy == 2
        with pytest.raises(asyncio.CancelledError):
            await cancelled
        slots.give()
        slots.give()
        assert slots.busy == 0 and not slots.waiting

    asyncio.run(main())
