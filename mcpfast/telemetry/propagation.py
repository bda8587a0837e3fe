"""W3C trace context in ``params._meta`` (the unprefixed ``traceparent``, ``tracestate``
and ``baggage`` keys the MCP specification reserves for it), both ways, and in the HTTP
headers of the same names (read), through the configured OpenTelemetry propagators.

Requires the opentelemetry-api package (the callers check
:func:`mcpfast.telemetry.providers.api_available` first).
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from opentelemetry import propagate
from opentelemetry import trace as _trace

from mcpfast.protocol.trace_context import BAGGAGE, TRACEPARENT, TRACESTATE

__all__ = ["extract_from_headers", "extract_from_meta", "inject_into_params"]

_KEYS = (TRACEPARENT, TRACESTATE, BAGGAGE)


def extract_from_meta(params: Any) -> Optional[Any]:
    """The remote parent context a request's ``params._meta`` carries, else None (so that
    the span nests under the ambient context instead)."""
    if type(params) is not dict:
        return None
    meta = params.get("_meta")
    if type(meta) is not dict or type(meta.get(TRACEPARENT)) is not str:
        return None
    return _extract(meta)


def extract_from_headers(headers: Any) -> Optional[Any]:
    """The remote parent context the ``traceparent`` / ``tracestate`` / ``baggage`` HTTP
    headers of the request carry (``headers``: a mapping with lower-case names), else None."""
    if not isinstance(headers, Mapping) or type(headers.get(TRACEPARENT)) is not str:
        return None
    return _extract(headers)


def _extract(source: Mapping[str, Any]) -> Optional[Any]:
    # Only the string values of the reserved keys (the peer may send anything there).
    carrier = {key: source[key] for key in _KEYS if type(source.get(key)) is str}
    try:
        context = propagate.extract(carrier)
    except (TypeError, ValueError):
        return None
    if not _trace.get_current_span(context).get_span_context().is_valid:
        return None
    return context


def inject_into_params(params: Any, context: Any) -> Any:
    """``params`` with ``context`` (holding the client span) injected into its ``_meta``;
    a new dict, the caller's own left as it was. Params that are not an object (a
    positional list) are passed unchanged."""
    carrier: dict[str, Any] = {}
    propagate.inject(carrier, context=context)
    if not carrier:
        return params
    if params is None:
        return {"_meta": carrier}
    if type(params) is not dict:
        return params
    own = params.get("_meta")
    meta = {**own, **carrier} if type(own) is dict else carrier
    return {**params, "_meta": meta}
