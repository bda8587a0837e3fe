"""The fast span path (mcpfast.telemetry.fast_spans): the same requests through it and
through the SDK's public ``start_span`` export the same spans (names, kinds, attributes,
parent/child, links, events, status, resource, scope); the handler's own spans are
children of the request's; the sampler's decision is the SDK's; every condition the path
needs, when not met, sends the server to the public path, which still records."""

from __future__ import annotations

import asyncio
import os
import random
import sys
from pathlib import Path
from typing import Any, Iterator, Optional

import pytest

pytest.importorskip("opentelemetry.sdk", reason="needs the OpenTelemetry SDK (the test extra installs it)")

from opentelemetry import trace  # noqa: E402
from opentelemetry.sdk.trace import (  # noqa: E402
    ReadableSpan,
    SpanLimits,
    SpanProcessor,
    TracerProvider,
    sampling,  # noqa: E402
)
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator  # noqa: E402
from opentelemetry.trace import SpanContext, TraceFlags, TraceState  # noqa: E402

import mcpfast  # noqa: E402
from mcpfast import Context  # noqa: E402
from mcpfast.jsonrpc.errors import JSONRPCError  # noqa: E402
from mcpfast.telemetry import ServerTelemetry, fast_spans  # noqa: E402
from mcpfast.telemetry.fast_spans import FastSpan, FastTracer, fast_tracer  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from conftest import Recorded, _reset_globals  # noqa: E402
from traced_app import make_app  # noqa: E402

V2025 = "2025-11-25"


def traced_app() -> Any:
    """The telemetry tests' app plus a tool that works with the current span itself."""
    app = make_app()

    @app.tool()
    def inner(ctx: Context) -> str:
        current = trace.get_current_span()
        current.set_attribute("app.note", "set by the handler")
        current.add_event("app.event", {"app.step": 1})
        try:
            raise ValueError("handled inside")
        except ValueError as exc:
            current.record_exception(exc, escaped=False)
        with trace.get_tracer("app").start_as_current_span("app.work") as child:
            child.set_attribute("app.kind", "child")
        return type(current).__name__

    return app


def recorded_run(monkeypatch: pytest.MonkeyPatch, public: bool,
                 behind: bool = False) -> tuple[Recorded, list[str]]:
    """One fresh SDK set-up, the same requests; the handler's span types. ``behind``: the
    telemetry behind a plain middleware (which sees every message), so that it runs as a
    hook of the chain rather than as the pipeline's around route."""
    if public:
        monkeypatch.setenv("MCPFAST_TELEMETRY_PATH", "public")
    else:
        monkeypatch.delenv("MCPFAST_TELEMETRY_PATH", raising=False)
    recorded = Recorded()
    _reset_globals()
    trace.set_tracer_provider(recorded.tracer_provider)
    from opentelemetry import metrics

    metrics.set_meter_provider(recorded.meter_provider)
    app = traced_app()
    if behind:
        from mcpfast.telemetry import server_telemetry

        async def outside(ctx: Any, call_next: Any) -> Any:
            return await call_next(ctx)

        app.add_middleware(outside)
        app.add_middleware(server_telemetry())
    kinds: list[str] = []

    async def main() -> None:
        async with mcpfast.connect(app, protocol_version=V2025) as client:
            await client.call_tool("add", {"a": 2, "b": 3})
            await client.call_tool("fails")
            with pytest.raises(JSONRPCError):
                await client.call_tool("no-such-tool")
            await client.read_resource("memo://note")
            await client.get_prompt("greet", {"who": "ada"})
            await client.call_tool("counts", {"steps": 2}, progress=lambda *args: None)
            kinds.append((await client.call_tool("inner"))["content"][0]["text"])
            created = await client.request("tools/call", {"name": "slow", "arguments": {}, "task": {"ttl": 60000}})
            await client.request("tasks/result", {"taskId": created["task"]["taskId"]})

    try:
        asyncio.run(main())
    finally:
        _reset_globals()
    return recorded, kinds


