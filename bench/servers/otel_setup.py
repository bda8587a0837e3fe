"""The OpenTelemetry set-up of the telemetry rows of the benchmarks: the SDK's tracer
provider with a batch span processor (the production shape: spans are queued and exported
off the request path), whose exporter drops what it is handed, and the SDK's meter
provider with an in-memory reader (measurements are aggregated as in production; nothing
is exported). The same set-up for mcpfast's servers and the official SDK's.

The variants of the telemetry rows: ``spans`` / ``metrics`` install only that provider
(the other stays the API's no-op); ``ratio`` samples that share of the traces
(``ParentBased(TraceIdRatioBased(ratio))``, the usual production sampler)."""

from typing import Optional, Sequence

#: The server-mode suffixes of the variants: suffix -> configure_sdk's keyword arguments.
VARIANTS = {
    "-otel": {},
    "-otel-spans": {"metrics": False},
    "-otel-metrics": {"spans": False},
    "-otel-sampled": {"ratio": 0.1},
}


def configure_sdk(*, spans: bool = True, metrics: bool = True, ratio: Optional[float] = None) -> None:
    """Install the SDK providers globally (module docstring)."""
    from opentelemetry import metrics as otel_metrics
    from opentelemetry import trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

    class Dropping(SpanExporter):
        """Takes the batches and drops them (the exporter's own I/O is not what is measured)."""

        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    if spans:
        if ratio is not None:
            from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased

            provider = TracerProvider(sampler=ParentBased(TraceIdRatioBased(ratio)))
        else:
            provider = TracerProvider()
        provider.add_span_processor(BatchSpanProcessor(Dropping()))
        trace.set_tracer_provider(provider)
    if metrics:
        otel_metrics.set_meter_provider(MeterProvider(metric_readers=[InMemoryMetricReader()]))
