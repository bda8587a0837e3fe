"""HTTP server benchmark: stateless tools/call POSTs from wrk, against each server process.

Servers (each a subprocess on a loopback port, one ``echo`` tool):
- mcpfast: bench/servers/mcpfast_echo.py ``http-stateless`` (mcpfast's own HTTP/1.1 server,
  no sessions, JSON answers; its 2026-07-28 leg on the same endpoint);
- official: bench/servers/official_echo.py ``http-stateless`` -- the official SDK at its
  fastest HTTP settings: stateless, JSON answers, uvicorn with uvloop and httptools;
- floor: bench/servers/http_floor.py -- a bare uvloop + httptools + orjson server that parses
  the request, echoes the text in a CallToolResult and nothing else: the Python floor.

Loads: the same POST repeated by wrk (one thread) over 1 keep-alive connection (sequential:
the next request leaves when the answer arrived) and over 32. WebSocket rows (kind ``ws``):
the same 2026-07-28 tools/call as a text frame, sent again on each socket as its answer
arrives, by bench/ws_load.py (picows on uvloop; wrk has no WebSocket), against mcpfast's
WebSocket transport and the floor on picows and on websockets (bench/servers/ws_floor.py:
the measurement behind mcpfast's choice of picows; the official SDK serves no WebSocket).
Bearer JWT rows (kind ``jwt``): the stateless request with an RS256 access token, against
mcpfast with verification off, on keeping verified tokens (the default) and on checking the
signature every request: the cost of authorization per request.
Two request kinds: ``stateless``
(a 2025-11-25 tools/call with ``MCP-Protocol-Version``) and ``2026`` (a 2026-07-28
tools/call: ``_meta`` with version and client capabilities, ``Mcp-Method`` / ``Mcp-Name``).
Before timing, one request of the kind must come back 200 with the echoed text; during timing
any non-2xx answer or socket error makes the row wrong (a fast error is not a fast server).

Each value is one wrk run of ``--duration`` seconds: seconds per request (the report shows
requests/s). The values of an implementation come from one server process, after a warm-up
run. The implementations compared in a row are timed in turn, round after round (the order
reversed every other round), with all their servers up at once: on a shared machine whose
speed drifts by tens of percent within a minute, timing one implementation's values after
another's compared two moments more than two servers; the report takes the ratio of two
implementations as the median of the rounds' ratios. wrk is Debian's package
(``scripts/bench`` installs it when missing); without it the rows say so.

pyperf JSON and the status file are written in the harness's format, so the report reads
this group like the others:

    python bench/bench_http.py -o http.json --status-output status/http.json [--values 3]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench import harness

SERVERS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "servers")
ECHO_TEXT = "The quick brown fox jumps over the lazy dog"
CONNECTIONS = (1, 32)
KINDS = ("stateless", "2026", "ws", "jwt")
KIND_TITLE = {"stateless": "Streamable HTTP, stateless (2025-11-25)",
              "2026": "Streamable HTTP, 2026-07-28",
              "ws": "WebSocket, 2026-07-28",
              "jwt": "Streamable HTTP, stateless (2025-11-25), bearer JWT (RS256)"}
STARTUP_TIMEOUT = 60.0

# impl -> (label, the server's command line with {port}, connection counts it is timed at).
# The order is the timing order within a round: mcpfast and its floor next to each other,
# so that the two values of a round whose ratio holds the tightest target (0.7x) were
# timed one right after the other.
_ECHO = os.path.join(SERVERS_DIR, "mcpfast_echo.py")
SERVERS = {
    "mcpfast": ("mcpfast", [os.path.join(SERVERS_DIR, "mcpfast_echo.py"), "http-stateless", "{port}"],
                CONNECTIONS),
    "floor": ("floor: uvloop+httptools", [os.path.join(SERVERS_DIR, "http_floor.py"), "{port}"],
              CONNECTIONS),
    # The same server with one middleware that only calls on: the request pipeline's cost.
    "mcpfast-mw": ("mcpfast, one trivial middleware",
                   [os.path.join(SERVERS_DIR, "mcpfast_echo.py"), "http-stateless-mw", "{port}"], CONNECTIONS),
    "mcpfast-eager": ("mcpfast, one trivial eager middleware",
                      [os.path.join(SERVERS_DIR, "mcpfast_echo.py"), "http-stateless-eager", "{port}"],
                      CONNECTIONS),
    "official": ("official mcp SDK (uvicorn)",
                 [os.path.join(SERVERS_DIR, "official_echo.py"), "http-stateless", "{port}"], CONNECTIONS),
    # Telemetry (bench/servers/otel_setup.py: the OpenTelemetry SDK, a batch span processor,
    # metrics aggregated in memory): mcpfast with its spans and metrics on, the official SDK
    # with its span middleware on and off under the same providers.
    "mcpfast-otel": ("mcpfast, telemetry on (OTel SDK)",
                     [os.path.join(SERVERS_DIR, "mcpfast_echo.py"), "http-stateless-otel", "{port}"],
                     CONNECTIONS),
    "mcpfast-otel-spans": ("mcpfast, spans only (OTel SDK)",
                           [_ECHO, "http-stateless-otel-spans", "{port}"], CONNECTIONS),
    "mcpfast-otel-metrics": ("mcpfast, metrics only (OTel SDK)",
                             [_ECHO, "http-stateless-otel-metrics", "{port}"], CONNECTIONS),
    "mcpfast-otel-sampled": ("mcpfast, spans sampled at 10% + metrics (OTel SDK)",
                             [_ECHO, "http-stateless-otel-sampled", "{port}"], CONNECTIONS),
    "official-otel": ("official mcp SDK, telemetry on (OTel SDK)",
                      [os.path.join(SERVERS_DIR, "official_echo.py"), "http-stateless-otel", "{port}"],
                      CONNECTIONS),
    "official-otel-off": ("official mcp SDK, telemetry off (OTel SDK)",
                          [os.path.join(SERVERS_DIR, "official_echo.py"), "http-stateless-otel-off",
                           "{port}"], CONNECTIONS),
    # Two processes on one port (the scaling of an added worker; this machine has 2 cores,
    # which wrk shares): mcpfast run --workers 2, uvicorn --workers 2.
    "mcpfast-2w": ("mcpfast, 2 workers",
                   ["-m", "mcpfast", "run", f"{_ECHO}:server", "--transport", "http", "--stateless",
                    "--json-response", "--workers", "2", "--port", "{port}"], (32,)),
    # The same with Redis fan-out on (--redis: a RedisPublisher and RedisTaskStore in each
    # worker; a redis-server this benchmark starts on loopback).
    "mcpfast-2w-redis": ("mcpfast, 2 workers + Redis",
                         ["-m", "mcpfast", "run", f"{_ECHO}:server", "--transport", "http", "--stateless",
                          "--json-response", "--workers", "2", "--redis", "{redis}", "--port", "{port}"],
                         (32,)),
    "official-2w": ("official mcp SDK, 2 uvicorn workers",
                    [os.path.join(SERVERS_DIR, "official_echo.py"), "http-stateless-workers", "2", "{port}"],
                    (32,)),
}
# WebSocket (kind "ws", load from bench/ws_load.py): mcpfast's transport, and the floor on the
# two libraries it was chosen between (the official SDK serves no WebSocket).
WS_SERVERS = {
    "mcpfast": ("mcpfast", ["-m", "mcpfast", "run", f"{_ECHO}:server", "--transport", "websocket",
                            "--port", "{port}"], CONNECTIONS),
    "floor": ("floor: picows", [os.path.join(SERVERS_DIR, "ws_floor.py"), "picows", "{port}"], CONNECTIONS),
    "floor-websockets": ("floor: websockets", [os.path.join(SERVERS_DIR, "ws_floor.py"), "websockets",
                                                "{port}"], CONNECTIONS),
}
WS_LOAD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ws_load.py")
# Bearer JWT (kind "jwt": the stateless request with an RS256 access token): the same server
# with JWT verification off (the header ignored) and on against a static key ({jwt_key}: its
# public PEM), keeping verified tokens (the default) or checking the signature every time.
JWT_SERVERS = {
    "mcpfast": ("mcpfast, no auth", [_ECHO, "http-stateless", "{port}"], CONNECTIONS),
    "mcpfast-jwt": ("mcpfast, JWT verified (kept verdict)", [_ECHO, "http-stateless-jwt", "{port}",
                                                            "{jwt_key}", "60"], CONNECTIONS),
    "mcpfast-jwt-each": ("mcpfast, JWT verified every request", [_ECHO, "http-stateless-jwt", "{port}",
                                                               "{jwt_key}", "0"], CONNECTIONS),
}
JWT_ISSUER = "https://auth.bench.invalid"
JWT_AUDIENCE = "http://127.0.0.1/mcp"
_JWT: dict[str, str] = {}


def jwt_material(scratch: str) -> tuple[str, str]:
    """(the path of the public key's PEM, a token it verifies), made once per run."""
    if not _JWT:
        import jwt
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa

        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        path = os.path.join(scratch, "jwt-public.pem")
        with open(path, "wb") as f:
            f.write(key.public_key().public_bytes(serialization.Encoding.PEM,
                                                  serialization.PublicFormat.SubjectPublicKeyInfo))
        now = int(time.time())
        _JWT["key"] = path
        _JWT["token"] = jwt.encode({"iss": JWT_ISSUER, "aud": JWT_AUDIENCE, "sub": "bench", "scope": "mcp:tools",
                                    "iat": now, "exp": now + 86400}, key, algorithm="RS256",
                                   headers={"kid": "bench"})
    return _JWT["key"], _JWT["token"]


def request_of(kind: str) -> tuple[dict[str, str], bytes]:
    """The headers and body of one POST of ``kind``."""
    params: dict = {"name": "echo", "arguments": {"text": ECHO_TEXT}}
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if kind == "2026":
        params["_meta"] = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                           "io.modelcontextprotocol/clientCapabilities": {}}
        headers.update({"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call",
                        "Mcp-Name": "echo"})
    else:
        headers["MCP-Protocol-Version"] = "2025-11-25"
    if kind == "jwt":
        headers["Authorization"] = f"Bearer {_JWT['token']}"
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params},
                      separators=(",", ":")).encode()
    return headers, body


