"""Gateway benchmark: tools/call through ``mcpfast gateway`` against the same upstream
called directly, paired and interleaved.

    python bench/bench_gateway.py [--rounds 6] [--seconds 2] [--transports stdio,http]
                                  [--in-flight 1,256] [--output results.json]

For each transport (stdio: client -> gateway over stdio -> upstream over stdio; http:
client -> gateway over Streamable HTTP -> upstream over Streamable HTTP) the upstream is
bench/servers/mcpfast_echo.py (one ``echo`` tool) and the gateway mounts it without a
namespace, so both are asked the same ``echo`` call. Both pairs are started and
connected once (mcpfast's client, outside the timed region), each answer checked; then
round after round each is timed for ``--seconds`` with ``n`` calls kept in flight (``n``
client tasks making sequential calls), in turn, the order reversed every other round
(ABBA, as bench/harness.py's paired rounds: a drift during a round favours neither).
Reported per row: round trips per second of each (median of the rounds), the gateway's
throughput as a fraction of direct, and the time the gateway adds per sequential call
(median over rounds of the paired difference of seconds per call).

Targets (issue 37): at most 100 us added per sequential call over HTTP; with 256 in
flight at least 0.5x direct throughput. On a loaded shared machine the figures are
indicative only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import mcpfast  # noqa: E402

ECHO = os.path.join(ROOT, "bench", "servers", "mcpfast_echo.py")
TEXT = "The quick brown fox jumps over the lazy dog"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def wait_for_port(port: int) -> None:
    for _ in range(400):
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.05)
            continue
        writer.close()
        return
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port}")


class Pair:
    """A client connected to a server (and the processes started for it)."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.client = None
        self.processes: list[subprocess.Popen] = []

    async def close(self) -> None:
        if self.client is not None:
            await self.client.aclose()
        for process in self.processes:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()


def gateway_config(upstream: dict) -> str:
    handle, path = tempfile.mkstemp(suffix=".json", prefix="bench-gateway-")
    with os.fdopen(handle, "w") as file:
        json.dump({"mcpServers": {"echo": {**upstream, "namespace": ""}}}, file)
    return path


async def open_pair(transport: str, through_gateway: bool) -> Pair:
    pair = Pair("gateway" if through_gateway else "direct")
    if transport == "stdio":
        command = [sys.executable, ECHO, "stdio"]
        if through_gateway:
            config = gateway_config({"command": sys.executable, "args": [ECHO, "stdio"]})
            command = [sys.executable, "-m", "mcpfast", "gateway", config]
        pair.client = await mcpfast.connect(command, stderr=subprocess.DEVNULL)
        return pair
    upstream_port = free_port()
    pair.processes.append(subprocess.Popen([sys.executable, ECHO, "http", str(upstream_port)],
                                           stderr=subprocess.DEVNULL))
    await wait_for_port(upstream_port)
    url = f"http://127.0.0.1:{upstream_port}/mcp"
    if through_gateway:
        gateway_port = free_port()
        config = gateway_config({"url": url})
        pair.processes.append(subprocess.Popen(
            [sys.executable, "-m", "mcpfast", "gateway", config, "--transport", "http",
             "--port", str(gateway_port)], stderr=subprocess.DEVNULL))
        await wait_for_port(gateway_port)
        url = f"http://127.0.0.1:{gateway_port}/mcp"
    pair.client = await mcpfast.connect(url)
    return pair


async def check(pair: Pair) -> None:
    result = await pair.client.call_tool("echo", {"text": TEXT})
    if result["content"][0]["text"] != TEXT:
        raise RuntimeError(f"{pair.label}: echo answered {result!r}")


async def measure(pair: Pair, in_flight: int, seconds: float) -> float:
    """Round trips per second with ``in_flight`` calls outstanding for ``seconds``."""
    call = pair.client.call_tool
    arguments = {"text": TEXT}
    deadline = time.perf_counter() + seconds
    counts = [0] * in_flight

    async def worker(index: int) -> None:
        while time.perf_counter() < deadline:
            await call("echo", arguments)
            counts[index] += 1

    started = time.perf_counter()
    await asyncio.gather(*(worker(i) for i in range(in_flight)))
    return sum(counts) / (time.perf_counter() - started)


async def bench_row(transport: str, in_flight: int, rounds: int, seconds: float) -> dict:
    pairs = [await open_pair(transport, False), await open_pair(transport, True)]
    try:
        for pair in pairs:
            await check(pair)
            await measure(pair, in_flight, min(seconds, 0.5))  # warm-up
        rates: dict[str, list[float]] = {pair.label: [] for pair in pairs}
        for round_number in range(rounds):
            order = pairs if round_number % 2 == 0 else list(reversed(pairs))
            for pair in order:
                rates[pair.label].append(await measure(pair, in_flight, seconds))
    finally:
        for pair in pairs:
            await pair.close()
    direct, gateway = rates["direct"], rates["gateway"]
    added = [1 / g - 1 / d for d, g in zip(direct, gateway)]
    return {"transport": transport, "in_flight": in_flight, "direct_rps": direct, "gateway_rps": gateway,
            "direct_median": statistics.median(direct), "gateway_median": statistics.median(gateway),
            "ratio": statistics.median(g / d for d, g in zip(direct, gateway)),
            "added_us_per_call": statistics.median(added) * 1e6 if in_flight == 1 else None}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--transports", default="stdio,http")
    parser.add_argument("--in-flight", default="1,256")
    parser.add_argument("--output", default=None, help="write the rows as JSON here")
    args = parser.parse_args()
    rows = []
    for transport in args.transports.split(","):
        for in_flight in map(int, args.in_flight.split(",")):
            row = asyncio.run(bench_row(transport, in_flight, args.rounds, args.seconds))
            rows.append(row)
            added = row["added_us_per_call"]
            print(f"{transport:5} in flight {in_flight:3}: direct {row['direct_median']:9.0f}/s  "
                  f"gateway {row['gateway_median']:9.0f}/s  ratio {row['ratio']:.2f}"
                  + (f"  added {added:.0f} us/call" if added is not None else ""), flush=True)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as file:
            json.dump({"rows": rows, "note": "indicative only on a loaded shared machine"}, file, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
