"""What the second round of telemetry added, recorded by the SDK's in-memory exporter and
reader: progress notifications as events of the request's span, the client's spans of
initialize and server/discover, client.address from the connection's peer over TCP, and
the metric's attribute sets (only the convention's low-cardinality attributes; exemplars
that point at the request's trace), the HTTP traceparent header as the parent of a request
whose _meta carries none, and the user's sampler, span limits and exemplar filter deciding
as they would for any instrumentation."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

import mcpfast

sys.path.insert(0, str(Path(__file__).parent))
from test_spans import V2025, V2026, assert_child, one, served  # noqa: E402
from traced_app import make_app  # noqa: E402


@pytest.mark.parametrize("transport", ["in-process", "tcp", "http"])
def test_progress_notifications_are_events_of_the_request_span(otel, transport):
    app = make_app()
    heard: list[tuple] = []

    def progress(value, total, message):
        heard.append((value, total, message))

    async def main() -> dict:
        if transport == "in-process":
            async with mcpfast.connect(app, protocol_version=V2025) as client:
                return await client.call_tool("counts", {"steps": 3}, progress=progress)
        async with served(app, transport) as url, mcpfast.connect(url, protocol_version=V2025) as client:
            return await client.call_tool("counts", {"steps": 3}, progress=progress)

    assert asyncio.run(main())["structuredContent"] == {"result": 3}
    span = one(otel.spans(), "tools/call counts", "SERVER")
    events = [(event.name, dict(event.attributes)) for event in span.events]
    assert events == [("notifications/progress", {"mcp.progress": step, "mcp.progress.total": 3,
                                                  "mcp.progress.message": f"step {step}"})
                      for step in (1, 2, 3)]
    # The notifications still reached the client, unchanged.
    assert [value for value, _, _ in heard] == [1, 2, 3]


def test_a_request_without_a_progress_token_has_no_progress_events(otel):
    app = make_app()

    async def main() -> None:
        async with mcpfast.connect(app) as client:
            await client.call_tool("counts", {"steps": 2})

    asyncio.run(main())
    assert one(otel.spans(), "tools/call counts", "SERVER").events == ()


@pytest.mark.parametrize(("version", "method"), [(V2025, "initialize"), (V2026, "server/discover")])
def test_the_client_traces_the_start_of_the_conversation(otel, version, method):
    app = make_app()

    async def main() -> None:
        async with served(app, "http") as url, mcpfast.connect(url, protocol_version=version) as client:
            await client.call_tool("add", {"a": 1, "b": 2})

    asyncio.run(main())
    spans = otel.spans()
    client_span = one(spans, method, "CLIENT")
    assert client_span.attributes["mcp.method.name"] == method
    assert client_span.attributes["network.protocol.name"] == "http"
    # Its context went to the server, whose span of the same request is its child.
    assert_child(one(spans, method, "SERVER"), client_span)
    durations = [point for point in otel.points("mcp.client.operation.duration")
                 if point.attributes["mcp.method.name"] == method]
    assert [point.count for point in durations] == [1]


def test_client_address_over_tcp(otel):
    app = make_app()

    async def main() -> None:
        async with served(app, "tcp") as url, mcpfast.connect(url) as client:
            await client.call_tool("add", {"a": 1, "b": 2})

    asyncio.run(main())
    attrs = one(otel.spans(), "tools/call add", "SERVER").attributes
    assert attrs["client.address"] == "127.0.0.1"
    # Not on the metric: one series per client would be unbounded.
    for point in otel.points("mcp.server.operation.duration"):
        assert "client.address" not in point.attributes


def test_no_client_address_in_process(otel):
    app = make_app()

    async def main() -> None:
        async with mcpfast.connect(app) as client:
            await client.call_tool("add", {"a": 1, "b": 2})

    asyncio.run(main())
    assert "client.address" not in one(otel.spans(), "tools/call add", "SERVER").attributes


def test_the_metric_carries_the_conventions_attributes_only(otel):
    app = make_app()

    async def main() -> None:
        async with served(app, "http") as url, mcpfast.connect(url, protocol_version=V2025) as client:
            for _ in range(3):
                await client.call_tool("add", {"a": 1, "b": 2})
            await client.call_tool("fails")
            await client.get_prompt("greet", {"who": "ada"})

    asyncio.run(main())
    points = {(p.attributes["mcp.method.name"], p.attributes.get("error.type")): p
              for p in otel.points("mcp.server.operation.duration")}
    add = points[("tools/call", None)]
    assert dict(add.attributes) == {"mcp.method.name": "tools/call", "gen_ai.tool.name": "add",
                                    "mcp.protocol.version": V2025, "network.transport": "tcp"}
    assert add.count == 3
    failed = points[("tools/call", "tool_error")]
    assert dict(failed.attributes) == {"mcp.method.name": "tools/call", "gen_ai.tool.name": "fails",
                                       "mcp.protocol.version": V2025, "network.transport": "tcp",
                                       "error.type": "tool_error"}
    assert points[("prompts/get", None)].attributes["gen_ai.prompt.name"] == "greet"


def test_exemplars_point_at_the_request_trace(otel):
    app = make_app()

    async def main() -> None:
        async with mcpfast.connect(app) as client:
            await client.call_tool("add", {"a": 1, "b": 2})

    asyncio.run(main())
    span = one(otel.spans(), "tools/call add", "SERVER")
    point = next(p for p in otel.points("mcp.server.operation.duration")
                 if p.attributes.get("gen_ai.tool.name") == "add")
    assert [(e.trace_id, e.span_id) for e in point.exemplars] == [(span.context.trace_id, span.context.span_id)]


HEADER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
HEADER_SPAN = "00f067aa0ba902b7"


def test_the_http_traceparent_header_is_the_parent_when_meta_has_none(otel):
    app = make_app()
    header = f"00-{HEADER_TRACE}-{HEADER_SPAN}-01"

    async def main() -> None:
        # No client telemetry: nothing in _meta, only the header on every POST.
        async with served(app, "http") as url, mcpfast.connect(
                url, protocol_version=V2026, observer=None, headers={"traceparent": header}) as client:
            await client.call_tool("add", {"a": 1, "b": 2})

    asyncio.run(main())
    span = one(otel.spans(), "tools/call add", "SERVER")
    assert span.parent is not None and span.parent.is_remote
    assert (span.context.trace_id, span.parent.span_id) == (int(HEADER_TRACE, 16), int(HEADER_SPAN, 16))


@pytest.mark.parametrize("header", ["00-zz-00f067aa0ba902b7-01", "garbage", "00-" + "0" * 32 + "-" + "0" * 16 + "-01"])
def test_a_malformed_traceparent_header_is_no_parent(otel, header):
    app = make_app()

    async def main() -> None:
        async with served(app, "http") as url, mcpfast.connect(
                url, protocol_version=V2026, observer=None, headers={"traceparent": header}) as client:
            await client.call_tool("add", {"a": 1, "b": 2})

    asyncio.run(main())
    assert one(otel.spans(), "tools/call add", "SERVER").parent is None


def _own_providers(**tracer_options):
    """A tracer provider (in-memory exporter) and meter provider (in-memory reader) of the
    test's own, configured as a user would."""
    pytest.importorskip("opentelemetry.sdk", reason="needs the OpenTelemetry SDK (the test extra installs it)")
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider(**tracer_options)
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    return tracer_provider, exporter, MeterProvider(metric_readers=[reader]), reader


