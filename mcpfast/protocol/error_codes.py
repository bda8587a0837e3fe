"""The error codes of mcpfast: every code it sends or recognises, with its catalogue entry.

Codes
-----
Every code mcpfast sends or recognises is a module constant here, and ``CATALOGUE`` maps it
to an :class:`ErrorCode` (name, default message, where the code is defined). Where the
specification defines a code it is used; the codes of the seed design (erlmcp) are kept
for the cases the specification leaves open.

JSON-RPC 2.0 (https://www.jsonrpc.org/specification#error_object):
  -32700 PARSE_ERROR, -32600 INVALID_REQUEST, -32601 METHOD_NOT_FOUND,
  -32602 INVALID_PARAMS, -32603 INTERNAL_ERROR.
MCP specification:
  -32002 RESOURCE_NOT_FOUND (resources/read of an unknown URI, every version),
  -32042 URL_ELICITATION_REQUIRED (2025-11-25: URLElicitationRequiredError; ``data`` must
  hold ``elicitations``), and from 2026-07-28: -32020 HEADER_MISMATCH,
  -32021 MISSING_REQUIRED_CLIENT_CAPABILITY, -32022 UNSUPPORTED_PROTOCOL_VERSION.
Seed codes (erlmcp's include/erlmcp.hrl and its error-code reference), used where the
specification is silent:
  -32005 NOT_INITIALIZED, -32008 TRANSPORT_ERROR, -32009 REQUEST_TIMEOUT,
  -32010 RATE_LIMITED, -32012 MESSAGE_TOO_LARGE, -32061 UNSUPPORTED_VERSION.
mcpfast's own, in the server-error block:
  -32003 INSUFFICIENT_SCOPE (the caller's token lacks a scope the tool, resource or prompt
  needs; ``data.requiredScopes``; over HTTP a 403 ``insufficient_scope`` challenge).
  (The seed's -32001 "resource not found" and -32002 "tool not found" are not kept: the
  specification gives -32002 to resource not found and -32602 to an unknown tool.)
Local only:
  -32800 REQUEST_CANCELLED, the code of :class:`RequestCancelled`. MCP sends no response
  to a cancelled request, so no code is defined for it there; -32800 is the code the
  Language Server Protocol (another JSON-RPC 2.0 protocol) defines for the same event.

category(code) -- where a code belongs, decided by these rules in order:
  "parse"       -32700
  "protocol"    -32600 (the message is not a valid JSON-RPC request)
  "method"      -32601
  "params"      -32602
  "internal"    -32603
  "reserved"    any other code in -32768..-32100, the block JSON-RPC reserves for
                pre-defined errors
  "mcp"         a code in the server-error block -32099..-32000 that the MCP specification
                defines (RESOURCE_NOT_FOUND, URL_ELICITATION_REQUIRED, HEADER_MISMATCH,
                MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION)
  "server"      any other code in -32099..-32000 (implementation-defined server errors,
                the seed codes among them)
  "application" every other integer (codes outside JSON-RPC's reserved block are free for
                applications; REQUEST_CANCELLED falls here)

severity(code) -- how bad an error is for the one who receives it:
  "critical"    the message could not be processed at all or the receiver failed: the
                connection or the peer is in trouble (PARSE_ERROR, INVALID_REQUEST,
                INTERNAL_ERROR, MESSAGE_TOO_LARGE, TRANSPORT_ERROR)
  "warning"     transient: the same request can succeed later or after a step the caller
                can take (RATE_LIMITED, REQUEST_TIMEOUT, NOT_INITIALIZED,
                URL_ELICITATION_REQUIRED)
  "info"        nothing failed: the requester gave the request up (REQUEST_CANCELLED)
  "error"       every other code: the request as sent cannot be served (METHOD_NOT_FOUND,
                INVALID_PARAMS, RESOURCE_NOT_FOUND, the version and header errors, and
                codes not in the catalogue)
"""

from __future__ import annotations

from typing import Mapping, NamedTuple

__all__ = [
    "CATALOGUE",
    "as_code",
    "category",
    "default_message",
    "severity",
    "ErrorCode",
    "HEADER_MISMATCH",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "MESSAGE_TOO_LARGE",
    "METHOD_NOT_FOUND",
    "MISSING_REQUIRED_CLIENT_CAPABILITY",
    "NOT_INITIALIZED",
    "PARSE_ERROR",
    "RATE_LIMITED",
    "INSUFFICIENT_SCOPE",
    "REQUEST_CANCELLED",
    "REQUEST_TIMEOUT",
    "RESOURCE_NOT_FOUND",
    "TRANSPORT_ERROR",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "UNSUPPORTED_VERSION",
    "URL_ELICITATION_REQUIRED",
]

# JSON-RPC 2.0
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# MCP specification
RESOURCE_NOT_FOUND = -32002
URL_ELICITATION_REQUIRED = -32042
HEADER_MISMATCH = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022
# Seed (erlmcp)
NOT_INITIALIZED = -32005
TRANSPORT_ERROR = -32008
REQUEST_TIMEOUT = -32009
RATE_LIMITED = -32010
# mcpfast
INSUFFICIENT_SCOPE = -32003
MESSAGE_TOO_LARGE = -32012
UNSUPPORTED_VERSION = -32061
# Local only
REQUEST_CANCELLED = -32800


