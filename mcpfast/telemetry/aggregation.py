"""Duration histograms aggregated by mcpfast itself and handed to the OpenTelemetry SDK's
meter provider when it collects, instead of an SDK ``record()`` per request (which
validates, copies and hashes the attributes and takes two locks each time).

:class:`Aggregator` keeps, per attribute set, the bucket counts (the convention's
boundaries), sum, count, min and max: a lock, a dict lookup and a few additions per
value. At collection the SDK first runs the observable instruments' callbacks: one of
them, an observable gauge ``mcpfast.aggregation.flush`` that never observes anything (so it
is never exported), registered once per meter provider, calls :meth:`SDKFeed.flush` of
every feed of that provider, which merges what was aggregated since the last collection into the
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
from bisect import bisect_left
from math import inf
from time import time_ns
from typing import Any, Callable, Mapping, Optional, Sequence

__all__ = ["FLUSH_INSTRUMENT", "Aggregator", "SDKFeed", "Series", "sdk_feed"]

#: The observable gauge whose callback hands the aggregates to the SDK (never observes).
FLUSH_INSTRUMENT = "mcpfast.aggregation.flush"
_ID_MEMO_LIMIT = 1024
_SAMPLED = 0x01
# meter provider -> its feeds (the SDK keeps the first callback of an instrument name
# only, so one callback per provider serves them all).
_FEEDS: "weakref.WeakKeyDictionary[Any, weakref.WeakSet[SDKFeed]]" = weakref.WeakKeyDictionary()
_FEEDS_LOCK = threading.Lock()


class Series:
    """One attribute set's aggregate since the last collection."""

    __slots__ = ("attributes", "counts", "total", "count", "low", "high", "first_ns", "exemplars")

    def __init__(self, attributes: dict[str, Any], buckets: int) -> None:
        self.attributes = attributes
        self.counts = [0] * buckets
        self.total = 0.0
        self.count = 0
        self.low = inf
        self.high = -inf
        # What the SDK's aggregation would take as its start (its first record).
        self.first_ns = time_ns()
        # bucket index -> [the last exemplar candidate, the last one before it whose
        # context had a span, if the last one's had none] (each (value, time, context,
        # has a span)): the SDK's bucket keeps the latest value and the latest span ids.
        self.exemplars: Optional[dict[int, list]] = None


class Aggregator:
    """Values per attribute set with explicit bucket ``bounds``, taken out by
    :meth:`take` (thread safe: records on the event loop, takes in a reader's thread)."""

    __slots__ = ("bounds", "exemplars", "_series", "_by_id", "_lock", "_current", "_direct")

    def __init__(self, bounds: Sequence[float], *, direct_context: bool = True) -> None:
        """``direct_context``: find the span of a context as
        :func:`mcpfast.telemetry.fast_spans.direct_context_parts` allows (False: through the
        API's get_current_span always)."""
        self.bounds = tuple(bounds)
        self._direct = direct_context
        #: Which values are exemplar candidates: "off", "on", "trace" (a sampled span).
        self.exemplars = "off"
        self._current: Any = None
        self._series: dict[tuple, Series] = {}
        # id(attribute dict) -> (the dict, its series) until the next take: the callers
        # hand the same cached dict again and again, so its content is sorted and hashed
        # once per collection (the entry holds the dict: its id stays its own).
        self._by_id: dict[int, tuple[Mapping[str, Any], Series]] = {}
        self._lock = threading.Lock()

    def record(self, value: float, attributes: Mapping[str, Any], context: Any = None) -> None:
        """One value; ``context``: the trace context (None: the current one), for exemplars.
        Negative and non-finite values are ignored, as the SDK's histogram does."""
        if not 0.0 <= value < inf:
            return
        mode = self.exemplars
        if mode == "off":
            exemplar = None
        else:
            current = self._current
            if mode == "trace" and current is not None and current[3] is not None:
                # The trace-based filter in line for what most values have: no span at
                # all (never passes), or one of a class always sampled (a fast span:
                # passes without reading its flags).
                if context is None:
                    context = current[0]()
                span = context.get(current[3])
                if span is None:
                    exemplar = None
                elif type(span) in current[6]:
                    exemplar = (context, True)
                else:
                    exemplar = self._exemplar(context)
            else:
                exemplar = self._exemplar(context)
        lock = self._lock
        lock.acquire()
        try:
            found = self._by_id.get(id(attributes))
            if found is not None and found[0] is attributes:
                series = found[1]
            else:
                series = self._series_of(attributes)
            index = bisect_left(self.bounds, value)
            series.counts[index] += 1
            series.total += value
            series.count += 1
            if value < series.low:
                series.low = value
            if value > series.high:
                series.high = value
            if exemplar is not None:
                self._offer(series, index, value, exemplar)
        finally:
            lock.release()

    def _series_of(self, attributes: Mapping[str, Any]) -> Series:
        # (Under the lock.) The series of this content, found or made, remembered by id.
        key = tuple(sorted(attributes.items()))
        series = self._series.get(key)
        if series is None:
            series = self._series[key] = Series(dict(attributes), len(self.bounds) + 1)
        if len(self._by_id) < _ID_MEMO_LIMIT:
            self._by_id[id(attributes)] = (attributes, series)
        return series

    def _offer(self, series: Series, index: int, value: float, exemplar: tuple) -> None:
        slots = series.exemplars
        if slots is None:
            slots = series.exemplars = {}
        entry = (value, time_ns(), exemplar[0], exemplar[1])
        old = slots.get(index)
        if entry[3] or old is None:
            slots[index] = [entry, None]
        else:
            slots[index] = [entry, old[0] if old[0][3] else old[1]]

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

    def take(self) -> list[Series]:
        """The series recorded since the last take (then forgotten here)."""
        with self._lock:
            taken = self._series
            self._series = {}
            self._by_id = {}
        return list(taken.values())


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
