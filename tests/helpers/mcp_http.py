"""One 2026-07-28 request over Streamable HTTP on a fresh connection (so that a load
balancer or the kernel picks a server process for it), for the scale-out tests."""

from __future__ import annotations

import http.client
import json
from typing import Optional

V2026 = "2026-07-28"


def post_2026(port: int, method: str, params: Optional[dict] = None, name: Optional[str] = None,
              capabilities: Optional[dict] = None) -> dict:
    """The result of ``method`` at http://127.0.0.1:port/mcp (AssertionError on an error)."""
    params = dict(params or {})
    params["_meta"] = {"io.modelcontextprotocol/protocolVersion": V2026,
                       "io.modelcontextprotocol/clientCapabilities":
                           {"elicitation": {}} if capabilities is None else capabilities}
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream",
               "mcp-protocol-version": V2026, "mcp-method": method}
    if name is not None:
        headers["mcp-name"] = name
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
        connection.request("POST", "/mcp", body, headers)
        response = connection.getresponse()
        payload = json.loads(response.read())
    finally:
        connection.close()
    assert "result" in payload, payload
    return payload["result"]
