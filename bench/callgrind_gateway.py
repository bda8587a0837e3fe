"""Instructions of the gateway process per forwarded tools/call, for callgrind.

    python bench/callgrind_gateway.py --calls 1200 --upstream stdio --valgrind-out /tmp/cg.out

mcpfast's client (this process, not measured) talks over stdio to ``mcpfast gateway``
started under ``valgrind --tool=callgrind`` (the process measured), which mounts
bench/servers/mcpfast_echo.py without a namespace, over stdio (``--upstream stdio``) or
over Streamable HTTP (``--upstream http``: the echo server started here on a free port).
``--calls`` ``echo`` calls are made (``--in-flight`` at a time, default one: sequential),
each answer checked, then everything is closed. Run twice with different ``--calls``:
(instructions of N calls - of M) / (N - M) is one forwarded call's cost, start-up and
shut-down cancelled out.
bench/callgrind_gateway.sh does that and prints the figures. ``--root``: the checkout
whose mcpfast the gateway runs (default this one; another for a before/after).
``--cprofile-out FILE`` runs the gateway under cProfile instead of valgrind (where its
Python time goes: ``python -m pstats FILE``); ``--valgrind-out`` is then not needed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import mcpfast  # noqa: E402

TEXT = "The quick brown fox jumps over the lazy dog"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def wait_for_port(port: int) -> None:
    for _ in range(1200):
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.05)
            continue
        writer.close()
        return
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port}")


async def echo_calls(client: mcpfast.Client, calls: int, in_flight: int = 1) -> None:
    """``calls`` echo calls, ``in_flight`` of them at a time (that many tasks making
    sequential calls), each answer checked."""

    async def sequential(count: int) -> None:
        for _ in range(count):
            result = await client.call_tool("echo", {"text": TEXT}, timeout=600)
            if result["content"][0]["text"] != TEXT:
                raise RuntimeError(f"echo answered {result!r}")

    share, rest = divmod(calls, in_flight)
    await asyncio.gather(*(sequential(share + (index < rest)) for index in range(in_flight)))


async def run(args: argparse.Namespace) -> None:
    echo = os.path.join(args.root, "bench", "servers", "mcpfast_echo.py")
    python = args.python
    upstream_process = None
    if args.upstream == "stdio":
        upstream: dict = {"command": python, "args": [echo, "stdio"]}
    else:
        port = free_port()
        upstream_process = subprocess.Popen([python, echo, "http", str(port)], stderr=subprocess.DEVNULL)
        await wait_for_port(port)
        upstream = {"url": f"http://127.0.0.1:{port}/mcp"}
    handle, config = tempfile.mkstemp(suffix=".json", prefix="callgrind-gateway-")
    with os.fdopen(handle, "w") as file:
        json.dump({"mcpServers": {"echo": {**upstream, "namespace": "", "startTimeout": 600}}}, file)
    if args.cprofile_out:
        command = [python, "-m", "cProfile", "-o", args.cprofile_out, "-m", "mcpfast", "gateway", config]
    else:
        command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={args.valgrind_out}",
                   python, "-m", "mcpfast", "gateway", config]
    try:
        client = await mcpfast.connect(command, cwd=args.root, stderr=subprocess.DEVNULL,
                                       initialize_timeout=600)
        try:
            for _ in range(1200):  # the upstream may still be starting under valgrind's pace
                if any(tool["name"] == "echo" for tool in await client.list_tools(timeout=600)):
                    break
                await asyncio.sleep(0.5)
            await echo_calls(client, args.calls, args.in_flight)
        finally:
            await client.aclose()
    finally:
        os.unlink(config)
        if upstream_process is not None:
            upstream_process.terminate()
            upstream_process.wait(30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, required=True)
    parser.add_argument("--upstream", choices=("stdio", "http"), default="stdio")
    measured = parser.add_mutually_exclusive_group(required=True)
    measured.add_argument("--valgrind-out")
    measured.add_argument("--cprofile-out")
    parser.add_argument("--in-flight", type=int, default=1, help="calls kept in flight (default 1: sequential)")
    parser.add_argument("--root", default=ROOT)
    parser.add_argument("--python", default=sys.executable, help="the interpreter of the gateway and echo server")
    asyncio.run(run(parser.parse_args()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