class ErrorCode(NamedTuple):
    """One catalogue entry: the code, its constant's name, its default message and source.

    ``source`` is "json-rpc", "mcp <version>" (the first MCP version defining it), "seed"
    or "local".
    """

    code: int
    name: str
    message: str
    source: str


CATALOGUE: Mapping[int, ErrorCode] = {
    e.code: e
    for e in (
        ErrorCode(PARSE_ERROR, "PARSE_ERROR", "Parse error", "json-rpc"),
        ErrorCode(INVALID_REQUEST, "INVALID_REQUEST", "Invalid Request", "json-rpc"),
        ErrorCode(METHOD_NOT_FOUND, "METHOD_NOT_FOUND", "Method not found", "json-rpc"),
        ErrorCode(INVALID_PARAMS, "INVALID_PARAMS", "Invalid params", "json-rpc"),
        ErrorCode(INTERNAL_ERROR, "INTERNAL_ERROR", "Internal error", "json-rpc"),
        ErrorCode(RESOURCE_NOT_FOUND, "RESOURCE_NOT_FOUND", "Resource not found", "mcp 2024-11-05"),
        ErrorCode(
            URL_ELICITATION_REQUIRED,
            "URL_ELICITATION_REQUIRED",
            "URL elicitation required",
            "mcp 2025-11-25",
        ),
        ErrorCode(HEADER_MISMATCH, "HEADER_MISMATCH", "Header mismatch", "mcp 2026-07-28"),
        ErrorCode(
            MISSING_REQUIRED_CLIENT_CAPABILITY,
            "MISSING_REQUIRED_CLIENT_CAPABILITY",
            "Missing required client capability",
            "mcp 2026-07-28",
        ),
        ErrorCode(
            UNSUPPORTED_PROTOCOL_VERSION,
            "UNSUPPORTED_PROTOCOL_VERSION",
            "Unsupported protocol version",
            "mcp 2026-07-28",
        ),
        ErrorCode(NOT_INITIALIZED, "NOT_INITIALIZED", "Server not initialized", "seed"),
        ErrorCode(TRANSPORT_ERROR, "TRANSPORT_ERROR", "Transport error", "seed"),
        ErrorCode(REQUEST_TIMEOUT, "REQUEST_TIMEOUT", "Request timeout", "seed"),
        ErrorCode(RATE_LIMITED, "RATE_LIMITED", "Rate limit exceeded", "seed"),
        ErrorCode(INSUFFICIENT_SCOPE, "INSUFFICIENT_SCOPE", "Insufficient scope", "local"),
        ErrorCode(MESSAGE_TOO_LARGE, "MESSAGE_TOO_LARGE", "Message too large", "seed"),
        ErrorCode(
            UNSUPPORTED_VERSION, "UNSUPPORTED_VERSION", "Unsupported protocol version", "seed"
        ),
        ErrorCode(REQUEST_CANCELLED, "REQUEST_CANCELLED", "Request cancelled", "local"),
    )
}

_JSONRPC_CATEGORIES = {
    PARSE_ERROR: "parse",
    INVALID_REQUEST: "protocol",
    METHOD_NOT_FOUND: "method",
    INVALID_PARAMS: "params",
    INTERNAL_ERROR: "internal",
}
_MCP_SPEC_CODES = frozenset(
    {
        RESOURCE_NOT_FOUND,
        URL_ELICITATION_REQUIRED,
        HEADER_MISMATCH,
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        UNSUPPORTED_PROTOCOL_VERSION,
    }
)
_SEVERITIES = {
    PARSE_ERROR: "critical",
    INVALID_REQUEST: "critical",
    INTERNAL_ERROR: "critical",
    MESSAGE_TOO_LARGE: "critical",
    TRANSPORT_ERROR: "critical",
    RATE_LIMITED: "warning",
    INSUFFICIENT_SCOPE: "warning",
    REQUEST_TIMEOUT: "warning",
    NOT_INITIALIZED: "warning",
    URL_ELICITATION_REQUIRED: "warning",
    REQUEST_CANCELLED: "info",
}


def as_code(code: object) -> int:
    """code as an int (an int subclass is converted; TypeError for anything else)."""
    if type(code) is not int:
        if isinstance(code, int) and not isinstance(code, bool):
            return int(code)
        raise TypeError(f"an error code must be an int, not {type(code).__name__}")
    return code


def category(code: int) -> str:
    """The category of an error code (rules in the module docstring)."""
    code = as_code(code)
    named = _JSONRPC_CATEGORIES.get(code)
    if named is not None:
        return named
    if -32768 <= code <= -32100:
        return "reserved"
    if -32099 <= code <= -32000:
        return "mcp" if code in _MCP_SPEC_CODES else "server"
    return "application"


def severity(code: int) -> str:
    """The severity of an error code: "critical", "error", "warning" or "info"."""
    return _SEVERITIES.get(as_code(code), "error")


def default_message(code: int) -> str:
    """The catalogue's message for code; "Server error" or "Error" for uncatalogued codes."""
    entry = CATALOGUE.get(as_code(code))
    if entry is not None:
        return entry.message
    return "Server error" if -32099 <= code <= -32000 else "Error"
