"""PrometheusMetrics: the telemetry's metrics kept in this process and served as
Prometheus text (exposition format 0.0.4) on the HTTP server's ``/metrics``.

Names follow OpenTelemetry's Prometheus mapping: dots become underscores and the unit is
appended (``mcp.server.operation.duration`` in seconds -> the histogram
``mcp_server_operation_duration_seconds`` with ``_bucket`` / ``_sum`` / ``_count``); the
attributes become labels the same way (``mcp.method.name`` -> ``mcp_method_name``). The
buckets are the convention's. The number of label sets is bounded (``max_series`` per
metric; past it new sets are counted under ``mcpfast_metrics_dropped_series_total``), since
tool names come from the peer.
"""

from __future__ import annotations

import bisect
import threading
from typing import Any, Callable, Mapping

from mcpfast.telemetry import attributes as a

__all__ = ["CONTENT_TYPE", "DEFAULT_MAX_SERIES", "PrometheusMetrics", "metrics_route"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
DEFAULT_MAX_SERIES = 2000

_HISTOGRAMS = {
    a.SERVER_OPERATION_DURATION: "Duration of MCP requests the server answered",
    a.CLIENT_OPERATION_DURATION: "Duration of MCP requests the client sent",
    a.SERVER_SESSION_DURATION: "Duration of MCP sessions on the server",
    a.CLIENT_SESSION_DURATION: "Duration of MCP sessions on the client",
}
_GAUGES = {
    a.SERVER_ACTIVE_REQUESTS: "Requests the server is answering",
    a.SERVER_ACTIVE_SESSIONS: "Open MCP sessions (handshake era)",
    a.SERVER_ACTIVE_CONNECTIONS: "Open server connections",
    a.CLIENT_ACTIVE_REQUESTS: "Requests the client awaits an answer to",
}


def _metric_name(name: str) -> str:
    return name.replace(".", "_")


def _escape(value: Any) -> str:
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(key: tuple) -> str:
    return ",".join(f'{_metric_name(name)}="{_escape(value)}"' for name, value in key)


class _Histogram:
    __slots__ = ("bounds", "series", "max_series", "dropped")

    def __init__(self, max_series: int) -> None:
        self.bounds = a.DURATION_BUCKETS
        # label key -> [count per bucket (+Inf last), sum]
        self.series: dict[tuple, list] = {}
        self.max_series = max_series
        self.dropped = 0

    def record(self, seconds: float, attributes: Mapping[str, Any], context: Any = None) -> None:
        """One duration; ``context`` (the request's trace context) is not kept here."""
        key = tuple(sorted(attributes.items()))
        entry = self.series.get(key)
        if entry is None:
            if len(self.series) >= self.max_series:
                self.dropped += 1
                return
            entry = self.series[key] = [[0] * (len(self.bounds) + 1), 0.0]
        entry[0][bisect.bisect_left(self.bounds, seconds)] += 1
        entry[1] += seconds

    def render(self, name: str, help_text: str, out: list[str]) -> None:
        base = _metric_name(name) + "_seconds"
        out.append(f"# HELP {base} {help_text}")
        out.append(f"# TYPE {base} histogram")
        for key, (counts, total) in list(self.series.items()):
            labels = _labels(key)
            sep = "," if labels else ""
            running = 0
            for bound, count in zip(self.bounds, counts):
                running += count
                out.append(f'{base}_bucket{{{labels}{sep}le="{bound}"}} {running}')
            running += counts[-1]
            out.append(f'{base}_bucket{{{labels}{sep}le="+Inf"}} {running}')
            braces = f"{{{labels}}}" if labels else ""
            out.append(f"{base}_sum{braces} {total!r}")
            out.append(f"{base}_count{braces} {running}")


class PrometheusMetrics:
    """A :class:`~mcpfast.telemetry.metrics.MetricsSink` kept in memory and rendered as
    Prometheus text by :meth:`render` (module docstring)."""

    def __init__(self, *, max_series: int = DEFAULT_MAX_SERIES) -> None:
        if isinstance(max_series, bool) or not isinstance(max_series, int) or max_series < 1:
            raise ValueError(f"max_series must be an int >= 1, got {max_series!r}")
        self._histograms = {name: _Histogram(max_series) for name in _HISTOGRAMS}
        self._gauges = dict.fromkeys(_GAUGES, 0)
        # Rendering may run in another thread (a scrape served elsewhere); records happen
        # on the event loop. The lock keeps one render consistent with itself.
        self._lock = threading.Lock()
        self.server_operation = self._histograms[a.SERVER_OPERATION_DURATION].record
        self.client_operation = self._histograms[a.CLIENT_OPERATION_DURATION].record
        self.server_session = self._histograms[a.SERVER_SESSION_DURATION].record
        self.client_session = self._histograms[a.CLIENT_SESSION_DURATION].record

    def add(self, name: str, delta: int) -> None:
        self._gauges[name] += delta

    def render(self) -> bytes:
        """Every metric in the Prometheus text format."""
        out: list[str] = []
        with self._lock:
            dropped = 0
            for name, histogram in self._histograms.items():
                histogram.render(name, _HISTOGRAMS[name], out)
                dropped += histogram.dropped
            for name, value in self._gauges.items():
                metric = _metric_name(name)
                out.append(f"# HELP {metric} {_GAUGES[name]}")
                out.append(f"# TYPE {metric} gauge")
                out.append(f"{metric} {value}")
            out.append("# HELP mcpfast_metrics_dropped_series_total Records dropped: too many label sets")
            out.append("# TYPE mcpfast_metrics_dropped_series_total counter")
            out.append(f"mcpfast_metrics_dropped_series_total {dropped}")
        out.append("")
        return "\n".join(out).encode()


def metrics_route(metrics: PrometheusMetrics) -> Callable[[Any], tuple[int, list[tuple[str, str]], bytes]]:
    """A GET route for the HTTP server's ``extra_routes``: ``route(request) -> (status,
    headers, body)`` answering with ``metrics.render()``."""

    def route(request: Any) -> tuple[int, list[tuple[str, str]], bytes]:
        return 200, [("content-type", CONTENT_TYPE)], metrics.render()

    return route
