"""Authorization on the other HTTP legs: the WebSocket upgrade (refused with the HTTP
status and challenge; a verdict needing I/O answered 503 + Retry-After until it is kept)
and the 2024-11-05 HTTP+SSE endpoint (its stream and its POSTs)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import Any, AsyncIterator

import jwt as jose
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

import mcpfast
from jwks_server import JWKSServer
from mcpfast import Context, Server
from mcpfast.auth.jwt import JWTVerifier
from mcpfast.transports.http import BearerAuth

ISSUER = "https://auth.example.com"
KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)


def token(audience: str, sub: str = "alice") -> str:
    now = int(time.time())
    return jose.encode({"iss": ISSUER, "aud": audience, "sub": sub, "scope": "mcp:tools", "iat": now,
                        "exp": now + 300}, KEY, algorithm="RS256", headers={"kid": "k1"})


def jwks() -> dict[str, Any]:
    jwk = json.loads(jose.algorithms.RSAAlgorithm.to_jwk(KEY.public_key()))
    return {"keys": [{**jwk, "kid": "k1", "use": "sig"}]}


def make_app() -> Server:
    app = Server("legs")

    @app.tool()
    def whoami(ctx: Context) -> str:
        return ctx.auth.subject if ctx.auth is not None else "anonymous"

    return app


@contextlib.asynccontextmanager
async def serving(app: Server, kind: str, **options: Any) -> AsyncIterator[int]:
    loop = asyncio.get_running_loop()
    ready: asyncio.Future = loop.create_future()
    serve = app.serve_websocket if kind == "websocket" else app.serve_http
    task = asyncio.ensure_future(serve("127.0.0.1", 0, ready=lambda host, port: ready.set_result(port), **options))
    port = await asyncio.wait_for(ready, 30)
    try:
        yield port
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def upgrade_head(port: int, headers: dict[str, str]) -> tuple[int, dict[str, str]]:
    """The status and headers the server answers a WebSocket upgrade with."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    lines = ["GET /mcp HTTP/1.1", f"Host: 127.0.0.1:{port}", "Upgrade: websocket", "Connection: Upgrade",
             "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13",
             *(f"{k}: {v}" for k, v in headers.items())]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
    head = (await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)).decode()
    writer.close()
    status_line, *header_lines = head.strip().split("\r\n")
    found = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        found[name.strip().lower()] = value.strip()
    return int(status_line.split()[1]), found


def test_the_websocket_upgrade_is_authenticated() -> None:
    audience = "http://127.0.0.1/mcp"

    async def main() -> None:
        with JWKSServer(jwks()) as keys:
            verifier = JWTVerifier(jwks_url=keys.url, issuer=ISSUER, audience=audience)
            auth = BearerAuth(verifier, resource=audience, authorization_servers=[ISSUER])
            async with serving(make_app(), "websocket", auth=auth) as port:
                status, headers = await upgrade_head(port, {})
                assert status == 401 and headers["www-authenticate"].startswith("Bearer resource_metadata=")
                # The key set is not fetched yet: 503 + Retry-After while it is.
                good = token(audience)
                status, headers = await upgrade_head(port, {"Authorization": f"Bearer {good}"})
                assert status == 503 and headers["retry-after"] == "1"
                await until_fetched(verifier)
                url = f"ws://127.0.0.1:{port}/mcp"
                async with mcpfast.connect(url, headers={"Authorization": f"Bearer {good}"}) as client:
                    assert (await client.call_tool("whoami", {}))["content"][0]["text"] == "alice"
                status, headers = await upgrade_head(port, {"Authorization": f"Bearer {token('https://x/mcp')}"})
                assert status == 401
                assert 'error_description="the access token is not meant for this resource (aud)"' in \
                    headers["www-authenticate"]
                with pytest.raises(ConnectionError):
                    async with mcpfast.connect(url, headers={"Authorization": "Bearer nope"}):
                        pass

    asyncio.run(main())


async def until_fetched(verifier: JWTVerifier) -> None:
    deadline = time.monotonic() + 10
    while verifier.jwks.cached("k1") is None:
        assert time.monotonic() < deadline, "the key set was never fetched"
        await asyncio.sleep(0.01)


def test_the_legacy_sse_endpoint_is_authenticated() -> None:
    audience = "http://127.0.0.1/mcp"
    auth = BearerAuth(JWTVerifier(key=KEY.public_key(), issuer=ISSUER, audience=audience),
                      resource=audience, authorization_servers=[ISSUER])

    async def main() -> None:
        async with serving(make_app(), "http", auth=auth, legacy_sse=True) as port:
            url = f"http://127.0.0.1:{port}/sse"
            async with mcpfast.connect(url, headers={"Authorization": f"Bearer {token(audience, 'bob')}"}) as client:
                assert (await client.call_tool("whoami", {}))["content"][0]["text"] == "bob"
            with pytest.raises(ConnectionError, match="401"):
                async with mcpfast.connect(url, headers={"Authorization": "Bearer nope"}) as client:
                    await client.call_tool("whoami", {})

    asyncio.run(main())
