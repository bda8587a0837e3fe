"""Both legs 2026-07-28: the downstream's request goes upstream as it is (its client
capabilities in _meta), and the upstream's InputRequiredResult comes back with its own
input keys, its requestState sealed in the gateway's and unsealed on the retry."""

from __future__ import annotations

import asyncio

import pytest

import mcpfast
from mcpfast import Context, Server
from mcpfast.jsonrpc.errors import JSONRPCError
from mcpfast.protocol import meta_keys


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 30))


def asking_app(seen: list) -> Server:
    app = Server("asking")

    @app.tool()
    async def greet(ctx: Context) -> str:
        """Ask the user's name under the handler's own key."""
        seen.append(dict(ctx.client_capabilities))
        answer = await ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}},
                                  input_key="user_name")
        return f"hello {answer.data['name']}"

    return app


def gateway(seen: list) -> Server:
    app = Server("gateway")
    app.mount(asking_app(seen), namespace="up", protocol_version="2026-07-28")
    return app


def raw_call(client, params: dict, capabilities: dict) -> asyncio.Future:
    # One attempt, as a client sends it (no automatic rounds): what the gateway answers.
    meta = {meta_keys.PROTOCOL_VERSION: "2026-07-28", meta_keys.CLIENT_CAPABILITIES: capabilities,
            meta_keys.CLIENT_INFO: {"name": "raw", "version": "1"}}
    return client.session.request("tools/call", {**params, "_meta": meta}, timeout=10)


def test_the_upstreams_input_keys_and_the_downstreams_capabilities_pass_through():
    seen: list = []

    async def main():
        async with mcpfast.connect(gateway(seen), protocol_version="2026-07-28") as client:
            capabilities = {"elicitation": {"form": {}}, "x-downstream": {}}
            first = await raw_call(client, {"name": "up_greet"}, capabilities)
            assert first["resultType"] == "input_required"
            assert list(first["inputRequests"]) == ["user_name"]
            # The upstream saw this client's capabilities, not the gateway's own.
            assert seen[-1] == capabilities
            retry = {"name": "up_greet", "inputResponses": {
                "user_name": {"action": "accept", "content": {"name": "Ada"}}}}
            if "requestState" in first:
                retry["requestState"] = first["requestState"]
            done = await raw_call(client, retry, capabilities)
            assert done["content"][0]["text"] == "hello Ada"

    run(main())


def test_a_tampered_sealed_state_is_refused():
    seen: list = []

    async def main():
        async with mcpfast.connect(gateway(seen), protocol_version="2026-07-28") as client:
            capabilities = {"elicitation": {"form": {}}}
            with pytest.raises(JSONRPCError) as caught:
                await raw_call(client, {"name": "up_greet", "requestState": "bm90LW91cnM.AAAA"}, capabilities)
            assert caught.value.code == -32602

    run(main())


def test_a_downstream_without_elicitation_gets_the_upstreams_minus_32021():
    seen: list = []

    async def main():
        async with mcpfast.connect(gateway(seen), protocol_version="2026-07-28") as client:
            with pytest.raises(JSONRPCError) as caught:
                await raw_call(client, {"name": "up_greet"}, {})
            assert caught.value.code == -32021
            assert seen[-1] == {}

    run(main())


def test_the_client_rounds_complete_through_the_gateway():
    seen: list = []

    async def main():
        def elicitation(params):
            return {"action": "accept", "content": {"name": "Grace"}}

        async with mcpfast.connect(gateway(seen), protocol_version="2026-07-28",
                                   elicitation=elicitation) as client:
            result = await client.call_tool("up_greet")
            assert result["content"][0]["text"] == "hello Grace"
            assert "elicitation" in seen[-1]

    run(main())


def test_over_http_on_both_legs():
    # The upstream served over Streamable HTTP, the gateway too: the routing headers of
    # each attempt come from the request the gateway forwards.
    seen: list = []

    async def main():
        upstream = asking_app(seen)
        bound: asyncio.Future = asyncio.get_running_loop().create_future()
        served = asyncio.ensure_future(upstream.serve_http("127.0.0.1", 0, ready=lambda h, p: bound.set_result(p)))
        app = Server("gateway")
        app.mount(f"http://127.0.0.1:{await bound}/mcp", namespace="up", protocol_version="2026-07-28")
        front: asyncio.Future = asyncio.get_running_loop().create_future()
        gateway_served = asyncio.ensure_future(app.serve_http("127.0.0.1", 0, ready=lambda h, p: front.set_result(p)))
        try:
            url = f"http://127.0.0.1:{await front}/mcp"
            answers = []

            def elicitation(params):
                answers.append(params["message"])
                return {"action": "accept", "content": {"name": "Lin"}}

            async with mcpfast.connect(url, protocol_version="2026-07-28", elicitation=elicitation) as client:
                # Serving began after the upstream's first start (start_wait): it is listed.
                assert "up_greet" in [tool["name"] for tool in await client.list_tools()]
                result = await client.call_tool("up_greet")
                assert result["content"][0]["text"] == "hello Lin"
                assert answers == ["Your name?"]
                assert "elicitation" in seen[-1]
        finally:
            for task in (gateway_served, served):
                task.cancel()
            await asyncio.gather(gateway_served, served, return_exceptions=True)

    run(main())
