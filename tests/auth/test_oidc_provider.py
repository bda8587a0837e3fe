"""Against a real authorization server (oidc-provider on loopback): mcpfast's client gets
tokens with the client credentials grant (client_secret_basic, client_secret_post,
private_key_jwt) and calls mcpfast servers that verify them through the provider's JWKS
(JWTVerifier) and through its introspection endpoint (IntrospectionVerifier); every bad
token is refused with 401 and its own WWW-Authenticate text; a key rotation at the provider
is picked up without restarting the MCP server; the official Python SDK's client, given a
token from the same provider, calls mcpfast's server."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, AsyncIterator, Optional

import jwt as jose
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

import mcpfast
from mcpfast import Context, Server
from mcpfast.auth.errors import InvalidToken
from mcpfast.auth.fetch import FetchError
from mcpfast.auth.introspection import IntrospectionVerifier
from mcpfast.auth.jwt import JWTVerifier
from mcpfast.jsonrpc import JSONRPCError
from mcpfast.transports.http import BearerAuth, ClientCredentials
from oidc_provider import OIDCProvider
from redis_server import free_port

SECRET = "robot-secret-robot-secret-robot-secret"
SERVER_SECRET = "server-secret-server-secret-server"
SIGNER_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)


def private_jwk(key: Any, kid: str) -> dict[str, Any]:
    jwk = json.loads(jose.algorithms.RSAAlgorithm.to_jwk(key))
    jwk.update(kid=kid, use="sig", alg="RS256")
    return jwk


def public_jwk(key: Any, kid: str) -> dict[str, Any]:
    return json.loads(jose.algorithms.RSAAlgorithm.to_jwk(key.public_key())) | {"kid": kid, "use": "sig"}


KEY_1 = rsa.generate_private_key(public_exponent=65537, key_size=2048)
KEY_2 = rsa.generate_private_key(public_exponent=65537, key_size=2048)

CLIENTS = [
    {"client_id": "robot", "client_secret": SECRET, "grant_types": ["client_credentials"],
     "redirect_uris": [], "response_types": [], "scope": "mcp:tools files:read",
     "token_endpoint_auth_method": "client_secret_basic"},
    {"client_id": "poster", "client_secret": SECRET, "grant_types": ["client_credentials"],
     "redirect_uris": [], "response_types": [], "scope": "mcp:tools",
     "token_endpoint_auth_method": "client_secret_post"},
    {"client_id": "signer", "grant_types": ["client_credentials"], "redirect_uris": [],
     "response_types": [], "scope": "mcp:tools files:write", "token_endpoint_auth_method": "private_key_jwt",
     "token_endpoint_auth_signing_alg": "RS256", "jwks": {"keys": [public_jwk(SIGNER_KEY, "signer-1")]}},
    {"client_id": "brief", "client_secret": SECRET, "grant_types": ["client_credentials"],
     "redirect_uris": [], "response_types": [], "scope": "mcp:tools",
     "token_endpoint_auth_method": "client_secret_basic"},
    {"client_id": "mcp-server", "client_secret": SERVER_SECRET, "grant_types": [], "redirect_uris": [],
     "response_types": [], "token_endpoint_auth_method": "client_secret_basic"},
]


class World:
    """The provider, the resources its tokens are for, and the MCP servers' ports."""

    def __init__(self, folder: Any) -> None:
        self.jwt_port, self.opaque_port = free_port(), free_port()
        self.jwt_resource = f"http://127.0.0.1:{self.jwt_port}/mcp"
        self.opaque_resource = f"http://127.0.0.1:{self.opaque_port}/mcp"
        self.other_resource = "http://127.0.0.1:1/elsewhere"
        self.resources = {"JWT_RESOURCE": self.jwt_resource, "OPAQUE_RESOURCE": self.opaque_resource,
                          "OTHER_RESOURCE": self.other_resource}
        self.provider = OIDCProvider(folder, free_port(), CLIENTS, self.resources, ttl_by_client={"brief": 3})


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Any:
    world = World(tmp_path_factory.mktemp("oidc"))
    world.provider.start([private_jwk(KEY_1, "k1")])
    yield world
    world.provider.stop()


