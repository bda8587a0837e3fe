"""The fast span path: a light span that is itself the OpenTelemetry SDK's public
``ReadableSpan``, handed once ended to the span processors (a batch processor's queue
directly), instead of an SDK ``Span`` per request (whose attribute validation, locks,
sampler call, processor ``on_start`` and second ``ReadableSpan`` cost more than mcpfast's
whole request).

Taken only where the result is provably the one the SDK's own tracer would produce
(:func:`fast_tracer` checks, else returns None and the caller keeps the public
``tracer.start_span``):

- the provider is exactly the SDK's ``TracerProvider``, opentelemetry-sdk in
  ``SDK_RANGE`` (the internals read here are that range's), its tracer enabled and the
  SDK's own tracer metrics off;
- its sampler one whose decision this module makes itself by the SDK's rule:
  ``ALWAYS_ON``, ``ALWAYS_OFF``, ``TraceIdRatioBased`` (sampled when the trace id's low 64
  bits are below the sampler's bound) and ``ParentBased`` over those;
- its processors exactly ``BatchSpanProcessor`` / ``SimpleSpanProcessor`` (their
  ``on_start`` and ``_on_ending`` do nothing) under the synchronous multi-processor;
- its id generator exactly the default ``RandomIdGenerator`` (ids are made here, in C:
  span_core's ``IdSource``, seeded from ``os.urandom`` and re-seeded in a forked child);
- no attribute value length limit (mcpfast's attributes are strings and ints, far fewer
  than any count limit it accepts).

Checked once per tracer, and again whenever a processor is added. A recorded span is a
:class:`FastSpan`, a real ``opentelemetry.trace.Span`` (the request's handler sees it as
the current span: its own spans are children of it, attributes and events it adds land on
it); an unsampled one the API's ``NonRecordingSpan`` of a fresh context, as the SDK's.
:meth:`FastTracer.enter` / :meth:`~FastTracer.leave` make the span current as
``attach(set_span_in_context(...))`` / ``detach`` would, through the API's context
variable itself where :func:`direct_context_parts` finds it (the API in ``SDK_RANGE``,
its contextvars runtime context), else through those calls.
"""

from __future__ import annotations

import os
import traceback
from time import time_ns
from typing import Any, Mapping, Optional, Sequence

from opentelemetry import trace as trace_api
from opentelemetry.attributes import BoundedAttributes
from opentelemetry.trace import DEFAULT_TRACE_STATE, NonRecordingSpan, SpanContext, TraceFlags
from opentelemetry.trace.status import Status, StatusCode

from mcpfast.telemetry.span_core import BatchQueue, IdSource, SpanCore, TracerCore

try:
    from opentelemetry.sdk.trace import ReadableSpan
except ImportError:  # the API alone: fast_tracer() returns None, no FastSpan is ever made
    ReadableSpan = object  # type: ignore[assignment,misc]

__all__ = ["SDK_RANGE", "FastSpan", "FastTracer", "fast_tracer", "sdk_version_supported"]

#: The opentelemetry-sdk versions whose internals this module was checked against
#: (lowest inclusive, highest exclusive); outside them the public path is taken.
SDK_RANGE = ((1, 45), (2, 0))
#: The fewest span attributes a span limit may allow for the fast path.
_MIN_ATTRIBUTES = 64

# (sampled, random trace id) -> the span's trace flags.
_FLAGS = {(sampled, rand): TraceFlags((TraceFlags.SAMPLED if sampled else 0)
                                      | (TraceFlags.RANDOM_TRACE_ID if rand else 0))
          for sampled in (False, True) for rand in (False, True)}


def _new_ids() -> IdSource:
    # One id source per process: re-seeded in a forked child, so that two workers never
    # share a sequence.
    ids = IdSource()
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=ids.reseed)
    return ids


IDS = _new_ids()


def sdk_version_supported(version: Optional[str] = None) -> bool:
    """Whether ``version`` (default: the installed opentelemetry-sdk's) is in ``SDK_RANGE``."""
    if version is None:
        try:
            from opentelemetry.sdk.version import __version__ as installed
        except ImportError:
            return False
        version = str(installed)
    try:
        found = tuple(int(part) for part in version.split(".")[:2])
    except ValueError:
        return False
    return SDK_RANGE[0] <= found < SDK_RANGE[1]


# -- sampling ----------------------------------------------------------------------------

