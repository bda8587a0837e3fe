"""HTTP requests and responses as the Streamable HTTP endpoint sees them.

The socket-facing servers (mcpfast's own HTTP/1.1 server, the ASGI application) turn what
they read into an :class:`HTTPRequest` and write out the :class:`HTTPResponse` they get
back; the endpoint never touches a socket.
"""

from __future__ import annotations

from typing import Any, Optional

from mcpfast._core.encode import encode_error
from mcpfast._core.http_messages import HTTPRequest, HTTPResponse
from mcpfast.transports.http.headers import CONTENT_TYPE, JSON

__all__ = ["JSON_CONTENT_TYPE", "HTTPRequest", "HTTPResponse", "json_error_body", "json_error_response"]

# The Content-Type header of every JSON answer (a tuple: each response gets its own list).
JSON_CONTENT_TYPE = (CONTENT_TYPE, JSON)


def json_error_body(code: int, message: str, request_id: Any = None) -> bytes:
    """A JSON-RPC error object as an HTTP body (for answers the session never saw)."""
    return encode_error(request_id, code, message)


def json_error_response(status: int, code: int, message: str,
                        extra: Optional[list[tuple[str, str]]] = None) -> HTTPResponse:
    """An HTTP response of ``status`` whose body is a JSON-RPC error (``code``, ``message``;
    no id), with the JSON Content-Type and the ``extra`` headers."""
    headers = [JSON_CONTENT_TYPE]
    if extra:
        headers.extend(extra)
    return HTTPResponse(status, headers, json_error_body(code, message))