def _served_with(tracer_provider, meter_provider, calls: int) -> None:
    from mcpfast.telemetry import OTelMetrics, ServerTelemetry

    app = make_app()
    app.add_middleware(ServerTelemetry(tracer_provider, [OTelMetrics(meter_provider)]))

    async def main() -> None:
        async with mcpfast.connect(app, observer=None) as client:
            for _ in range(calls):
                await client.call_tool("add", {"a": 1, "b": 2})

    asyncio.run(main())


def _operation_counts(reader) -> dict:
    counts = {}
    for resource in reader.get_metrics_data().resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name == "mcp.server.operation.duration":
                    for point in metric.data.data_points:
                        counts[point.attributes["mcp.method.name"]] = point.count
    return counts


def test_the_users_sampler_decides_and_metrics_still_count_every_request():
    from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased

    tracer_provider, exporter, meter_provider, reader = _own_providers(
        sampler=ParentBased(TraceIdRatioBased(0.0)))
    _served_with(tracer_provider, meter_provider, 4)
    assert exporter.get_finished_spans() == ()
    assert _operation_counts(reader)["tools/call"] == 4


def test_the_users_span_limits_apply():
    from opentelemetry.sdk.trace import SpanLimits

    tracer_provider, exporter, meter_provider, _ = _own_providers(span_limits=SpanLimits(max_span_attributes=3))
    _served_with(tracer_provider, meter_provider, 1)
    span = one(list(exporter.get_finished_spans()), "tools/call add", "SERVER")
    assert len(span.attributes) == 3
    assert span.dropped_attributes > 0


def test_no_exemplars_with_the_always_off_filter():
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics._internal.exemplar import AlwaysOffExemplarFilter
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    tracer_provider, exporter, _, _ = _own_providers()
    reader = InMemoryMetricReader()
    _served_with(tracer_provider, MeterProvider(metric_readers=[reader], exemplar_filter=AlwaysOffExemplarFilter()),
                 2)
    assert [span.name for span in exporter.get_finished_spans()].count("tools/call add") == 2
    points = [point for resource in reader.get_metrics_data().resource_metrics
              for scope in resource.scope_metrics for metric in scope.metrics
              if metric.name == "mcp.server.operation.duration" for point in metric.data.data_points
              if point.attributes["mcp.method.name"] == "tools/call"]
    assert [(point.count, list(point.exemplars)) for point in points] == [(2, [])]