# A decision plan: ("on",), ("off",), ("ratio", bound), or ("parent", root, remote
# sampled, remote not sampled, local sampled, local not sampled) over the first three.


def _plan_of(sampler: Any, nested: bool = False) -> Optional[tuple]:
    from opentelemetry.sdk.trace import sampling

    kind = type(sampler)
    if kind is sampling.StaticSampler:
        decision = getattr(sampler, "_decision", None)
        if decision is sampling.Decision.RECORD_AND_SAMPLE:
            return ("on",)
        if decision is sampling.Decision.DROP:
            return ("off",)
        return None
    if kind is sampling.TraceIdRatioBased:
        return ("ratio", sampler.bound)
    if kind is sampling.ParentBased and not nested:
        parts = [_plan_of(getattr(sampler, name, None), True) for name in
                 ("_root", "_remote_parent_sampled", "_remote_parent_not_sampled",
                  "_local_parent_sampled", "_local_parent_not_sampled")]
        if any(part is None for part in parts):
            return None
        return ("parent", *parts)
    return None


def _root_decision(plan: tuple) -> Optional[bool]:
    # The decision for a span without a parent when it does not depend on the trace id.
    if plan[0] == "parent":
        plan = plan[1]
    return {"on": True, "off": False}.get(plan[0])


def _sampled(plan: tuple, parent: Optional[SpanContext], trace_id: int) -> bool:
    kind = plan[0]
    if kind == "on":
        return True
    if kind == "off":
        return False
    if kind == "ratio":
        # The SDK's rule: the trace id's low 64 bits below round(rate * 2**64).
        return trace_id & 0xFFFFFFFFFFFFFFFF < plan[1]
    if parent is None:
        chosen = plan[1]
    elif parent.is_remote:
        chosen = plan[2] if parent.trace_flags.sampled else plan[3]
    else:
        chosen = plan[4] if parent.trace_flags.sampled else plan[5]
    return _sampled(chosen, parent, trace_id)


# -- eligibility -------------------------------------------------------------------------


def _processors_fit(multi: Any) -> Optional[tuple]:
    from opentelemetry.sdk.trace import SynchronousMultiSpanProcessor
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

    if type(multi) is not SynchronousMultiSpanProcessor:
        return None
    processors = getattr(multi, "_span_processors", None)
    if type(processors) is not tuple:
        return None
    for processor in processors:
        if type(processor) is not BatchSpanProcessor and type(processor) is not SimpleSpanProcessor:
            return None
    return processors


def fast_tracer(tracer_provider: Any, scope_name: str, scope_version: str, *,
                direct_context: bool = True) -> Optional[FastTracer]:
    """A :class:`FastTracer` for the provider's tracer ``scope_name`` when every condition
    of the module docstring holds, else None (use the public path). ``direct_context``:
    enter and leave span contexts through the API's context variable itself where
    :func:`direct_context_parts` finds it (False: the API's public calls always)."""
    try:
        from opentelemetry.sdk.trace import Tracer, TracerProvider
        from opentelemetry.sdk.trace._tracer_metrics import NoOpTracerMetrics
        from opentelemetry.sdk.trace.id_generator import RandomIdGenerator
    except ImportError:
        return None
    if not sdk_version_supported() or type(tracer_provider) is not TracerProvider:
        return None
    tracer = tracer_provider.get_tracer(scope_name, scope_version)
    if type(tracer) is not Tracer or type(tracer.id_generator) is not RandomIdGenerator:
        return None
    if type(getattr(tracer, "_tracer_metrics", None)) is not NoOpTracerMetrics:
        return None
    limits = getattr(tracer, "_span_limits", None)
    if limits is None or limits.max_span_attribute_length is not None or limits.max_attribute_length is not None:
        return None
    max_attributes = limits.max_span_attributes
    if max_attributes is not None and max_attributes < _MIN_ATTRIBUTES:
        return None
    plan = _plan_of(tracer.sampler)
    if plan is None or _processors_fit(tracer.span_processor) is None:
        return None
    if getattr(getattr(tracer, "_tracer_config", None), "is_enabled", None) is not True:
        return None
    return FastTracer(tracer, plan, limits, direct_context_parts() if direct_context else None)


_new_tuple = tuple.__new__