def normalized(spans: list[Any]) -> list[dict]:
    """What must be equal between the two paths, ids replaced by the names they point at."""
    by_id = {span.context.span_id: span for span in spans}

    def named(context: Optional[SpanContext]) -> Any:
        if context is None:
            return None
        found = by_id.get(context.span_id)
        return (found.name, found.kind.name) if found is not None else ("elsewhere", context.is_remote)

    out = []
    for span in spans:
        events = []
        for event in span.events:
            attrs = dict(event.attributes)
            stack = attrs.pop("exception.stacktrace", None)
            events.append((event.name, attrs, stack is not None and "ValueError: handled inside" in stack))
        out.append({
            "name": span.name, "kind": span.kind.name, "attributes": dict(span.attributes),
            "status": (span.status.status_code.name, span.status.description),
            "parent": named(span.parent), "parent_remote": span.parent.is_remote if span.parent else None,
            "same_trace_as_parent": span.parent is None or span.parent.trace_id == span.context.trace_id,
            "links": [(named(link.context), dict(link.attributes or {})) for link in span.links],
            "events": events, "flags": int(span.context.trace_flags),
            "resource": dict(span.resource.attributes),
            "scope": (span.instrumentation_scope.name, span.instrumentation_scope.version),
            "dropped": (span.dropped_attributes, span.dropped_events, span.dropped_links),
            "timed": span.start_time <= span.end_time,
        })
    return sorted(out, key=lambda one: (one["name"], one["kind"], repr(one["attributes"])))


def test_the_fast_and_the_public_path_export_the_same_spans(monkeypatch):
    fast, fast_kinds = recorded_run(monkeypatch, public=False)
    public, public_kinds = recorded_run(monkeypatch, public=True)
    # The handler saw the fast path's span, then the SDK's.
    assert fast_kinds == ["FastSpan"] and public_kinds == ["_Span"]
    fast_spans_, public_spans = normalized(fast.spans()), normalized(public.spans())
    assert [(s["name"], s["kind"]) for s in fast_spans_] == [(s["name"], s["kind"]) for s in public_spans]
    for ours, theirs in zip(fast_spans_, public_spans):
        assert ours == theirs, ours["name"]
    names = {span["name"] for span in fast_spans_}
    assert {"tools/call add", "tools/call inner", "app.work", "tasks/result"} <= names
    # What the comparison covered: events, links, a child of the handler, an error.
    inner = next(s for s in fast_spans_ if s["name"] == "tools/call inner" and s["kind"] == "SERVER")
    assert [event[0] for event in inner["events"]] == ["app.event", "exception"]
    assert inner["events"][1][2] and inner["attributes"]["app.note"] == "set by the handler"
    work = next(s for s in fast_spans_ if s["name"] == "app.work")
    assert work["parent"] == ("tools/call inner", "SERVER") and work["same_trace_as_parent"]
    result = next(s for s in fast_spans_ if s["name"] == "tasks/result" and s["kind"] == "SERVER")
    assert result["links"] == [(("tools/call slow", "SERVER"), {})]
    progress = next(s for s in fast_spans_ if s["name"] == "tools/call counts" and s["kind"] == "SERVER")
    assert [event[0] for event in progress["events"]] == ["notifications/progress"] * 2
    refused = next(s for s in fast_spans_ if s["name"] == "tools/call no-such-tool" and s["kind"] == "SERVER")
    assert refused["status"][0] == "ERROR" and refused["attributes"]["error.type"] == "-32602"
    server_add = next(s for s in fast_spans_ if s["name"] == "tools/call add" and s["kind"] == "SERVER")
    assert server_add["parent"] == ("tools/call add", "CLIENT") and server_add["parent_remote"] is True


