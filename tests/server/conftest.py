"""A fake MCP client for the server tests: drives a ServerConnection without sockets.

``make_client(server, version=...)`` returns a :class:`FakeClient` whose transport is a
list: every frame the server emits is checked (bytes, compact JSON, no newline) and
validated against the schema of the connection's protocol version -- the negotiated one
once initialize was answered -- including the result type of the request it answers
(``tools/call`` -> CallToolResult ...) and the type of every notification and request the
server sends. A server test cannot see a frame that did not validate.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any, Optional

import pytest

from mcpfast.protocol.versions import LATEST_VERSION, SUPPORTED_VERSIONS

ALL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")


class FakeClient:
    """An MCP client speaking through a list (see the module docstring)."""

    def __init__(self, server: Any, mcp_schema: Any, version: str = LATEST_VERSION,
                 capabilities: Optional[dict] = None, name: str = "fake-client",
                 runtime: Any = None) -> None:
        self.server = server
        self.mcp_schema = mcp_schema
        self.requested_version = version
        self.version = version if version in SUPPORTED_VERSIONS else LATEST_VERSION
        self.capabilities = capabilities if capabilities is not None else {}
        self.client_info = {"name": name, "version": "1.0"}
        self.messages: list[Any] = []
        self.pending: dict[Any, str] = {}
        self._ids = itertools.count(1)
        # runtime: a FakeRuntime drives the session with a fake clock and no loop.
        self.conn = (server.connect(self._send) if runtime is None
                     else server.connect(self._send, runtime=runtime))

    # -- transport -----------------------------------------------------------------------

    def _send(self, frame: bytes) -> None:
        assert type(frame) is bytes, type(frame)
        assert not frame.endswith(b"\n")
        assert b"\n" not in frame, "compact JSON has no newlines"
        message = json.loads(frame)
        schema = self.mcp_schema(self.version)
        if isinstance(message, list):
            for item in message:
                schema.check_message(item, answers=self._answered(item))
        else:
            answers = self._answered(message)
            if answers == "initialize" and "result" in message:
                self.version = message["result"]["protocolVersion"]
                schema = self.mcp_schema(self.version)
            schema.check_message(message, answers=answers)
        self.messages.append(message)

    def _answered(self, message: Any) -> Optional[str]:
        if isinstance(message, dict) and "method" not in message and message.get("id") is not None:
            return self.pending.pop(message["id"], None)
        return None

    # -- sending -------------------------------------------------------------------------

    def next_id(self) -> int:
        return next(self._ids)

    def send_request(self, method: str, params: Any = None, id: Any = None) -> Any:
        """Feed a request; returns its id."""
        if id is None:
            id = self.next_id()
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            message["params"] = params
        self.pending[id] = method
        self.feed(message)
        return id

    def notify(self, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.feed(message)

    def feed(self, message: Any) -> bool:
        frame = message if isinstance(message, (bytes, str)) else json.dumps(message)
        return self.conn.feed(frame.encode() if isinstance(frame, str) else frame)

    def respond(self, id: Any, result: Any) -> None:
        self.feed({"jsonrpc": "2.0", "id": id, "result": result})

    def respond_error(self, id: Any, code: int, message: str) -> None:
        self.feed({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})

    # -- reading -------------------------------------------------------------------------

    def take(self) -> list[Any]:
        out = self.messages[:]
        self.messages.clear()
        return out

    def response(self, id: Any) -> Optional[dict]:
        """Remove and return the response with this id, None when there is none yet."""
        for index, message in enumerate(self.messages):
            if isinstance(message, dict) and "method" not in message and message.get("id") == id:
                return self.messages.pop(index)
        return None

    def notifications(self, method: Optional[str] = None) -> list[dict]:
        """Remove and return the notifications received (of one method, when given)."""
        found = [m for m in self.messages if isinstance(m, dict) and "method" in m and "id" not in m
                 and (method is None or m["method"] == method)]
        for message in found:
            self.messages.remove(message)
        return found

    def requests(self, method: Optional[str] = None) -> list[dict]:
        """Remove and return the requests the server sent (of one method, when given)."""
        found = [m for m in self.messages if isinstance(m, dict) and "method" in m and "id" in m
                 and (method is None or m["method"] == method)]
        for message in found:
            self.messages.remove(message)
        return found

    def request(self, method: str, params: Any = None) -> dict:
        """Send a request answered inline (sync handler); return the whole response."""
        id = self.send_request(method, params)
        response = self.response(id)
        assert response is not None, f"no inline response to {method}: {self.messages}"
        return response

    def result(self, method: str, params: Any = None) -> Any:
        """Send a request answered inline and return its result (AssertionError on error)."""
        response = self.request(method, params)
        assert "result" in response, f"{method} failed: {response}"
        return response["result"]

    def error(self, method: str, params: Any = None) -> dict:
        """Send a request answered inline with an error; return the error object."""
        response = self.request(method, params)
        assert "error" in response, f"{method} did not fail: {response}"
        return response["error"]

    async def arequest(self, method: str, params: Any = None, rounds: int = 200) -> dict:
        """Send a request and wait (letting the loop run) for its response."""
        id = self.send_request(method, params)
        return await self.wait_response(id, rounds)

    async def wait_response(self, id: Any, rounds: int = 200) -> dict:
        for _ in range(rounds):
            response = self.response(id)
            if response is not None:
                return response
            await asyncio.sleep(0)
        raise AssertionError(f"no response to request {id}: {self.messages}")

    async def aresult(self, method: str, params: Any = None) -> Any:
        response = await self.arequest(method, params)
        assert "result" in response, f"{method} failed: {response}"
        return response["result"]

    async def wait_request(self, method: str, rounds: int = 200) -> dict:
        """Wait for the server to send a request of this method; remove and return it."""
        for _ in range(rounds):
            found = self.requests(method)
            if found:
                assert len(found) == 1, found
                return found[0]
            await asyncio.sleep(0)
        raise AssertionError(f"the server sent no {method} request: {self.messages}")

    # -- lifecycle -----------------------------------------------------------------------

    def initialize(self, initialized: bool = True) -> dict:
        """initialize (+ notifications/initialized); returns the InitializeResult."""
        result = self.result("initialize", {
            "protocolVersion": self.requested_version,
            "capabilities": self.capabilities,
            "clientInfo": self.client_info,
        })
        if initialized:
            self.notify("notifications/initialized")
        return result

    def call_tool(self, name: str, arguments: Any = None, **extra: Any) -> dict:
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        params.update(extra)
        return self.result("tools/call", params)

    async def acall_tool(self, name: str, arguments: Any = None, **extra: Any) -> dict:
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        params.update(extra)
        return await self.aresult("tools/call", params)


@pytest.fixture
def make_client(mcp_schema):
    """``make_client(server, version=..., capabilities=...)`` -> FakeClient (not initialized)."""
    clients: list[FakeClient] = []

    def make(server: Any, version: str = LATEST_VERSION, **options: Any) -> FakeClient:
        client = FakeClient(server, mcp_schema, version, **options)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.conn.close()


@pytest.fixture
def ready_client(make_client):
    """``ready_client(server, version=..., ...)`` -> an initialized FakeClient."""

    def make(server: Any, version: str = LATEST_VERSION, **options: Any) -> FakeClient:
        client = make_client(server, version, **options)
        client.initialize()
        return client

    return make