def span_context_layout_fits() -> bool:
    """Whether ``SpanContext`` is, in this API (in ``SDK_RANGE``), the tuple (trace id,
    span id, is remote, flags, state, is valid) its constructor makes: checked on probes."""
    try:
        from opentelemetry.version import __version__ as api_version
    except ImportError:
        return False
    if not sdk_version_supported(str(api_version)):
        return False
    flags = TraceFlags(TraceFlags.SAMPLED)
    for trace_id, span_id in ((1, 2), (2**128 - 1, 2**64 - 1)):
        made = SpanContext(trace_id, span_id, False, flags, DEFAULT_TRACE_STATE)
        try:
            direct = _new_tuple(SpanContext, (trace_id, span_id, False, flags, DEFAULT_TRACE_STATE, True))
        except TypeError:
            return False
        if (tuple(made) != tuple(direct) or made != direct or direct.trace_id != trace_id or direct.span_id != span_id
                or direct.is_remote is not False or direct.trace_flags is not flags or direct.is_valid is not True
                or direct.trace_state is not made.trace_state):
            return False
    return True


def direct_context_parts() -> Optional[tuple]:
    # (the runtime context's ContextVar, the span's key in a Context, Context) when the
    # API's runtime context is its contextvars one, opentelemetry-api in SDK_RANGE and a
    # span set through the public API is found under that key; else None.
    try:
        from contextvars import ContextVar

        from opentelemetry import context as otel_context
        from opentelemetry.context.context import Context
        from opentelemetry.context.contextvars_context import ContextVarsRuntimeContext
        from opentelemetry.trace import propagation
        from opentelemetry.version import __version__ as api_version
    except ImportError:
        return None
    runtime = getattr(otel_context, "_RUNTIME_CONTEXT", None)
    if not sdk_version_supported(str(api_version)) or type(runtime) is not ContextVarsRuntimeContext:
        return None
    variable = getattr(runtime, "_current_context", None)
    key = getattr(propagation, "_SPAN_KEY", None)
    if type(variable) is not ContextVar or type(key) is not str:
        return None
    probe = NonRecordingSpan(trace_api.INVALID_SPAN_CONTEXT)
    made = trace_api.set_span_in_context(probe, Context())
    if type(made) is not Context or made.get(key) is not probe or trace_api.get_current_span(
            Context({key: probe})) is not probe:
        return None
    return variable, key, Context