def test_the_around_route_and_the_chains_hook_export_the_same_spans(monkeypatch):
    def counts(recorded: Recorded) -> list[tuple]:
        return sorted((sorted(point.attributes.items()), point.count)
                      for point in recorded.points("mcp.server.operation.duration"))

    # (Each run's measurements read before the next: what the fast path aggregated reaches
    # the SDK at its next collection while the sink lives, and the run's server goes.)
    around, around_kinds = recorded_run(monkeypatch, public=False)
    around_counts = counts(around)
    chained, chained_kinds = recorded_run(monkeypatch, public=False, behind=True)
    chained_counts = counts(chained)
    assert around_kinds == chained_kinds == ["FastSpan"]
    ours, theirs = normalized(around.spans()), normalized(chained.spans())
    assert [(s["name"], s["kind"]) for s in ours] == [(s["name"], s["kind"]) for s in theirs]
    for one, other in zip(ours, theirs):
        assert one == other, one["name"]
    # And the same measurements (counts per attribute set).
    assert around_counts == chained_counts and len(around_counts) >= 5


# -- the sampler's decision ---------------------------------------------------------------


def _parents(rng: random.Random) -> Iterator[Optional[SpanContext]]:
    # No parent, and remote / local, sampled / not, each with its own random trace id.
    yield None
    for remote in (False, True):
        for sampled in (False, True):
            yield SpanContext(rng.getrandbits(128) or 1, rng.getrandbits(64) or 1, remote,
                              TraceFlags(TraceFlags.SAMPLED if sampled else 0), TraceState([("k", "v")]))


@pytest.mark.parametrize("sampler", [
    sampling.ALWAYS_ON, sampling.ALWAYS_OFF, sampling.TraceIdRatioBased(0.3),
    sampling.ParentBased(sampling.ALWAYS_ON), sampling.ParentBased(sampling.ALWAYS_OFF),
    sampling.ParentBased(sampling.TraceIdRatioBased(0.5)),
    sampling.ParentBased(sampling.ALWAYS_ON, remote_parent_not_sampled=sampling.ALWAYS_ON,
                         local_parent_sampled=sampling.TraceIdRatioBased(0.2)),
], ids=lambda sampler: sampler.get_description())
def test_the_sampling_decision_is_the_sdks(sampler):
    plan = fast_spans._plan_of(sampler)
    assert plan is not None
    rng = random.Random(7)
    decisions = set()
    for _ in range(300):
        for parent in _parents(rng):
            context = trace.set_span_in_context(trace.NonRecordingSpan(parent)) if parent is not None else None
            trace_id = parent.trace_id if parent is not None else rng.getrandbits(128)
            expected = sampler.should_sample(context, trace_id, "n").decision.is_sampled()
            assert fast_spans._sampled(plan, parent, trace_id) is expected
            decisions.add(expected)
    # A ratio decides both ways over 1500 trace ids.
    if "TraceIdRatioBased" in sampler.get_description():
        assert decisions == {True, False}


def test_samplers_it_cannot_decide_for_take_the_public_path():
    class Custom(sampling.Sampler):
        def should_sample(self, *args: Any, **kwargs: Any) -> sampling.SamplingResult:
            return sampling.SamplingResult(sampling.Decision.RECORD_AND_SAMPLE)

        def get_description(self) -> str:
            return "custom"

    for sampler in (Custom(), sampling.StaticSampler(sampling.Decision.RECORD_ONLY),
                    sampling.ParentBased(Custom()), sampling.ParentBased(sampling.ParentBased(sampling.ALWAYS_ON))):
        assert fast_spans._plan_of(sampler) is None


def test_an_unsampled_request_is_a_fresh_non_recording_context():
    provider = TracerProvider(sampler=sampling.ALWAYS_OFF)
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    fast = fast_tracer(provider, "mcpfast", "1")
    assert fast is not None
    parent = SpanContext(5, 6, True, TraceFlags(TraceFlags.SAMPLED), TraceState([("a", "b")]))
    span = fast.start("x", trace.SpanKind.SERVER, trace.set_span_in_context(trace.NonRecordingSpan(parent)), {})
    assert not span.is_recording() and type(span) is trace.NonRecordingSpan
    context = span.get_span_context()
    assert context.trace_id == 5 and context.span_id not in (0, 6) and not context.trace_flags.sampled
    assert context.trace_state == parent.trace_state
    span.end()
    assert exporter.get_finished_spans() == ()


