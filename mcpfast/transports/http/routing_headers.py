"""The routing headers of a 2026-07-28 POST, checked against its body.

Under 2026-07-28 a client mirrors parts of the JSON-RPC body into headers so that load
balancers and gateways can route without parsing the body: ``MCP-Protocol-Version``
(= ``_meta["io.modelcontextprotocol/protocolVersion"]``), ``Mcp-Method`` (= ``method``) and,
for ``tools/call`` / ``prompts/get`` / ``resources/read``, ``Mcp-Name`` (= ``params.name``
or ``params.uri``; for ``tasks/get`` / ``update`` / ``cancel``: ``params.taskId``). A
server that reads the body must refuse a request whose headers are missing or disagree
with it (-32020 HeaderMismatch, HTTP 400): otherwise the component that routed on the
header and the one that executed the body would act on different requests.

``Mcp-Name`` may carry its value in the Base64 sentinel form ``=?base64?<base64>?=``
(UTF-8, standard alphabet with padding), which is decoded before comparing; a malformed
sentinel is a mismatch too. Header names are case-insensitive, values case-sensitive;
surrounding spaces (HTTP's optional whitespace) are not part of a value.
"""

from __future__ import annotations

from typing import Any, Optional

from mcpfast._bounded_memo import remember
from mcpfast.protocol import meta_keys, methods
from mcpfast.protocol.header_values import SENTINEL_START, decode_header_value, mirrored_value_problem
from mcpfast.transports.http import headers as h

__all__ = ["decode_header_value", "known_routing_problem", "routing_header_problem", "routing_problem"]

# Where Mcp-Name's value comes from, per method.
NAME_SOURCES = {methods.TOOLS_CALL: "name", methods.PROMPTS_GET: "name",
                methods.RESOURCES_READ: "uri",
                # The tasks extension: the task id, so that a task's requests reach its owner.
                methods.TASKS_GET: "taskId", methods.TASKS_UPDATE: "taskId",
                methods.TASKS_CANCEL: "taskId"}
# Read on every 2026-07-28 POST: module globals (one lookup each instead of two).
_VERSION_KEY = meta_keys.PROTOCOL_VERSION
_VERSION_HEADER, _METHOD_HEADER, _NAME_HEADER = h.MCP_PROTOCOL_VERSION, h.MCP_METHOD, h.MCP_NAME


# The problems found so far (None: none) by the values they depend on (routing_problem's
# arguments): clients send the same few combinations again and again. Bounded, since the
# values come from the network; read by the endpoint's compiled front door (post_front).
ROUTING_PROBLEMS: dict[tuple[Optional[str], Optional[str], Optional[str], str, str, Optional[str]],
                       Optional[str]] = {}
_ROUTING_PROBLEMS_KEPT = 256


def routing_header_problem(headers: dict[str, str], method: str, params: Any,
                           meta: Any = None) -> Optional[str]:
    """Why a 2026-07-28 request's routing headers do not match its body (the -32020
    message), or None when they do. ``headers``: lower-case names; ``meta``: the body's
    ``params._meta`` when the caller has read it already (else read here)."""
    if meta is None:
        meta = params.get("_meta") if type(params) is dict else None
    source = NAME_SOURCES.get(method)
    return routing_problem(headers.get(_VERSION_HEADER), headers.get(_METHOD_HEADER),
                           headers.get(_NAME_HEADER),
                           meta.get(_VERSION_KEY) if type(meta) is dict else None, method,
                           params.get(source) if source is not None and type(params) is dict
                           else None)


def routing_problem(header_version: Optional[str], header_method: Optional[str],
                    header_name: Optional[str], body_version: Any, method: str,
                    body_name: Any) -> Optional[str]:
    """:func:`routing_header_problem` from the values it compares: the three headers' (None
    when absent), the body's ``_meta`` protocol version, its method, and the body value
    ``Mcp-Name`` stands for (None when the method has none or it is absent)."""
    if header_version is None:
        header_version = ""
    if header_version != body_version and header_version.strip() != body_version:
        return (f"Header mismatch: MCP-Protocol-Version header value {header_version.strip()!r} "
                f"does not match body value {body_version!r}")
    if header_method is None:
        return "Header mismatch: the Mcp-Method header is required"
    if header_method != method and header_method.strip() != method:
        return (f"Header mismatch: Mcp-Method header value {header_method.strip()!r} does not "
                f"match body value {method!r}")
    if method not in NAME_SOURCES:
        return None
    if header_name is not None and header_name == body_name and not header_name.startswith(SENTINEL_START):
        return None  # the usual case: the same plain text
    return mirrored_value_problem("Mcp-Name", header_name, body_name, f"for {method}")


def known_routing_problem(header_version: Optional[str], header_method: Optional[str],
                          header_name: Optional[str], body_version: str, method: str,
                          body_name: Optional[str]) -> Optional[str]:
    """:func:`routing_problem` of these values (str or None: hashable), kept in
    :data:`ROUTING_PROBLEMS`."""
    key = (header_version, header_method, header_name, body_version, method, body_name)
    return remember(ROUTING_PROBLEMS, key, routing_problem(*key), _ROUTING_PROBLEMS_KEPT)
