"""The requests in flight: counted by the server's (and the client's) telemetry itself (a Gauge the sinks
track, no call per change) and reported as before: the OpenTelemetry observable up-down
counter, the Prometheus gauge, and ``add`` for a sink that cannot track."""

from __future__ import annotations

import asyncio
import gc
from typing import Any, Mapping

import pytest

pytest.importorskip("opentelemetry.sdk", reason="needs the OpenTelemetry SDK (the test extra installs it)")

from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # noqa: E402

import mcpfast  # noqa: E402
from loop import until  # noqa: E402
from mcpfast import Server  # noqa: E402
from mcpfast.telemetry import OTelMetrics, PrometheusMetrics, ServerTelemetry  # noqa: E402
from mcpfast.telemetry import attributes as a  # noqa: E402
from mcpfast.telemetry.client import ClientTelemetry  # noqa: E402
from mcpfast.telemetry.metrics import Gauge, TrackedCounts  # noqa: E402


class Adding:
    """A sink with the protocol's ``add`` only (no ``track``)."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.seen: list[int] = []

    def add(self, name: str, delta: int) -> None:
        self.counts[name] = self.counts.get(name, 0) + delta
        if name == a.SERVER_ACTIVE_REQUESTS:
            self.seen.append(self.counts[name])

    def server_operation(self, seconds: float, attributes: Mapping[str, Any], context: Any = None) -> None:
        pass

    def server_session(self, seconds: float, attributes: Mapping[str, Any]) -> None:
        pass

    def client_operation(self, seconds: float, attributes: Mapping[str, Any], context: Any = None) -> None:
        pass

    def client_session(self, seconds: float, attributes: Mapping[str, Any]) -> None:
        pass


def _observed(reader: InMemoryMetricReader) -> int:
    data = reader.get_metrics_data()
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name == a.SERVER_ACTIVE_REQUESTS:
                    return sum(point.value for point in metric.data.data_points)
    raise AssertionError("no active-requests metric")


def waiting_app() -> tuple[Server, asyncio.Event, list[int]]:
    """An app whose tool ``wait`` waits for the event; ``entered`` grows as calls reach it."""
    app = Server("in-flight", telemetry=False)
    release = asyncio.Event()
    entered: list[int] = []

    @app.tool()
    async def wait() -> str:
        entered.append(1)
        await release.wait()
        return "done"

    return app, release, entered


def test_requests_in_flight_are_reported_by_every_kind_of_sink():
    reader = InMemoryMetricReader()
    otel = OTelMetrics(MeterProvider(metric_readers=[reader]))
    prometheus = PrometheusMetrics()
    adding = Adding()
    app, release, entered = waiting_app()
    app.add_middleware(ServerTelemetry(None, [otel, prometheus, adding]))
    client_prometheus = PrometheusMetrics()
    client_adding = Adding()
    during: list[tuple] = []

    def client_count() -> tuple:
        return (client_prometheus.snapshot()["gauges"][a.CLIENT_ACTIVE_REQUESTS],
                client_adding.counts.get(a.CLIENT_ACTIVE_REQUESTS, 0))

    async def main() -> None:
        observer = ClientTelemetry(None, [client_prometheus, client_adding])
        async with mcpfast.connect(app, observer=observer) as client:
            calls = [asyncio.ensure_future(client.call_tool("wait")) for _ in range(3)]
            await until(lambda: len(entered) == 3)
            during.append((_observed(reader), prometheus.snapshot()["gauges"][a.SERVER_ACTIVE_REQUESTS],
                           adding.counts[a.SERVER_ACTIVE_REQUESTS]) + client_count())
            release.set()
            await asyncio.gather(*calls)

    asyncio.run(main())
    # Three calls waiting (the handshake's requests ended before), on both sides.
    assert during == [(3, 3, 3, 3, 3)]
    assert _observed(reader) == 0
    assert prometheus.snapshot()["gauges"][a.SERVER_ACTIVE_REQUESTS] == 0
    assert adding.counts[a.SERVER_ACTIVE_REQUESTS] == 0 and max(adding.seen) == 3
    assert client_count() == (0, 0)


def test_tracked_counts_add_the_gauges_and_forget_the_gone():
    counts = TrackedCounts([a.SERVER_ACTIVE_REQUESTS])
    counts.add(a.SERVER_ACTIVE_REQUESTS, 2)
    first, second = Gauge(), Gauge()
    counts.track(a.SERVER_ACTIVE_REQUESTS, first)
    counts.track(a.SERVER_ACTIVE_REQUESTS, second)
    first.value, second.value = 5, -1
    assert counts.value(a.SERVER_ACTIVE_REQUESTS) == 6
    assert counts.values() == {a.SERVER_ACTIVE_REQUESTS: 6}
    del second
    gc.collect()
    assert counts.value(a.SERVER_ACTIVE_REQUESTS) == 7
    with pytest.raises(KeyError):
        counts.track("no.such.count", Gauge())
    with pytest.raises(KeyError):
        counts.add("no.such.count", 1)


def test_sinks_given_to_the_telemetry_later_count_the_requests_in_flight_too():
    # (What the Server does with the sinks it serves at /metrics when the user installed
    # a telemetry middleware of their own.)
    first, later, adding = PrometheusMetrics(), PrometheusMetrics(), Adding()
    app, release, entered = waiting_app()
    telemetry = ServerTelemetry(None, [first])
    telemetry.metrics = (*telemetry.metrics, later, adding)
    app.add_middleware(telemetry)
    during: list[tuple] = []

    async def main() -> None:
        async with mcpfast.connect(app, observer=None) as client:
            calls = [asyncio.ensure_future(client.call_tool("wait")) for _ in range(2)]
            await until(lambda: len(entered) == 2)
            during.append(tuple(sink.snapshot()["gauges"][a.SERVER_ACTIVE_REQUESTS] for sink in (first, later))
                          + (adding.counts[a.SERVER_ACTIVE_REQUESTS],))
            release.set()
            await asyncio.gather(*calls)

    asyncio.run(main())
    assert during == [(2, 2, 2)]
    assert [sink.snapshot()["gauges"][a.SERVER_ACTIVE_REQUESTS] for sink in (first, later)] == [0, 0]


def test_a_request_cancelled_before_its_handler_ran_is_ended_on_its_span_and_its_count(caplog):
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    prometheus = PrometheusMetrics()
    app, release, entered = waiting_app()
    app.add_middleware(ServerTelemetry(provider, [prometheus]))
    out: list[bytes] = []

    async def main() -> None:
        import json

        connection = app.connect(out.append)
        connection.feed(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}).encode())
        await until(lambda: len(out) == 1)
        connection.feed(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        # The call and its cancellation read together: cancelled before its task's first step.
        connection.feed(b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait","arguments":{}}}')
        connection.feed(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}')
        await until(lambda: prometheus.snapshot()["gauges"][a.SERVER_ACTIVE_REQUESTS] == 0
                    and any(span.name == "tools/call wait" for span in exporter.get_finished_spans()))
        connection.close()

    asyncio.run(main())
    (span,) = [span for span in exporter.get_finished_spans() if span.name == "tools/call wait"]
    assert span.attributes.get(a.ERROR_TYPE) == "cancelled"
    assert prometheus.snapshot()["gauges"][a.SERVER_ACTIVE_REQUESTS] == 0
    # Its context, gone with it, was not detached from elsewhere (the API would log that).
    assert not [record for record in caplog.records if record.levelname == "ERROR"]
