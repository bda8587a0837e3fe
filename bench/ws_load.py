"""A WebSocket load generator for the benchmark: CONNECTIONS sockets, each sending the
request frame again as soon as the answer to the previous one arrived, for SECONDS.

    python bench/ws_load.py ws://127.0.0.1:PORT/mcp CONNECTIONS SECONDS

Prints one JSON line: {"requests": answers received, "seconds": elapsed, "errors": answers
that were not the expected tools/call result}. picows on uvloop: the client's own cost per
message is a few microseconds, so over many connections it may bound the rate (it shares
this machine's cores with the server).
"""

import asyncio
import json
import sys
import time

import uvloop
from picows import WSListener, WSMsgType, ws_connect

TEXT = "The quick brown fox jumps over the lazy dog"
FRAME = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
    "name": "echo", "arguments": {"text": TEXT},
    "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientCapabilities": {}}}}, separators=(",", ":")).encode()
EXPECTED = TEXT.encode()


class Load(WSListener):
    def __init__(self, stats: dict) -> None:
        self.stats = stats

    def on_ws_connected(self, transport) -> None:
        transport.send(WSMsgType.TEXT, FRAME)

    def on_ws_frame(self, transport, frame) -> None:
        if frame.msg_type != WSMsgType.TEXT:
            return
        payload = frame.get_payload_as_bytes()
        if EXPECTED in payload and b'"error"' not in payload:
            self.stats["requests"] += 1
        else:
            self.stats["errors"] += 1
        if not self.stats["stop"]:
            transport.send(WSMsgType.TEXT, FRAME)


async def main(url: str, connections: int, seconds: float) -> dict:
    stats = {"requests": 0, "errors": 0, "stop": False}
    opened = [await ws_connect(lambda: Load(stats), url, extra_headers={"Sec-WebSocket-Protocol": "mcp"})
              for _ in range(connections)]
    await asyncio.sleep(0.5)  # warm-up
    stats["requests"] = stats["errors"] = 0
    start = time.perf_counter()
    await asyncio.sleep(seconds)
    elapsed = time.perf_counter() - start
    done = {"requests": stats["requests"], "seconds": elapsed, "errors": stats["errors"]}
    stats["stop"] = True
    for transport, _ in opened:
        transport.send_close()
        transport.disconnect()
    return done


if __name__ == "__main__":
    uvloop.install()
    print(json.dumps(asyncio.run(main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3])))))
