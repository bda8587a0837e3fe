"""Fixtures of the telemetry tests: the OpenTelemetry SDK as the global tracer and meter
provider, with in-memory exporters, for one test at a time (the API's globals are set
once per process by design: the fixture puts back the unset state afterwards, so that no
other test's server finds a provider configured)."""

from __future__ import annotations

from typing import Any, Iterator

import pytest


class Recorded:
    """What the SDK recorded: ``spans()`` (finished spans), ``points(name)`` (the data
    points of a metric), the providers themselves."""

    def __init__(self) -> None:
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        self.exporter = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])

    def spans(self) -> list[Any]:
        return list(self.exporter.get_finished_spans())

    def points(self, name: str) -> list[Any]:
        data = self.reader.get_metrics_data()
        found = []
        for resource in (data.resource_metrics if data is not None else ()):
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == name:
                        found.extend(metric.data.data_points)
        return found


def _reset_globals() -> None:
    from opentelemetry import metrics, trace
    from opentelemetry.util._once import Once

    trace._TRACER_PROVIDER_SET_ONCE = Once()
    trace._TRACER_PROVIDER = None
    metrics._internal._METER_PROVIDER_SET_ONCE = Once()
    metrics._internal._METER_PROVIDER = None


@pytest.fixture
def otel() -> Iterator[Recorded]:
    """The SDK configured globally for this test (module docstring); skipped without it."""
    pytest.importorskip("opentelemetry.sdk", reason="needs the OpenTelemetry SDK (the test extra installs it)")
    from opentelemetry import metrics, trace

    recorded = Recorded()
    _reset_globals()
    trace.set_tracer_provider(recorded.tracer_provider)
    metrics.set_meter_provider(recorded.meter_provider)
    try:
        yield recorded
    finally:
        _reset_globals()
        recorded.tracer_provider.shutdown()
        recorded.meter_provider.shutdown()
