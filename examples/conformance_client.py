"""mcpfast's client driven by the official MCP conformance suite (client mode).

    scripts/conformance client --command "python examples/conformance_client.py" --suite core

The suite starts a mock server for each scenario and runs this program with the server's
URL as the last argument and the scenario's name in MCP_CONFORMANCE_SCENARIO; it then
checks what the client did. Exit status 0 means this side finished its part.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from mcpfast import connect
from mcpfast.transports.http.client_credentials import ClientCredentials
from mcpfast.transports.http.oauth import OAuthFlow, headless_authorize


async def list_and_call(url: str, **options: Any) -> None:
    """Initialize, list the tools (when the server has any), call the first one with two
    numbers, close."""
    async with connect(url, **options) as client:
        if "tools" not in client.server_capabilities:
            return
        tools = await client.list_tools()
        if tools:
            await client.call_tool(tools[0]["name"], {"a": 2, "b": 3})


async def elicitation_defaults(url: str) -> None:
    """Accept the server's elicitation without filling anything in: the client library
    must complete the answer with the schema's defaults (SEP-1034)."""
    async with connect(url, elicitation=lambda params: {"action": "accept", "content": {}}) as client:
        await client.call_tool("test_client_elicitation_defaults", {})


async def sse_retry(url: str) -> None:
    """The server ends the tool call's event stream before answering: the client must
    resume it with Last-Event-ID after the server's retry delay (SEP-1699)."""
    async with connect(url) as client:
        await client.list_tools()
        await client.call_tool("test_reconnection", {})


async def authorized(url: str) -> None:
    """The auth/* scenarios: the server answers 401 until the client holds a token from the
    scenario's authorization server; mcpfast's OAuthFlow obtains it (discovery, registration
    by pre-registered credentials, Client ID Metadata Document or dynamic registration,
    PKCE, the token endpoint), then the client lists and calls the tools."""
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    flow = OAuthFlow(redirect_uri="http://localhost:3000/callback", authorize=headless_authorize,
                     client_name="mcpfast-conformance-client",
                     client_id=context.get("client_id"), client_secret=context.get("client_secret"),
                     client_metadata_url="https://conformance-test.local/client-metadata.json")
    async with connect(url, auth=flow) as client:
        tools = await client.list_tools()
        for tool in tools[:1]:
            await client.call_tool(tool["name"], {})


async def machine_authorized(url: str) -> None:
    """The auth/client-credentials-* scenarios (SEP-1046): no person, no browser; the
    client authenticates itself at the token endpoint (client_secret_basic, or a signed
    private_key_jwt assertion) through mcpfast's ClientCredentials."""
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    if context.get("private_key_pem"):
        auth = ClientCredentials(client_id=context["client_id"], private_key=context["private_key_pem"],
                                 signing_algorithm=context.get("signing_algorithm", "ES256"))
    else:
        auth = ClientCredentials(client_id=context["client_id"], client_secret=context["client_secret"])
    async with connect(url, auth=auth) as client:
        tools = await client.list_tools()
        for tool in tools[:1]:
            await client.call_tool(tool["name"], {})


async def main(scenario: str, url: str) -> None:
    if scenario.startswith("auth/client-credentials"):
        await machine_authorized(url)
    elif scenario.startswith("auth/"):
        await authorized(url)
    elif scenario.startswith("elicitation-sep1034"):
        await elicitation_defaults(url)
    elif scenario == "sse-retry":
        await sse_retry(url)
    else:  # initialize, tools_call and whatever only needs the basic exchange
        await list_and_call(url)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: MCP_CONFORMANCE_SCENARIO=name conformance_client.py SERVER_URL")
    asyncio.run(main(os.environ.get("MCP_CONFORMANCE_SCENARIO", ""), sys.argv[-1]))
