"""HTTP refusals carried by a JSON-RPC error: a POST whose only request the pipeline refused
for a missing scope is answered 403 with the insufficient_scope challenge, one refused by the
rate limiter 429 with Retry-After -- in sessions, in stateless mode and on the 2026-07-28 leg;
inside a batch the JSON-RPC error stays the answer. The components a token may not use are
left out of its lists."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Optional

import pytest

from endpoint_requests import INIT, answer, post, request
from mcpfast import AccessToken, Server
from mcpfast.jsonrpc.errors import INSUFFICIENT_SCOPE, RATE_LIMITED
from mcpfast.server.middleware import RateLimit
from mcpfast.transports.http import BearerAuth, HTTPRequest, HTTPResponse

from .test_http_2026 import post_2026

RESOURCE = "https://mcp.example.com/mcp"
METADATA = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"

TOKENS = {
    "reader": AccessToken("carol", {"files:read"}),
    "writer": AccessToken("dave", {"files:read", "files:write"}),
    "nobody": AccessToken("erin", set()),
}


def scoped_server(**options: Any) -> Server:
    app = Server("scopes", **options)

    @app.tool(scopes=["files:read"])
    def read() -> str:
        return "read"

    @app.tool(scopes=["files:write", "files:read"])
    def write() -> str:
        return "written"

    @app.tool()
    def open_tool() -> str:
        return "open"

    return app


def auth() -> BearerAuth:
    return BearerAuth(TOKENS.get, resource=RESOURCE, authorization_servers=["https://auth.example.com"])


def with_token(req: HTTPRequest, token: Optional[str]) -> HTTPRequest:
    if token is not None:
        req.headers["authorization"] = f"Bearer {token}"
    return req


def call(name: str, token: Optional[str], session: Optional[str] = None, id: int = 1) -> HTTPRequest:
    return with_token(post(request(id, "tools/call", {"name": name, "arguments": {}}), session), token)


async def session_of(endpoint: Any, token: str) -> str:
    created = await answer(endpoint.handle(with_token(post(request(0, "initialize", INIT), version=None), token)))
    session = created.header("mcp-session-id")
    done = await answer(endpoint.handle(with_token(
        post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session), token)))
    assert done.status == 202
    return session


def error_of(response: HTTPResponse) -> dict:
    return json.loads(response.body)["error"]


def assert_insufficient_scope(response: HTTPResponse, scope: str) -> None:
    assert response.status == 403, response.body
    assert response.header("www-authenticate") == (
        f'Bearer error="insufficient_scope", error_description="Insufficient scope: this needs the '
        f'scopes {scope}", scope="{scope}", resource_metadata="{METADATA}"')
    error = error_of(response)
    assert error["code"] == INSUFFICIENT_SCOPE and error["data"] == {"requiredScopes": scope.split()}


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def test_a_missing_scope_is_a_403_step_up_challenge_in_a_session() -> None:
    async def main() -> None:
        endpoint = scoped_server().http_endpoint(auth=auth())
        session = await session_of(endpoint, "reader")
        ok = await answer(endpoint.handle(call("read", "reader", session)))
        assert ok.status == 200 and json.loads(ok.body)["result"]["content"][0]["text"] == "read"
        assert_insufficient_scope(await answer(endpoint.handle(call("write", "reader", session))),
                                  "files:read files:write")
        # The same session with a token that has the scope (step-up): served.
        stepped = await answer(endpoint.handle(call("write", "writer", session)))
        assert stepped.status == 404  # another subject: not its session
        endpoint.close()

    run(main())


def test_a_missing_scope_is_a_403_in_stateless_mode_and_on_the_2026_leg() -> None:
    async def main() -> None:
        endpoint = scoped_server().http_endpoint(auth=auth(), stateless=True)
        assert_insufficient_scope(await answer(endpoint.handle(call("read", "nobody"))), "files:read")
        assert (await answer(endpoint.handle(call("write", "writer")))).status == 200
        req = with_token(post_2026("tools/call", {"name": "write", "arguments": {}}, name="write"), "reader")
        assert_insufficient_scope(await answer(endpoint.handle(req)), "files:read files:write")
        req = with_token(post_2026("tools/call", {"name": "write", "arguments": {}}, name="write"), "writer")
        assert (await answer(endpoint.handle(req))).status == 200
        endpoint.close()

    run(main())


def test_without_auth_the_challenge_names_the_scope_alone() -> None:
    async def main() -> None:
        endpoint = scoped_server().http_endpoint(stateless=True)
        response = await answer(endpoint.handle(call("read", None)))
        assert response.status == 403
        assert response.header("www-authenticate") == 'Bearer error="insufficient_scope", scope="files:read"'
        assert (await answer(endpoint.handle(call("open_tool", None)))).status == 200

    run(main())


def test_lists_leave_out_what_the_token_may_not_use() -> None:
    async def main() -> None:
        endpoint = scoped_server().http_endpoint(auth=auth(), stateless=True)

        async def names(token: str) -> list[str]:
            response = await answer(endpoint.handle(with_token(post(request(2, "tools/list", {})), token)))
            return [tool["name"] for tool in json.loads(response.body)["result"]["tools"]]

        assert await names("nobody") == ["open_tool"]
        assert await names("reader") == ["read", "open_tool"]
        assert await names("writer") == ["read", "write", "open_tool"]
        assert await names("nobody") == ["open_tool"]  # the catalogue's cached list is intact

    run(main())


def rate_limited_server() -> Server:
    now = [0.0]
    app = Server("limited", middleware=[RateLimit(rate=0.25, burst=1, clock=lambda: now[0])])

    @app.tool()
    def ping_tool() -> str:
        return "pong"

    return app


def assert_rate_limited(response: HTTPResponse, seconds: str) -> None:
    assert response.status == 429, response.body
    assert response.header("retry-after") == seconds
    error = error_of(response)
    assert error["code"] == RATE_LIMITED and error["data"]["retryAfter"] == 4.0


@pytest.mark.parametrize("leg", ["session", "stateless", "2026"])
def test_a_rate_limited_post_is_a_429_with_retry_after(leg: str) -> None:
    async def main() -> None:
        app = rate_limited_server()
        endpoint = app.http_endpoint(stateless=leg == "stateless")
        session = None
        if leg == "session":
            session = await session_of(endpoint, "ignored")

        def one() -> HTTPRequest:
            if leg == "2026":
                return post_2026("tools/call", {"name": "ping_tool", "arguments": {}}, name="ping_tool")
            return call("ping_tool", None, session)

        assert (await answer(endpoint.handle(one()))).status == 200
        assert_rate_limited(await answer(endpoint.handle(one())), "4")
        endpoint.close()

    run(main())


def test_inside_a_batch_the_refusal_stays_a_jsonrpc_error() -> None:
    async def main() -> None:
        endpoint = rate_limited_server().http_endpoint(stateless=True)
        batch = [request(1, "tools/call", {"name": "ping_tool", "arguments": {}}),
                 request(2, "tools/call", {"name": "ping_tool", "arguments": {}})]
        response = await answer(endpoint.handle(post(batch, version="2025-03-26")))
        assert response.status == 200 and response.header("retry-after") is None
        answers = {item["id"]: item for item in json.loads(response.body)}
        assert "result" in answers[1] and answers[2]["error"]["code"] == RATE_LIMITED

    run(main())
