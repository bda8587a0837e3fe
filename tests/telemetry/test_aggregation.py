"""The metrics' fast path (mcpfast.telemetry.aggregation): histograms aggregated by
mcpfast and handed to the SDK when it collects read, on the SDK's InMemoryMetricReader,
exactly as the SDK's record() per value (counts, buckets, sum, min, max, attributes,
temporality), over several collections, cumulative and delta; where the merge does not fit
(a view changing the histogram, another reader) the public record() is taken."""

from __future__ import annotations

import asyncio
import random
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk", reason="needs the OpenTelemetry SDK (the test extra installs it)")

from opentelemetry.sdk.metrics import Histogram, MeterProvider  # noqa: E402
from opentelemetry.sdk.metrics.export import AggregationTemporality, InMemoryMetricReader  # noqa: E402
from opentelemetry.sdk.metrics.view import ExplicitBucketHistogramAggregation, View  # noqa: E402

import mcpfast  # noqa: E402
from mcpfast.telemetry import OTelMetrics, ServerTelemetry  # noqa: E402
from mcpfast.telemetry import attributes as a  # noqa: E402
from mcpfast.telemetry.aggregation import FLUSH_INSTRUMENT, Aggregator  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from traced_app import make_app  # noqa: E402

DURATIONS = (a.SERVER_OPERATION_DURATION, a.CLIENT_OPERATION_DURATION, a.SERVER_SESSION_DURATION,
             a.CLIENT_SESSION_DURATION)


def _reader(delta: bool) -> InMemoryMetricReader:
    if delta:
        return InMemoryMetricReader(preferred_temporality={Histogram: AggregationTemporality.DELTA})
    return InMemoryMetricReader()


def points_of(reader: InMemoryMetricReader) -> dict:
    """Every histogram point by (metric, attributes), as comparable tuples; the metric names
    seen (the flush gauge must never be one)."""
    data = reader.get_metrics_data()
    found: dict = {}
    names: set = set()
    for resource in (data.resource_metrics if data is not None else ()):
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                names.add(metric.name)
                if metric.name not in DURATIONS:
                    continue
                for point in metric.data.data_points:
                    key = (metric.name, tuple(sorted(point.attributes.items())))
                    exemplars = sorted((e.value, e.time_unix_nano, e.trace_id, e.span_id,
                                        tuple(sorted((e.filtered_attributes or {}).items())))
                                       for e in point.exemplars)
                    found[key] = (metric.data.aggregation_temporality, point.count, round(point.sum, 9),
                                  tuple(point.bucket_counts), tuple(point.explicit_bounds), point.min, point.max,
                                  metric.unit, [e[0] for e in exemplars], [e[2:] for e in exemplars])
    assert FLUSH_INSTRUMENT not in names
    return found


def _contexts() -> list:
    # No context (the current one: no span), a sampled span's, an unsampled span's.
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

    from mcpfast.telemetry.fast_spans import FastSpan, fast_tracer

    # And contexts of fast spans (always sampled: the trace-based filter's shortcut).
    fast = fast_tracer(TracerProvider(), "test", "1")
    assert fast is not None
    fast_contexts = []
    for n in range(2):
        span, context, token = fast.begin(f"s{n}", trace.SpanKind.SERVER, None, {})
        fast.leave(token)
        assert type(span) is FastSpan
        fast_contexts.append(context)
    return [None] + [trace.set_span_in_context(NonRecordingSpan(SpanContext(
        n + 1, n + 7, False, TraceFlags(TraceFlags.SAMPLED if n % 2 else 0)))) for n in range(6)] + fast_contexts


