"""Duration histograms aggregated by mcpfast itself and handed to the OpenTelemetry SDK's
meter provider when it collects, instead of an SDK ``record()`` per request (which
validates, copies and hashes the attributes and takes two locks each time).

:class:`Aggregator` keeps, per attribute set, the bucket counts (the convention's
boundaries), sum, count, min and max: a dict lookup and a few additions per value, in
C (:mod:`mcpfast.telemetry.aggregate_core`). At collection the SDK first runs the
observable instruments' callbacks: one of them, an observable gauge
``mcpfast.aggregation.flush`` that never observes anything (so it is never exported),
registered once per meter provider, calls :meth:`SDKFeed.flush` of every feed of that
provider, which merges what was aggregated since the last collection into the
SDK's own aggregation of each reader, exactly as ``record()`` of each value would have
left it (counts per bucket, sum, min, max, attributes, temporality, start time, the
cardinality limit's overflow); then the SDK collects as usual. Exemplars: the provider's
exemplar filter (always on, always off, or the default trace-based one: the measurement's
span is sampled) is applied at record time, and the last value per bucket that passes it is
offered to the SDK's reservoir at the flush, with its own time and context -- what the SDK's
aligned-bucket reservoir keeps of the same records.

Taken only where that merge is sound (:func:`sdk_feed`, else None and the public
``record()``): the SDK's ``MeterProvider`` in the range of
:data:`mcpfast.telemetry.fast_spans.SDK_RANGE` (its internals are that range's), one of
the SDK's three exemplar filters, and every reader's aggregation of the histogram the
SDK's explicit-bucket one with these boundaries and the aligned-bucket exemplar reservoir
(no view that changes them, renames or filters attributes). A reader added later that
does not fit turns the path off at the next collection (the values recorded since the
previous one reach the readers that fit only).
"""

from __future__ import annotations

import threading
import weakref
from typing import Any, Callable, Optional, Sequence

from mcpfast.telemetry.aggregate_core import AggregatorCore, Series

__all__ = ["FLUSH_INSTRUMENT", "Aggregator", "SDKFeed", "Series", "sdk_feed"]

#: The observable gauge whose callback hands the aggregates to the SDK (never observes).
FLUSH_INSTRUMENT = "mcpfast.aggregation.flush"
_ID_MEMO_LIMIT = 1024
_SAMPLED = 0x01
# meter provider -> its feeds (the SDK keeps the first callback of an instrument name
# only, so one callback per provider serves them all).
_FEEDS: "weakref.WeakKeyDictionary[Any, weakref.WeakSet[SDKFeed]]" = weakref.WeakKeyDictionary()
_FEEDS_LOCK = threading.Lock()


class Aggregator(AggregatorCore):
    """Values per attribute set with explicit bucket ``bounds``, taken out by ``take``
    (thread safe: records on the event loop, takes in a reader's thread). ``record`` and
    ``take`` are compiled (:mod:`mcpfast.telemetry.aggregate_core`); the exemplar filter's
    general case is here."""

    def _exemplar(self, context: Any) -> Optional[tuple]:
        # (context, whether it has a span) when this value is an exemplar candidate.
        current = self._current
        if current is None:
            current = self._current = _span_lookup(self._direct)
        if context is None:
            context = current[0]()
        key = current[3]
        if key is None:
            span = current[1](context)
        else:
            # get_current_span(context) itself, in line (fast_spans.direct_context_parts).
            span = context.get(key)
            if span is None:
                span = current[2]
            elif type(span) not in current[5]:
                # (isinstance of the API's Span, an ABC, once per class seen.)
                if isinstance(span, current[4]):
                    if len(current[5]) < _ID_MEMO_LIMIT:
                        current[5].add(type(span))
                else:
                    span = current[2]
        if self.exemplars == "trace":
            # The SDK's trace-based filter: the span is sampled (so it is a span); the
            # W3C sampled flag is bit 0 (TraceFlags.SAMPLED).
            return (context, True) if span.get_span_context().trace_flags & _SAMPLED else None
        return (context, span != current[2])


def _span_lookup(direct_wanted: bool) -> tuple:
    # (get_current, get_current_span, INVALID_SPAN, the span's key in a Context or None
    # for the public get_current_span, the API's Span class, the classes seen to be Spans,
    # the span classes always sampled).
    from opentelemetry import context as otel_context
    from opentelemetry import trace as otel_trace

    from mcpfast.telemetry.fast_spans import FastSpan, direct_context_parts

    direct = direct_context_parts() if direct_wanted else None
    return (otel_context.get_current, otel_trace.get_current_span, otel_trace.INVALID_SPAN,
            direct[1] if direct is not None else None, otel_trace.Span, set(), frozenset((FastSpan,)))


def _histogram_aggregation_fits(match: Any, bounds: tuple) -> bool:
    from opentelemetry.sdk.metrics._internal.aggregation import _ExplicitBucketHistogramAggregation
    from opentelemetry.sdk.metrics._internal.exemplar import AlignedHistogramBucketExemplarReservoir

    prototype = getattr(match, "_aggregation", None)
    view = getattr(match, "_view", None)
    return (type(prototype) is _ExplicitBucketHistogramAggregation and getattr(prototype, "_boundaries", None) == bounds
            and type(getattr(prototype, "_reservoir", None)) is AlignedHistogramBucketExemplarReservoir
            and view is not None and getattr(view, "_attribute_keys", 0) is None)


