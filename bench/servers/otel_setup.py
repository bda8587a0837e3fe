"""The OpenTelemetry set-up of the telemetry rows of the benchmarks: the SDK's tracer
provider with a batch span processor (the production shape: spans are queued and exported
off the request path), whose exporter drops what it is handed, and the SDK's meter
provider with an in-memory reader (measurements are aggregated as in production; nothing
is exported). The same set-up for mcpfast's servers and the official SDK's."""

from typing import Sequence


def configure_sdk() -> None:
    """Install the SDK providers globally (module docstring)."""
    from opentelemetry import metrics, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

    class Dropping(SpanExporter):
        """Takes the batches and drops them (the exporter's own I/O is not what is measured)."""

        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(Dropping()))
    trace.set_tracer_provider(provider)
    metrics.set_meter_provider(MeterProvider(metric_readers=[InMemoryMetricReader()]))