@pytest.mark.parametrize("exemplar_filter", ["trace_based", "always_on", "always_off"])
@pytest.mark.parametrize("delta", [False, True], ids=["cumulative", "delta"])
def test_the_fast_path_reads_as_record_per_value(delta, exemplar_filter, monkeypatch):
    from opentelemetry import context as otel_context

    monkeypatch.setenv("OTEL_METRICS_EXEMPLAR_FILTER", exemplar_filter)
    fast_reader, public_reader = _reader(delta), _reader(delta)
    fast = OTelMetrics(MeterProvider(metric_readers=[fast_reader]))
    public = OTelMetrics(MeterProvider(metric_readers=[public_reader]), fast_path=False)
    contexts = _contexts()
    exemplars = 0
    assert fast.fast and not public.fast
    # Cached dicts (handed again and again, as the targets do) and fresh equal ones.
    sets = [{a.MCP_METHOD_NAME: "tools/call", a.GEN_AI_TOOL_NAME: "add"},
            {a.MCP_METHOD_NAME: "tools/call", a.GEN_AI_TOOL_NAME: "add", a.ERROR_TYPE: "tool_error"},
            {a.MCP_METHOD_NAME: "ping"}, {}]
    rng = random.Random(3)
    for collection in range(4):
        for _ in range(500):
            attrs = rng.choice(sets)
            if rng.random() < 0.2:
                attrs = dict(attrs)
            # Values across every bucket, exact bounds included (bisect_left: le).
            value = rng.choice([rng.uniform(0, 400), rng.choice(a.DURATION_BUCKETS), 0.0])
            method = rng.choice(["server_operation", "client_operation", "server_session", "client_session"])
            context = rng.choice(contexts)
            # Sometimes no context given while one with a span is the current one.
            current = rng.choice(contexts[1:]) if context is None and rng.random() < 0.5 else None
            token = otel_context.attach(current) if current is not None else None
            for sink in (fast, public):
                if context is None:
                    getattr(sink, method)(value, attrs)
                else:
                    getattr(sink, method)(value, attrs, context)
            if token is not None:
                otel_context.detach(token)
        if collection == 2:
            continue  # two intervals' worth before the next collection
        ours = points_of(fast_reader)
        assert ours == points_of(public_reader)
        exemplars += sum(len(point[8]) for point in ours.values())
    # The comparison covered exemplars wherever the filter lets some through.
    assert (exemplars > 0) == (exemplar_filter != "always_off")
    # And a collection with nothing new.
    assert points_of(fast_reader) == points_of(public_reader)


def test_several_sinks_on_one_provider_are_all_handed_over():
    reader, public_reader = InMemoryMetricReader(), InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    first, second = OTelMetrics(provider), OTelMetrics(provider)
    public = OTelMetrics(MeterProvider(metric_readers=[public_reader]), fast_path=False)
    assert first.fast and second.fast
    attrs = {a.MCP_METHOD_NAME: "tools/call"}
    for value in (0.001, 0.5, 7.0):
        first.server_operation(value, attrs)
        second.server_operation(value * 2, attrs)
        public.server_operation(value, attrs)
        public.server_operation(value * 2, attrs)
    assert points_of(reader) == points_of(public_reader)


def test_two_readers_each_see_every_value():
    one, two, public_reader = InMemoryMetricReader(), _reader(delta=True), _reader(delta=True)
    fast = OTelMetrics(MeterProvider(metric_readers=[one, two]))
    public = OTelMetrics(MeterProvider(metric_readers=[public_reader]), fast_path=False)
    attrs = {a.MCP_METHOD_NAME: "tools/list"}
    for value in (0.01, 0.03, 3.0):
        fast.server_operation(value, attrs)
        public.server_operation(value, attrs)
    first_collection = points_of(one)
    assert points_of(two) == points_of(public_reader)
    key = (a.SERVER_OPERATION_DURATION, ((a.MCP_METHOD_NAME, "tools/list"),))
    assert first_collection[key][1] == 3


def test_a_view_that_changes_the_histogram_keeps_the_public_path():
    reader = InMemoryMetricReader()
    view = View(instrument_name=a.SERVER_OPERATION_DURATION, aggregation=ExplicitBucketHistogramAggregation((1.0, 2.0)))
    metrics = OTelMetrics(MeterProvider(metric_readers=[reader], views=[view]))
    assert not metrics.fast
    metrics.server_operation(1.5, {a.MCP_METHOD_NAME: "ping"})
    ((_, point),) = [(k, v) for k, v in points_of(reader).items() if k[0] == a.SERVER_OPERATION_DURATION]
    assert point[3] == (0, 1, 0) and point[1] == 1


