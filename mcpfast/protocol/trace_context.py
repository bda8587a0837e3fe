"""W3C trace context in MCP messages: the ``params._meta`` keys the specification keeps
unprefixed for it, and the HTTP headers of the same names (what the HTTP transports
send beside a request whose ``_meta`` carries them)."""

from __future__ import annotations

from typing import Any, Final, Mapping

__all__ = ["BAGGAGE", "TRACEPARENT", "TRACESTATE", "trace_headers"]

TRACEPARENT: Final = "traceparent"
TRACESTATE: Final = "tracestate"
BAGGAGE: Final = "baggage"


def trace_headers(meta: Mapping[str, Any]) -> dict[str, str]:
    """The ``traceparent`` / ``tracestate`` / ``baggage`` HTTP headers of a request whose
    ``_meta`` is ``meta`` (string values only; {} when it carries none)."""
    found: dict[str, str] = {}
    for key in (TRACEPARENT, TRACESTATE, BAGGAGE):
        value = meta.get(key)
        if type(value) is str and value.isprintable():
            found[key] = value
    return found
