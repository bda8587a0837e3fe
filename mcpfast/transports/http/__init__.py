"""mcpfast.transports.http: MCP over Streamable HTTP.

The HTTP rules (status codes, headers, sessions, SSE) live in the endpoint
(:class:`StreamableHTTPEndpoint`), which never touches a socket; the socket-facing parts
only move bytes between it and the network: :func:`serve_http` (mcpfast's own HTTP/1.1
server on uvloop + httptools) and :class:`ASGIApp` (for uvicorn, granian, Starlette,
FastAPI).
"""

from mcpfast.transports.http.asgi import ASGIApp
from mcpfast.transports.http.auth import BearerAuth, InvalidToken
from mcpfast.transports.http.endpoint import (
    DEFAULT_KEEPALIVE_INTERVAL,
    DEFAULT_MAX_BODY_SIZE,
    DEFAULT_MAX_SESSIONS,
    DEFAULT_SESSION_IDLE_TIMEOUT,
    StreamableHTTPEndpoint,
)
from mcpfast.transports.http.event_store import EventStore, MemoryEventStore
from mcpfast.transports.http.legacy_sse import LegacySSEEndpoint
from mcpfast.transports.http.messages import HTTPRequest, HTTPResponse
from mcpfast.transports.http.oauth import OAuthError, OAuthFlow, headless_authorize
from mcpfast.transports.http.security import HostPolicy
from mcpfast.transports.http.server import serve_http

__all__ = [
    "ASGIApp",
    "BearerAuth",
    "DEFAULT_KEEPALIVE_INTERVAL",
    "DEFAULT_MAX_BODY_SIZE",
    "DEFAULT_MAX_SESSIONS",
    "DEFAULT_SESSION_IDLE_TIMEOUT",
    "EventStore",
    "HTTPRequest",
    "HTTPResponse",
    "HostPolicy",
    "InvalidToken",
    "LegacySSEEndpoint",
    "MemoryEventStore",
    "OAuthError",
    "OAuthFlow",
    "StreamableHTTPEndpoint",
    "headless_authorize",
    "serve_http",
]
