# The duration histograms' per-value work in C (aggregate_core.pyx): a Series per
# attribute set, an AggregatorCore under mcpfast.telemetry.aggregation.Aggregator.

cdef class Series:
    cdef public dict attributes
    cdef public list counts
    cdef public double total
    cdef public long long count
    cdef public double low
    cdef public double high
    # What the SDK's aggregation would take as its start (its first record).
    cdef public object first_ns
    # bucket index -> [the last exemplar candidate, the last one before it whose context
    # had a span, if the last one's had none] (each (value, time, context, has a span)).
    cdef public dict exemplars


cdef class AggregatorCore:
    cdef readonly tuple bounds
    cdef double *_bounds
    cdef Py_ssize_t _count
    # 0: no exemplars, 1: every value, 2: values recorded in a sampled span's context.
    cdef int _mode
    cdef public bint _direct
    # (get_current, get_current_span, INVALID_SPAN, the span's key or None, Span, the span
    # classes seen, the span classes always sampled): aggregation._span_lookup's.
    cdef public object _current
    # Content key -> series; id(attribute dict) -> (the dict, its series); the last dict
    # recorded and its series: until the next take.
    cdef dict _series
    cdef dict _by_id
    cdef object _last_attributes
    cdef Series _last_series

    cdef Series _series_of(self, object attributes)
    cdef int _offer(self, Series series, Py_ssize_t index, double value, tuple exemplar) except -1
