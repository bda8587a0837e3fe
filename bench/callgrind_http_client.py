"""Instructions of mcpfast's client per tools/call over Streamable HTTP, for callgrind.

    valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.out \
        python bench/callgrind_http_client.py --calls 1200

This process (the one measured) starts bench/servers/mcpfast_echo.py over Streamable HTTP
on a free port (a process of its own, not measured), connects mcpfast's client to it and
makes ``--calls`` sequential ``echo`` calls, each answer checked. Run twice with different
``--calls``: the difference of the totals over the difference of the calls is one call's
cost to the client, start-up cancelled out (bench/callgrind_gateway.sh http-client).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import mcpfast  # noqa: E402
from bench.callgrind_gateway import echo_calls, free_port, wait_for_port  # noqa: E402


async def run(calls: int, root: str) -> None:
    port = free_port()
    server = subprocess.Popen([sys.executable, os.path.join(root, "bench", "servers", "mcpfast_echo.py"),
                               "http", str(port)], stderr=subprocess.DEVNULL)
    try:
        await wait_for_port(port)
        client = await mcpfast.connect(f"http://127.0.0.1:{port}/mcp", initialize_timeout=600)
        try:
            await echo_calls(client, calls)
        finally:
            await client.aclose()
    finally:
        server.terminate()
        server.wait(30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, required=True)
    parser.add_argument("--root", default=ROOT, help="the checkout whose echo server is started")
    args = parser.parse_args()
    asyncio.run(run(args.calls, args.root))
    return 0


if __name__ == "__main__":
    sys.exit(main())
