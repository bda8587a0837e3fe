"""OpenTelemetry traces and metrics for mcpfast servers and clients (issue 36), following
OpenTelemetry's semantic conventions for MCP.

    pip install 'mcpfast[otel]'       # the API; configure an SDK (or any provider) yourself

On by default in the only sense that costs nothing: a Server records a SERVER span per
request and the convention's metrics once a real tracer or meter provider is configured
(checked once, when it makes its first connection; the API's default proxy and no-op
providers count as none, and then nothing is installed on the request path). Off:
``Server(telemetry=False)`` or ``MCPFAST_TELEMETRY=off``. A Client does the same for its
requests with ``connect(..., observer=client_telemetry())`` (or ``Client(observer=...)``).

- :class:`ServerTelemetry` (:mod:`.server`): the server's eager middleware;
- :class:`ClientTelemetry` (:mod:`.client`): the client's request observer;
- :mod:`.propagation`: W3C trace context in ``params._meta``;
- :class:`OTelMetrics`, :class:`PrometheusMetrics`: where the metrics go; the HTTP server
  serves the latter on ``/metrics`` with ``metrics_path="/metrics"`` (``mcpfast run ...
  --transport http --metrics``);
- :mod:`.fast_spans`, :mod:`.aggregation`: with the OpenTelemetry SDK's own providers, the
  finished spans and the histograms' aggregates are made here and handed to the SDK, where
  that gives the SDK's own result (else, or with ``fast_path=False`` /
  ``MCPFAST_TELEMETRY_PATH=public``, the SDK's public calls per request).
"""

from __future__ import annotations

from typing import Any, Iterable, Optional

from mcpfast.telemetry import attributes
from mcpfast.telemetry.client import ClientTelemetry
from mcpfast.telemetry.metrics import MetricsSink, OTelMetrics
from mcpfast.telemetry.prometheus import PrometheusMetrics, metrics_route
from mcpfast.telemetry.providers import api_available, fast_path_on, switched_off
from mcpfast.telemetry.providers import meter_provider as _meter_provider
from mcpfast.telemetry.providers import tracer_provider as _tracer_provider
from mcpfast.telemetry.server import ServerTelemetry

__all__ = ["api_available", "ClientTelemetry", "MetricsSink", "OTelMetrics", "PrometheusMetrics", "ServerTelemetry",
           "attributes", "client_telemetry", "metrics_route", "server_telemetry", "transport_attributes"]

# network.transport and network.protocol.* of each mcpfast transport.
_TRANSPORTS = {
    "stdio": {attributes.NETWORK_TRANSPORT: "pipe"},
    "tcp": {attributes.NETWORK_TRANSPORT: "tcp"},
    "http": {attributes.NETWORK_TRANSPORT: "tcp", attributes.NETWORK_PROTOCOL_NAME: "http",
             attributes.NETWORK_PROTOCOL_VERSION: "1.1"},
    "websocket": {attributes.NETWORK_TRANSPORT: "tcp", attributes.NETWORK_PROTOCOL_NAME: "websocket"},
}


def transport_attributes(kind: Optional[str], host: Optional[str] = None,
                         port: Optional[int] = None) -> dict[str, Any]:
    """The attributes of a transport (``"stdio"``, ``"tcp"``, ``"http"``, ``"websocket"``;
    others: none) and its server address and port."""
    found: dict[str, Any] = dict(_TRANSPORTS.get(kind or "", {}))
    if host is not None:
        found[attributes.SERVER_ADDRESS] = host
        if port is not None:
            found[attributes.SERVER_PORT] = port
    return found


def _sinks(given_meter: Any, metrics: Iterable[MetricsSink], fast_path: bool) -> list[Any]:
    sinks: list[Any] = list(metrics)
    provider = _meter_provider(given_meter)
    if provider is not None:
        sinks.append(OTelMetrics(provider, fast_path=fast_path))
    return sinks


def server_telemetry(tracer_provider: Any = None, meter_provider: Any = None, *,
                     metrics: Iterable[MetricsSink] = (), transport: Optional[str] = None,
                     host: Optional[str] = None, port: Optional[int] = None,
                     capture_content: bool = False,
                     fast_path: Optional[bool] = None) -> Optional[ServerTelemetry]:
    """The server middleware for the providers given, else the configured ones, plus the
    ``metrics`` sinks; None when there is nothing to record to (or
    ``MCPFAST_TELEMETRY=off``). ``fast_path``: None: on unless
    ``MCPFAST_TELEMETRY_PATH=public``; False: the SDK's public span and record calls only."""
    if switched_off():
        return None
    fast = fast_path_on() if fast_path is None else bool(fast_path)
    tracer = _tracer_provider(tracer_provider)
    sinks = _sinks(meter_provider, metrics, fast)
    if tracer is None and not sinks:
        return None
    return ServerTelemetry(tracer, sinks, transport_attributes=transport_attributes(transport, host, port),
                           capture_content=capture_content, fast_path=fast)


def client_telemetry(tracer_provider: Any = None, meter_provider: Any = None, *,
                     metrics: Iterable[MetricsSink] = (), transport: Optional[str] = None,
                     host: Optional[str] = None, port: Optional[int] = None,
                     capture_content: bool = False,
                     fast_path: Optional[bool] = None) -> Optional[ClientTelemetry]:
    """The client observer, as :func:`server_telemetry` (None when nothing records)."""
    if switched_off():
        return None
    fast = fast_path_on() if fast_path is None else bool(fast_path)
    tracer = _tracer_provider(tracer_provider)
    sinks = _sinks(meter_provider, metrics, fast)
    if tracer is None and not sinks:
        return None
    return ClientTelemetry(tracer, sinks, transport_attributes=transport_attributes(transport, host, port),
                           capture_content=capture_content, fast_path=fast)

