"""Where the telemetry middleware and client observer record their metrics.

A :class:`MetricsSink` takes the convention's durations and mcpfast's up-down counts
(changed through ``add``, or kept by their owner in a :class:`Gauge` the sink tracks and
reads when it reports: the requests in flight, changed twice per request);
:class:`OTelMetrics` records them on an OpenTelemetry meter (histograms with the
convention's bucket boundaries as advice; the counts as observable up-down counters, read
when the meter collects), and
:class:`~mcpfast.telemetry.prometheus.PrometheusMetrics` keeps them in this process for a
Prometheus scrape. Attribute mappings are the caller's, handed over again and again for
the same outcome: never changed (nor copied) here.
"""

from __future__ import annotations

import weakref
from typing import Any, Iterable, Mapping, Protocol

from mcpfast.telemetry import attributes as a

__all__ = ["Gauge", "MetricsSink", "OTelMetrics", "TrackedCounts", "gauge_for"]


class Gauge:
    """A count its owner changes in place (``value``), read by the sinks that
    :meth:`~MetricsSink.track` it when they report: no call per change."""

    __slots__ = ("value", "__weakref__")

    def __init__(self) -> None:
        self.value = 0


class MetricsSink(Protocol):
    """What records the metrics (module docstring)."""

    def server_operation(self, seconds: float, attributes: Mapping[str, Any], context: Any = None) -> None:
        """One request's duration; ``context``: the OpenTelemetry context holding its span
        (None: the current one), for exemplars that point at the trace."""

    def client_operation(self, seconds: float, attributes: Mapping[str, Any], context: Any = None) -> None: ...

    def server_session(self, seconds: float, attributes: Mapping[str, Any]) -> None: ...

    def client_session(self, seconds: float, attributes: Mapping[str, Any]) -> None: ...

    def add(self, name: str, delta: int) -> None:
        """Change one of the up-down counts (``attributes.SERVER_ACTIVE_*``,
        ``CLIENT_ACTIVE_*``): cheap, called twice per request."""

    def track(self, name: str, gauge: Gauge) -> None:
        """Report ``gauge.value`` as part of the count ``name`` from now on (added to what
        ``add`` changed), for as long as the gauge lives."""


def gauge_for(sinks: Iterable[Any], name: str) -> tuple[Gauge, tuple]:
    """A new :class:`Gauge` every sink that can ``track`` reports as the count ``name``,
    and the sinks that cannot (to be told each change through ``add``)."""
    gauge = Gauge()
    adding = []
    for sink in sinks:
        track = getattr(sink, "track", None)
        if track is not None:
            track(name, gauge)
        else:
            adding.append(sink)
    return gauge, tuple(adding)


class TrackedCounts:
    """The up-down counts of a sink: what ``add`` changed plus the tracked gauges' values
    (held weakly: a gauge whose owner is gone counts no more)."""

    __slots__ = ("_counts", "_gauges")

    def __init__(self, names: Iterable[str]) -> None:
        self._counts = dict.fromkeys(names, 0)
        self._gauges: dict[str, weakref.WeakSet[Gauge]] = {name: weakref.WeakSet() for name in self._counts}

    def add(self, name: str, delta: int) -> None:
        """``name``'s count changed by ``delta`` (a KeyError for a name not counted)."""
        self._counts[name] += delta

    def track(self, name: str, gauge: Gauge) -> None:
        """``gauge.value`` is part of ``name``'s count while the gauge lives."""
        if name not in self._counts:
            raise KeyError(name)
        self._gauges[name].add(gauge)

    def value(self, name: str) -> int:
        """``name``'s count now."""
        return self._counts[name] + sum(gauge.value for gauge in list(self._gauges[name]))

    def values(self) -> dict[str, int]:
        """Every count now."""
        return {name: self.value(name) for name in self._counts}


_UP_DOWN = {
    a.SERVER_ACTIVE_REQUESTS: "Requests the server is answering",
    a.SERVER_ACTIVE_SESSIONS: "Open MCP sessions (handshake era)",
    a.SERVER_ACTIVE_CONNECTIONS: "Open server connections",
    a.CLIENT_ACTIVE_REQUESTS: "Requests the client awaits an answer to",
}


class OTelMetrics:
    """The metrics on an OpenTelemetry meter provider's meter ``mcpfast``.

    fast_path: with the SDK's MeterProvider (:mod:`mcpfast.telemetry.aggregation`'s
    conditions), aggregate the histograms here and hand them to the SDK when it collects
    (no exemplars); False: the SDK's ``record()`` per value, always. ``fast`` tells which
    is taken."""

    def __init__(self, meter_provider: Any, *, fast_path: bool = True) -> None:
        from mcpfast import __version__

        meter = meter_provider.get_meter("mcpfast", __version__)

        def histogram(name: str, description: str) -> Any:
            try:
                return meter.create_histogram(name, unit="s", description=description,
                                              explicit_bucket_boundaries_advisory=list(a.DURATION_BUCKETS))
            except TypeError:  # an API before the bucket advice (1.23)
                return meter.create_histogram(name, unit="s", description=description)

        self._server_operation = histogram(a.SERVER_OPERATION_DURATION, "Duration of MCP requests the server answered")
        self._client_operation = histogram(a.CLIENT_OPERATION_DURATION, "Duration of MCP requests the client sent")
        self._server_session = histogram(a.SERVER_SESSION_DURATION, "Duration of MCP sessions on the server")
        self._client_session = histogram(a.CLIENT_SESSION_DURATION, "Duration of MCP sessions on the client")
        self._use_public_records()
        self._feed = self._fast_feed(meter_provider) if fast_path else None
        if self._feed is not None:
            aggregators = self._aggregators
            self.server_operation = aggregators[0].record
            self.client_operation = aggregators[1].record
            self.server_session = aggregators[2].record
            self.client_session = aggregators[3].record
        # The counts are kept here and observed when the meter collects: an SDK measurement
        # per change would cost as much as a span (two per request).
        self._counts = TrackedCounts(_UP_DOWN)
        self.add = self._counts.add
        self.track = self._counts.track
        for name, text in _UP_DOWN.items():
            meter.create_observable_up_down_counter(name, callbacks=[self._observer_of(name)],
                                                    unit="{count}", description=text)

    @property
    def fast(self) -> bool:
        """Whether the histograms are aggregated here (the fast path)."""
        return self._feed is not None

    def _fast_feed(self, meter_provider: Any) -> Any:
        from mcpfast.telemetry.aggregation import Aggregator, sdk_feed

        histograms = (self._server_operation, self._client_operation, self._server_session, self._client_session)
        self._aggregators = [Aggregator(a.DURATION_BUCKETS) for _ in histograms]
        return sdk_feed(meter_provider, list(zip(histograms, self._aggregators)), self._feed_unsound)

    def _feed_unsound(self) -> None:
        # A reader the merge does not fit appeared: the SDK's record() from now on.
        self._feed = None
        self._use_public_records()

    def _use_public_records(self) -> None:
        self.server_operation = self._server_operation.record
        self.client_operation = self._client_operation.record
        self.server_session = self._server_session.record
        self.client_session = self._client_session.record

    def _observer_of(self, name: str) -> Any:
        from opentelemetry.metrics import Observation

        def observe(options: Any) -> list:
            return [Observation(self._counts.value(name))]

        return observe
