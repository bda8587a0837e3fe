"""One case for an instruction count under callgrind (bench/callgrind_versions.sh runs it).

    python bench/callgrind_case.py codec decode|encode FIXTURE PEER N
    python bench/callgrind_case.py inproc mcpfast|sdk N

``codec``: the codec benchmark's own closure for (operation, fixture, library)
(:mod:`bench.peers`), called 300 times to warm up and then N times. ``inproc``: N tools/call
round trips with client and server in one process and no socket (``mcpfast.connect(app)``;
the official SDK's ``Client(MCPServer)``), after 50. Instructions per call are the difference
between a run of N and a run of 0, divided by N: instruction counts hold on a loaded machine
where times do not, so they compare versions and peers (not what a user sees: no system calls).
"""

from __future__ import annotations

import asyncio
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))


def codec(op: str, fixture_key: str, peer_key: str, n: int) -> None:
    from bench import peers
    from bench.fixtures import FIXTURES

    fixture = {f.key: f for f in FIXTURES}[fixture_key]
    peer = peers.BY_KEY[peer_key]
    reason = peer.unavailable_reason() or peer.unsupported_reason(op, fixture)
    if reason is not None:
        sys.exit(f"{peer_key} {op} {fixture_key}: {reason}")
    call = peer.decoder(fixture) if op == peers.DECODE else peer.encoder(fixture)
    for _ in range(300 + n):
        call()


async def inproc_mcpfast(n: int) -> None:
    import mcpfast

    app = mcpfast.Server("callgrind")

    @app.tool()
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    async with mcpfast.connect(app) as client:
        for _ in range(50 + n):
            await client.call_tool("echo", {"text": "hello"})


async def inproc_sdk(n: int) -> None:
    from mcp import Client
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("callgrind")

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    async with Client(server) as client:
        for _ in range(50 + n):
            await client.call_tool("echo", {"text": "hello"})


def main(argv: list[str]) -> None:
    if len(argv) == 5 and argv[0] == "codec":
        codec(argv[1], argv[2], argv[3], int(argv[4]))
    elif len(argv) == 3 and argv[0] == "inproc" and argv[1] in ("mcpfast", "sdk"):
        asyncio.run((inproc_mcpfast if argv[1] == "mcpfast" else inproc_sdk)(int(argv[2])))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
