"""What all requests of one target share, for the server's and the client's telemetry: the
span name ``{mcp.method.name} {tool or prompt}``, the span attributes that do not change
from request to request, and one metric attribute dict per outcome -- computed once per
(method, tool or prompt name, protocol version) instead of per request, and handed to the
SDK as they are (so they are never changed after they are made)."""

from __future__ import annotations

from typing import Any, Mapping, Optional

from mcpfast.protocol import methods
from mcpfast.telemetry import attributes as a
from mcpfast.telemetry.server_core import TargetCore

__all__ = ["RESOURCE_METHODS", "Target"]

#: The methods whose span records ``mcp.resource.uri``.
RESOURCE_METHODS = frozenset((methods.RESOURCES_READ, methods.RESOURCES_SUBSCRIBE,
                              methods.RESOURCES_UNSUBSCRIBE, methods.RESOURCE_UPDATED))
_OUTCOMES_KEPT = 16


class Target(TargetCore):
    """The span name and attributes all requests of one (method, tool or prompt name,
    protocol version) share, and their metric attribute sets (one dict per outcome,
    handed to the SDK as is every time). ``name``, ``span_attributes``, ``resource`` and
    ``success`` are the compiled base's fields (read in C per request)."""

    __slots__ = ("_metric", "_outcomes")

    def __init__(self, method: str, name: Optional[str], version: Optional[str],
                 span_base: Mapping[str, Any], metric_base: Mapping[str, Any]) -> None:
        span_attrs = dict(span_base)
        span_attrs[a.MCP_METHOD_NAME] = method
        metric = dict(metric_base)
        metric[a.MCP_METHOD_NAME] = method
        if version is not None:
            span_attrs[a.MCP_PROTOCOL_VERSION] = metric[a.MCP_PROTOCOL_VERSION] = version
        self.name = method
        if method == methods.TOOLS_CALL:
            span_attrs[a.GEN_AI_OPERATION_NAME] = a.EXECUTE_TOOL
            if name is not None:
                self.name = f"{method} {name}"
                span_attrs[a.GEN_AI_TOOL_NAME] = name
        elif method == methods.PROMPTS_GET and name is not None:
            self.name = f"{method} {name}"
            span_attrs[a.GEN_AI_PROMPT_NAME] = name
        self.span_attributes = span_attrs
        self.resource = method in RESOURCE_METHODS
        # Without the name: what a refused request records (the peer chose the name).
        self._metric = metric
        self._outcomes: dict[tuple, dict[str, Any]] = {}
        named = dict(metric)
        if name is not None:
            named[a.GEN_AI_TOOL_NAME if method == methods.TOOLS_CALL else a.GEN_AI_PROMPT_NAME] = name
        self._outcomes[(None, False)] = named
        #: ``metric_attributes(None, False)``: the success's set, without the call.
        self.success = named

    def metric_attributes(self, error_type: Optional[str], refused: bool) -> dict[str, Any]:
        """The attributes of this target's measurement for an outcome (``error_type``
        None: success; ``refused``: a JSON-RPC error answer)."""
        key = (error_type, refused)
        found = self._outcomes.get(key)
        if found is None:
            found = dict(self._metric if refused else self._outcomes[(None, False)])
            if error_type is not None:
                found[a.ERROR_TYPE] = error_type
            if len(self._outcomes) < _OUTCOMES_KEPT:
                self._outcomes[key] = found
        return found
