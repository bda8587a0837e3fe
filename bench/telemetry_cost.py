"""What the server's telemetry costs per tools/call, in this process: no transport, no
client (their cost is the same with telemetry on or off, and would hide the difference).

    python bench/telemetry_cost.py [--calls N] [--rounds R] [--profile VARIANT]

Each variant is a Server with one ``echo`` tool on a connection fed JSON-RPC frames
directly (``Server.connect(send)``), the OpenTelemetry SDK set up as in
bench/servers/otel_setup.py (batch span processor with a dropping exporter, in-memory
metric reader). Variants run interleaved, round after round, so that the machine's load
falls on all of them alike; the figure is each one's best round (CPU time of the process), and its ratio to "off".
``--profile VARIANT`` runs cProfile over one variant instead and prints where the time went;
``--attribute`` times each SDK step of a traced request alone (span with and without
attributes, ids, context attach, histogram record with and without an exemplar).
``--run VARIANT`` only makes ``--calls`` requests of one variant (after its start);
``--callgrind VARIANT ...`` runs that under valgrind's callgrind with ``--calls`` and with 0
calls, for each variant, and prints (instructions of N - of 0) / N: instructions per call,
the SDK's batch thread included (steadier than times on a shared machine; indicative).

The fast paths (mcpfast.telemetry.fast_spans, .aggregation) are taken in every variant
they apply to; the ``public ...`` variants force the SDK's own start_span / record().
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import sys
import time
from typing import Any, Callable, Optional, Sequence

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from mcpfast import Server  # noqa: E402
from mcpfast.server.middleware import Middleware  # noqa: E402
from mcpfast.telemetry import OTelMetrics, ServerTelemetry, transport_attributes  # noqa: E402

VERSION = "2025-11-25"


def _tracer_provider(sampler: Any = None) -> Any:
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

    class Dropping(SpanExporter):
        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    provider = TracerProvider(sampler=sampler) if sampler is not None else TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(Dropping()))
    return provider


def _meter_provider(exemplars: bool = True) -> Any:
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    if exemplars:
        return MeterProvider(metric_readers=[InMemoryMetricReader()])
    from opentelemetry.sdk.metrics._internal.exemplar import AlwaysOffExemplarFilter

    return MeterProvider(metric_readers=[InMemoryMetricReader()], exemplar_filter=AlwaysOffExemplarFilter())


def _sampled_10() -> Any:
    from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased

    return _tracer_provider(ParentBased(TraceIdRatioBased(0.1)))


#: name -> (tracer provider maker or None, meter provider maker or None). The fast span and
#: metric paths are taken where they apply (mcpfast.telemetry.fast_spans / aggregation);
#: the "public" variants force the SDK's start_span and record() per request.
VARIANTS: dict[str, tuple[Optional[Callable[[], Any]], Optional[Callable[[], Any]]]] = {
    "off": (None, None),
    "passing eager middleware": (None, None),
    "spans+metrics": (_tracer_provider, _meter_provider),
    "spans": (_tracer_provider, None),
    "metrics": (None, _meter_provider),
    "spans 10%+metrics": (_sampled_10, _meter_provider),
    "spans+metrics, no exemplars": (_tracer_provider, lambda: _meter_provider(exemplars=False)),
    "public spans+metrics": (_tracer_provider, _meter_provider),
    "public spans": (_tracer_provider, None),
    "public metrics": (None, _meter_provider),
}


class _Passing(Middleware):
    """An eager middleware that does nothing."""

    eager = True

    async def on_message(self, ctx: Any, call_next: Any) -> Any:
        return await call_next(ctx)


class Fed:
    """One variant's server and connection, fed tools/call frames by batches."""

    def __init__(self, variant: str) -> None:
        tracer_maker, meter_maker = VARIANTS[variant]
        server = Server("cost", telemetry=False)

        @server.tool()
        async def echo(text: str) -> str:
            return text

        if variant == "passing eager middleware":
            # The pipeline's own cost: any middleware leaves the compiled tools/call path.
            server.add_middleware(_Passing())
        elif tracer_maker is not None or meter_maker is not None:
            fast = not variant.startswith("public")
            sinks = [OTelMetrics(meter_maker(), fast_path=fast)] if meter_maker is not None else []
            server.add_middleware(ServerTelemetry(tracer_maker() if tracer_maker else None, sinks,
                                                  transport_attributes=transport_attributes("tcp", "127.0.0.1", 1),
                                                  fast_path=fast))
        self.answered = 0
        self.waiting: Optional[asyncio.Future] = None
        self.wanted = 0
        self.connection = server.connect(self._send)
        self.next_id = 1

    def _send(self, frame: bytes) -> None:
        self.answered += 1
        if self.waiting is not None and self.answered >= self.wanted and not self.waiting.done():
            self.waiting.set_result(None)

    async def start(self) -> None:
        await self.run_frames([b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"'
                               + VERSION.encode() + b'","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}'])
        self.connection.feed(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')

    async def run_frames(self, frames: list[bytes]) -> None:
        self.wanted = self.answered + len(frames)
        self.waiting = asyncio.get_running_loop().create_future()
        for frame in frames:
            self.connection.feed(frame)
        await self.waiting

    def calls(self, count: int) -> list[bytes]:
        frames = []
        for _ in range(count):
            frames.append(b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo",'
                          b'"arguments":{"text":"hello"}}}' % self.next_id)
            self.next_id += 1
        return frames


async def measure(calls: int, rounds: int, batch: int, variants: list[str]) -> dict[str, float]:
    fed = {name: Fed(name) for name in variants}
    for one in fed.values():
        await one.start()
        await one.run_frames(one.calls(batch))  # warm up
    best = dict.fromkeys(variants, float("inf"))
    for _ in range(rounds):
        for name, one in fed.items():
            # CPU time of this process: the other processes on a loaded machine weigh on
            # it less than on the wall clock (the SDK's batch thread is counted too).
            started = time.process_time()
            for _ in range(calls // batch):
                await one.run_frames(one.calls(batch))
            best[name] = min(best[name], (time.process_time() - started) / calls)
    return best


def attribute(count: int) -> list[tuple[str, float]]:
    """CPU time of each SDK step a traced request takes, alone (the same providers)."""
    from opentelemetry import context as otel_context
    from opentelemetry import trace as otel_trace
    from opentelemetry.sdk.trace.id_generator import RandomIdGenerator

    tracer = _tracer_provider().get_tracer("cost")
    span_attrs = dict(transport_attributes("tcp", "127.0.0.1", 1), **{
        "jsonrpc.protocol.version": "2.0", "mcp.method.name": "tools/call", "jsonrpc.request.id": "7",
        "mcp.protocol.version": VERSION, "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "echo"})
    metric_attrs = {"network.transport": "tcp", "mcp.method.name": "tools/call",
                    "mcp.protocol.version": VERSION, "gen_ai.tool.name": "echo"}
    wide_metric_attrs = dict(metric_attrs, **{"gen_ai.operation.name": "execute_tool",
                                              "network.protocol.name": "http", "network.protocol.version": "1.1"})
    histogram = _meter_provider().get_meter("cost").create_histogram("d", unit="s")
    quiet_histogram = _meter_provider(exemplars=False).get_meter("cost").create_histogram("d", unit="s")
    kind = otel_trace.SpanKind.SERVER
    sampled = tracer.start_span("parent")
    sampled_context = otel_trace.set_span_in_context(sampled)
    ids = RandomIdGenerator()

    def timed(step: Callable[[], None]) -> float:
        best = float("inf")
        for _ in range(7):
            started = time.process_time()
            for _ in range(count):
                step()
            best = min(best, (time.process_time() - started) / count)
        return best

    def span_no_attributes() -> None:
        tracer.start_span("tools/call echo", kind=kind).end()

    def span_attributes() -> None:
        tracer.start_span("tools/call echo", kind=kind, attributes=span_attrs).end()

    def span_set_one_by_one() -> None:
        span = tracer.start_span("tools/call echo", kind=kind)
        for key, value in span_attrs.items():
            span.set_attribute(key, value)
        span.end()

    def attach_detach() -> None:
        otel_context.detach(otel_context.attach(sampled_context))

    return [
        ("span, no attributes (start+end, batch processor)", timed(span_no_attributes)),
        (f"span, {len(span_attrs)} attributes at start_span", timed(span_attributes)),
        (f"span, {len(span_attrs)} attributes set one by one", timed(span_set_one_by_one)),
        ("trace+span id generation", timed(lambda: (ids.generate_trace_id(), ids.generate_span_id()))),
        ("set_span_in_context + attach + detach", timed(
            lambda: otel_context.detach(otel_context.attach(otel_trace.set_span_in_context(sampled))))),
        ("attach + detach", timed(attach_detach)),
        (f"histogram record, {len(metric_attrs)} attributes, no span", timed(
            lambda: histogram.record(0.001, metric_attrs))),
        (f"histogram record, {len(wide_metric_attrs)} attributes, no span", timed(
            lambda: histogram.record(0.001, wide_metric_attrs))),
        (f"histogram record, {len(metric_attrs)} attributes, sampled span (exemplar)", timed(
            lambda: histogram.record(0.001, metric_attrs, sampled_context))),
        (f"histogram record, {len(metric_attrs)} attributes, sampled span, exemplars off", timed(
            lambda: quiet_histogram.record(0.001, metric_attrs, sampled_context))),
    ]


def _instructions(variant: str, calls: int) -> int:
    """Total instructions callgrind counts for ``--run variant`` with ``calls`` requests."""
    import subprocess
    import tempfile

    # Once outside valgrind first: a changed module's bytecode is compiled there, not
    # counted in one of the two runs (a compile is worth many requests).
    subprocess.run([sys.executable, os.path.abspath(__file__), "--run", variant, "--calls", "0"], check=True,
                   capture_output=True)
    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, "cg")
        # One hash seed: dict layouts (and so instruction counts) repeat from run to run.
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable,
                        os.path.abspath(__file__), "--run", variant, "--calls", str(calls)],
                       env=dict(os.environ, PYTHONHASHSEED="0"), check=True, capture_output=True)
        with open(out, encoding="utf-8") as found:
            for line in found:
                if line.startswith("summary:"):
                    return int(line.split()[1])
    raise RuntimeError("callgrind wrote no summary")


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--batch", type=int, default=1, help="requests in flight at a time")
    parser.add_argument("--profile", choices=sorted(VARIANTS), default=None)
    parser.add_argument("--only", nargs="*", default=None, help="variants to run")
    parser.add_argument("--attribute", action="store_true", help="time the SDK's steps alone")
    parser.add_argument("--run", choices=sorted(VARIANTS), default=None, help="only make --calls requests")
    parser.add_argument("--callgrind", nargs="+", choices=sorted(VARIANTS), default=None,
                        help="instructions per call of these variants")
    options = parser.parse_args(argv)
    if options.callgrind is not None:
        for variant in options.callgrind:
            full, empty = (_instructions(variant, calls) for calls in (options.calls, 0))
            print(f"{variant:32} {(full - empty) // options.calls:9d} instructions per tools/call")
        return
    if options.run is not None:
        async def run() -> None:
            one = Fed(options.run)
            await one.start()
            for _ in range(options.calls // options.batch):
                await one.run_frames(one.calls(options.batch))

        asyncio.run(run())
        return
    if options.attribute:
        for what, seconds in attribute(options.calls * 5):
            print(f"{what:72} {seconds * 1e6:6.2f} us")
        return
    if options.profile is not None:
        profiler = cProfile.Profile()

        async def profiled() -> None:
            one = Fed(options.profile)
            await one.start()
            await one.run_frames(one.calls(100))
            profiler.enable()
            for _ in range(options.calls // options.batch):
                await one.run_frames(one.calls(options.batch))
            profiler.disable()

        asyncio.run(profiled())
        pstats.Stats(profiler).sort_stats("tottime").print_stats(45)
        return
    variants = options.only or list(VARIANTS)
    best = asyncio.run(measure(options.calls, options.rounds, options.batch, variants))
    off = best.get("off")
    print(f"{'variant':32} {'us/call':>9} {'vs off':>7} {'+us':>7}")
    for name in variants:
        ratio = f"{off / best[name]:.2f}x" if off else ""
        extra = f"{(best[name] - off) * 1e6:.1f}" if off else ""
        print(f"{name:32} {best[name] * 1e6:9.1f} {ratio:>7} {extra:>7}")


if __name__ == "__main__":
    main(sys.argv[1:])