def token_from(provider: OIDCProvider, resource: str, client: str = "robot", scope: str = "mcp:tools") -> str:
    form = urllib.parse.urlencode({"grant_type": "client_credentials", "scope": scope, "resource": resource})
    basic = base64.b64encode(f"{client}:{SECRET}".encode()).decode()
    request = urllib.request.Request(provider.token_url, data=form.encode(),
                                     headers={"authorization": f"Basic {basic}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())["access_token"]


def make_app() -> Server:
    app = Server("oidc-protected")

    @app.tool()
    def whoami(ctx: Context) -> str:
        token = ctx.auth
        return f"{token.subject} {' '.join(sorted(token.scopes))}"

    @app.tool(scopes=["files:write"])
    def write(ctx: Context) -> str:
        return "written"

    return app


@contextlib.asynccontextmanager
async def serving(app: Server, port: int, auth: BearerAuth) -> AsyncIterator[str]:
    loop = asyncio.get_running_loop()
    ready: asyncio.Future = loop.create_future()
    task = asyncio.ensure_future(app.serve_http("127.0.0.1", port, auth=auth,
                                                ready=lambda host, bound: ready.set_result(bound)))
    await asyncio.wait_for(ready, 30)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def jwt_auth(world: World, **options: Any) -> tuple[JWTVerifier, BearerAuth]:
    verifier = JWTVerifier(jwks_url=world.provider.jwks_url, issuer=world.provider.issuer,
                           audience=world.jwt_resource, **options)
    return verifier, BearerAuth(verifier, resource=world.jwt_resource,
                                authorization_servers=[world.provider.issuer])


async def post_with(url: str, token: str) -> tuple[int, Optional[str]]:
    """A stateless-looking initialize POST with ``token``: the status and WWW-Authenticate."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    request = urllib.request.Request(url, data=body.encode(), headers={
        "authorization": f"Bearer {token}", "content-type": "application/json",
        "accept": "application/json, text/event-stream"})

    def send() -> tuple[int, Optional[str]]:
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.headers.get("www-authenticate")
        except urllib.error.HTTPError as exc:
            return exc.code, exc.headers.get("www-authenticate")

    return await asyncio.to_thread(send)


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def parts_of(token: str) -> tuple[dict[str, Any], dict[str, Any], str]:
    header, payload, signature = token.split(".")
    decode = lambda part: json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))  # noqa: E731
    return decode(header), decode(payload), signature


def rebuilt(header: dict[str, Any], claims: dict[str, Any], signature: str) -> str:
    return ".".join((b64(json.dumps(header).encode()), b64(json.dumps(claims).encode()), signature))


def test_client_credentials_tokens_verified_through_the_jwks(world: World) -> None:
    async def main() -> None:
        verifier, auth = jwt_auth(world)
        async with serving(make_app(), world.jwt_port, auth) as url:
            # client_secret_basic, the token endpoint found from the server's 401.
            basic = ClientCredentials(client_id="robot", client_secret=SECRET, scopes=["mcp:tools", "files:read"])
            async with mcpfast.connect(url, auth=basic) as client:
                result = await client.call_tool("whoami", {})
                assert result["content"][0]["text"] == "robot files:read mcp:tools"
                # files:write is not granted to robot: refused, and hidden from its list.
                assert [tool["name"] for tool in await client.list_tools()] == ["whoami"]
                with pytest.raises(JSONRPCError, match="403|scope"):
                    await client.call_tool("write", {})
            assert basic.token_url == world.provider.token_url
            # client_secret_post, the token endpoint from the issuer's metadata.
            post = ClientCredentials(client_id="poster", client_secret=SECRET, auth_method="client_secret_post",
                                     issuer=world.provider.issuer, resource=world.jwt_resource,
                                     scopes=["mcp:tools"])
            async with mcpfast.connect(url, auth=post) as client:
                assert (await client.call_tool("whoami", {}))["content"][0]["text"] == "poster mcp:tools"
            assert post.fetched == 1
            # private_key_jwt: no shared secret; files:write granted, so the scoped tool works.
            signed = ClientCredentials(client_id="signer", private_key=SIGNER_KEY, key_id="signer-1",
                                       token_url=world.provider.token_url, resource=world.jwt_resource,
                                       scopes=["mcp:tools", "files:write"])
            async with mcpfast.connect(url, auth=signed) as client:
                assert (await client.call_tool("write", {}))["content"][0]["text"] == "written"
            assert verifier.jwks.fetches == 1  # one key set fetch served every token

    asyncio.run(main())


def test_each_bad_token_is_refused_with_its_own_challenge(world: World, tmp_path: Any) -> None:
    good = token_from(world.provider, world.jwt_resource)
    header, claims, signature = parts_of(good)
    other_audience = token_from(world.provider, world.other_resource)
    # The same key, another issuer: a second provider instance.
    elsewhere = OIDCProvider(tmp_path, free_port(), CLIENTS, world.resources)
    elsewhere.start([private_jwk(KEY_1, "k1")])
    try:
        wrong_issuer = token_from(elsewhere, world.jwt_resource)
    finally:
        elsewhere.stop()
    brief = token_from(world.provider, world.jwt_resource, client="brief")
    forged = jose.encode(claims, KEY_2, algorithm="RS256", headers={"kid": "k1", "typ": "at+jwt"})

    async def main() -> None:
        _, auth = jwt_auth(world, leeway=0)
        async with serving(make_app(), world.jwt_port, auth) as url:
            assert (await post_with(url, good))[0] == 200
            expires = parts_of(brief)[1]["exp"]
            assert (await post_with(url, brief))[0] == 200
            cases = {
                "wrong audience": (other_audience, "the access token is not meant for this resource (aud)"),
                "wrong issuer": (wrong_issuer,
                                 "the access token comes from an issuer this server does not trust (iss)"),
                "tampered": (rebuilt(header, {**claims, "scope": "mcp:tools files:write"}, signature),
                             "the access token's signature does not verify"),
                "alg none": (rebuilt({**header, "alg": "none"}, claims, ""),
                             "the access token's signing algorithm (none) is not accepted"),
                "wrong key": (forged, "the access token's signature does not verify"),
                "unknown key": (rebuilt({**header, "kid": "k9"}, claims, signature),
                                "the access token is signed with a key this server does not know (kid 'k9')"),
            }
            for name, (token, description) in cases.items():
                status, challenge = await post_with(url, token)
                assert status == 401, name
                assert f'error="invalid_token", error_description="{description}"' in challenge, (name, challenge)
                assert f'resource_metadata="http://127.0.0.1:{world.jwt_port}/.well-known/' in challenge
            # Expired: the brief client's token, once its exp has passed (a 3 s life).
            while time.time() < expires + 1:
                await asyncio.sleep(0.1)
            status, challenge = await post_with(url, brief)
            assert status == 401 and 'error_description="the access token has expired"' in challenge

    asyncio.run(main())


def test_a_key_rotation_is_picked_up_without_a_restart(world: World) -> None:
    async def main() -> None:
        verifier, auth = jwt_auth(world, jwks_min_interval=0, cache_ttl=0)
        async with serving(make_app(), world.jwt_port, auth) as url:
            before = token_from(world.provider, world.jwt_resource)
            assert (await post_with(url, before))[0] == 200
            assert parts_of(before)[0]["kid"] == "k1"
            # The provider now signs with k2 (k1 still published for tokens already out).
            world.provider.restart([private_jwk(KEY_2, "k2"), private_jwk(KEY_1, "k1")])
            try:
                after = token_from(world.provider, world.jwt_resource)
                assert parts_of(after)[0]["kid"] == "k2"
                assert (await post_with(url, after))[0] == 200
                assert (await post_with(url, before))[0] == 200
                assert verifier.jwks.fetches == 2
            finally:
                world.provider.restart([private_jwk(KEY_1, "k1")])

    asyncio.run(main())


def test_opaque_tokens_verified_through_introspection(world: World) -> None:
    async def main() -> None:
        verifier = IntrospectionVerifier(url=world.provider.introspection_url, client_id="mcp-server",
                                         client_secret=SERVER_SECRET, audience=world.opaque_resource,
                                         issuer=world.provider.issuer)
        auth = BearerAuth(verifier, resource=world.opaque_resource, authorization_servers=[world.provider.issuer])
        async with serving(make_app(), world.opaque_port, auth) as url:
            robot = ClientCredentials(client_id="robot", client_secret=SECRET, scopes=["mcp:tools"])
            async with mcpfast.connect(url, auth=robot) as client:
                assert (await client.call_tool("whoami", {}))["content"][0]["text"] == "robot mcp:tools"
                assert (await client.call_tool("whoami", {}))["content"][0]["text"] == "robot mcp:tools"
            assert robot.access_token is not None and "." not in robot.access_token  # opaque
            assert verifier.exchanges == 1  # the answer was kept
            status, challenge = await post_with(url, "not-a-token-the-provider-issued")
            assert status == 401
            assert 'error_description="the access token is not active (expired, revoked or unknown)"' in challenge
            # A token for another resource is active, but not for this one.
            jwt_token = token_from(world.provider, world.jwt_resource)
            status, challenge = await post_with(url, jwt_token)
            assert status == 401 and "unsupported_token_type" in challenge
        # An active token meant for another resource: refused by its aud.
        strict = IntrospectionVerifier(url=world.provider.introspection_url, client_id="mcp-server",
                                       client_secret=SERVER_SECRET, auth_method="client_secret_basic",
                                       audience=world.jwt_resource)
        with pytest.raises(InvalidToken, match=r"not meant for this resource \(aud\)"):
            await strict(token_from(world.provider, world.opaque_resource))
        # Wrong credentials of the resource server: the server's problem, not the token's.
        wrong = IntrospectionVerifier(url=world.provider.introspection_url, client_id="mcp-server",
                                      client_secret="not-the-secret", auth_method="client_secret_post")
        with pytest.raises(FetchError, match="HTTP 40"):
            await wrong(token_from(world.provider, world.opaque_resource))

    asyncio.run(main())


def test_the_official_sdk_client_with_a_provider_token(world: World) -> None:
    httpx2 = pytest.importorskip("httpx2")
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    token = token_from(world.provider, world.jwt_resource)

    async def main() -> None:
        _, auth = jwt_auth(world)
        async with serving(make_app(), world.jwt_port, auth) as url:
            async with httpx2.AsyncClient(headers={"authorization": f"Bearer {token}"}) as http, \
                    streamable_http_client(url, http_client=http) as (read, write), \
                    ClientSession(read, write) as session:
                await session.initialize()
                result = await session.call_tool("whoami", {})
                assert result.content[0].text == "robot mcp:tools"

    asyncio.run(main())


def test_the_client_renews_its_token_before_it_expires(world: World) -> None:
    async def main() -> None:
        _, auth = jwt_auth(world, leeway=0)
        async with serving(make_app(), world.jwt_port, auth) as url:
            # The brief client's tokens live 3 s; renewed 2 s before that.
            brief = ClientCredentials(client_id="brief", client_secret=SECRET, token_url=world.provider.token_url,
                                      resource=world.jwt_resource, scopes=["mcp:tools"], refresh_margin=2)
            async with mcpfast.connect(url, auth=brief) as client:
                assert (await client.call_tool("whoami", {}))["content"][0]["text"] == "brief mcp:tools"
                first, renew_at = brief.access_token, brief.expires_at - brief.refresh_margin
                assert brief.fetched == 1
                while time.time() < renew_at:
                    await asyncio.sleep(0.05)
                assert (await client.call_tool("whoami", {}))["content"][0]["text"] == "brief mcp:tools"
                assert brief.fetched == 2 and brief.access_token != first

    asyncio.run(main())
