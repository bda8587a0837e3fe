"""mcpfast.transports.http: MCP over Streamable HTTP.

The HTTP rules (status codes, headers, sessions, SSE) live in the endpoint
(:class:`StreamableHTTPEndpoint`), which never touches a socket; the socket-facing parts
only move bytes between it and the network: :func:`serve_http` (mcpfast's own HTTP/1.1
server on uvloop + httptools) and :class:`ASGIApp` (for uvicorn, granian, Starlette,
FastAPI). Several processes share sessions and resumable streams through a
:class:`SessionDirectory` and an event store (in Redis: :mod:`mcpfast.scaleout`'s ``redis_session_directory``,
``redis_event_store``; needs ``pip install 'mcpfast[redis]'``).
"""

from mcpfast.transports.http.asgi import ASGIApp
from mcpfast.transports.http.auth import BearerAuth, InvalidToken
from mcpfast.transports.http.client_credentials import ClientCredentials
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
from mcpfast.transports.http.session_directory import MemoryDirectoryHub, SessionDirectory

__all__ = [
    "ASGIApp",
    "BearerAuth",
    "ClientCredentials",
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
    "MemoryDirectoryHub",
    "MemoryEventStore",
    "OAuthError",
    "OAuthFlow",
    "SessionDirectory",
    "StreamableHTTPEndpoint",
    "headless_authorize",
    "serve_http",
]
