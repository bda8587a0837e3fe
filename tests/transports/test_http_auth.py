"""Bearer-token authentication on the Streamable HTTP endpoint: challenges, metadata,
session binding, ctx.auth -- without sockets, then through the HTTP server and client."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any, Optional

import pytest

from mcpfast import AccessToken, Context, Server, connect
from mcpfast.jsonrpc import JSONRPCError
from mcpfast.jsonrpc.errors import TRANSPORT_ERROR
from mcpfast.transports.http import BearerAuth, HTTPRequest, HTTPResponse, InvalidToken

from .test_http_endpoint import INIT, answer, post, request

RESOURCE = "https://mcp.example.com/mcp"
ISSUER = "https://auth.example.com"

TOKENS = {
    "alice-1": AccessToken("alice", {"mcp:tools"}, client_id="app", claims={"tenant": "a"}),
    "alice-2": AccessToken("alice", {"mcp:tools"}),
    "bob": AccessToken("bob", {"mcp:tools"}),
    "reader": AccessToken("carol", {"mcp:read"}),
    "old": AccessToken("dave", {"mcp:tools"}, expires_at=time.time() - 10),
}


def verify(token: str) -> Optional[AccessToken]:
    if token == "revoked":
        raise InvalidToken("the token was revoked")
    if token == "crash":
        raise RuntimeError("introspection endpoint down")
    if token == "wrong-type":
        return "alice"  # type: ignore[return-value]
    return TOKENS.get(token)


async def verify_async(token: str) -> Optional[AccessToken]:
    await asyncio.sleep(0)
    return verify(token)


def make_server() -> Server:
    app = Server("auth-test")

    @app.tool()
    def whoami(ctx: Context) -> str:
        token = ctx.auth
        return "anonymous" if token is None else f"{token.subject}:{token.token}"

    @app.tool()
    async def whoami_later(ctx: Context) -> str:
        await asyncio.sleep(0)
        token = ctx.auth
        return "anonymous" if token is None else token.subject

    return app


def make_auth(verifier: Any = verify, **options: Any) -> BearerAuth:
    options.setdefault("required_scopes", ["mcp:tools"])
    return BearerAuth(verifier, resource=RESOURCE, authorization_servers=[ISSUER], **options)


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def challenge_of(response: HTTPResponse) -> dict[str, str]:
    value = response.header("www-authenticate")
    assert value is not None and value.startswith("Bearer ")
    parameters = {}
    for part in value[len("Bearer "):].split('", '):
        name, _, quoted = part.partition("=")
        parameters[name.strip()] = quoted.strip('"')
    return parameters


def run(coroutine):
    return asyncio.run(coroutine)


def init_request(token: Optional[str]) -> HTTPRequest:
    req = post(request(0, "initialize", INIT), version=None)
    if token is not None:
        req.headers.update(bearer(token))
    return req


def call(session: Optional[str], name: str, token: Optional[str], id: int = 1) -> HTTPRequest:
    req = post(request(id, "tools/call", {"name": name, "arguments": {}}), session)
    if token is not None:
        req.headers.update(bearer(token))
    return req


def text_of(response: HTTPResponse) -> str:
    assert response.status == 200, response.body
    return json.loads(response.body)["result"]["content"][0]["text"]


# -- the endpoint, no sockets -----------------------------------------------------------

@pytest.mark.parametrize("header, status, error", [
    (None, 401, None),
    ("Basic YWxpY2U6c2VjcmV0", 401, None),
    ("Bearer", 400, "invalid_request"),
    ("Bearer two words", 400, "invalid_request"),
    ("Bearer unknown", 401, "invalid_token"),
    ("Bearer revoked", 401, "invalid_token"),
    ("Bearer old", 401, "invalid_token"),
    ("Bearer reader", 403, "insufficient_scope"),
    ("bearer alice-1", 200, None),
])
@pytest.mark.parametrize("verifier", [verify, verify_async], ids=["sync", "async"])
def test_each_credential_gets_its_answer(header, status, error, verifier):
    async def main():
        endpoint = make_server().http_endpoint(auth=make_auth(verifier))
        req = init_request(None)
        if header is not None:
            req.headers["authorization"] = header
        response = await answer(endpoint.handle(req))
        assert response.status == status
        if status == 200:
            assert response.header("mcp-session-id") in endpoint.sessions
        else:
            assert endpoint.sessions == {}
            parameters = challenge_of(response)
            assert parameters["resource_metadata"] == \
                "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
            assert parameters["scope"] == "mcp:tools"
            assert parameters.get("error") == error
            body = json.loads(response.body)
            assert body["error"] == (error or "unauthorized") and body["error_description"]
            if header == "Bearer revoked":
                assert parameters["error_description"] == "the token was revoked"
        endpoint.close()

    run(main())


@pytest.mark.parametrize("token", ["crash", "wrong-type"])
def test_a_failing_verifier_is_a_500_not_a_401(token, caplog):
    async def main():
        endpoint = make_server().http_endpoint(auth=make_auth())
        response = await answer(endpoint.handle(init_request(token)))
        assert response.status == 500 and response.header("www-authenticate") is None
        assert json.loads(response.body)["error"] == "server_error"
        assert endpoint.sessions == {}

    run(main())
    assert "verifier" in caplog.text


def test_protected_resource_metadata_at_both_well_known_paths():
    async def main():
        auth = make_auth(scopes_supported=["mcp:tools", "mcp:read"], resource_name="Demo")
        endpoint = make_server().http_endpoint(auth=auth)
        for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
            response = await answer(endpoint.handle(HTTPRequest("GET", path, {"host": "127.0.0.1:8000"})))
            assert response.status == 200 and response.header("content-type") == "application/json"
            assert response.header("access-control-allow-origin") == "*"
            assert json.loads(response.body) == {
                "resource": RESOURCE, "authorization_servers": [ISSUER],
                "bearer_methods_supported": ["header"], "scopes_supported": ["mcp:tools", "mcp:read"],
                "resource_name": "Demo"}
        preflight = await answer(endpoint.handle(HTTPRequest(
            "OPTIONS", "/.well-known/oauth-protected-resource", {"host": "127.0.0.1:8000"})))
        assert preflight.status == 204
        post_it = await answer(endpoint.handle(HTTPRequest(
            "POST", "/.well-known/oauth-protected-resource", {"host": "127.0.0.1:8000"})))
        assert post_it.status == 405 and post_it.header("allow") == "GET, OPTIONS"
        # The Host check applies to the metadata too; other paths stay 404.
        rebound = await answer(endpoint.handle(HTTPRequest(
            "GET", "/.well-known/oauth-protected-resource", {"host": "evil.example"})))
        assert rebound.status == 421
        other = await answer(endpoint.handle(HTTPRequest(
            "GET", "/.well-known/oauth-protected-resource/other", {"host": "127.0.0.1:8000"})))
        assert other.status == 404
        # Without auth there is no metadata.
        plain = make_server().http_endpoint()
        none = await answer(plain.handle(HTTPRequest(
            "GET", "/.well-known/oauth-protected-resource", {"host": "127.0.0.1:8000"})))
        assert none.status == 404

    run(main())


def test_a_session_belongs_to_its_subject_and_ctx_auth_is_the_newest_token():
    async def main():
        endpoint = make_server().http_endpoint(auth=make_auth())
        created = await answer(endpoint.handle(init_request("alice-1")))
        session = created.header("mcp-session-id")
        initialized = post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
        initialized.headers.update(bearer("alice-1"))
        assert (await answer(endpoint.handle(initialized))).status == 202
        assert text_of(await answer(endpoint.handle(call(session, "whoami", "alice-1")))) == "alice:alice-1"
        # A refreshed token for the same subject keeps the session, and handlers see it.
        assert text_of(await answer(endpoint.handle(call(session, "whoami", "alice-2")))) == "alice:alice-2"
        assert text_of(await answer(endpoint.handle(call(session, "whoami_later", "alice-2")))) == "alice"
        # Another subject, even with a valid token, does not find the session.
        stolen = await answer(endpoint.handle(call(session, "whoami", "bob")))
        assert stolen.status == 404
        get = HTTPRequest("GET", "/mcp", {"host": "127.0.0.1:8000", "accept": "text/event-stream",
                                          "mcp-session-id": session, **bearer("bob")})
        assert (await answer(endpoint.handle(get))).status == 404
        delete = HTTPRequest("DELETE", "/mcp", {"host": "127.0.0.1:8000", "mcp-session-id": session,
                                                **bearer("bob")})
        assert (await answer(endpoint.handle(delete))).status == 404
        assert session in endpoint.sessions
        # No token at all: 401 before the session is even looked at.
        assert (await answer(endpoint.handle(call(session, "whoami", None)))).status == 401
        delete.headers.update(bearer("alice-2"))
        assert (await answer(endpoint.handle(delete))).status == 200
        assert session not in endpoint.sessions
        endpoint.close()

    run(main())


def test_stateless_requests_carry_their_own_token():
    async def main():
        endpoint = make_server().http_endpoint(auth=make_auth(), stateless=True)
        assert text_of(await answer(endpoint.handle(call(None, "whoami", "bob")))) == "bob:bob"
        assert text_of(await answer(endpoint.handle(call(None, "whoami", "alice-1")))) == "alice:alice-1"
        assert (await answer(endpoint.handle(call(None, "whoami", "unknown")))).status == 401

    run(main())


def test_2026_requests_carry_their_own_token():
    # The 2026-07-28 leg's connections are reused: each request's handler sees the token
    # that came with it, never the one before.
    from .test_http_2026 import post_2026

    def call_2026(token: str) -> HTTPRequest:
        req = post_2026("tools/call", {"name": "whoami", "arguments": {}}, name="whoami")
        req.headers.update(bearer(token))
        return req

    async def main():
        endpoint = make_server().http_endpoint(auth=make_auth())
        for token, expected in (("bob", "bob:bob"), ("alice-1", "alice:alice-1"), ("bob", "bob:bob")):
            assert text_of(await answer(endpoint.handle(call_2026(token)))) == expected
        assert (await answer(endpoint.handle(call_2026("unknown")))).status == 401
        endpoint.close()

    run(main())


def test_without_auth_ctx_auth_is_none():
    async def main():
        endpoint = make_server().http_endpoint(stateless=True)
        assert text_of(await answer(endpoint.handle(call(None, "whoami", None)))) == "anonymous"

    run(main())


def test_bad_configuration_is_refused():
    with pytest.raises(ValueError, match="absolute"):
        BearerAuth(verify, resource="/mcp", authorization_servers=[ISSUER])
    with pytest.raises(ValueError, match="authorization_servers"):
        BearerAuth(verify, resource=RESOURCE, authorization_servers=ISSUER)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="callable"):
        BearerAuth("verify", resource=RESOURCE, authorization_servers=[ISSUER])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="BearerAuth"):
        make_server().http_endpoint(auth=verify)
    with pytest.raises(ValueError, match="subject"):
        AccessToken("")


def test_access_token_helpers():
    token = AccessToken("alice", ["a", "b"], expires_at=100.0)
    assert token.scopes == frozenset({"a", "b"}) and token.has_scopes("a") and not token.has_scopes("c")
    assert token.expired(now=100.0) and not token.expired(now=99.0)
    assert not AccessToken("bob").expired()
    assert "secret" not in repr(AccessToken("bob", token="secret"))


# -- through the HTTP server and the mcpfast client -------------------------------------

def test_the_client_with_a_token_reaches_tools_and_without_one_fails_clearly():
    async def main():
        app = make_server()
        ready: asyncio.Future = asyncio.get_running_loop().create_future()
        auth = BearerAuth(verify, resource="http://127.0.0.1/mcp", authorization_servers=[ISSUER],
                          required_scopes=["mcp:tools"])
        server = asyncio.create_task(app.serve_http("127.0.0.1", 0, auth=auth,
                                                    ready=lambda host, port: ready.set_result(port)))
        port = await ready
        url = f"http://127.0.0.1:{port}/mcp"
        try:
            async with connect(url, headers={"Authorization": "Bearer alice-1"}) as client:
                result = await client.call_tool("whoami", {})
                assert result["content"][0]["text"] == "alice:alice-1"
                result = await client.call_tool("whoami_later", {})
                assert result["content"][0]["text"] == "alice"
            with pytest.raises(JSONRPCError) as refused:
                async with connect(url) as client:
                    pass
            message = str(refused.value)
            assert refused.value.code == TRANSPORT_ERROR
            assert "401" in message and "resource_metadata=" in message
            with pytest.raises(JSONRPCError) as forbidden:
                async with connect(url, headers={"Authorization": "Bearer reader"}) as client:
                    pass
            assert "403" in str(forbidden.value) and "insufficient_scope" in str(forbidden.value)
        finally:
            server.cancel()
            await asyncio.gather(server, return_exceptions=True)

    run(main())
