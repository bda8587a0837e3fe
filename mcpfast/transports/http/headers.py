"""Header names and media types of MCP's Streamable HTTP transport.

HTTP header names are case-insensitive; these are the lower-case forms used for lookups
(both httptools and ASGI hand header names over as bytes, lower-cased by ASGI servers).
"""

from __future__ import annotations

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

ACCEPT = "accept"
ALLOW = "allow"
AUTHORIZATION = "authorization"
CACHE_CONTROL = "cache-control"
CONTENT_LENGTH = "content-length"
CONTENT_TYPE = "content-type"
HOST = "host"
ORIGIN = "origin"
WWW_AUTHENTICATE = "www-authenticate"
# Tells nginx-style proxies not to buffer a response: SSE events must reach the client as sent.
X_ACCEL_BUFFERING = "x-accel-buffering"

# MCP's own headers.
MCP_SESSION_ID = "mcp-session-id"
MCP_PROTOCOL_VERSION = "mcp-protocol-version"
LAST_EVENT_ID = "last-event-id"
# 2026-07-28: routing headers that must agree with the body.
MCP_METHOD = "mcp-method"
MCP_NAME = "mcp-name"
MCP_PARAM_PREFIX = "mcp-param-"

# Media types.
JSON = "application/json"
EVENT_STREAM = "text/event-stream"
