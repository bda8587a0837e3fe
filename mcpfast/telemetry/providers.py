"""Whether OpenTelemetry is here and configured: the one place mcpfast asks.

Telemetry is recorded only where a real tracer or meter provider is set (an SDK's, or one
passed in): the API's default proxy and its no-op providers count as none, and then
nothing is installed on the request path at all. Without the ``opentelemetry-api``
package everything here still imports and reports "not configured".
"""

from __future__ import annotations

import os
from typing import Any, Optional

__all__ = ["PATH_ENV", "TELEMETRY_ENV", "api_available", "fast_path_on", "meter_provider", "switched_off",
           "tracer_provider"]

#: Set to ``off`` / ``0`` / ``false`` to turn mcpfast's telemetry off everywhere.
TELEMETRY_ENV = "MCPFAST_TELEMETRY"
#: Set to ``public`` for the SDK's public span and record calls only (no fast path).
PATH_ENV = "MCPFAST_TELEMETRY_PATH"

try:
    from opentelemetry import metrics as _metrics
    from opentelemetry import trace as _trace
except ImportError:  # the otel extra is not installed
    _metrics = None  # type: ignore[assignment]
    _trace = None  # type: ignore[assignment]


def api_available() -> bool:
    """Whether the opentelemetry-api package is installed."""
    return _trace is not None


def switched_off() -> bool:
    """Whether ``MCPFAST_TELEMETRY`` turns telemetry off."""
    return os.environ.get(TELEMETRY_ENV, "").strip().lower() in ("off", "0", "false", "no")


def fast_path_on() -> bool:
    """Whether the fast span and metric paths may be taken (``MCPFAST_TELEMETRY_PATH`` is
    not ``public``); each still checks that it gives the SDK's own result."""
    return os.environ.get(PATH_ENV, "").strip().lower() != "public"


def tracer_provider(given: Any = None) -> Optional[Any]:
    """``given``, else the global tracer provider when it is a real one; None when there is
    none (the API's proxy or no-op provider, or no API at all)."""
    if given is not None:
        return given
    if _trace is None:
        return None
    provider = _trace.get_tracer_provider()
    if isinstance(provider, (_trace.ProxyTracerProvider, _trace.NoOpTracerProvider)):
        return None
    return provider


def meter_provider(given: Any = None) -> Optional[Any]:
    """``given``, else the global meter provider when it is a real one (as
    :func:`tracer_provider`)."""
    if given is not None:
        return given
    if _metrics is None:
        return None
    provider = _metrics.get_meter_provider()
    if isinstance(provider, _metrics.NoOpMeterProvider) or type(provider).__name__ == "_ProxyMeterProvider":
        return None
    return provider
