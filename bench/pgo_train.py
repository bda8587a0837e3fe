"""The training run of a profile-guided build (``scripts/build --pgo``): the work the
benchmark suite measures, done by the instrumented compiled modules, so that the compiler
lays out and inlines their code for it.

    python bench/pgo_train.py [--rounds N]

What runs, each part a few thousand times: the codec (decode and encode of the suite's five
messages, batches included), the line framer, a stdio/TCP-style server connection fed
initialize and tools/call frames, stateless Streamable HTTP POSTs at 2025-11-25 and
2026-07-28 and a stateful HTTP session fed through the server protocol (a transport that
keeps what is written), and mcpfast's client calling a server over loopback TCP,
sequentially and with calls in flight. Every answer is checked, so a training run that
went wrong fails instead of teaching the compiler an error path.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.bench_http import request_of  # noqa: E402
from bench.fixtures import FIXTURES  # noqa: E402
from bench.peers import Mcpfast  # noqa: E402

ECHO = "The quick brown fox jumps over the lazy dog"


def train_codec(rounds: int) -> None:
    peer = Mcpfast()
    for fixture in FIXTURES:
        decode, encode = peer.decoder(fixture), peer.encoder(fixture)
        expected = decode()
        for _ in range(rounds):
            decode()
            encode()
        if decode() != expected or json.loads(encode()) != json.loads(fixture.frame):
            raise AssertionError(f"codec training: {fixture.key} came out wrong")


def train_framing(rounds: int) -> None:
    from mcpfast._core.framing import LineFramer

    frames = b"".join(fixture.frame + b"\n" for fixture in FIXTURES)
    framer = LineFramer()
    count = 0
    for _ in range(rounds // 10):
        count += sum(1 for _ in framer.feed(frames))
    if count != len(FIXTURES) * (rounds // 10):
        raise AssertionError(f"framing training: {count} frames")


def make_server():
    from mcpfast import Server

    server = Server("pgo-train")

    @server.tool()
    async def echo(text: str) -> str:
        return text

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    return server


class KeptTransport:
    """What the HTTP server protocol writes, kept (no socket)."""

    def __init__(self) -> None:
        self.out: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.out.append(data)

    def writelines(self, chunks) -> None:
        self.out.extend(chunks)

    def close(self) -> None:
        pass

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def get_extra_info(self, name, default=None):
        return default

    def is_closing(self) -> bool:
        return False


async def _answered(transport: KeptTransport, count: int) -> bytes:
    for _ in range(10_000):
        if len(transport.out) >= count:
            return transport.out[-1]
        await asyncio.sleep(0)
    raise AssertionError("HTTP training: no answer")


def _post(headers: dict[str, str], body: bytes) -> bytes:
    head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:8000\r\n" + "".join(
        f"{name}: {value}\r\n" for name, value in headers.items())
    return (head + f"Content-Length: {len(body)}\r\n\r\n").encode() + body


async def train_http(rounds: int) -> None:
    from mcpfast.transports.http.server import HTTPServerProtocol

    server = make_server()
    endpoint = server.http_endpoint(stateless=True, json_response=True)
    await endpoint.start()
    for kind in ("stateless", "2026"):
        data = _post(*request_of(kind))
        protocol = HTTPServerProtocol(endpoint, 75.0, set())
        transport = KeptTransport()
        protocol.connection_made(transport)
        for i in range(rounds):
            protocol.data_received(data)
            answer = await _answered(transport, i + 1)
        if b"200 OK" not in answer or ECHO.encode() not in answer:
            raise AssertionError(f"HTTP training ({kind}): {answer[:200]!r}")
        protocol.connection_lost(None)
    endpoint.close()


async def train_http_session(rounds: int) -> None:
    from mcpfast.transports.http.server import HTTPServerProtocol

    server = make_server()
    endpoint = server.http_endpoint(json_response=True)
    await endpoint.start()
    protocol = HTTPServerProtocol(endpoint, 75.0, set())
    transport = KeptTransport()
    protocol.connection_made(transport)
    base = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    initialize = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "pgo", "version": "1"}}}).encode()
    protocol.data_received(_post(base, initialize))
    answer = await _answered(transport, 1)
    session_id = next(line.split(b":", 1)[1].strip().decode() for line in answer.split(b"\r\n")
                      if line.lower().startswith(b"mcp-session-id:"))
    headers = {**base, "Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-11-25"}
    protocol.data_received(_post(headers, b'{"jsonrpc":"2.0","method":"notifications/initialized"}'))
    await _answered(transport, 2)
    call = _post(headers, json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "echo", "arguments": {"text": ECHO}}}).encode())
    for i in range(rounds):
        protocol.data_received(call)
        answer = await _answered(transport, i + 3)
    if ECHO.encode() not in answer:
        raise AssertionError(f"HTTP session training: {answer[:200]!r}")
    protocol.connection_lost(None)
    endpoint.close()


async def train_connection(rounds: int) -> None:
    server = make_server()
    sent: list[bytes] = []
    connection = server.connect(sent.append)
    connection.feed(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "pgo", "version": "1"}}}).encode())
    connection.feed(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    calls = [json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {
        "name": "echo" if i % 2 else "add",
        "arguments": {"text": ECHO} if i % 2 else {"a": i, "b": 1}}}).encode() for i in range(1, 101)]
    for i in range(rounds):
        connection.feed(calls[i % 100])
        await asyncio.sleep(0)
    for _ in range(100):
        if len(sent) >= rounds + 1:
            break
        await asyncio.sleep(0)
    if len(sent) != rounds + 1 or b'"isError"' in sent[-1] and b'"isError":false' not in sent[-1]:
        raise AssertionError(f"connection training: {len(sent)} answers, last {sent[-1][:200]!r}")
    connection.close()


async def train_client(rounds: int) -> None:
    from mcpfast import connect

    server = make_server()
    ready: asyncio.Future = asyncio.get_running_loop().create_future()
    serving = asyncio.ensure_future(server.serve_tcp("127.0.0.1", 0, ready=lambda h, p: ready.set_result(p)))
    try:
        port = await ready
        async with connect(f"tcp://127.0.0.1:{port}") as client:
            for _ in range(rounds // 4):
                result = await client.call_tool("echo", {"text": ECHO})
            for _ in range(rounds // 256):
                results = await asyncio.gather(*(client.call_tool("add", {"a": i, "b": 1})
                                                 for i in range(256)))
        if result["content"][0]["text"] != ECHO or results[-1]["content"][0]["text"] != "256":
            raise AssertionError(f"client training: {result} {results[-1]}")
    finally:
        serving.cancel()
        await asyncio.gather(serving, return_exceptions=True)


async def train_async(rounds: int) -> None:
    await train_http(rounds)
    await train_http_session(rounds // 2)
    await train_connection(rounds)
    await train_client(rounds)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20000, help="iterations of each part (20000)")
    args = parser.parse_args(argv)
    import uvloop

    started = time.perf_counter()
    train_codec(args.rounds)
    train_framing(args.rounds)
    uvloop.run(train_async(args.rounds))
    print(f"pgo_train: {args.rounds} rounds in {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