# -- the span's context: the API's context variable itself, or its public calls ---------


@pytest.mark.parametrize("direct", [True, False], ids=["context variable", "public calls"])
def test_entering_a_span_is_attach_of_set_span_in_context(direct):
    from opentelemetry import context as otel_context

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(InMemorySpanExporter()))
    fast = fast_tracer(provider, "mcpfast", "1", direct_context=direct)
    assert fast is not None and fast.direct is direct
    outer_key = otel_context.create_key("test.outer")
    outer_token = otel_context.attach(otel_context.set_value(outer_key, "kept"))
    try:
        before = otel_context.get_current()
        remote = trace.set_span_in_context(trace.NonRecordingSpan(
            SpanContext(7, 8, True, TraceFlags(TraceFlags.SAMPLED))), otel_context.Context())
        for parent, together in ((None, False), (remote, False), (None, True), (remote, True)):
            if together:
                # begin: start and enter in one, with the span's start time given.
                begun = fast.begin("x", trace.SpanKind.SERVER, parent, {}, None, 12345)
                assert begun is not None
                span, context, token = begun
                assert span.start_time == 12345
            else:
                span = fast.start("x", trace.SpanKind.SERVER, parent, {})
            assert type(span) is FastSpan
            expected_trace = 7 if parent is not None else span.get_span_context().trace_id
            assert span.get_span_context().trace_id == expected_trace
            assert span.parent == (None if parent is None else trace.get_current_span(remote).get_span_context())
            if not together:
                context, token = fast.enter(span, parent)
            # What the public calls make: the span current, the rest of the base context kept.
            assert context == trace.set_span_in_context(span, parent)
            assert otel_context.get_current() is context and trace.get_current_span() is span
            assert otel_context.get_value(outer_key) == ("kept" if parent is None else None)
            # A child started in it is the span's child.
            child = fast.start("child", trace.SpanKind.INTERNAL, None, {})
            assert child.parent == span.get_span_context()
            fast.leave(token)
            assert otel_context.get_current() is before
            span.end()
    finally:
        otel_context.detach(outer_token)


def test_the_context_variable_is_used_on_this_api():
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(InMemorySpanExporter()))
    fast = fast_tracer(provider, "mcpfast", "1")
    assert fast is not None and fast.direct
    assert fast_spans.direct_context_parts() is not None


def test_the_ended_span_is_the_readable_span_the_processors_get():
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    fast = fast_tracer(provider, "mcpfast", "1")
    assert fast is not None
    span = fast.start("x", trace.SpanKind.SERVER, None, {"a": 1})
    span.end()
    (exported,) = exporter.get_finished_spans()
    assert exported is span and isinstance(exported, ReadableSpan)
    assert exported.resource is provider.resource and exported.instrumentation_scope.name == "mcpfast"
    assert dict(exported.attributes) == {"a": 1} and exported.end_time >= exported.start_time
    # Ended: later changes are not taken (the exporter may be reading it).
    span.set_attribute("b", 2)
    span.update_name("y")
    assert dict(exported.attributes) == {"a": 1} and exported.name == "x"


# -- the conditions, and the public path where one fails ----------------------------------


class Starting(SpanProcessor):
    """A processor whose on_start does something (the fast path would skip it)."""

    def __init__(self) -> None:
        self.started: list[str] = []

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        self.started.append(span.name)


def _provider(**options: Any) -> tuple[TracerProvider, InMemorySpanExporter]:
    provider = TracerProvider(**options)
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


class OwnIds(RandomIdGenerator):
    pass


@pytest.mark.parametrize("case", ["custom processor", "custom id generator", "attribute length limit",
                                  "few attributes allowed", "sdk too old", "sdk 2", "provider subclass",
                                  "tracer disabled"])
