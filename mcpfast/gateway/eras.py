"""What an upstream lists, shaped for the protocol version of the downstream client.

An upstream's items are listed as it sent them, in the version the gateway's session to it
negotiated (the latest both speak). A downstream client of an older version gets them
without the members its version does not define: ``title`` (2025-06-18), ``_meta``
(2025-06-18), ``icons`` (2025-11-25), a tool's ``outputSchema`` (2025-06-18),
``annotations`` (2025-03-26; a tool's title moves into them where titles are not there
yet, as mcpfast's own tools do) and ``execution`` (the 2025-11-25 tasks utility), a
prompt argument's ``title``, a resource annotation's ``lastModified`` (2025-06-18).
Items of the latest versions pass unchanged (no copy).

Results likewise (:func:`shaped_result`): content blocks rewritten as mcpfast's own
results are (:func:`mcpfast.server.content.downgrade_content`: audio and resource links
as text where they do not exist yet, ``_meta`` dropped), a tool result's
``structuredContent`` and ``_meta`` dropped before 2025-06-18.

Questions an upstream asks (:func:`asked_capabilities`): the gateway's one session to a
handshake-era upstream declares every client capability it can pass on (sampling with tools
and context, elicitation in both modes, roots), so the upstream asks what its handler needs
and the downstream client's own capabilities decide: each question is checked against
those of the client it goes to (a 2026-07-28 client's, from its request, before it is put
into an InputRequiredResult round), never against the gateway's.
"""

from __future__ import annotations

from typing import Any, Optional

from mcpfast.protocol.features import VersionFeatures
from mcpfast.server.content import downgrade_content

__all__ = ["UPSTREAM_CLIENT_CAPABILITIES", "asked_capabilities", "shaped_items", "shaped_result"]

#: What the gateway's session declares to an upstream: everything it can put to a client.
UPSTREAM_CLIENT_CAPABILITIES: dict[str, dict[str, Any]] = {
    "sampling": {"tools": {}, "context": {}}, "elicitation": {"form": {}, "url": {}}}
_ASKED = {"sampling/createMessage": "sampling", "elicitation/create": "elicitation", "roots/list": "roots"}


def _common(item: dict[str, Any], features: VersionFeatures) -> dict[str, Any]:
    out = dict(item)
    if not features.titles:
        out.pop("title", None)
    if not features.meta:
        out.pop("_meta", None)
    if not features.icons:
        out.pop("icons", None)
    return out


def _tool(item: dict[str, Any], features: VersionFeatures) -> dict[str, Any]:
    out = _common(item, features)
    if not features.structured_output:
        out.pop("outputSchema", None)
    if not features.experimental_tasks:
        out.pop("execution", None)
    annotations = item.get("annotations")
    if not features.tool_annotations:
        out.pop("annotations", None)
    elif not features.titles and isinstance(item.get("title"), str):
        hints = dict(annotations) if isinstance(annotations, dict) else {}
        hints.setdefault("title", item["title"])
        out["annotations"] = hints
    return out


def _prompt(item: dict[str, Any], features: VersionFeatures) -> dict[str, Any]:
    out = _common(item, features)
    arguments = item.get("arguments")
    if not features.titles and isinstance(arguments, list):
        out["arguments"] = [{k: v for k, v in argument.items() if k != "title"}
                            if isinstance(argument, dict) else argument for argument in arguments]
    return out


def _resource(item: dict[str, Any], features: VersionFeatures) -> dict[str, Any]:
    out = _common(item, features)
    annotations = item.get("annotations")
    if not features.meta and isinstance(annotations, dict) and "lastModified" in annotations:
        trimmed = {k: v for k, v in annotations.items() if k != "lastModified"}
        if trimmed:
            out["annotations"] = trimmed
        else:
            out.pop("annotations", None)
    return out


_SHAPERS = {"tools": _tool, "prompts": _prompt, "resources": _resource, "resourceTemplates": _resource}


def shaped_items(kind: str, items: list[dict[str, Any]],
                 features: Optional[VersionFeatures]) -> list[dict[str, Any]]:
    """``items`` of ``kind`` for a client of ``features`` (module docstring)."""
    if features is None or features.icons:
        return items  # 2025-11-25 and later define every member
    shape = _SHAPERS[kind]
    return [shape(item, features) for item in items]


def shaped_result(method: str, result: Any, features: Optional[VersionFeatures]) -> Any:
    """An upstream's result of ``method`` for a client of ``features`` (module docstring)."""
    if features is None or features.content_current or not isinstance(result, dict):
        return result
    version = features.version
    out = dict(result)
    if not features.meta:
        out.pop("_meta", None)
    if method == "tools/call":
        if isinstance(result.get("content"), list):
            out["content"] = downgrade_content(result["content"], version)
        if not features.structured_output:
            out.pop("structuredContent", None)
    elif method == "prompts/get" and isinstance(result.get("messages"), list):
        out["messages"] = [
            {**message, "content": downgrade_content([message["content"]], version)[0]}
            if isinstance(message, dict) and isinstance(message.get("content"), dict) else message
            for message in result["messages"]]
    elif method == "resources/read" and not features.meta and isinstance(result.get("contents"), list):
        out["contents"] = [{k: v for k, v in item.items() if k != "_meta"} if isinstance(item, dict) else item
                           for item in result["contents"]]
    return out


def asked_capabilities(method: str, params: Any) -> tuple[str, ...]:
    """The client capabilities (``require_capability`` names) that answering the upstream's
    ``method`` request with ``params`` needs of the downstream client (module docstring)."""
    top = _ASKED[method]
    needs = [top]
    if not isinstance(params, dict):
        return tuple(needs)
    if method == "sampling/createMessage":
        if params.get("tools") is not None or params.get("toolChoice") is not None:
            needs.append("sampling.tools")
        if params.get("includeContext") in ("thisServer", "allServers"):
            needs.append("sampling.context")
    elif method == "elicitation/create" and params.get("mode") == "url":
        needs.append("elicitation.url")
    return tuple(needs)
