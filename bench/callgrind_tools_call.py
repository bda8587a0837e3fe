"""Instructions per in-process tools/call, for callgrind: a server connection fed directly
(no socket, no client), ``--calls`` requests each awaited until answered.

    valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.%p python bench/callgrind_tools_call.py \
        --calls 2000 --variant none

Run once with ``--calls 0`` too: (instructions of N calls - of 0) / N is one call's cost.
``--variant``: none (no middleware), async (one plain async middleware: a task per request),
eager (one eager Middleware: inline), ratelimit (the built-in RateLimit, never refusing).
``scripts/callgrind_tools_call.sh`` runs every variant and prints the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from mcpfast import Server
from mcpfast.server.middleware import Middleware, RateLimit

VERSION = "2025-11-25"
# Requests made by every run.
MADE = 2000


class PassThrough(Middleware):
    """An eager middleware that only calls on."""

    eager = True

    async def on_message(self, ctx: Any, call_next: Any) -> Any:
        return await call_next(ctx)


async def pass_through(ctx: Any, call_next: Any) -> Any:
    """A plain async middleware that only calls on."""
    return await call_next(ctx)


def make_server(variant: str) -> Server:
    middleware: list[Any] = {
        "none": [], "async": [pass_through], "eager": [PassThrough()],
        "ratelimit": [RateLimit(rate=1e12, burst=1e12)],
    }[variant]
    app = Server("callgrind", middleware=middleware, telemetry=False)

    @app.tool()
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    return app


async def run(calls: int, variant: str, check: bool) -> None:
    app = make_server(variant)
    frames: list[bytes] = []
    connection = app.connect(frames.append)

    async def answered(count: int) -> None:
        while len(frames) < count:
            await asyncio.sleep(0)

    connection.feed(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": VERSION, "capabilities": {},
        "clientInfo": {"name": "callgrind", "version": "1"}}}).encode())
    await answered(1)
    connection.feed(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    # Made in every run, whatever --calls (the empty run subtracts their cost).
    requests = [json.dumps({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                            "params": {"name": "add", "arguments": {"a": i, "b": 2}}}).encode()
                for i in range(max(calls, MADE))]
    for index in range(calls):
        connection.feed(requests[index])
        await answered(index + 2)
    if check and not all(b"structuredContent" in frame for frame in frames[1:]):
        raise SystemExit(f"a call failed: {frames[-1][:200]!r}")
    connection.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--variant", choices=("none", "async", "eager", "ratelimit"), default="none")
    parser.add_argument("--check", action="store_true", help="check every answer (not under callgrind)")
    args = parser.parse_args()
    asyncio.run(run(args.calls, args.variant, args.check))


if __name__ == "__main__":
    main()