class FastTracer(TracerCore):
    """Starts spans as the SDK tracer it was made from would (module docstring); made by
    :func:`fast_tracer`. ``begin`` / ``start`` return None when the provider changed so
    that the fast path no longer holds (the caller then uses the public one). ``begin``,
    ``_made`` and ``leave`` are compiled (:mod:`mcpfast.telemetry.span_core`)."""

    def __init__(self, tracer: Any, plan: tuple, limits: Any, direct: Optional[tuple] = None) -> None:
        from opentelemetry.sdk.util.instrumentation import InstrumentationScope

        self._tracer = tracer
        self._sampler = tracer.sampler
        self._plan = plan
        self.limits = limits
        self._multi = self.multi = tracer.span_processor
        self._processors = self._multi._span_processors
        self._root = _root_decision(plan)
        #: What a span's end calls with it (:meth:`span_ends`), for the processors ``ends_of``.
        self.ends_of = ()
        self.ends = ()
        self.span_ends()
        self._config = tracer._tracer_config
        self.resource = tracer.resource
        info = tracer.instrumentation_info
        self.instrumentation_info = info
        self.scope = InstrumentationScope(info.name, info.version, info.schema_url, None)
        self._random_ids = tracer.id_generator.is_trace_id_random()
        # A root span's flags when the decision does not depend on its trace id.
        self._root_flags = None if self._root is None else _FLAGS[self._root, self._random_ids]
        #: Whether span contexts are made as SpanContext's tuple directly (else its constructor).
        self.tuple_contexts = span_context_layout_fits()
        # The rules and types the compiled part applies.
        self.span_class = FastSpan
        self.sampled_by = _sampled
        self.flags_of = _FLAGS
        self.links_of = _bounded_links
        self.new_ids = IDS
        self.unset_status = _UNSET
        self.default_trace_state = DEFAULT_TRACE_STATE
        self.span_context_type = SpanContext
        self.non_recording = NonRecordingSpan
        #: Whether contexts are entered through the API's context variable itself.
        self.direct = direct is not None
        if direct is not None:
            self._variable, self._key, self._context_type = direct
            self._get = self._variable.get
            self._set = self._variable.set
            self._reset = self._variable.reset
        else:
            from opentelemetry import context as otel_context

            self._get = otel_context.get_current
            self._set = otel_context.attach
            self._reset = otel_context.detach

    def processors(self) -> Optional[tuple]:
        """The processors to hand finished spans to, None if they no longer fit."""
        current = self._multi._span_processors
        if current is not self._processors:
            if _processors_fit(self._multi) is None:
                return None
            self._processors = current
        return current

    def span_ends(self) -> tuple:
        """Per processor of the provider now, what an ended span is handed to: its
        ``on_end``, or for a batch processor (whose ``on_end`` only checks that the span is
        sampled, as every FastSpan is) its queue's ``emit`` (in C: span_core.BatchQueue)."""
        current = self._multi._span_processors
        if current is not self.ends_of:
            self.ends = tuple(_end_of(processor) for processor in current)
            self.ends_of = current
        return self.ends

    def start(self, name: str, kind: Any, parent_context: Any, attributes: dict,
              links: Optional[Sequence[Any]] = None, start_time: Optional[int] = None) -> Optional[Any]:
        """A started span (a :class:`FastSpan`, or a ``NonRecordingSpan`` when not
        sampled), or None when the public path must be taken. ``attributes``: the span's
        own dict from now on (not copied); ``start_time``: ns since the epoch (None: now)."""
        if not self._still_fits():
            return None
        if self.direct:
            found = (self._get() if parent_context is None else parent_context).get(self._key)
            parent = None if found is None else found.get_span_context()
        else:
            parent = trace_api.get_current_span(parent_context).get_span_context()
        return self._made(name, kind, parent, attributes, links, start_time)

    def _begin_indirect(self, name: str, kind: Any, parent_context: Any, attributes: dict,
                        links: Optional[Sequence[Any]], start_time: Optional[int]) -> Optional[tuple]:
        # begin() where contexts go through the API's attach (not its context variable).
        span = self.start(name, kind, parent_context, attributes, links, start_time)
        if span is None:
            return None
        context, token = self.enter(span, parent_context)
        return span, context, token

    def enter(self, span: Any, parent_context: Any) -> tuple[Any, Any]:
        """``span`` made current in (a copy of) ``parent_context`` (None: the current
        context), as ``attach(set_span_in_context(span, parent_context))``: (that context,
        the token for :meth:`leave`)."""
        if not self.direct:
            context = trace_api.set_span_in_context(span, parent_context)
            return context, self._set(context)
        values = dict(self._get() if parent_context is None else parent_context)
        values[self._key] = span
        context = self._context_type(values)
        return context, self._set(context)

    def _detach_public(self, token: Any) -> None:
        # leave() of a token the context variable refused: the API's detach logs why.
        from opentelemetry import context as otel_context

        otel_context.detach(token)


