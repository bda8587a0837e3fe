"""Header names and media types of MCP's Streamable HTTP transport.

HTTP header names are case-insensitive; these are the lower-case forms used for lookups
(both httptools and ASGI hand header names over as bytes, lower-cased by ASGI servers).
"""

from __future__ import annotations

from sys import intern

__all__ = [
    "ACCEPT",
    "ALLOW",
    "AUTHORIZATION",
    "CACHE_CONTROL",
    "CONTENT_LENGTH",
    "CONTENT_TYPE",
    "EVENT_STREAM",
    "HOST",
    "JSON",
    "LAST_EVENT_ID",
    "MCP_METHOD",
    "MCP_NAME",
    "MCP_PARAM_PREFIX",
    "MCP_PROTOCOL_VERSION",
    "MCP_SESSION_ID",
    "ORIGIN",
    "WWW_AUTHENTICATE",
    "X_ACCEL_BUFFERING",
]

# Interned: the HTTP framer interns the header names it reads, so that a lookup by one of
# these finds its key by identity instead of comparing the characters (most contain "-",
# which Python does not intern by itself).
ACCEPT = intern("accept")
ALLOW = intern("allow")
AUTHORIZATION = intern("authorization")
CACHE_CONTROL = intern("cache-control")
CONTENT_LENGTH = intern("content-length")
CONTENT_TYPE = intern("content-type")
HOST = intern("host")
ORIGIN = intern("origin")
WWW_AUTHENTICATE = intern("www-authenticate")
# Tells nginx-style proxies not to buffer a response: SSE events must reach the client as sent.
X_ACCEL_BUFFERING = intern("x-accel-buffering")

# MCP's own headers.
MCP_SESSION_ID = intern("mcp-session-id")
MCP_PROTOCOL_VERSION = intern("mcp-protocol-version")
LAST_EVENT_ID = intern("last-event-id")
# 2026-07-28: routing headers that must agree with the body.
MCP_METHOD = intern("mcp-method")
MCP_NAME = intern("mcp-name")
MCP_PARAM_PREFIX = intern("mcp-param-")

# Media types.
JSON = "application/json"
EVENT_STREAM = "text/event-stream"