def wrk_script(kind: str) -> str:
    headers, body = request_of(kind)
    lines = ['wrk.method = "POST"', f"wrk.body = {json.dumps(body.decode())}"]
    lines += [f"wrk.headers[{json.dumps(k)}] = {json.dumps(v)}" for k, v in headers.items()]
    return "\n".join(lines) + "\n"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ServerProcess:
    """One server subprocess on a free port; ``url`` once it listens."""

    def __init__(self, impl: str, servers: dict = SERVERS) -> None:
        command = servers[impl][1]
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        script = "mcpfast run" if command[0] == "-m" else os.path.basename(command[0])
        if "{redis}" in command:
            command = [redis_url() if part == "{redis}" else part for part in command]
        if "{jwt_key}" in command:
            command = [_JWT["key"] if part == "{jwt_key}" else part for part in command]
        self.process = subprocess.Popen(
            [sys.executable, *(part.replace("{port}", str(self.port)) for part in command)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"{script} exited with status {self.process.returncode}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"{script} did not listen within {STARTUP_TIMEOUT} s") from None
                time.sleep(0.05)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


_REDIS: list[subprocess.Popen] = []


def redis_url() -> str:
    """A redis-server on loopback for the rows with Redis (started once, stopped at exit)."""
    if not _REDIS:
        port = free_port()
        _REDIS.append(subprocess.Popen(
            ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        _REDIS[0].redis_port = port  # type: ignore[attr-defined]
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
    return f"redis://127.0.0.1:{_REDIS[0].redis_port}/0"  # type: ignore[attr-defined]


def stop_redis() -> None:
    for process in _REDIS:
        process.terminate()
        process.wait(timeout=10)
    _REDIS.clear()


def check_answer(url: str, kind: str) -> tuple[str, str]:
    """One POST of ``kind``: OK when it answers 200 with the echoed text."""
    headers, body = request_of(kind)
    try:
        with urllib.request.urlopen(urllib.request.Request(url, body, headers), timeout=30) as answer:
            status, payload = answer.status, answer.read()
    except Exception as exc:
        return harness.WRONG, f"the request failed: {exc}"
    try:
        text = json.loads(payload)["result"]["content"][0]["text"]
    except (ValueError, KeyError, IndexError, TypeError):
        return harness.WRONG, f"status {status}, not a tools/call result: {payload[:200]!r}"
    if status != 200 or text != ECHO_TEXT:
        return harness.WRONG, f"status {status}, text {text!r}"
    return harness.OK, ""


_REQUESTS = re.compile(r"(\d+) requests in ([\d.]+)(us|ms|s|m)")
_UNIT = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0}


def run_wrk(url: str, script: str, connections: int, duration: int) -> float:
    """Seconds per request of one wrk run (RuntimeError when any answer was not 2xx)."""
    done = subprocess.run(
        ["wrk", "-t1", f"-c{connections}", f"-d{duration}s", "-s", script, url],
        capture_output=True, text=True, timeout=duration + 60)
    out = done.stdout
    if done.returncode != 0:
        raise RuntimeError(f"wrk failed: {done.stderr.strip() or out.strip()}")
    if "Non-2xx" in out or "Socket errors" in out:
        raise RuntimeError("errors during the run: " + " ".join(
            line.strip() for line in out.splitlines() if "Non-2xx" in line or "Socket errors" in line))
    found = _REQUESTS.search(out)
    if found is None or int(found.group(1)) == 0:
        raise RuntimeError(f"no requests completed: {out.strip()}")
    seconds = float(found.group(2)) * _UNIT[found.group(3)]
    return seconds / int(found.group(1))


def run_ws_load(url: str, connections: int, duration: int) -> float:
    """Seconds per request of one bench/ws_load.py run (RuntimeError on any wrong answer)."""
    done = subprocess.run([sys.executable, WS_LOAD, url.replace("http://", "ws://"), str(connections),
                           str(duration)], capture_output=True, text=True, timeout=duration + 60)
    if done.returncode != 0:
        raise RuntimeError(f"ws_load failed: {done.stderr.strip()[-300:]}")
    stats = json.loads(done.stdout.strip().splitlines()[-1])
    if stats["errors"] or not stats["requests"]:
        raise RuntimeError(f"{stats['errors']} wrong answers, {stats['requests']} right ones")
    return stats["seconds"] / stats["requests"]


def servers_of(kind: str) -> dict:
    """The servers timed for requests of ``kind``."""
    return WS_SERVERS if kind == "ws" else JWT_SERVERS if kind == "jwt" else SERVERS


def impl_available(impl: str) -> str | None:
    """Why the server of ``impl`` cannot run here, or None."""
    try:
        if impl.endswith("-redis"):
            import redis  # noqa: F401

            if shutil.which("redis-server") is None:
                return "redis-server is not installed (Debian package redis-server)"
        if "-otel" in impl:
            import opentelemetry.sdk  # noqa: F401
        if impl.startswith("mcpfast-jwt"):
            import jwt  # noqa: F401
        if impl == "floor-websockets":
            import websockets  # noqa: F401
        elif impl.startswith("official"):
            import mcp.server  # noqa: F401
            import uvicorn  # noqa: F401
        elif impl == "floor":
            import httptools  # noqa: F401
            import orjson  # noqa: F401
            import uvloop  # noqa: F401
        else:
            import mcpfast  # noqa: F401
    except ImportError as exc:
        return f"cannot import {exc.name}"
    return None


def main(argv: list[str] | None = None) -> int:
    import pyperf

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--output", required=True, help="pyperf JSON to append to")
    parser.add_argument("--status-output", help="the harness's status file")
    parser.add_argument("--values", type=int, default=3, help="timed wrk runs per row (3)")
    parser.add_argument("--duration", type=int, default=2, help="whole seconds per wrk run (2)")
    parser.add_argument("--match", default="", help="only the cases whose name matches")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--timeout", help=argparse.SUPPRESS)
    args, _ = parser.parse_known_args(argv)

    statuses = []
    wrk = shutil.which("wrk")
    pattern = re.compile(args.match) if args.match else None
    with tempfile.TemporaryDirectory() as scratch:
        scripts = {}
        jwt_material(scratch)
        for kind in KINDS:
            scripts[kind] = os.path.join(scratch, f"{kind}.lua")
            with open(scripts[kind], "w", encoding="utf-8") as f:
                f.write(wrk_script(kind))
        for kind in KINDS:
            for connections in CONNECTIONS:
                load = "sequential (1 connection)" if connections == 1 else f"{connections} keep-alive connections"
                title = f"{KIND_TITLE[kind]}, tools/call, {load}"
                servers = servers_of(kind)
                row = []
                for impl, (label, _, loads) in servers.items():
                    if connections not in loads:
                        continue
                    name = f"http/{kind}/conns_{connections}/rt/{impl}"
                    if pattern is not None and not pattern.search(name):
                        continue
                    case = harness.Case(name, label, title, lambda: (harness.OK, ""),
                                        lambda: (lambda loops: 0.0, ()), display=harness.DISPLAY_CALLS,
                                        metadata={"connections": connections, "request_kind": kind})
                    row.append((impl, label, case))
                outcomes = _time_row(row, kind, connections, scripts[kind], wrk, args, pyperf)
                for (impl, label, case), (status, detail) in zip(row, outcomes):
                    statuses.append({"name": case.name, "case": case.case, "impl": impl,
                                     "impl_label": label, "case_title": title,
                                     "display": case.display, "status": status, "detail": detail})
                    if not args.quiet:
                        print(f"{case.name}: {status} {detail}", file=sys.stderr)
    stop_redis()
    if args.status_output:
        harness.write_status(args.status_output, "http", statuses)
    return 0


def _time_row(row: list[tuple[str, str, harness.Case]], kind: str, connections: int,
              script: str, wrk: str | None, args: argparse.Namespace,
              pyperf) -> list[tuple[str, str]]:
    """Time the implementations of one row (module docstring: in turn, round after round,
    every server up at once); (status, detail) of each, in ``row``'s order."""
    servers = servers_of(kind)
    outcomes: dict[str, tuple[str, str]] = {}
    running: dict[str, ServerProcess] = {}

    def measure(server: ServerProcess, seconds: int) -> float:
        if kind == "ws":
            return run_ws_load(server.url, connections, seconds)
        return run_wrk(server.url, script, connections, seconds)

    def drop(impl: str, status: str, detail: str) -> None:
        outcomes[impl] = (status, detail)
        running.pop(impl).stop()

    try:
        for impl, _, _ in row:
            if wrk is None and kind != "ws":
                outcomes[impl] = (harness.UNAVAILABLE,
                                  "wrk is not installed (Debian package wrk; scripts/bench installs it)")
                continue
            missing = impl_available(impl)
            if missing is not None:
                outcomes[impl] = (harness.UNAVAILABLE, missing)
                continue
            try:
                running[impl] = ServerProcess(impl, servers)
            except RuntimeError as exc:
                outcomes[impl] = (harness.UNAVAILABLE, str(exc))
                continue
            if kind != "ws":
                status, detail = check_answer(running[impl].url, kind)
                if status != harness.OK:
                    drop(impl, status, detail)
        values: dict[str, list[float]] = {impl: [] for impl in running}
        # A warm-up run each (for WebSocket also the check: every answer must be right),
        # then the timed rounds.
        for timed, rounds, seconds in ((False, 1, 1), (True, args.values, args.duration)):
            for round_number in range(rounds):
                # In turn, the order reversed every other round (ABBA): a drift during a
                # round then favours no implementation.
                order = list(running) if round_number % 2 == 0 else list(reversed(running))
                for impl in order:
                    try:
                        value = measure(running[impl], seconds)
                    except (RuntimeError, subprocess.TimeoutExpired) as exc:
                        drop(impl, harness.WRONG, str(exc))
                        continue
                    if timed:
                        values[impl].append(value)
    finally:
        for server in running.values():
            server.stop()
    for impl, _, case in row:
        if impl in outcomes:
            continue
        meta = case.pyperf_metadata()
        meta.update({"name": case.name, "unit": "second"})
        if len(values[impl]) == args.values:
            meta[harness.PAIRED_ROUNDS] = 1
        run = pyperf.Run(values[impl], metadata=meta, collect_metadata=False)
        pyperf.add_runs(args.output, pyperf.Benchmark([run]))
        outcomes[impl] = (harness.OK, "")
    return [outcomes[impl] for impl, _, _ in row]


if __name__ == "__main__":
    sys.exit(main())