def test_a_reader_added_later_that_does_not_fit_switches_to_record():
    from opentelemetry.sdk.metrics._internal.aggregation import ExponentialBucketHistogramAggregation

    first = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[first])
    metrics = OTelMetrics(provider)
    assert metrics.fast
    attrs = {a.MCP_METHOD_NAME: "ping"}
    metrics.server_operation(0.5, attrs)
    later = InMemoryMetricReader(preferred_aggregation={Histogram: ExponentialBucketHistogramAggregation()})
    provider.add_metric_reader(later)
    first.get_metrics_data()  # the flush finds the reader it cannot merge into
    assert not metrics.fast
    metrics.server_operation(0.25, attrs)
    data = later.get_metrics_data()
    counts = [point.count for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics
              if m.name == a.SERVER_OPERATION_DURATION for point in m.data.data_points]
    assert counts == [1]
    assert points_of(first)[(a.SERVER_OPERATION_DURATION, ((a.MCP_METHOD_NAME, "ping"),))][1] == 2


def test_the_aggregator_alone():
    aggregator = Aggregator((1.0, 2.0))
    attrs = {"k": "v"}
    for value in (0.5, 1.0, 1.5, 9.0):
        aggregator.record(value, attrs)
    (series,) = aggregator.take()
    assert (series.counts, series.total, series.count, series.low, series.high) == ([2, 1, 1], 12.0, 4, 0.5, 9.0)
    assert series.attributes == attrs and series.attributes is not attrs
    assert aggregator.take() == []


def test_equal_attribute_sets_share_a_series_whatever_dict_holds_them():
    aggregator = Aggregator((1.0,))
    cached = {"b": 2, "a": 1}
    aggregator.record(0.5, cached)
    aggregator.record(2.0, {"a": 1, "b": 2})
    aggregator.record(0.5, cached)
    aggregator.record(0.5, {"a": 2})
    taken = {tuple(sorted(series.attributes.items())): series.counts for series in aggregator.take()}
    assert taken == {(("a", 1), ("b", 2)): [2, 1], (("a", 2),): [1, 0]}
    # After a take the same dict starts a new series (and a dict changed since counts as
    # what it holds now, though the callers never change theirs).
    cached["a"] = 3
    aggregator.record(0.5, cached)
    assert [(series.attributes, series.counts) for series in aggregator.take()] == [({"a": 3, "b": 2}, [1, 0])]


def test_a_servers_metrics_on_the_fast_path_count_every_request():
    reader = InMemoryMetricReader()
    metrics = OTelMetrics(MeterProvider(metric_readers=[reader]))
    app = make_app()
    app.telemetry = False
    app.add_middleware(ServerTelemetry(None, [metrics]))

    async def main() -> None:
        async with mcpfast.connect(app, observer=None) as client:
            for _ in range(7):
                await client.call_tool("add", {"a": 1, "b": 2})
            await client.call_tool("fails")

    asyncio.run(main())
    points = {dict(key[1]).get(a.GEN_AI_TOOL_NAME, "") + "/" + dict(key[1]).get(a.ERROR_TYPE, ""): value
              for key, value in points_of(reader).items() if key[0] == a.SERVER_OPERATION_DURATION}
    assert points["add/"][1] == 7 and points["fails/tool_error"][1] == 1
    assert sum(points["add/"][3]) == 7


def test_the_environment_forces_the_public_path(monkeypatch):
    from mcpfast.telemetry import server_telemetry

    monkeypatch.setenv("MCPFAST_TELEMETRY_PATH", "public")
    telemetry: Any = server_telemetry(meter_provider=MeterProvider(metric_readers=[InMemoryMetricReader()]))
    assert not telemetry.metrics[0].fast
    monkeypatch.delenv("MCPFAST_TELEMETRY_PATH")
    telemetry = server_telemetry(meter_provider=MeterProvider(metric_readers=[InMemoryMetricReader()]))
    assert telemetry.metrics[0].fast


@pytest.mark.parametrize("version", ["1.30.0", "2.0.0"])
def test_an_sdk_outside_the_checked_versions_keeps_the_public_path(version, monkeypatch):
    monkeypatch.setattr("opentelemetry.sdk.version.__version__", version)
    reader = InMemoryMetricReader()
    metrics = OTelMetrics(MeterProvider(metric_readers=[reader]))
    assert not metrics.fast
    metrics.server_operation(0.5, {a.MCP_METHOD_NAME: "ping"})
    assert points_of(reader)[(a.SERVER_OPERATION_DURATION, ((a.MCP_METHOD_NAME, "ping"),))][1] == 1


