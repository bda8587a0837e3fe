"""HTTP requests and responses as the Streamable HTTP endpoint sees them.

The socket-facing servers (mcpfast's own HTTP/1.1 server, the ASGI application) turn what
they read into an :class:`HTTPRequest` and write out the :class:`HTTPResponse` they get
back; the endpoint never touches a socket.
"""

from __future__ import annotations

from typing import Any

from mcpfast._core.encode import encode_error
from mcpfast._core.http_messages import HTTPRequest, HTTPResponse

__all__ = ["HTTPRequest", "HTTPResponse", "json_error_body"]


def json_error_body(code: int, message: str, request_id: Any = None) -> bytes:
    """A JSON-RPC error object as an HTTP body (for answers the session never saw)."""
    return encode_error(request_id, code, message)
