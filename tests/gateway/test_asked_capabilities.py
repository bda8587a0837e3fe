"""Questions a handshake-era upstream asks through the gateway are judged by the downstream
client's own capabilities, not the gateway's: URL elicitation and sampling with tools reach a
client that declared them (a 2026-07-28 one as InputRequiredResult rounds, a handshake one on
its session) and a client that did not gets -32021 or a tool error saying which capability."""

from __future__ import annotations

import asyncio

import pytest

import mcpfast
from mcpfast import Context, Server
from mcpfast.gateway.eras import asked_capabilities
from mcpfast.jsonrpc.errors import JSONRPCError

TOOL = {"name": "lookup", "description": "Look something up.", "inputSchema": {"type": "object"}}


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 30))


def asking_app() -> Server:
    app = Server("asking")

    @app.tool()
    async def sign_in(ctx: Context) -> str:
        """Send the user to a sign-in page (URL elicitation)."""
        answer = await ctx.elicit_url("Sign in, please", "https://login.example.com/start")
        return answer.action

    @app.tool()
    async def plan(ctx: Context) -> str:
        """Ask the client's model, offering it a tool."""
        sampled = await ctx.sample("Plan the trip", max_tokens=20, tools=[TOOL])
        return sampled.text

    return app


def gateway() -> Server:
    app = Server("gateway")
    app.mount(asking_app(), namespace="up")  # in process, the newest handshake version
    return app


def sampling(params):
    assert params["tools"][0]["name"] == "lookup"
    return {"role": "assistant", "content": {"type": "text", "text": "planned"}, "model": "test"}


def elicitation(params):
    assert params["mode"] == "url" and params["url"] == "https://login.example.com/start"
    return {"action": "accept"}


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
def test_a_client_that_declared_url_elicitation_and_sampling_tools_gets_them(version):
    async def main():
        async with mcpfast.connect(gateway(), protocol_version=version, sampling=sampling,
                                   elicitation=elicitation,
                                   capabilities={"sampling": {"tools": {}}, "elicitation": {"url": {}}}) as client:
            assert client.protocol_version == version
            assert (await client.call_tool("up_sign_in"))["content"][0]["text"] == "accept"
            assert (await client.call_tool("up_plan"))["content"][0]["text"] == "planned"

    run(main())


def test_a_2026_client_without_them_gets_minus_32021_naming_the_capability():
    async def main():
        # Form elicitation and plain sampling only: the gateway itself would take both.
        async with mcpfast.connect(gateway(), protocol_version="2026-07-28", sampling=sampling,
                                   elicitation=elicitation) as client:
            for tool, capability in (("up_sign_in", "elicitation.url"), ("up_plan", "sampling.tools")):
                with pytest.raises(JSONRPCError) as caught:
                    await client.call_tool(tool)
                assert caught.value.code == -32021, tool
                assert capability in caught.value.message

    run(main())


def test_a_handshake_client_without_them_gets_a_tool_error_naming_the_capability():
    async def main():
        async with mcpfast.connect(gateway(), sampling=sampling, elicitation=elicitation) as client:
            for tool, capability in (("up_sign_in", "elicitation.url"), ("up_plan", "sampling.tools")):
                result = await client.call_tool(tool)
                assert result["isError"] is True, tool
                assert capability in result["content"][0]["text"], result

    run(main())


def test_what_each_question_needs():
    assert asked_capabilities("roots/list", None) == ("roots",)
    assert asked_capabilities("elicitation/create", {"mode": "form", "message": "m"}) == ("elicitation",)
    assert asked_capabilities("elicitation/create", {"mode": "url"}) == ("elicitation", "elicitation.url")
    assert asked_capabilities("sampling/createMessage", {"messages": []}) == ("sampling",)
    assert asked_capabilities("sampling/createMessage", {"tools": [], "includeContext": "thisServer"}) == (
        "sampling", "sampling.tools", "sampling.context")
    assert asked_capabilities("sampling/createMessage", {"includeContext": "none"}) == ("sampling",)
