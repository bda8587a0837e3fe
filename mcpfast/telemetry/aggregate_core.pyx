"""The duration histograms' per-value work in C: :class:`Series` (one attribute set's
aggregate since the last collection) and ``AggregatorCore``, the base of
:class:`mcpfast.telemetry.aggregation.Aggregator` (``record`` and ``take``; which values
are exemplar candidates is decided there, ``_exemplar``, where the rule needs more than a
look at the context).

No lock: ``record`` and ``take`` are each one call of C that runs no Python code between
reading the series and writing it (an exemplar candidate, whose check may, is found
first; attribute values are mcpfast's own str, int and float), so under the GIL each is
atomic to the other, on the event loop's thread and a metric reader's alike.

Why compiled: a value's series lookup, bucket search, five updates and exemplar offer
were about a microsecond of interpreted Python per request.
"""
cimport cython

from mcpfast.telemetry.clock cimport wall_ns
from cpython.dict cimport PyDict_GetItem
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.object cimport PyObject
from libc.math cimport INFINITY


cdef Py_ssize_t _ID_MEMO_LIMIT = 1024

_MODES = {"off": 0, "on": 1, "trace": 2}
_MODE_NAMES = ("off", "on", "trace")


@cython.final
@cython.auto_pickle(False)
cdef class Series:
    """One attribute set's aggregate since the last collection."""

    def __init__(self, dict attributes not None, Py_ssize_t buckets):
        self.attributes = attributes
        self.counts = [0] * buckets
        self.total = 0.0
        self.count = 0
        self.low = INFINITY
        self.high = -INFINITY
        self.first_ns = wall_ns()
        self.exemplars = None


@cython.auto_pickle(False)
cdef class AggregatorCore:
    """Values per attribute set with explicit bucket bounds (module docstring)."""

    def __cinit__(self):
        self._bounds = NULL

    def __init__(self, bounds, *, bint direct_context=True):
        """``direct_context``: find the span of a context as
        :func:`mcpfast.telemetry.fast_spans.direct_context_parts` allows (False: through the
        API's get_current_span always)."""
        found = tuple(float(bound) for bound in bounds)
        if list(found) != sorted(found):
            raise ValueError(f"bucket bounds must be increasing: {found!r}")
        cdef double *made = <double *>PyMem_Malloc(max(len(found), 1) * sizeof(double))
        if made == NULL:
            raise MemoryError()
        for index, bound in enumerate(found):
            made[index] = bound
        PyMem_Free(self._bounds)
        self._bounds = made
        self._count = len(found)
        self.bounds = found
        self._direct = direct_context
        self._mode = 0
        self._current = None
        self._series = {}
        self._by_id = {}
        self._last_attributes = None
        self._last_series = None

    def __dealloc__(self):
        PyMem_Free(self._bounds)

    @property
    def exemplars(self):
        """Which values are exemplar candidates: "off", "on", "trace" (a sampled span)."""
        return _MODE_NAMES[self._mode]

    @exemplars.setter
    def exemplars(self, mode):
        if mode not in _MODES:
            raise ValueError(f"exemplars must be one of {sorted(_MODES)}, not {mode!r}")
        self._mode = _MODES[mode]

    def record(self, double value, attributes, context=None):
        """One value; ``context``: the trace context (None: the current one), for
        exemplars. Negative and non-finite values are ignored, as the SDK's histogram does."""
        if not (value >= 0.0 and value < INFINITY):
            return
        cdef object exemplar = None
        if self._mode != 0:
            current = self._current
            if self._mode == 2 and current is not None and current[3] is not None:
                # The trace-based filter in line for what most values have: no span at
                # all (never passes), or one of a class always sampled (passes as it is).
                if context is None:
                    context = current[0]()
                span = context.get(current[3])
                if span is not None:
                    if type(span) in current[6]:
                        exemplar = (context, True)
                    else:
                        exemplar = self._exemplar(context)
            else:
                exemplar = self._exemplar(context)
        # From here to the end no Python code runs (module docstring).
        cdef Series series
        if attributes is self._last_attributes:
            series = self._last_series
        else:
            found = self._by_id.get(id(attributes))
            if found is not None and (<tuple>found)[0] is attributes:
                series = <Series>(<tuple>found)[1]
            else:
                series = self._series_of(attributes)
            self._last_attributes = attributes
            self._last_series = series
        # bisect_left: the first bound >= value (the SDK's bucket of the value).
        cdef Py_ssize_t low = 0, high = self._count, middle
        while low < high:
            middle = (low + high) >> 1
            if self._bounds[middle] < value:
                low = middle + 1
            else:
                high = middle
        counts = series.counts
        counts[low] = <long long>counts[low] + 1
        series.total += value
        series.count += 1
        if value < series.low:
            series.low = value
        if value > series.high:
            series.high = value
        if exemplar is not None:
            self._offer(series, low, value, <tuple>exemplar)

    cdef Series _series_of(self, object attributes):
        # The series of this content, found or made, remembered by the dict's id.
        key = tuple(sorted(attributes.items()))
        series = self._series.get(key)
        if series is None:
            series = self._series[key] = Series(dict(attributes), self._count + 1)
        if len(self._by_id) < _ID_MEMO_LIMIT:
            self._by_id[id(attributes)] = (attributes, series)
        return <Series>series

    cdef int _offer(self, Series series, Py_ssize_t index, double value, tuple exemplar) except -1:
        # The SDK's aligned-bucket reservoir keeps the latest value per bucket and the
        # latest span ids: the last candidate, and the last with a span before it.
        slots = series.exemplars
        if slots is None:
            slots = series.exemplars = {}
        entry = (value, wall_ns(), exemplar[0], exemplar[1])
        cdef PyObject *found = PyDict_GetItem(slots, index)
        cdef list old
        if found == NULL:
            slots[index] = [entry, None]
            return 0
        # The bucket's pair changed in place (no Python code runs while it changes).
        old = <list>found
        if exemplar[1]:
            old[1] = None
        elif old[0][3]:
            old[1] = old[0]
        old[0] = entry
        return 0

    def take(self):
        """The series recorded since the last take (then forgotten here)."""
        taken = self._series
        self._series = {}
        self._by_id = {}
        self._last_attributes = None
        self._last_series = None
        return list(taken.values())
