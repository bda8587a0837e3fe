"""The JSON-RPC 2.0 codec: decode frames into typed messages, encode messages into frames.

This module gathers the compiled pieces under one name: ``decode`` (mcpfast._core.decode),
the message classes (mcpfast._core.messages) and the ``encode_*`` functions
(mcpfast._core.encode).
"""

from mcpfast._core.decode import INVALID_REQUEST, MAX_DEPTH, PARSE_ERROR, DecodeError, decode
from mcpfast._core.encode import (
    EncodeError,
    dumps,
    encode_batch,
    encode_error,
    encode_message,
    encode_notification,
    encode_request,
    encode_response,
)
from mcpfast._core.messages import ErrorResponse, Message, Notification, Request, Response, Verbatim

__all__ = [
    "INVALID_REQUEST", "MAX_DEPTH", "PARSE_ERROR", "DecodeError", "EncodeError", "ErrorResponse",
    "Message", "Notification", "Request", "Response", "Verbatim", "decode", "dumps", "encode_batch",
    "encode_error", "encode_message", "encode_notification", "encode_request", "encode_response",
]
