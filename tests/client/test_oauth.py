"""OAuthFlow's parts that need no authorization server (the whole flow runs against the
conformance suite's servers: tests/interop/test_conformance_http.py, --suite core)."""

from __future__ import annotations

import asyncio
import base64
import hashlib

import pytest

from mcpfast.transports.http.client_auth import Unauthorized
from mcpfast.transports.http.oauth import (
    OAuthError,
    OAuthFlow,
    authorization_server_metadata_urls,
    parse_challenge,
    pkce_pair,
    resource_metadata_urls,
)


def test_bearer_challenges_are_parsed():
    header = ('Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", '
              'scope="files:read files:write", error="insufficient_scope", error_description="need \\"write\\""')
    assert parse_challenge(header) == {
        "resource_metadata": "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
        "scope": "files:read files:write", "error": "insufficient_scope", "error_description": 'need "write"'}
    assert parse_challenge("Bearer realm=mcp, error=invalid_token") == {"realm": "mcp", "error": "invalid_token"}
    assert parse_challenge('Basic realm="x"') == {} and parse_challenge(None) == {} and parse_challenge("Bearer") == {}


def test_discovery_urls_follow_the_specification_order():
    assert resource_metadata_urls("https://a.example/mcp", None) == [
        "https://a.example/.well-known/oauth-protected-resource/mcp",
        "https://a.example/.well-known/oauth-protected-resource"]
    assert resource_metadata_urls("https://a.example/", "https://a.example/prm")[0] == "https://a.example/prm"
    assert authorization_server_metadata_urls("https://auth.example/tenant1") == [
        "https://auth.example/.well-known/oauth-authorization-server/tenant1",
        "https://auth.example/.well-known/openid-configuration/tenant1",
        "https://auth.example/tenant1/.well-known/openid-configuration"]
    assert authorization_server_metadata_urls("https://auth.example") == [
        "https://auth.example/.well-known/oauth-authorization-server",
        "https://auth.example/.well-known/openid-configuration"]


def test_pkce_uses_s256():
    verifier, challenge = pkce_pair()
    assert 43 <= len(verifier) <= 128
    expected = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    assert challenge == expected and pkce_pair()[0] != verifier


def test_a_403_other_than_insufficient_scope_is_final_and_nothing_is_sent_before_a_token():
    async def never(url: str) -> str:
        raise AssertionError("no authorization expected")

    async def main() -> None:
        flow = OAuthFlow(redirect_uri="http://localhost/cb", authorize=never)
        assert await flow.authorization() is None
        refused = Unauthorized(403, 'Bearer error="invalid_token"', "http://127.0.0.1:9/mcp")
        assert await flow.unauthorized(refused) is False

    asyncio.run(main())


def test_an_unreachable_authorization_server_is_an_oauth_error():
    async def never(url: str) -> str:
        raise AssertionError("no authorization expected")

    async def main() -> None:
        import socket

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        flow = OAuthFlow(redirect_uri="http://localhost/cb", authorize=never)
        with pytest.raises(OAuthError):
            await flow.unauthorized(Unauthorized(401, None, f"http://127.0.0.1:{port}/mcp"))

    asyncio.run(main())
    with pytest.raises(TypeError):
        OAuthFlow(redirect_uri="http://localhost/cb", authorize="not callable")  # type: ignore[arg-type]