def test_a_provider_whose_internals_differ_keeps_the_public_path():
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    # As an SDK whose consumer keeps its readers elsewhere would look.
    provider._measurement_consumer._reader_storages = list(provider._measurement_consumer._reader_storages.values())
    metrics = OTelMetrics(provider)
    assert not metrics.fast


def test_a_meter_provider_subclass_keeps_the_public_path():
    reader = InMemoryMetricReader()
    metrics = OTelMetrics(type("Mine", (MeterProvider,), {})(metric_readers=[reader]))
    assert not metrics.fast
    metrics.server_operation(0.5, {a.MCP_METHOD_NAME: "ping"})
    assert points_of(reader)[(a.SERVER_OPERATION_DURATION, ((a.MCP_METHOD_NAME, "ping"),))][1] == 1


@pytest.mark.parametrize("mode", ["trace", "on"])
def test_the_span_of_a_context_is_found_alike_through_the_variable_and_the_public_calls(mode):
    from opentelemetry import context as otel_context

    contexts = _contexts()
    # Something that is not a span under the span's key: no span, as get_current_span says.
    contexts.append(otel_context.Context({next(iter(contexts[1])): "not a span"}))
    taken = []
    for direct in (True, False):
        aggregator = Aggregator(a.DURATION_BUCKETS, direct_context=direct)
        aggregator.exemplars = mode
        attrs = {a.MCP_METHOD_NAME: "ping"}
        for index, context in enumerate(contexts):
            # One bucket per context: each keeps its own candidate.
            aggregator.record(a.DURATION_BUCKETS[index], attrs, context)
        (series,) = aggregator.take()
        taken.append({bucket: [(entry[0], entry[2] is not None, entry[3]) if entry else None for entry in slot]
                      for bucket, slot in (series.exemplars or {}).items()})
    assert taken[0] == taken[1]
    with_span = sum(1 for slot in taken[0].values() if slot[0][2])
    # trace: the sampled spans only (3 of 6, and the 2 fast spans); on: every value, 8 of
    # them with a span.
    assert len(taken[0]) == (5 if mode == "trace" else len(contexts)) and with_span == (5 if mode == "trace" else 8)


@pytest.mark.parametrize("fast_path", [True, False], ids=["fast", "public"])
def test_a_traced_requests_duration_is_its_spans(fast_path):
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    app = make_app()
    app.telemetry = False
    app.add_middleware(ServerTelemetry(provider, [OTelMetrics(MeterProvider(metric_readers=[reader]),
                                                              fast_path=fast_path)], fast_path=fast_path))

    async def main() -> None:
        async with mcpfast.connect(app, observer=None) as client:
            await client.call_tool("add", {"a": 1, "b": 2})

    asyncio.run(main())
    (span,) = [span for span in exporter.get_finished_spans() if span.name == "tools/call add"]
    (point,) = [value for key, value in points_of(reader).items() if key[0] == a.SERVER_OPERATION_DURATION
                and dict(key[1]).get(a.GEN_AI_TOOL_NAME) == "add"]
    # One clock read each for the span's start and end and the duration metric.
    assert point[1] == 1 and point[2] == round((span.end_time - span.start_time) / 1e9, 9)


def test_the_aggregator_ignores_what_the_sdk_ignores_and_refuses_bad_bounds():
    aggregator = Aggregator((1.0, 2.0))
    attrs = {"k": "v"}
    for value in (-1.0, float("nan"), float("inf"), 2.0, 2):
        aggregator.record(value, attrs)
    (series,) = aggregator.take()
    # Only the two finite non-negative values; a value on a bound is in that bound's bucket.
    assert (series.counts, series.count, series.total) == ([0, 2, 0], 2, 4.0)
    with pytest.raises(ValueError, match="increasing"):
        Aggregator((2.0, 1.0))
    with pytest.raises(ValueError, match="exemplars"):
        aggregator.exemplars = "sometimes"
    with pytest.raises(TypeError):
        aggregator.record("1.0", attrs)
