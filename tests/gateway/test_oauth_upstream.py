"""An upstream's own OAuth client from the config file (``auth``: the client credentials
grant): against a real authorization server (oidc-provider on loopback) protecting an
mcpfast upstream, the gateway gets its own token and calls; the downstream's edge token
never goes upstream; a bad ``auth`` is an error naming the upstream and the key."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

import mcpfast
from loop import eventually
from mcpfast import Context, Server
from mcpfast.auth.jwt import JWTVerifier
from mcpfast.gateway import gateway_of, serve_gateway_http
from mcpfast.gateway.config import ClientCredentialsConfig, ConfigError, parse_config
from mcpfast.gateway.from_config import build_gateway
from mcpfast.jsonrpc.errors import JSONRPCError
from mcpfast.transports.http import BearerAuth
from oidc_provider import OIDCProvider
from redis_server import free_port

SECRET = "gateway-secret-gateway-secret-gateway"
CLIENTS = [
    {"client_id": "gateway-robot", "client_secret": SECRET, "grant_types": ["client_credentials"],
     "redirect_uris": [], "response_types": [], "scope": "mcp:tools",
     "token_endpoint_auth_method": "client_secret_basic"},
    {"client_id": "gateway-poster", "client_secret": SECRET, "grant_types": ["client_credentials"],
     "redirect_uris": [], "response_types": [], "scope": "mcp:tools",
     "token_endpoint_auth_method": "client_secret_post"},
]


def private_jwk(key: Any, kid: str) -> dict[str, Any]:
    import jwt as jose

    jwk = json.loads(jose.algorithms.RSAAlgorithm.to_jwk(key))
    jwk.update(kid=kid, use="sig", alg="RS256")
    return jwk


@pytest.fixture(scope="module")
def provider(tmp_path_factory: pytest.TempPathFactory) -> Any:
    upstream_port = free_port()
    resource = f"http://127.0.0.1:{upstream_port}/mcp"
    resources = {"JWT_RESOURCE": resource, "OPAQUE_RESOURCE": "http://127.0.0.1:1/opaque",
                 "OTHER_RESOURCE": "http://127.0.0.1:1/elsewhere"}
    running = OIDCProvider(tmp_path_factory.mktemp("oidc-gateway"), free_port(), CLIENTS, resources)
    running.start([private_jwk(rsa.generate_private_key(public_exponent=65537, key_size=2048), "k1")])
    running.upstream_port, running.resource = upstream_port, resource  # type: ignore[attr-defined]
    yield running
    running.stop()


def protected_app() -> Server:
    app = Server("oauth-protected")

    @app.tool()
    def whoami(ctx: Context) -> str:
        """Who the verified token says is calling, and its scopes."""
        return f"{ctx.auth.subject} {' '.join(sorted(ctx.auth.scopes))}"

    return app


def test_the_gateway_calls_an_oauth_upstream_with_its_own_token(provider, monkeypatch):
    monkeypatch.setenv("GATEWAY_TEST_SECRET", SECRET)
    resource = provider.resource
    config = parse_config({"auth": {"bearerTokens": ["edge-secret"]}, "mcpServers": {
        # The token endpoint named.
        "crm": {"url": resource, "auth": {"type": "client_credentials", "clientId": "gateway-robot",
                                          "clientSecret": "${GATEWAY_TEST_SECRET}", "scopes": ["mcp:tools"],
                                          "tokenUrl": provider.token_url}},
        # Nothing named: the endpoint found from the upstream's 401 (its resource metadata).
        "found": {"url": resource, "auth": {"type": "client_credentials", "clientId": "gateway-poster",
                                            "clientSecret": "${GATEWAY_TEST_SECRET}",
                                            "authMethod": "client_secret_post", "scopes": ["mcp:tools"]}},
    }})

    async def main() -> None:
        verifier = JWTVerifier(jwks_url=provider.jwks_url, issuer=provider.issuer, audience=resource)
        edge = BearerAuth(verifier, resource=resource, authorization_servers=[provider.issuer])
        loop = asyncio.get_running_loop()
        upstream_bound: asyncio.Future = loop.create_future()
        upstream = asyncio.ensure_future(protected_app().serve_http(
            "127.0.0.1", provider.upstream_port, auth=edge, ready=lambda h, p: upstream_bound.set_result(p)))
        await asyncio.wait_for(upstream_bound, 30)
        app = build_gateway(config)
        bound: asyncio.Future = loop.create_future()
        served = asyncio.ensure_future(serve_gateway_http(
            app, "127.0.0.1", 0, ready=lambda h, p: bound.set_result(p), bearer_tokens=config.bearer_tokens))
        gateway_url = f"http://127.0.0.1:{await asyncio.wait_for(bound, 30)}/mcp"
        try:
            async with mcpfast.connect(gateway_url, auth="edge-secret") as client:
                await eventually(lambda: all(up.state == "ready" for up in gateway_of(app).upstreams.values()))
                # The upstream verified the gateway's own tokens: its clients, not the edge token.
                assert (await client.call_tool("crm_whoami", {}))["content"][0]["text"] == "gateway-robot mcp:tools"
                assert (await client.call_tool("found_whoami", {}))["content"][0]["text"] == \
                    "gateway-poster mcp:tools"
            mounted = gateway_of(app).upstreams
            robot, poster = mounted["crm"].connect_options["auth"], mounted["found"].connect_options["auth"]
            assert robot.fetched == 1 and poster.token_url == provider.token_url
            # The edge token alone is refused upstream: it could never have been passed on.
            with pytest.raises(JSONRPCError, match="HTTP 401"):
                await mcpfast.connect(resource, auth="edge-secret")
        finally:
            for task in (served, upstream):
                task.cancel()
            await asyncio.gather(served, upstream, return_exceptions=True)

    asyncio.run(asyncio.wait_for(main(), 60))


def _auth_error(auth: Any, url: str = "https://crm.example.com/mcp") -> str:
    with pytest.raises(ConfigError) as caught:
        parse_config({"mcpServers": {"crm": {"url": url, "auth": auth}}})
    return str(caught.value)


def test_a_bad_auth_names_the_upstream_and_the_key(monkeypatch):
    monkeypatch.delenv("GATEWAY_UNSET_SECRET", raising=False)
    good = {"type": "client_credentials", "clientId": "robot", "clientSecret": "s"}
    assert "mcpServers.crm.auth.type must be \"client_credentials\"" in _auth_error({**good, "type": "password"})
    assert "mcpServers.crm.auth.clientSecret is required" in _auth_error({k: v for k, v in good.items()
                                                                          if k != "clientSecret"})
    assert "mcpServers.crm.auth.clientId must be a non-empty string" in _auth_error({**good, "clientId": 7})
    assert "mcpServers.crm.auth has unknown keys: client_secret" in _auth_error({**good, "client_secret": "s"})
    assert "mcpServers.crm.auth.scopes must be a list of strings" in _auth_error({**good, "scopes": "mcp:tools"})
    assert "mcpServers.crm.auth.authMethod must be one of" in _auth_error({**good, "authMethod": "private_key_jwt"})
    assert "mcpServers.crm.auth.tokenUrl must be an http(s) URL" in _auth_error({**good, "tokenUrl": "token"})
    assert "mcpServers.crm.auth must be an object" in _auth_error("Bearer x")
    unset = _auth_error({**good, "clientSecret": "${GATEWAY_UNSET_SECRET}"})
    assert unset == ("mcpServers.crm.auth.clientSecret names the environment variable GATEWAY_UNSET_SECRET, "
                     "which is not set")
    assert "mcpServers.crm.auth applies to an http(s):// server" in _auth_error(good, "ws://crm.example.com/mcp")
    with pytest.raises(ConfigError, match=r"mcpServers\.local\.auth applies to a url server"):
        parse_config({"mcpServers": {"local": {"command": "server", "auth": good}}})


def test_auth_and_headers_read_the_environment_and_compare_by_value(monkeypatch):
    monkeypatch.setenv("GATEWAY_TEST_SECRET", "from-env")
    monkeypatch.setenv("GATEWAY_TEST_TOKEN", "tok")
    value = {"mcpServers": {"crm": {
        "url": "https://crm.example.com/mcp", "headers": {"X-Api-Key": "key-${GATEWAY_TEST_TOKEN}"},
        "auth": {"type": "client_credentials", "clientId": "robot", "clientSecret": "${GATEWAY_TEST_SECRET}",
                 "issuer": "https://login.example.com"}}}}
    first, second = parse_config(value), parse_config(value)
    mount = first.upstreams[0].mount
    assert mount["headers"] == {"X-Api-Key": "key-tok"}
    auth = mount["auth"]
    assert auth == ClientCredentialsConfig(client_id="robot", client_secret="from-env",
                                           resource="https://crm.example.com/mcp",
                                           issuer="https://login.example.com")
    assert "from-env" not in repr(auth)
    # A reload compares mounts by value: the same auth keeps the upstream's session.
    assert first.upstreams == second.upstreams
    client = auth.client()
    assert (client.client_id, client.issuer, client.resource, client.auth_method) == (
        "robot", "https://login.example.com", "https://crm.example.com/mcp", "client_secret_basic")
    assert client is not auth.client()  # one OAuth client per mount
