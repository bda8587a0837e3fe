"""Credentials: bearer tokens at the gateway's edge, the upstream's own credentials on
its session, and no token passed from downstream to upstream."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

import mcpfast
from mcpfast import Server
from mcpfast.gateway import gateway_of, serve_gateway_http
from mcpfast.gateway.serving import static_bearer_auth
from mcpfast.jsonrpc.errors import JSONRPCError

sys.path.insert(0, str(Path(__file__).parent))
from gateway_apps import math_app  # noqa: E402

from loop import eventually  # noqa: E402


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 30))


async def serve_upstream(app: Server, token: str) -> tuple[str, asyncio.Task]:
    bound: asyncio.Future = asyncio.get_running_loop().create_future()

    def ready(host, port):
        bound.set_result(port)

    # The resource URL names the port, unknown before binding: any loopback port is fine
    # for the token check itself.
    auth = static_bearer_auth((token,), "http://127.0.0.1/mcp")
    task = asyncio.ensure_future(app.serve_http("127.0.0.1", 0, ready=ready, auth=auth))
    return f"http://127.0.0.1:{await bound}/mcp", task


def test_upstream_credentials_are_the_gateways_own_and_never_the_clients():
    async def main():
        url, upstream_task = await serve_upstream(math_app(), "upstream-secret")
        gateway = Server("gateway")
        gateway.mount(url, namespace="calc", auth="upstream-secret")
        refused = gateway.mount(url, name="nocreds", namespace="nocreds", start_timeout=5)
        refused.backoff = 60  # one attempt is enough to see the refusal
        bound: asyncio.Future = asyncio.get_running_loop().create_future()
        served = asyncio.ensure_future(serve_gateway_http(
            gateway, "127.0.0.1", 0, ready=lambda h, p: bound.set_result(p), bearer_tokens=("edge-secret",)))
        gateway_url = f"http://127.0.0.1:{await bound}/mcp"
        try:
            with pytest.raises(JSONRPCError, match="HTTP 401"):
                await mcpfast.connect(gateway_url)  # no token at the edge
            with pytest.raises(JSONRPCError, match="HTTP 401"):
                await mcpfast.connect(gateway_url, auth="upstream-secret")  # the upstream's is not the edge's
            async with mcpfast.connect(gateway_url, auth="edge-secret") as client:
                # The edge token reached the gateway only: the upstream got its own.
                assert (await client.call_tool("calc_add", {"a": 1, "b": 2}))["structuredContent"] == {"result": 3}
                names = {tool["name"] for tool in await client.list_tools()}
                assert "nocreds_add" not in names
            await eventually(lambda: refused.failures >= 1)
            report = gateway_of(gateway).health()["upstreams"]["nocreds"]
            assert report["state"] in ("failed", "restarting") and "401" in report["error"]
        finally:
            for task in (served, upstream_task):
                task.cancel()
            await asyncio.gather(served, upstream_task, return_exceptions=True)

    run(main())