class FastSpan(SpanCore, trace_api.Span, ReadableSpan):
    """A recorded span of the fast path: what the SDK's span keeps, in plain Python
    objects, under the names ``ReadableSpan`` reads them by, so that the ended span is
    itself the ``ReadableSpan`` handed to the processors at :meth:`end` (as the SDK's own
    span is one; no second object). Used from the event loop's thread (no lock)."""

    # (Its fields are SpanCore's, in C, as are get_span_context, is_recording and end.)
    __slots__ = ()

    def __init__(self, owner: FastTracer, name: str, kind: Any, context: SpanContext,
                 parent: Optional[SpanContext], attributes: dict, links: Optional[Sequence[Any]],
                 start_time: Optional[int] = None) -> None:
        # (ReadableSpan.__init__ is not called: these are all of its fields.)
        self._owner = owner
        self._name = name
        self._kind = kind
        self._context = context
        self._parent = parent
        self._attributes: Any = attributes  # a dict, or the SDK's BoundedAttributes past the limit
        self._links: Any = _bounded_links(owner.limits, links) if links else ()
        self._events: Any = ()
        self._status = _UNSET
        self._end_time: Optional[int] = None
        self._resource = owner.resource
        self._instrumentation_info = owner.instrumentation_info
        self._instrumentation_scope = owner.scope
        self._start_time = time_ns() if start_time is None else start_time

    def set_attribute(self, key: str, value: Any) -> None:
        if self._end_time is None:
            self._checked_update({key: value})

    def set_attributes(self, attributes: Mapping[str, Any]) -> None:
        if self._end_time is None:
            self._checked_update(attributes)

    def _checked_update(self, attributes: Mapping[str, Any]) -> None:
        # mcpfast's own values (str, int) go straight in, as the SDK's BoundedAttributes
        # would keep them (a key set again moves to the end); anything else (a handler's),
        # or more than the limit allows, through a BoundedAttributes itself, which then
        # counts what it drops.
        own = self._attributes
        limit = self._owner.limits.max_span_attributes
        if type(own) is dict and (limit is None or len(own) + len(attributes) <= limit) and all(
                type(key) is str and key for key in attributes):
            for key, value in attributes.items():
                if type(value) is str or type(value) is int:
                    if key in own:
                        del own[key]
                    own[key] = value
                else:
                    cleaned = BoundedAttributes(None, {key: value}, immutable=False)
                    if key in own:
                        del own[key]
                    if key in cleaned:
                        own[key] = cleaned[key]
            return
        if type(own) is dict:
            own = self._attributes = BoundedAttributes(limit, own, immutable=False)
        for key, value in attributes.items():
            own[key] = value

    def add_event(self, name: str, attributes: Any = None, timestamp: Optional[int] = None) -> None:
        if self._end_time is not None:
            return
        from opentelemetry.sdk.trace import Event
        from opentelemetry.sdk.util import BoundedList

        limits = self._owner.limits
        if type(self._events) is tuple:
            self._events = BoundedList(limits.max_events)
        self._events.append(Event(name, BoundedAttributes(limits.max_event_attributes, attributes,
                                                          max_value_len=limits.max_attribute_length,
                                                          immutable=True), timestamp))

    def add_link(self, context: SpanContext, attributes: Any = None) -> None:
        if self._end_time is not None:
            return
        links = _bounded_links(self._owner.limits, [trace_api.Link(context, attributes)])
        if type(self._links) is tuple:
            self._links = links
        else:
            self._links.extend(links)

    def update_name(self, name: str) -> None:
        if self._end_time is None:
            self._name = name

    def set_status(self, status: Any, description: Optional[str] = None) -> None:
        # The SDK's rule: OK is final, UNSET is never set.
        if self._end_time is not None or self._status.status_code is StatusCode.OK:
            return
        if isinstance(status, Status):
            if status.status_code is not StatusCode.UNSET:
                self._status = status
        elif status is not StatusCode.UNSET:
            self._status = Status(status, description)

    def record_exception(self, exception: BaseException, attributes: Any = None,
                         timestamp: Optional[int] = None, escaped: bool = False) -> None:
        kind = type(exception)
        module = kind.__module__
        event: dict[str, Any] = {
            "exception.type": f"{module}.{kind.__qualname__}" if module and module != "builtins" else kind.__qualname__,
            "exception.message": str(exception),
            "exception.stacktrace": "".join(traceback.format_exception(exception)),
            "exception.escaped": str(escaped),
        }
        if attributes:
            event.update(attributes)
        self.add_event("exception", event, timestamp)

    def __repr__(self) -> str:
        return f'FastSpan(name="{self._name}", context={self._context})'


_UNSET = Status(StatusCode.UNSET)


def _end_of(processor: Any) -> Any:
    # A batch processor's queue (BatchProcessor.emit, in SDK_RANGE), else its on_end.
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    try:
        from opentelemetry.sdk._shared_internal import BatchProcessor
    except ImportError:
        return processor.on_end
    queue = getattr(processor, "_batch_processor", None)
    if type(processor) is BatchSpanProcessor and type(queue) is BatchProcessor and callable(
            getattr(queue, "emit", None)):
        try:
            return BatchQueue(queue).emit
        except AttributeError:  # not the queue's fields checked here: its own emit
            return queue.emit
    return processor.on_end


def _bounded_links(limits: Any, links: Sequence[Any]) -> Any:
    # As the SDK's span: only valid links, each with immutable bounded attributes.
    from opentelemetry.sdk.util import BoundedList

    kept = []
    for link in links:
        context = link.context
        if link and context and (context.is_valid or link.attributes or context.trace_state):
            kept.append(trace_api.Link(context, BoundedAttributes(
                limits.max_link_attributes, link.attributes, max_value_len=limits.max_attribute_length,
                immutable=True)))
    return BoundedList.from_seq(limits.max_links, kept)