def _exemplar_mode(consumer: Any) -> Optional[str]:
    from opentelemetry.sdk.metrics import AlwaysOffExemplarFilter, AlwaysOnExemplarFilter, TraceBasedExemplarFilter

    kind: Any = type(getattr(getattr(consumer, "_sdk_config", None), "exemplar_filter", None))
    modes: dict[Any, str] = {AlwaysOffExemplarFilter: "off", AlwaysOnExemplarFilter: "on",
                             TraceBasedExemplarFilter: "trace"}
    return modes.get(kind)


class SDKFeed:
    """Merges :class:`Aggregator` series into an SDK histogram's aggregations (module
    docstring); made by :func:`sdk_feed`."""

    def __init__(self, consumer: Any, instruments: Sequence[tuple[Any, Aggregator]],
                 on_unsound: Optional[Callable[[], None]] = None) -> None:
        self._consumer = consumer
        self._instruments = tuple(instruments)
        self._lock = threading.Lock()
        self._on_unsound = on_unsound
        self.sound = True

    def storages_fit(self) -> bool:
        """Whether every reader's storage aggregates these instruments as expected."""
        for storage in self._consumer._reader_storages.values():
            for instrument, aggregator in self._instruments:
                matches = storage._get_or_init_view_instrument_match(instrument)
                if not all(_histogram_aggregation_fits(match, aggregator.bounds) for match in matches):
                    return False
        return True

    def flush(self) -> None:
        """Merge everything aggregated since the last flush into every reader's storage."""
        with self._lock:
            storages = list(self._consumer._reader_storages.values())
            for instrument, aggregator in self._instruments:
                taken = aggregator.take()
                if not taken or not instrument._is_enabled():
                    # (A meter the SDK's configuration disabled records nothing.)
                    continue
                for storage in storages:
                    for match in storage._get_or_init_view_instrument_match(instrument):
                        if _histogram_aggregation_fits(match, aggregator.bounds):
                            _merge(match, taken)
                        else:
                            # A reader added since the check whose aggregation differs:
                            # from now on the callers record through the SDK.
                            self.sound = False
        if not self.sound and self._on_unsound is not None:
            self._on_unsound()
            self._on_unsound = None


def _merge(match: Any, taken: list[Series]) -> None:
    from opentelemetry.sdk.metrics._internal._view_instrument_match import _hash_attributes

    for series in taken:
        attributes = dict(series.attributes)
        key = _hash_attributes(attributes)
        with match._lock:
            fresh = key not in match._attributes_aggregation
            aggregation = match._get_or_create_aggregation(key, attributes)
        with aggregation._lock:
            if fresh and match._previous_collection_start_nanos is None:
                # A cumulative stream starts where record() would have started it.
                aggregation._start_time_unix_nano = min(aggregation._start_time_unix_nano, series.first_ns)
                aggregation._previous_collection_start_nano = aggregation._start_time_unix_nano
            value = aggregation._value
            if value is None:
                value = aggregation._value = [0] * len(series.counts)
            for index, count in enumerate(series.counts):
                if count:
                    value[index] += count
            aggregation._sum += series.total
            if aggregation._record_min_max:
                aggregation._min = min(aggregation._min, series.low)
                aggregation._max = max(aggregation._max, series.high)
        if series.exemplars:
            offer = aggregation._reservoir.offer
            for last, with_span in series.exemplars.values():
                if with_span is not None:
                    offer(with_span[0], with_span[1], series.attributes, with_span[2])
                offer(last[0], last[1], series.attributes, last[2])


def sdk_feed(meter_provider: Any, instruments: Sequence[tuple[Any, Aggregator]],
             on_unsound: Optional[Callable[[], None]] = None) -> Optional[SDKFeed]:
    """An :class:`SDKFeed` for these (SDK histogram, aggregator) pairs when the merge is
    sound for this provider (module docstring), registered to be flushed when it
    collects, else None. ``on_unsound``: called (once) if a reader added later does not
    fit the merge; the caller then records through the SDK."""
    from mcpfast.telemetry.fast_spans import sdk_version_supported

    try:
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics._internal.instrument import _Histogram
    except ImportError:
        return None
    if not sdk_version_supported() or type(meter_provider) is not MeterProvider:
        return None
    if any(type(instrument) is not _Histogram for instrument, _ in instruments):
        return None
    consumer = getattr(meter_provider, "_measurement_consumer", None)
    if type(getattr(consumer, "_reader_storages", None)) is not dict:
        return None
    mode = _exemplar_mode(consumer)
    if mode is None:
        return None
    feed = SDKFeed(consumer, instruments, on_unsound)
    try:
        fits = feed.storages_fit()
    except (AttributeError, TypeError):
        return None
    if not fits:
        return None
    for _, aggregator in instruments:
        aggregator.exemplars = mode
    with _FEEDS_LOCK:
        feeds = _FEEDS.get(meter_provider)
        if feeds is None:
            feeds = _FEEDS[meter_provider] = weakref.WeakSet()
            meter_provider.get_meter("mcpfast.aggregation").create_observable_gauge(
                FLUSH_INSTRUMENT, callbacks=[_flusher(feeds)], description="Hands mcpfast's aggregates to the SDK")
        feeds.add(feed)
    return feed


def _flusher(feeds: "weakref.WeakSet[SDKFeed]") -> Callable[[Any], list]:
    def flush(options: Any) -> list:
        for feed in list(feeds):
            feed.flush()
        return []

    return flush
