"""Results forwarded as bytes: a mounted server's tools/call, prompts/get, resources/read
and completion/complete results reach the downstream client as the upstream wrote them
(unicode, large and nested ones byte for byte, under the downstream's own request id),
never built into Python objects at the gateway -- and are built and rewritten where they
must be: a downstream of an older version, a middleware outside the gateway's, a
task-augmented call; lists keep their namespaced names."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from mcpfast import Server
from mcpfast._core.encode import encode_response
from mcpfast.gateway import gateway_of
from mcpfast.gateway.eras import shaped_result
from mcpfast.gateway.routing import results_unshaped
from mcpfast.protocol.features import FEATURES

sys.path.insert(0, str(Path(__file__).parent))
from loop import until  # noqa: E402

UNICODE = "é ünïcödé \u2028 😀 \" \\ \n 漢字 \x01"
NESTED = {"a": [[[{"b": [1, -2, 1.5, 18446744073709551615, None, True, False]}]]], "c": {"d": {"e": {}}}}
LARGE = "x" * 300_000 + "é" * 10_000


def payload_app() -> Server:
    """An upstream whose answers are unicode, large and nested."""
    app = Server("payloads")

    @app.tool()
    def unicode() -> str:
        """Unicode text."""
        return UNICODE

    @app.tool()
    def nested() -> dict:
        """A nested structured result."""
        return NESTED

    @app.tool()
    def large() -> str:
        """A large text."""
        return LARGE

    @app.prompt()
    def greet(name: str) -> str:
        """A greeting."""
        return f"Hello, {name} — {UNICODE}"

    @app.resource("file:///big", mime_type="text/plain")
    def big() -> str:
        return LARGE

    @app.completion()
    def complete(ref, argument, context):
        return ["é-one", "two"]

    return app


class RawPeer:
    """A downstream client writing JSON-RPC frames by hand and keeping the frames
    answered, as bytes."""

    def __init__(self, app: Server, version: str = "2025-11-25") -> None:
        self.frames: list[bytes] = []
        self.connection = app.connect(self.frames.append)
        self.version = version

    async def start(self) -> None:
        await self.ask({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": self.version, "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}})
        self.connection.feed(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')

    async def ask(self, request: dict) -> bytes:
        count = len(self.frames)
        self.connection.feed(json.dumps(request).encode())
        await until(lambda: len(self.frames) > count, rounds=2000)
        return bytes(self.frames[count])


def direct_and_through(method: str, params: dict, through_params: dict, *, version: str = "2025-11-25",
                       middleware: tuple = (), rounds: int = 1):
    """The frames a raw peer gets for the same request from the upstream directly and
    through a gateway mounting it under "p", and how many results the gateway passed."""
    upstream = payload_app()
    gateway = Server("gateway", middleware=list(middleware))
    mounted = gateway.mount(upstream, namespace="p")

    async def main():
        direct_peer = RawPeer(upstream, version)
        async with gateway.running():
            await direct_peer.start()
            peer = RawPeer(gateway, version)
            await peer.start()
            direct = [await direct_peer.ask({"jsonrpc": "2.0", "id": 41, "method": method, "params": params})
                      for _ in range(rounds)]
            through = [await peer.ask({"jsonrpc": "2.0", "id": "down-7", "method": method,
                                       "params": through_params}) for _ in range(rounds)]
            return direct, through, mounted.passed_through

    return asyncio.run(asyncio.wait_for(main(), 60))


def result_bytes(frame: bytes, request_id: bytes) -> bytes:
    prefix = b'{"jsonrpc":"2.0","id":' + request_id + b',"result":'
    assert frame.startswith(prefix), frame[:200]
    return frame[len(prefix):-1]


@pytest.mark.parametrize("tool", ["unicode", "nested", "large"])
def test_tool_results_pass_byte_identical_under_the_downstream_id(tool):
    direct, through, passed = direct_and_through(
        "tools/call", {"name": tool, "arguments": {}}, {"name": f"p_{tool}", "arguments": {}}, rounds=2)
    assert passed == 2
    for frame_direct, frame_through in zip(direct, through):
        assert result_bytes(frame_through, b'"down-7"') == result_bytes(frame_direct, b"41")
    assert json.loads(through[0])["id"] == "down-7"


def test_prompt_resource_and_completion_results_pass_byte_identical():
    argument = {"name": "name", "value": ""}
    cases = [
        ("prompts/get", {"name": "greet", "arguments": {"name": "Åsa"}},
         {"name": "p_greet", "arguments": {"name": "Åsa"}}),
        ("resources/read", {"uri": "file:///big"}, {"uri": "file:///big"}),
        ("completion/complete", {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": argument},
         {"ref": {"type": "ref/prompt", "name": "p_greet"}, "argument": argument}),
    ]
    for method, params, through_params in cases:
        direct, through, passed = direct_and_through(method, params, through_params)
        assert passed == 1, method
        assert result_bytes(through[0], b'"down-7"') == result_bytes(direct[0], b"41"), method


def test_an_older_client_gets_a_result_rebuilt_for_its_version():
    # 2025-03-26 has no structuredContent: the gateway must read and rewrite the result.
    direct, through, passed = direct_and_through(
        "tools/call", {"name": "nested", "arguments": {}}, {"name": "p_nested", "arguments": {}},
        version="2025-03-26")
    assert passed == 0
    result = json.loads(through[0])["result"]
    assert "structuredContent" not in result
    assert result["content"] == json.loads(direct[0])["result"]["content"]


def test_a_middleware_outside_the_gateway_gets_the_result_as_a_dict():
    seen: list = []

    async def recording(ctx, call_next):
        result = await call_next(ctx)
        if ctx.method == "tools/call":
            seen.append(result)
        return result

    direct, through, passed = direct_and_through(
        "tools/call", {"name": "unicode", "arguments": {}}, {"name": "p_unicode", "arguments": {}},
        middleware=(recording,))
    assert passed == 0
    assert type(seen[0]) is dict and seen[0]["content"][0]["text"] == UNICODE
    assert result_bytes(through[0], b'"down-7"') == result_bytes(direct[0], b"41")


def test_lists_keep_their_namespaced_names():
    gateway = Server("gateway")
    gateway.mount(payload_app(), namespace="p")

    async def main():
        async with gateway.running():
            peer = RawPeer(gateway)
            await peer.start()
            tools = json.loads(await peer.ask({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
            prompts = json.loads(await peer.ask({"jsonrpc": "2.0", "id": 2, "method": "prompts/list"}))
            return tools["result"]["tools"], prompts["result"]["prompts"]

    tools, prompts = asyncio.run(asyncio.wait_for(main(), 60))
    assert sorted(tool["name"] for tool in tools) == ["p_large", "p_nested", "p_unicode"]
    assert [prompt["name"] for prompt in prompts] == ["p_greet"]
    assert gateway_of(gateway).upstreams["p"].passed_through == 0


def test_the_gateway_passes_results_only_where_shaping_would_leave_them_as_they_are():
    # The routing's rule (results_unshaped) against eras.shaped_result, for every version.
    result = {"content": [{"type": "audio", "data": "AA==", "mimeType": "audio/wav", "_meta": {"k": 1}},
                          {"type": "resource_link", "uri": "file:///x", "name": "x"}],
              "structuredContent": {"a": 1}, "_meta": {"m": 2},
              "messages": [{"role": "user", "content": {"type": "audio", "data": "AA==", "mimeType": "audio/wav"}}],
              "contents": [{"uri": "file:///x", "text": "t", "_meta": {"k": 1}}]}
    for features in FEATURES.values():
        class State:
            pass

        class Ctx:
            state = State()

        Ctx.state.features = features  # type: ignore[attr-defined]
        for method in ("tools/call", "prompts/get", "resources/read"):
            if results_unshaped(Ctx()):
                assert shaped_result(method, result, features) is result, (features, method)
    # And the rule is not vacuous: versions whose results shaping rewrites are not passed.
    old = FEATURES["2025-03-26"]
    Ctx.state.features = old  # type: ignore[attr-defined]
    assert not results_unshaped(Ctx()) and shaped_result("tools/call", result, old) != result
    assert encode_response(1, result)  # the sample is valid JSON
