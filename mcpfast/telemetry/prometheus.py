"""PrometheusMetrics: the telemetry's metrics kept in this process and served as
Prometheus text (exposition format 0.0.4) on the HTTP server's ``/metrics``.

Names follow OpenTelemetry's Prometheus mapping: dots become underscores and the unit is
appended (``mcp.server.operation.duration`` in seconds -> the histogram
``mcp_server_operation_duration_seconds`` with ``_bucket`` / ``_sum`` / ``_count``); the
attributes become labels the same way (``mcp.method.name`` -> ``mcp_method_name``). The
buckets are the convention's. The number of label sets is bounded (``max_series`` per
metric; past it new sets are counted under ``mcpfast_metrics_dropped_series_total``), since
tool names come from the peer.

Under ``mcpfast run ... --workers N`` a scrape answers for every worker, merged as one
process would report them (:mod:`mcpfast.telemetry.worker_metrics`): :meth:`snapshot`
gives a worker's numbers as plain data, :func:`merge_snapshots` adds them up and
:func:`render_snapshot` writes the text.
"""

from __future__ import annotations

import bisect
import threading
from typing import Any, Callable, Iterable, Mapping

from mcpfast.telemetry import attributes as a
from mcpfast.telemetry.metrics import TrackedCounts

__all__ = ["CONTENT_TYPE", "DEFAULT_MAX_SERIES", "PrometheusMetrics", "merge_snapshots", "metrics_route",
           "render_snapshot"]

# A snapshot (PrometheusMetrics.snapshot): plain data, JSON as it is.
Snapshot = dict

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

    def snapshot(self) -> list:
        """The series as [[[name, value] ...], counts, sum] lists (copies)."""
        return [[[list(pair) for pair in key], list(counts), total]
                for key, (counts, total) in list(self.series.items())]


def _render_histogram(name: str, series: list, out: list[str]) -> None:
    bounds = a.DURATION_BUCKETS
    base = _metric_name(name) + "_seconds"
    out.append(f"# HELP {base} {_HISTOGRAMS[name]}")
    out.append(f"# TYPE {base} histogram")
    for pairs, counts, total in series:
        labels = _labels(pairs)
        sep = "," if labels else ""
        running = 0
        for bound, count in zip(bounds, counts):
            running += count
            out.append(f'{base}_bucket{{{labels}{sep}le="{bound}"}} {running}')
        running += counts[-1]
        out.append(f'{base}_bucket{{{labels}{sep}le="+Inf"}} {running}')
        braces = f"{{{labels}}}" if labels else ""
        out.append(f"{base}_sum{braces} {float(total)!r}")
        out.append(f"{base}_count{braces} {running}")


def render_snapshot(snapshot: Snapshot) -> bytes:
    """A snapshot (one process's, or merged) in the Prometheus text format."""
    out: list[str] = []
    histograms = snapshot.get("histograms", {})
    for name in _HISTOGRAMS:
        _render_histogram(name, histograms.get(name, []), out)
    gauges = snapshot.get("gauges", {})
    for name, help_text in _GAUGES.items():
        metric = _metric_name(name)
        out.append(f"# HELP {metric} {help_text}")
        out.append(f"# TYPE {metric} gauge")
        out.append(f"{metric} {gauges.get(name, 0)}")
    out.append("# HELP mcpfast_metrics_dropped_series_total Records dropped: too many label sets")
    out.append("# TYPE mcpfast_metrics_dropped_series_total counter")
    out.append(f"mcpfast_metrics_dropped_series_total {snapshot.get('dropped', 0)}")
    out.append("")
    return "\n".join(out).encode()


