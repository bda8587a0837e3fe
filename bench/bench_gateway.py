"""Gateway benchmark: tools/call through ``mcpfast gateway`` against the same upstream
called directly, through a byte relay (the floor of a hop), and through FastMCP 4's proxy
and mcp-proxy, paired and interleaved.

    python bench/bench_gateway.py [--rounds 6] [--seconds 2] [--transports stdio,http]
                                  [--in-flight 1,256] [--peers fastmcp,mcp-proxy] [--no-relay]
                                  [--loop uvloop|asyncio] [--output results.json]

For each transport (stdio: client -> gateway over stdio -> upstream over stdio; http:
client -> gateway over Streamable HTTP -> upstream over Streamable HTTP) the upstream is
bench/servers/mcpfast_echo.py (one ``echo`` tool) and the gateway mounts it without a
namespace, so all are asked the same ``echo`` call. The pairs are started and connected
once (mcpfast's client, outside the timed region), each answer checked; then round after
round each is timed for ``--seconds`` with ``n`` calls kept in flight (``n`` client tasks
making sequential calls), in turn, the order reversed every other round and rotated by one
every second round (``round_order``: ABBA for two, each contender in each place equally
often over twice as many rounds as there are contenders, as bench/harness.py's paired
rounds: a drift during the rounds favours none). Reported per row: round trips per second
of each (median of the rounds), the gateway's throughput as a fraction of direct, and the
time the gateway adds per sequential call (median over rounds of the paired difference of
seconds per call).

The relay (``--no-relay`` leaves it out), in the same rounds: bench/servers/relay.py in
front of the same upstream, forwarding bytes verbatim with no parsing at all -- the
cheapest extra hop there is, as bench/servers/http_floor.py is the floor of a server. On a
VM where a process's wake-up costs tens of µs, a hop has a cost of its own that no gateway
can avoid; the relay measures it in the same rounds. stdio: the client starts ``relay.py
stdio -- python mcpfast_echo.py stdio`` (direct's upstream command behind it); http:
``relay.py tcp`` in front of the HTTP echo upstream, the client connecting to the relay's
port at /mcp. Its line gives its round trips per second, its throughput as a fraction of
direct's and the time it adds per sequential call (as the gateway's), then the gateway's
throughput as a multiple of the relay's and the gateway's own part of its added time: the
median over rounds of the gateway's seconds per call less the relay's.

The peers (``--peers``; "" for none), in the same rounds as direct and the gateway, in
front of the same upstream, each in its own pinned venv (bench/peer_venvs.py installs them
on first use): ``fastmcp``, FastMCP 4's ``create_proxy`` (bench/servers/fastmcp_proxy.py),
stdio -> stdio and HTTP -> HTTP like the gateway; ``mcp-proxy``, its CLI, which only
bridges one transport to the other: in the stdio row it serves stdio and reaches the
upstream over Streamable HTTP, in the HTTP row it serves Streamable HTTP and starts the
upstream over stdio (its rows say so). Each peer's row gives its round trips per second
and the gateway's throughput as a multiple of the peer's (median of the paired rounds).

The client runs on uvloop when it is installed (``--loop uvloop``, the default, as in
bench/bench_e2e.py and as the gateway and the servers run), else on asyncio's own loop.

Targets (issue 37): at most 100 us added per sequential call over HTTP; with 256 in
flight at least 0.5x direct throughput; at least 50x FastMCP's proxy. On a loaded shared
machine the figures are indicative only.
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
import urllib.parse
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import mcpfast  # noqa: E402
from bench import peer_venvs  # noqa: E402

ECHO = os.path.join(ROOT, "bench", "servers", "mcpfast_echo.py")
FASTMCP_PROXY = os.path.join(ROOT, "bench", "servers", "fastmcp_proxy.py")
RELAY = os.path.join(ROOT, "bench", "servers", "relay.py")
TEXT = "The quick brown fox jumps over the lazy dog"
PEERS = ("fastmcp", "mcp-proxy")
# What each peer's upstream leg is, by the transport it serves (mcp-proxy bridges only).
UPSTREAM_LEG = {("mcp-proxy", "stdio"): "http", ("mcp-proxy", "http"): "stdio"}


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


async def start_http_echo(pair: Pair) -> str:
    """The echo upstream over Streamable HTTP, started for ``pair``; its URL."""
    port = free_port()
    pair.processes.append(subprocess.Popen([sys.executable, ECHO, "http", str(port)],
                                           stderr=subprocess.DEVNULL))
    await wait_for_port(port)
    return f"http://127.0.0.1:{port}/mcp"


async def serve_http_proxy(pair: Pair, command: list[str], port: int) -> None:
    """Start a proxy listening on ``port`` for ``pair`` and connect its client."""
    pair.processes.append(subprocess.Popen(command, stdin=subprocess.DEVNULL,
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    await wait_for_port(port)
    pair.client = await mcpfast.connect(f"http://127.0.0.1:{port}/mcp")


async def open_peer(transport: str, name: str) -> Pair:
    """A client of the peer proxy ``name`` in front of the echo upstream (module docstring)."""
    peer = peer_venvs.ensure(name)
    pair = Pair(name)
    echo_stdio = [sys.executable, ECHO, "stdio"]
    if name == "fastmcp" and transport == "stdio":
        pair.client = await mcpfast.connect([peer.python, FASTMCP_PROXY, "stdio", "--", *echo_stdio],
                                            stderr=subprocess.DEVNULL)
    elif name == "fastmcp":
        port = free_port()
        url = await start_http_echo(pair)
        await serve_http_proxy(pair, [peer.python, FASTMCP_PROXY, "http", str(port), url], port)
    elif transport == "stdio":
        url = await start_http_echo(pair)
        pair.client = await mcpfast.connect([peer.executable("mcp-proxy"), "--transport", "streamablehttp",
                                             "--log-level", "WARNING", url],
                                            stderr=subprocess.DEVNULL)
    else:
        port = free_port()
        await serve_http_proxy(pair, [peer.executable("mcp-proxy"), "--host", "127.0.0.1", "--port", str(port),
                                      "--log-level", "WARNING", "--", *echo_stdio], port)
    return pair


async def open_pair(transport: str, through_gateway: bool) -> Pair:
    pair = Pair("gateway" if through_gateway else "direct")
    if transport == "stdio":
        command = [sys.executable, ECHO, "stdio"]
        if through_gateway:
            config = gateway_config({"command": sys.executable, "args": [ECHO, "stdio"]})
            command = [sys.executable, "-m", "mcpfast", "gateway", config]
        pair.client = await mcpfast.connect(command, stderr=subprocess.DEVNULL)
        return pair
    url = await start_http_echo(pair)
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


async def open_relay(transport: str) -> Pair:
    """A client of bench/servers/relay.py in front of the echo upstream: over stdio the
    relay starts the same upstream command as direct; over HTTP it relays TCP to the
    upstream's port and the client connects to the relay's."""
    pair = Pair("relay")
    if transport == "stdio":
        pair.client = await mcpfast.connect([sys.executable, RELAY, "stdio", "--", sys.executable, ECHO, "stdio"],
                                            stderr=subprocess.DEVNULL)
        return pair
    upstream_port = urllib.parse.urlsplit(await start_http_echo(pair)).port
    port = free_port()
    pair.processes.append(subprocess.Popen([sys.executable, RELAY, "tcp", str(port), "127.0.0.1", str(upstream_port)],
                                           stderr=subprocess.DEVNULL))
    await wait_for_port(port)
    pair.client = await mcpfast.connect(f"http://127.0.0.1:{port}/mcp")
    return pair


def round_order(contenders: list, round_number: int) -> list:
    """The order of the contenders in round ``round_number``: rotated by one every second
    round and reversed every other round, so over 2n rounds each of n contenders is timed in
    each place twice (two: AB BA BA AB, ABBA; three: ABC CBA BCA ACB CAB BAC). A drift
    during the rounds favours none."""
    shift = (round_number // 2) % len(contenders)
    order = contenders[shift:] + contenders[:shift]
    return order if round_number % 2 == 0 else order[::-1]


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


async def bench_row(transport: str, in_flight: int, rounds: int, seconds: float,
                    peers: tuple[str, ...] = (), relay: bool = True) -> dict:
    pairs = [await open_pair(transport, False), await open_pair(transport, True)]
    if relay:
        pairs.append(await open_relay(transport))
    unavailable: dict[str, str] = {}
    for name in peers:
        try:
            pairs.append(await open_peer(transport, name))
        except (RuntimeError, OSError) as exc:  # not installable here: the row says why
            unavailable[name] = str(exc)
    try:
        for pair in pairs:
            await check(pair)
            await measure(pair, in_flight, min(seconds, 0.5))  # warm-up
        rates: dict[str, list[float]] = {pair.label: [] for pair in pairs}
        for round_number in range(rounds):
            for pair in round_order(pairs, round_number):
                rates[pair.label].append(await measure(pair, in_flight, seconds))
    finally:
        for pair in pairs:
            await pair.close()
    direct, gateway = rates["direct"], rates["gateway"]
    added = [1 / g - 1 / d for d, g in zip(direct, gateway)]
    row: dict = {"transport": transport, "in_flight": in_flight, "direct_rps": direct, "gateway_rps": gateway,
                 "direct_median": statistics.median(direct), "gateway_median": statistics.median(gateway),
                 "ratio": statistics.median(g / d for d, g in zip(direct, gateway)),
                 "added_us_per_call": statistics.median(added) * 1e6 if in_flight == 1 else None,
                 "relay": relay, "peers": {}}
    if relay:
        # The floor of the hop (bench/servers/relay.py), and the gateway's own part beyond it:
        # per round the gateway's seconds per call less the relay's, their median.
        hop = rates["relay"]
        row.update({
            "relay_rps": hop, "relay_median": statistics.median(hop),
            "relay_ratio": statistics.median(r / d for d, r in zip(direct, hop)),
            "relay_added_us_per_call": (statistics.median(1 / r - 1 / d for d, r in zip(direct, hop)) * 1e6
                                        if in_flight == 1 else None),
            "gateway_own_us_per_call": (statistics.median(1 / g - 1 / r for g, r in zip(gateway, hop)) * 1e6
                                        if in_flight == 1 else None),
            "gateway_relay_ratio": statistics.median(g / r for g, r in zip(gateway, hop))})
    for name in peers:
        if name in unavailable:
            row["peers"][name] = {"unavailable": unavailable[name]}
            continue
        peer = rates[name]
        row["peers"][name] = {
            "version": peer_venvs.PROXIES[name].version,
            "upstream_leg": UPSTREAM_LEG.get((name, transport), transport), "rps": peer,
            "median": statistics.median(peer),
            "gateway_speedup": statistics.median(g / p for g, p in zip(gateway, peer)),
            "added_us_per_call": (statistics.median(1 / p - 1 / d for d, p in zip(direct, peer)) * 1e6
                                  if in_flight == 1 else None)}
    return row


def print_row(row: dict) -> None:
    transport, in_flight, added = row["transport"], row["in_flight"], row["added_us_per_call"]
    print(f"{transport:5} in flight {in_flight:3}: direct {row['direct_median']:9.0f}/s  "
          f"gateway {row['gateway_median']:9.0f}/s  ratio {row['ratio']:.2f}"
          + (f"  added {added:.0f} us/call" if added is not None else ""), flush=True)
    if row["relay"]:
        hop, own = row["relay_added_us_per_call"], row["gateway_own_us_per_call"]
        print(f"{'':20}relay   {row['relay_median']:9.0f}/s  ratio {row['relay_ratio']:.2f}"
              + (f"  added {hop:.0f} us/call" if hop is not None else "")
              + f"; gateway {row['gateway_relay_ratio']:.2f}x relay"
              + (f", own {own:.0f} us/call" if own is not None else ""), flush=True)
    for name, peer in row["peers"].items():
        if "unavailable" in peer:
            print(f"{'':20}{name}: not timed: {peer['unavailable']}", flush=True)
            continue
        leg = "" if peer["upstream_leg"] == transport else f" (upstream over {peer['upstream_leg']})"
        added = peer["added_us_per_call"]
        print(f"{'':20}{name} {peer['version']}{leg} {peer['median']:9.0f}/s  gateway "
              f"{peer['gateway_speedup']:.1f}x it" + (f"  added {added:.0f} us/call" if added is not None else ""),
              flush=True)


def uvloop_installed() -> bool:
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return False
    return True


def run(coroutine: Any, loop: str) -> Any:
    """Run ``coroutine`` on the event loop ``loop`` names (asyncio's when uvloop is missing)."""
    if loop == "uvloop" and uvloop_installed():
        import uvloop

        return uvloop.run(coroutine)
    return asyncio.run(coroutine)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--transports", default="stdio,http")
    parser.add_argument("--in-flight", default="1,256")
    parser.add_argument("--peers", default=",".join(PEERS),
                        help="peer proxies timed in the same rounds (\"\" for none): " + ", ".join(PEERS))
    parser.add_argument("--no-relay", action="store_true",
                        help="leave out the byte relay (bench/servers/relay.py, the floor of a hop)")
    parser.add_argument("--loop", choices=("uvloop", "asyncio"), default="uvloop",
                        help="the client's event loop (uvloop when installed)")
    parser.add_argument("--output", default=None, help="write the rows as JSON here")
    args = parser.parse_args()
    peers = tuple(name for name in args.peers.split(",") if name)
    unknown = set(peers) - set(PEERS)
    if unknown:
        parser.error(f"unknown peers: {', '.join(sorted(unknown))} (known: {', '.join(PEERS)})")
    rows = []
    for transport in args.transports.split(","):
        for in_flight in map(int, args.in_flight.split(",")):
            row = run(bench_row(transport, in_flight, args.rounds, args.seconds, peers, not args.no_relay),
                      args.loop)
            row["loop"] = args.loop if args.loop == "asyncio" or uvloop_installed() else "asyncio"
            rows.append(row)
            print_row(row)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as file:
            json.dump({"rows": rows, "note": "indicative only on a loaded shared machine"}, file, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
