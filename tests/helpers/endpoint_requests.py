"""Requests for a Streamable HTTP endpoint driven without sockets (the endpoint tests)."""

from __future__ import annotations

import json
from typing import Any, Optional

from mcpfast.transports.http import HTTPRequest, HTTPResponse

JSON_AND_SSE = "application/json, text/event-stream"
INIT = {"protocolVersion": "2025-11-25", "capabilities": {"sampling": {}},
        "clientInfo": {"name": "t", "version": "1"}}


def post(body: Any, session: Optional[str] = None, accept: str = JSON_AND_SSE,
         version: Optional[str] = "2025-11-25", **headers: str) -> HTTPRequest:
    values = {"host": "127.0.0.1:8000", "content-type": "application/json", "accept": accept}
    if session is not None:
        values["mcp-session-id"] = session
    if version is not None:
        values["mcp-protocol-version"] = version
    values.update({k.replace("_", "-"): v for k, v in headers.items()})
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return HTTPRequest("POST", "/mcp", values, raw)


def request(id: Any, method: str, params: Any = None) -> dict:
    message = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return message


async def answer(outcome: Any) -> HTTPResponse:
    return outcome if isinstance(outcome, HTTPResponse) else await outcome


async def read_stream(response: HTTPResponse) -> list[dict]:
    """The JSON-RPC messages of an SSE response, read to its end."""
    assert response.header("content-type") == "text/event-stream"
    text = b"".join([chunk async for chunk in response.stream]).decode()
    response.close()
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ") and line[6:]]


async def initialize(endpoint, params: dict = INIT) -> str:
    response = await answer(endpoint.handle(post(request(0, "initialize", params), version=None)))
    assert response.status == 200
    session = response.header("mcp-session-id")
    assert session is not None
    notified = await answer(endpoint.handle(post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session)))
    assert notified.status == 202 and notified.body == b""
    return session
