"""A scripted MCP server for the client tests, wired to a Client in memory.

``FakeServer`` is a plain JSON-RPC Session (the server side) with a Router the test fills,
connected back to back with a Client: each side's ``send`` queues the frame for the other
side's ``feed`` on the next loop iteration, like a socket would. Every frame is recorded
(decoded) in ``from_client`` / ``to_client`` so tests can look at the wire, and
``check_schema(mcp_schema)`` validates everything the client emitted against the MCP
schema of the negotiated version (the initialize request against the version it asked
for), answering requests by the method the server sent.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Optional

import pytest

from loop import settle
from mcpfast.client import Client
from mcpfast.jsonrpc.router import Router
from mcpfast.jsonrpc.session import Session

DEFAULT_CAPABILITIES = {
    "tools": {"listChanged": True},
    "resources": {"subscribe": True, "listChanged": True},
    "prompts": {"listChanged": True},
    "completions": {},
    "logging": {},
}


class FakeServer:
    """A scripted server (see the module docstring).

    capabilities: what initialize advertises; answer_version: the protocolVersion it
    answers with (None: the one asked for); initialize_result: the whole result instead.
    """

    def __init__(self, *, capabilities: Optional[dict] = None, answer_version: Any = None,
                 initialize_result: Any = None, instructions: Optional[str] = None) -> None:
        self.capabilities = DEFAULT_CAPABILITIES if capabilities is None else capabilities
        self.answer_version = answer_version
        self.initialize_result = initialize_result
        self.instructions = instructions
        self.router = Router()
        self.router.add_request_handler("initialize", self._initialize)
        self.router.add_request_handler("ping", lambda params, ctx: {})
        self.router.add_notification_handler("notifications/initialized", self._initialized)
        self.from_client: list[dict] = []
        self.to_client: list[dict] = []
        self.requests_to_client: dict[Any, str] = {}
        self.initialize_params: Optional[dict] = None
        self.initialized = False
        self.client: Optional[Client] = None
        self.conn: Any = None
        self.session: Optional[Session] = None
        self.loop: Optional[asyncio.AbstractEventLoop] = None

    # -- handshake ---------------------------------------------------------------------

    def _initialize(self, params: Any, ctx: Any) -> Any:
        self.initialize_params = params
        if self.initialize_result is not None:
            return self.initialize_result
        result = {
            "protocolVersion": self.answer_version or params["protocolVersion"],
            "capabilities": self.capabilities,
            "serverInfo": {"name": "fake", "version": "1.0.0"},
        }
        if self.instructions is not None:
            result["instructions"] = self.instructions
        return result

    def _initialized(self, params: Any, ctx: Any) -> None:
        self.initialized = True

    # -- wiring ------------------------------------------------------------------------

    async def connect(self, client: Optional[Client] = None, *, initialize: bool = True,
                      **options: Any) -> Client:
        """Bind a Client (made from options when not given) and, by default, initialize."""
        self.loop = asyncio.get_running_loop()
        self.client = client if client is not None else Client(**options)
        self.conn = self.client.bind(self._client_send)
        self.session = Session(self._server_send, router=self.router)
        if initialize:
            await self.client.initialize(timeout=5)
            await self.settle()
        return self.client

    def _client_send(self, frame: bytes) -> None:
        # The session's output contract: compact JSON bytes without framing.
        assert type(frame) is bytes and not frame.endswith(b"\n"), frame
        self.from_client.append(json.loads(frame))
        self.loop.call_soon(self._to_server, frame)

    def _to_server(self, frame: bytes) -> None:
        if not self.session.closed:
            self.session.feed(frame)

    def _server_send(self, frame: bytes) -> None:
        message = json.loads(frame)
        self.to_client.append(message)
        if "method" in message and "id" in message:
            self.requests_to_client[message["id"]] = message["method"]
        self.loop.call_soon(self._to_client, frame)

    def _to_client(self, frame: bytes) -> None:
        if not self.client.closed:
            self.conn.feed(frame)

    async def settle(self, rounds: int = 20) -> None:
        """Let queued frames and callbacks run."""
        await settle(rounds)

    def drop(self, exc: Optional[BaseException] = None) -> None:
        """The connection breaks: the client's transport reports it, the server side closes."""
        self.conn.close(exc)
        self.session.close(exc)

    # -- inspection --------------------------------------------------------------------

    def sent(self, method: str) -> list[dict]:
        """The client's requests and notifications named method, in order."""
        return [m for m in self.from_client if m.get("method") == method]

    def responses_from_client(self) -> list[dict]:
        return [m for m in self.from_client if "method" not in m]

    def check_schema(self, mcp_schema: Any) -> int:
        """Validate every message the client sent; returns how many were checked."""
        requested = (self.initialize_params or {}).get("protocolVersion")
        negotiated = self.client.protocol_version or requested
        assert negotiated is not None, "nothing negotiated and no initialize sent"
        for message in self.from_client:
            version = requested if message.get("method") == "initialize" else negotiated
            answers = None
            if "method" not in message and "result" in message:
                answers = self.requests_to_client[message["id"]]
            mcp_schema(version).check_message(message, answers=answers)
        return len(self.from_client)


@pytest.fixture
def fake():
    """A new FakeServer (configure it, then ``await fake.connect(...)`` inside the test)."""
    return FakeServer


def run(coroutine: Any) -> Any:
    """asyncio.run with a timeout, so a hanging test fails instead of blocking."""

    async def bounded() -> Any:
        return await asyncio.wait_for(coroutine, 20)

    return asyncio.run(bounded())


@pytest.fixture
def arun():
    """``arun(coroutine)``: run it to completion on a fresh loop (20 s limit)."""
    return run
