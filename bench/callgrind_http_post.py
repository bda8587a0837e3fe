"""Instructions per Streamable HTTP POST of a tools/call, for callgrind: the endpoint's
``handle`` called with framed requests (no socket, no client), a sync tool so that every
POST is answered at once, telemetry off (the path issue 36's trace headers must not make
dearer).

    valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.%p python bench/callgrind_http_post.py \
        --calls 2000 --leg stateless

Run once with ``--calls 0`` too: (instructions of N calls - of 0) / N is one POST's cost.
``--leg``: stateless (stateless mode, 2025-11-25), session (a 2025-11-25 session), 2026
(the 2026-07-28 leg). ``--otel``: with the OpenTelemetry SDK set up as the benchmarks'
telemetry rows do (bench/servers/otel_setup.py: spans and metrics), the server's telemetry
on. ``bench/callgrind_http_post.sh`` runs every leg and prints the figures (``OTEL=1``: with
telemetry).
"""

from __future__ import annotations

import argparse
import asyncio
import json

from mcpfast import Server
from mcpfast.transports.http import HTTPRequest, HTTPResponse

V2025 = "2025-11-25"
V2026 = "2026-07-28"
MADE = 2000
BASE = {"host": "127.0.0.1:8000", "content-type": "application/json",
        "accept": "application/json, text/event-stream"}


def make_endpoint(leg: str, otel: bool = False):
    if otel:
        import os
        import sys

        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "servers"))
        from otel_setup import configure_sdk

        configure_sdk()
    app = Server("callgrind", telemetry=otel)

    @app.tool()
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    return app.http_endpoint(stateless=leg == "stateless")


def call_body(i: int, leg: str) -> bytes:
    params: dict = {"name": "add", "arguments": {"a": i, "b": 2}}
    if leg == "2026":
        params["_meta"] = {"io.modelcontextprotocol/protocolVersion": V2026,
                           "io.modelcontextprotocol/clientCapabilities": {}}
    return json.dumps({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": params}).encode()


def headers_of(leg: str, session_id: str | None) -> dict:
    headers = dict(BASE)
    headers["mcp-protocol-version"] = V2026 if leg == "2026" else V2025
    if leg == "2026":
        headers["mcp-method"] = "tools/call"
        headers["mcp-name"] = "add"
    if session_id is not None:
        headers["mcp-session-id"] = session_id
    return headers


async def run(calls: int, leg: str, otel: bool = False) -> None:
    # In a running loop, as served (a session schedules its reaper); every answer is
    # known at once (a sync tool), so nothing is awaited.
    endpoint = make_endpoint(leg, otel)
    session_id = None
    if leg == "session":
        init = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": V2025, "capabilities": {},
            "clientInfo": {"name": "callgrind", "version": "1"}}}).encode()
        answer = endpoint.handle(HTTPRequest("POST", "/mcp", dict(BASE), init))
        assert type(answer) is HTTPResponse and answer.status == 200, answer
        session_id = dict(answer.headers)["mcp-session-id"]
        initialized = HTTPRequest("POST", "/mcp", {**headers_of(leg, session_id)},
                                  b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        assert endpoint.handle(initialized).status == 202
    headers = headers_of(leg, session_id)
    # Made in every run, whatever --calls (the empty run subtracts their cost).
    requests = [HTTPRequest("POST", "/mcp", dict(headers), call_body(i, leg)) for i in range(max(calls, MADE))]
    # One call first in every run, whatever --calls: what the first request sets up once
    # (the telemetry and the modules it imports) is not counted as a call's.
    endpoint.handle(HTTPRequest("POST", "/mcp", dict(headers), call_body(MADE + 1, leg)))
    for index in range(calls):
        answer = endpoint.handle(requests[index])
        if type(answer) is not HTTPResponse or b"structuredContent" not in answer.body:
            raise SystemExit(f"a call failed: {answer!r}")
    endpoint.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=MADE)
    parser.add_argument("--leg", choices=("stateless", "session", "2026"), default="stateless")
    parser.add_argument("--otel", action="store_true", help="the OpenTelemetry SDK set up, telemetry on")
    args = parser.parse_args()
    asyncio.run(run(args.calls, args.leg, args.otel))


if __name__ == "__main__":
    main()
