"""A 2025-era Streamable HTTP session driven with plain http.client (a new connection per
request, so that a load balancer or the kernel may send each one to another process)."""

from __future__ import annotations

import http.client
import json
from typing import Any, Optional

VERSION = "2025-11-25"
INIT = {"protocolVersion": VERSION, "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "hosts-test", "version": "1"}}


def post(port: int, message: dict, session: Optional[str] = None) -> tuple[int, dict, Any]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream",
               "mcp-protocol-version": VERSION}
    if session is not None:
        headers["mcp-session-id"] = session
    connection.request("POST", "/mcp", json.dumps(message), headers)
    response = connection.getresponse()
    body = response.read()
    connection.close()
    return response.status, dict(response.getheaders()), json.loads(body) if body else None


def call(port: int, session: str, name: str, id: int = 1) -> dict:
    status, _, body = post(port, {"jsonrpc": "2.0", "id": id, "method": "tools/call",
                                  "params": {"name": name, "arguments": {}}}, session)
    assert status == 200, body
    return body["result"]


class EventReader:
    """A GET stream read event by event (blocking, with a timeout)."""

    def __init__(self, port: int, session: str, last_event_id: Optional[str] = None) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
        headers = {"accept": "text/event-stream", "mcp-session-id": session, "mcp-protocol-version": VERSION}
        if last_event_id is not None:
            headers["last-event-id"] = last_event_id
        self.connection.request("GET", "/mcp", headers=headers)
        self.response = self.connection.getresponse()
        assert self.response.status == 200, self.response.read()

    @classmethod
    def reading(cls, connection: http.client.HTTPConnection,
                response: http.client.HTTPResponse) -> "EventReader":
        """A reader of an SSE response already received (a POST's stream)."""
        reader = cls.__new__(cls)
        reader.connection, reader.response = connection, response
        return reader

    def next(self) -> tuple[Optional[str], Optional[dict]]:
        """(event id, message) of the next event that is not a comment."""
        event_id, data = None, None
        while True:
            line = self.response.readline()
            assert line, "the stream ended"
            line = line.rstrip(b"\r\n")
            if not line:
                if event_id is not None or data is not None:
                    return event_id, (json.loads(data) if data else None)
                continue
            if line.startswith(b"id: "):
                event_id = line[4:].decode()
            elif line.startswith(b"data: "):
                data = line[6:]
            elif line.startswith(b"data:"):
                data = line[5:]

    def close(self) -> None:
        self.connection.close()


def open_session(port: int) -> str:
    """A new session's id (initialize, then notifications/initialized)."""
    status, headers, body = post(port, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT})
    assert status == 200 and body["result"]["protocolVersion"] == VERSION, body
    session = {k.lower(): v for k, v in headers.items()}["mcp-session-id"]
    assert post(port, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)[0] == 202
    return session