def merge_snapshots(snapshots: Iterable[Snapshot], *, gauges: bool = True,
                    max_series: int = DEFAULT_MAX_SERIES) -> Snapshot:
    """The sum of several snapshots: per histogram and label set, the counts and sums
    added; the gauges added (``gauges=False``: left out, for the workers that are gone);
    the dropped records added. At most ``max_series`` label sets per histogram (the rest
    count as dropped): what several processes report stays bounded too."""
    merged: dict[str, dict[tuple, list]] = {name: {} for name in _HISTOGRAMS}
    counts_of = len(a.DURATION_BUCKETS) + 1
    totals = dict.fromkeys(_GAUGES, 0)
    dropped = 0
    for snapshot in snapshots:
        dropped += int(snapshot.get("dropped", 0))
        for name, series in snapshot.get("histograms", {}).items():
            into = merged.get(name)
            if into is None:
                continue  # a metric this version does not know
            for pairs, counts, total in series:
                key = tuple((str(label), str(value)) for label, value in pairs)
                entry = into.get(key)
                if entry is None:
                    if len(into) >= max_series or len(counts) != counts_of:
                        dropped += sum(counts)
                        continue
                    entry = into[key] = [[0] * counts_of, 0.0]
                entry[0] = [mine + theirs for mine, theirs in zip(entry[0], counts)]
                entry[1] += float(total)
        if gauges:
            for name, value in snapshot.get("gauges", {}).items():
                if name in totals:
                    totals[name] += int(value)
    return {"histograms": {name: [[[list(pair) for pair in key], counts, total]
                                  for key, (counts, total) in series.items()]
                           for name, series in merged.items()},
            "gauges": totals if gauges else {}, "dropped": dropped}


class PrometheusMetrics:
    """A :class:`~mcpfast.telemetry.metrics.MetricsSink` kept in memory and rendered as
    Prometheus text by :meth:`render` (module docstring)."""

    def __init__(self, *, max_series: int = DEFAULT_MAX_SERIES) -> None:
        if isinstance(max_series, bool) or not isinstance(max_series, int) or max_series < 1:
            raise ValueError(f"max_series must be an int >= 1, got {max_series!r}")
        self._histograms = {name: _Histogram(max_series) for name in _HISTOGRAMS}
        self._gauges = TrackedCounts(_GAUGES)
        self.add = self._gauges.add
        self.track = self._gauges.track
        # Rendering may run in another thread (a scrape served elsewhere); records happen
        # on the event loop. The lock keeps one render consistent with itself.
        self._lock = threading.Lock()
        self.server_operation = self._histograms[a.SERVER_OPERATION_DURATION].record
        self.client_operation = self._histograms[a.CLIENT_OPERATION_DURATION].record
        self.server_session = self._histograms[a.SERVER_SESSION_DURATION].record
        self.client_session = self._histograms[a.CLIENT_SESSION_DURATION].record

    def snapshot(self) -> Snapshot:
        """This process's numbers as plain data (JSON as it is): what a worker reports."""
        with self._lock:
            return {"histograms": {name: histogram.snapshot() for name, histogram in self._histograms.items()},
                    "gauges": self._gauges.values(),
                    "dropped": sum(histogram.dropped for histogram in self._histograms.values())}

    def render(self) -> bytes:
        """Every metric in the Prometheus text format."""
        return render_snapshot(self.snapshot())


def metrics_route(metrics: PrometheusMetrics) -> Callable[[Any], Any]:
    """A GET route for the HTTP server's ``extra_routes``: ``route(request) -> (status,
    headers, body)`` answering with ``metrics.render()``; in a worker of ``mcpfast run
    --workers`` an async one answering for every worker (:mod:`.worker_metrics`)."""
    from mcpfast.telemetry.worker_metrics import worker_link

    link = worker_link(metrics)
    if link is not None:
        async def gathered(request: Any) -> tuple[int, list[tuple[str, str]], bytes]:
            merged = await link.gather()
            if merged is None:
                return 503, [("content-type", "text/plain"), ("retry-after", "1")], (
                    b"Service Unavailable: the other workers' metrics are out of reach\n")
            return 200, [("content-type", CONTENT_TYPE)], render_snapshot(merged)

        return gathered

    def route(request: Any) -> tuple[int, list[tuple[str, str]], bytes]:
        return 200, [("content-type", CONTENT_TYPE)], metrics.render()

    return route