def test_each_condition_not_met_takes_the_public_path(case, monkeypatch):
    options: dict[str, Any] = {}
    if case == "custom id generator":
        options["id_generator"] = OwnIds()
    elif case == "attribute length limit":
        options["span_limits"] = SpanLimits(max_span_attribute_length=100)
    elif case == "few attributes allowed":
        options["span_limits"] = SpanLimits(max_span_attributes=8)
    elif case == "sdk too old":
        monkeypatch.setattr("opentelemetry.sdk.version.__version__", "1.30.0")
    elif case == "sdk 2":
        monkeypatch.setattr("opentelemetry.sdk.version.__version__", "2.0.0")
    provider_class: Any = TracerProvider
    if case == "provider subclass":
        provider_class = type("Mine", (TracerProvider,), {})
    provider = provider_class(**options)
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    starting = Starting()
    if case == "custom processor":
        provider.add_span_processor(starting)
    if case == "tracer disabled":
        from opentelemetry.sdk.trace import _disable_tracer_configurator

        provider._set_tracer_configurator(tracer_configurator=_disable_tracer_configurator)
    assert fast_tracer(provider, "mcpfast", mcpfast.__version__) is None
    telemetry = ServerTelemetry(provider)
    assert telemetry._fast is None
    kinds = _serve_inner(telemetry)
    if case == "tracer disabled":
        # The SDK's own answer: no span at all.
        assert exporter.get_finished_spans() == ()
        return
    assert kinds == ["_Span"]
    assert "tools/call inner" in [span.name for span in exporter.get_finished_spans()]
    if case == "custom processor":
        assert "tools/call inner" in starting.started


def _serve_inner(telemetry: ServerTelemetry) -> list[str]:
    app = traced_app()
    app.telemetry = False
    app.add_middleware(telemetry)
    kinds: list[str] = []

    async def main() -> None:
        async with mcpfast.connect(app, observer=None) as client:
            kinds.append((await client.call_tool("inner"))["content"][0]["text"])

    asyncio.run(main())
    return kinds


def test_a_processor_added_later_sends_the_next_requests_to_the_public_path():
    provider, exporter = _provider()
    telemetry = ServerTelemetry(provider)
    assert isinstance(telemetry._fast, FastTracer)
    assert _serve_inner(telemetry) == ["FastSpan"]
    starting = Starting()
    provider.add_span_processor(starting)
    assert _serve_inner(telemetry) == ["_Span"]
    assert starting.started.count("tools/call inner") == 1
    assert [span.name for span in exporter.get_finished_spans()].count("tools/call inner") == 2


def test_a_batch_processor_gets_the_fast_spans():
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(BatchSpanProcessor(exporter))
    telemetry = ServerTelemetry(provider)
    assert telemetry._fast is not None
    assert _serve_inner(telemetry) == ["FastSpan"]
    provider.force_flush()
    assert "tools/call inner" in [span.name for span in exporter.get_finished_spans()]
    provider.shutdown()


def test_fast_path_false_is_the_public_path():
    provider, exporter = _provider()
    assert ServerTelemetry(provider, fast_path=False)._fast is None
    assert _serve_inner(ServerTelemetry(provider, fast_path=False)) == ["_Span"]


