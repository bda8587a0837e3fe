"""Serving a gateway over Streamable HTTP: the MCP endpoint with ``GET /healthz`` beside
it (:mod:`mcpfast.gateway.health`) and, when given, bearer tokens required at the edge
(the existing :class:`~mcpfast.transports.http.auth.BearerAuth`; never passed to an
upstream, which has its own credentials)."""

from __future__ import annotations

import asyncio
import hmac
from typing import Any, Optional

from mcpfast.auth import AccessToken
from mcpfast.gateway.gateway import gateway_of
from mcpfast.gateway.health import HealthEndpoint
from mcpfast.server.server import Server

__all__ = ["serve_gateway_http", "static_bearer_auth"]


def static_bearer_auth(tokens: tuple[str, ...], resource: str) -> Any:
    """A BearerAuth accepting exactly ``tokens`` (compared in constant time), for the
    endpoint at ``resource``."""
    from mcpfast.transports.http.auth import BearerAuth

    encoded = [token.encode() for token in tokens]

    def verify(token: str) -> Optional[AccessToken]:
        given = token.encode()
        for index, known in enumerate(encoded):
            if hmac.compare_digest(given, known):
                return AccessToken(subject=f"gateway-token-{index}", token="")
        return None

    origin = resource.split("/", 3)
    return BearerAuth(verify, resource=resource, authorization_servers=["/".join(origin[:3])])


async def serve_gateway_http(app: Server, host: str = "127.0.0.1", port: int = 8000, *,
                             ready: Optional[Any] = None, bearer_tokens: tuple[str, ...] = (),
                             **options: Any) -> None:
    """Serve ``app`` (a Server with mounts) over Streamable HTTP with ``GET /healthz``
    until cancelled; ``bearer_tokens``: tokens required at the edge; ``options``: as
    for :meth:`mcpfast.Server.http_endpoint`, plus ``keepalive_timeout`` and
    ``max_connections`` (as for ``serve_http``)."""
    from mcpfast.transports.http import serve_http

    limits = {key: options.pop(key) for key in ("keepalive_timeout", "max_connections") if key in options}
    if bearer_tokens:
        where = f"[{host}]" if ":" in host else host
        options["auth"] = static_bearer_auth(bearer_tokens, f"http://{where}:{port}{options.get('path', '/mcp')}")
    app.loop = asyncio.get_running_loop()
    endpoint = HealthEndpoint(app.http_endpoint(host=host, **options), gateway_of(app).health)
    async with app.running():
        await endpoint.start()
        await serve_http(endpoint, host, port, ready=ready, **limits)
