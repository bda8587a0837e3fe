"""Per-request protocol state: a source other than the connection's handshake.

The source here is a test double of the 2026-07-28 era: it claims the requests whose
``params._meta`` carry a protocol version and client capabilities and builds their
ProtocolState from them, with no way back to the client.
"""

from __future__ import annotations

from typing import Any, Optional

from fake_runtime import FakeRuntime
from mcpfast import Context, Server
from mcpfast.jsonrpc.errors import INVALID_PARAMS, NOT_INITIALIZED, InvalidParams
from mcpfast.protocol import meta_keys
from mcpfast.server.request.back_channel import NoBackChannel
from mcpfast.server.request.state import ProtocolState
from mcpfast.server.request.state_source import RequestState


class MetaStateSource:
    """Claims requests carrying their protocol facts in _meta (a 2026-07-28 stand-in)."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def state_for(self, connection: Any, method: str, params: Any) -> Optional[RequestState]:
        meta = params.get("_meta") if type(params) is dict else None
        if type(meta) is not dict or meta_keys.PROTOCOL_VERSION not in meta:
            return None
        self.seen.append(method)
        capabilities = meta.get(meta_keys.CLIENT_CAPABILITIES)
        if type(capabilities) is not dict:
            raise InvalidParams(f"_meta[{meta_keys.CLIENT_CAPABILITIES!r}] must be an object")
        state = ProtocolState(log_level=0)
        state.negotiate(meta[meta_keys.PROTOCOL_VERSION], meta.get(meta_keys.CLIENT_INFO, {}),
                        capabilities)
        state.initialized = True
        return RequestState(state, NoBackChannel("a stateless request cannot reach the client"))


def _meta(version: str = "2025-06-18", capabilities: Any = None) -> dict[str, Any]:
    return {
        meta_keys.PROTOCOL_VERSION: version,
        meta_keys.CLIENT_CAPABILITIES: {"sampling": {}} if capabilities is None else capabilities,
        meta_keys.CLIENT_INFO: {"name": "meta-client", "version": "9"},
    }


def _server(source: MetaStateSource) -> Server:
    app = Server("stateful", state_sources=[source])

    @app.tool()
    def whoami(ctx: Context) -> dict:
        return {"version": ctx.protocol_version, "client": ctx.client_info.get("name"),
                "sampling": "sampling" in ctx.client_capabilities}

    @app.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.sample("hello?")
        return answer.text or ""

    return app


def test_claimed_request_reads_its_state_from_meta_without_a_handshake(make_client):
    source = MetaStateSource()
    client = make_client(_server(source), "2025-06-18")
    result = client.call_tool("whoami", {}, _meta=_meta())
    assert result["structuredContent"] == {"version": "2025-06-18", "client": "meta-client",
                                           "sampling": True}
    assert source.seen == ["tools/call"]
    # The connection's own handshake state was never touched.
    assert client.conn.state.protocol_version is None


def test_unclaimed_request_still_meets_the_initialization_gate(make_client):
    client = make_client(_server(MetaStateSource()))
    error = client.error("tools/call", {"name": "whoami", "arguments": {}})
    assert error["code"] == NOT_INITIALIZED


def test_handshake_requests_keep_the_connection_state(make_client):
    source = MetaStateSource()
    client = make_client(_server(source), "2025-11-25")
    client.initialize()
    result = client.call_tool("whoami", {})
    assert result["structuredContent"]["version"] == "2025-11-25"
    assert result["structuredContent"]["client"] == "fake-client"
    assert source.seen == []


def test_source_refusing_a_request_answers_with_its_error(make_client):
    client = make_client(_server(MetaStateSource()))
    error = client.error("tools/call", {"name": "whoami", "_meta": _meta(capabilities=[])})
    assert error["code"] == INVALID_PARAMS
    assert "clientCapabilities" in error["message"]


def test_no_back_channel_fails_at_once_naming_the_method(make_client):
    runtime = FakeRuntime()
    client = make_client(_server(MetaStateSource()), "2025-06-18", runtime=runtime)
    id = client.send_request("tools/call", {"name": "ask", "arguments": {}, "_meta": _meta()})
    runtime.run_ready()  # no clock advance: the answer needs no waiting
    result = client.response(id)["result"]
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert "sampling/createMessage" in text and "cannot reach the client" in text
    assert client.requests() == []