def test_a_fast_span_is_ended_once_and_keeps_the_sdks_attribute_and_status_rules():
    provider, exporter = _provider()
    fast = fast_tracer(provider, "mcpfast", "1")
    assert fast is not None
    sdk_span = provider.get_tracer("sdk").start_span("s", attributes={"a": 1})
    span = fast.start("s", trace.SpanKind.SERVER, None, {"a": 1})
    assert isinstance(span, FastSpan) and span.get_span_context().trace_flags.sampled
    for one in (span, sdk_span):
        one.set_status(trace.StatusCode.OK)
        one.set_status(trace.StatusCode.ERROR, "ignored: OK is final")
        one.set_attribute("list", [1, 2])
        one.set_attributes({"bad": object(), "mixed": [1, "x"], "float": 1.5, "flag": True})
        one.set_attribute("a", 2)  # set again: moves to the end, as in the SDK's
        one.set_attribute("", "an invalid key: dropped")
        one.update_name("renamed")
        one.end()
        one.set_attribute("late", 1)
        one.update_name("too late")
        one.end()
    ours, theirs = sorted(exporter.get_finished_spans(), key=lambda s: s.instrumentation_scope.name)
    assert ours.instrumentation_scope.name == "mcpfast"
    assert ours.status.status_code.name == theirs.status.status_code.name == "OK"
    assert ours.name == theirs.name == "renamed"
    assert list(ours.attributes.items()) == list(theirs.attributes.items())
    assert ours.dropped_attributes == theirs.dropped_attributes
    assert dict(ours.attributes)["list"] == (1, 2)
    assert ours.parent is None and ours.context.trace_flags.random_trace_id
    assert int(ours.context.trace_flags) == int(theirs.context.trace_flags)


def test_past_the_attribute_limit_the_oldest_go_as_in_the_sdks_span():
    provider, exporter = _provider(span_limits=SpanLimits(max_span_attributes=_LIMIT))
    fast = fast_tracer(provider, "mcpfast", "1")
    assert fast is not None
    spans = [fast.start("s", trace.SpanKind.SERVER, None, {"first": 0}),
             provider.get_tracer("sdk").start_span("s", attributes={"first": 0})]
    for one in spans:
        for n in range(_LIMIT + 5):
            one.set_attribute(f"k{n}", n)
        one.end()
    ours, theirs = sorted(exporter.get_finished_spans(), key=lambda s: s.instrumentation_scope.name)
    assert list(ours.attributes.items()) == list(theirs.attributes.items())
    assert ours.dropped_attributes == theirs.dropped_attributes == 6


_LIMIT = 64


def test_ids_are_reseeded_in_a_forked_child():
    if not hasattr(os, "fork"):
        pytest.skip("os.fork is not available on this platform: the re-seeding after fork cannot happen here")
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its next span id, then out
        os.write(write_end, b"%d" % fast_spans.IDS.span_id())
        os._exit(0)
    os.close(write_end)
    mine = fast_spans.IDS.span_id()
    with os.fdopen(read_end, "rb") as pipe:
        theirs = int(pipe.read())
    os.waitpid(pid, 0)
    assert theirs != mine


def test_ids_are_in_range_never_zero_and_every_bit_used():
    from mcpfast.telemetry.span_core import IdSource

    ids = IdSource()
    spans = [ids.span_id() for _ in range(2000)]
    traces = [ids.trace_id() for _ in range(2000)]
    assert all(0 < one < 2**64 for one in spans) and all(0 < one < 2**128 for one in traces)
    assert len(set(spans)) == len(spans) and len(set(traces)) == len(traces)
    # Every bit of the ids is used (a stuck bit would show in 2000 draws).
    assert all(any(one >> bit & 1 for one in spans) and not all(one >> bit & 1 for one in spans)
               for bit in range(64))
    assert all(any(one >> bit & 1 for one in traces) and not all(one >> bit & 1 for one in traces)
               for bit in range(128))
    # Two sources are seeded apart (the fork test proves the child's re-seed).
    again = IdSource()
    assert not set(again.span_id() for _ in range(100)) & set(spans)


def test_the_version_bounds():
    assert fast_spans.sdk_version_supported("1.45.2")
    assert not fast_spans.sdk_version_supported("1.44.0")
    assert not fast_spans.sdk_version_supported("2.0.0")
    assert not fast_spans.sdk_version_supported("nonsense")


def test_a_batch_processor_is_handed_spans_through_its_queue_else_on_end():
    provider = TracerProvider()
    simple_exporter, batch_exporter = InMemorySpanExporter(), InMemorySpanExporter()
    simple, batch = SimpleSpanProcessor(simple_exporter), BatchSpanProcessor(batch_exporter)
    provider.add_span_processor(simple)
    provider.add_span_processor(batch)
    fast = fast_tracer(provider, "mcpfast", "1")
    assert fast is not None
    ends = fast.span_ends()
    assert ends[0] == simple.on_end and ends[1] != batch.on_end

    class OwnBatch(BatchSpanProcessor):
        """Not the SDK's class itself: handed on_end (the fallback)."""

    odd = OwnBatch(InMemorySpanExporter())
    assert fast_spans._end_of(odd) == odd.on_end
    odd.shutdown()
    span = fast.start("x", trace.SpanKind.SERVER, None, {})
    span.end()
    batch.force_flush()
    assert simple_exporter.get_finished_spans() == (span,) and batch_exporter.get_finished_spans() == (span,)
    batch.shutdown()


@pytest.mark.parametrize("as_tuple", [True, False], ids=["the tuple", "the constructor"])
def test_span_contexts_are_the_constructors(as_tuple):
    provider = TracerProvider(sampler=sampling.ParentBased(sampling.TraceIdRatioBased(0.5)))
    provider.add_span_processor(SimpleSpanProcessor(InMemorySpanExporter()))
    fast = fast_tracer(provider, "mcpfast", "1")
    assert fast is not None and fast.tuple_contexts and fast_spans.span_context_layout_fits()
    fast.tuple_contexts = as_tuple
    remote = trace.set_span_in_context(trace.NonRecordingSpan(SpanContext(
        7, 8, True, TraceFlags(TraceFlags.SAMPLED), TraceState([("k", "v")]))))
    for parent in [None] * 20 + [remote]:
        span = fast.start("x", trace.SpanKind.SERVER, parent, {})
        made = span.get_span_context()
        again = SpanContext(made.trace_id, made.span_id, False, made.trace_flags, made.trace_state)
        assert type(made) is SpanContext and made == again and made.is_valid and not made.is_remote
        assert made.trace_state == (TraceState([("k", "v")]) if parent is not None else trace.DEFAULT_TRACE_STATE)
        span.end()


def test_the_batch_queue_queues_as_the_processors_emit_and_hands_it_the_rest(monkeypatch, caplog):
    from mcpfast.telemetry import span_core

    exporter = InMemorySpanExporter()
    batch = BatchSpanProcessor(exporter, max_queue_size=4, max_export_batch_size=2, schedule_delay_millis=60_000)
    processor = batch._batch_processor
    queue = span_core.BatchQueue(processor)
    emitted: list[Any] = []
    own_emit = processor.emit
    monkeypatch.setattr(processor, "emit", lambda span: (emitted.append(span), own_emit(span)))
    provider = TracerProvider()
    fast = fast_tracer(provider, "mcpfast", "1")
    spans = [fast.start(f"s{i}", trace.SpanKind.SERVER, None, {}) for i in range(6)]
    # Queued in front, as emit does; the processor's own emit never called.
    queue.emit(spans[0])
    assert list(processor._queue) == [spans[0]] and emitted == []
    # The batch size reached: the worker is woken and exports them.
    queue.emit(spans[1])
    from loop import eventually

    # (The worker is a thread: waited for, bounded.)
    asyncio.run(eventually(lambda: len(exporter.get_finished_spans()) == 2))
    assert emitted == []
    # A full queue: the processor's emit (which drops the oldest and says so).
    processor._worker_awaken.set = lambda: None  # (the worker kept asleep: the queue fills)
    for span in spans[2:6]:
        processor._queue.appendleft(span)
    with caplog.at_level("WARNING"):
        queue.emit(spans[0])
    assert emitted == [spans[0]] and "Queue full" in caplog.text
    # In another process than the processor's (a fork not yet seen by it): its emit.
    monkeypatch.setattr(processor, "_pid", -1)
    processor._queue.clear()
    queue.emit(spans[1])
    assert emitted[-1] is spans[1]
    monkeypatch.undo()
    batch.shutdown()
    # Shut down: its emit, which ignores the span.
    queue.emit(spans[2])
    assert spans[2] not in processor._queue
