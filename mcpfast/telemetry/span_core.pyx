"""The fast span path's per-span work in C: the bases of
:class:`mcpfast.telemetry.fast_spans.FastTracer` (``TracerCore``: a span begun and made
current in one call, the context left) and of its ``FastSpan`` (``SpanCore``: the fields
the SDK's ``ReadableSpan`` reads, kept in the object itself; its end handed to the
processors).

The rules are fast_spans.py's, applied here: whether the fast path holds is decided there
(``fast_tracer``), the sampling decision where it depends on the trace id or a parent is
its ``_sampled`` (``sampled_by``), the flags its table (``flags_of``), links its
``_bounded_links`` (``links_of``). Nothing here imports OpenTelemetry: its objects come in
through the fields the Python subclasses set.

Why compiled: a span's fourteen fields, its SpanContext, its Context and the context
variable's set and reset were a dozen Python-level steps per request, more than the rest of
a tools/call; here they are stores into the object and calls of the C API.
"""
cimport cython

from mcpfast.telemetry.clock cimport wall_ns
from cpython.dict cimport PyDict_SetItem, PyDict_Update
from cpython.object cimport PyObject, PyTypeObject
from libc.stdint cimport uint64_t

import os



cdef extern from "Python.h":
    # Public API since 3.7.
    object PyContextVar_Set(object var, object value)
    int PyContextVar_Reset(object var, object token) except -1


# A batch processor's queue is handed spans here (BatchQueue.emit's common case); its own
# emit when it is shut down, full, or its process is not this one (it re-arms after a fork).
cdef long _pid = os.getpid()


def _forked():
    global _pid
    _pid = os.getpid()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forked)


cdef inline uint64_t _rotl(uint64_t x, int k) noexcept:
    return (x << k) | (x >> (64 - k))


@cython.final
@cython.auto_pickle(False)
cdef class IdSource:
    """Span and trace ids: xoshiro256** (a 256-bit state, 64 bits per step) seeded from
    ``os.urandom``, re-seeded by :meth:`reseed` (fast_spans calls it in a forked child, so
    that two workers never share a sequence). Never 0, which no id may be."""

    def __cinit__(self):
        self.reseed()

    def reseed(self):
        """A new state from os.urandom (never all zero: that state only gives zeros)."""
        cdef bytes seed
        cdef const unsigned char *raw
        cdef int index, byte
        while True:
            seed = os.urandom(32)
            raw = seed
            for index in range(4):
                self._state[index] = 0
                for byte in range(8):
                    self._state[index] = (self._state[index] << 8) | raw[index * 8 + byte]
            if self._state[0] | self._state[1] | self._state[2] | self._state[3]:
                return

    cdef uint64_t next64(self) noexcept:
        cdef uint64_t *s = self._state
        cdef uint64_t result = _rotl(s[1] * 5, 7) * 9
        cdef uint64_t t = s[1] << 17
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = _rotl(s[3], 45)
        return result

    cdef object new_span_id(self):
        cdef uint64_t found = self.next64()
        while found == 0:
            found = self.next64()
        return found

    cdef object new_trace_id(self):
        cdef uint64_t high = self.next64(), low = self.next64()
        while high == 0 and low == 0:
            high = self.next64()
            low = self.next64()
        if high == 0:
            return low
        return (<object>high << 64) | <object>low

    def span_id(self):
        """A new span id: 64 random bits, not 0."""
        return self.new_span_id()

    def trace_id(self):
        """A new trace id: 128 random bits, not 0."""
        return self.new_trace_id()


@cython.final
@cython.auto_pickle(False)
cdef class BatchQueue:
    """A BatchSpanProcessor's queue (the SDK's ``BatchProcessor``, in fast_spans'
    SDK_RANGE) as an ended span's destination: ``emit(span)``."""

    def __init__(self, processor):
        self._processor = processor
        self._queue = processor._queue
        self._awaken = processor._worker_awaken
        self._batch = processor._max_export_batch_size
        self._limit = processor._max_queue_size

    def emit(self, span):
        """Queue ``span`` for export, as the processor's own ``emit`` does."""
        processor = self._processor
        queue = self._queue
        if (processor._shutdown or processor._pid != _pid or queue is not processor._queue
                or len(queue) >= self._limit):
            processor.emit(span)
            return
        queue.appendleft(span)
        if len(queue) >= self._batch and not self._awaken.is_set():
            self._awaken.set()


@cython.auto_pickle(False)
cdef class TracerCore:
    """FastTracer's C part (module docstring)."""

    def begin(self, name, kind, parent_context, dict attributes not None, links=None, start_time=None):
        """A span started and made current: (the span, the context it is current in,
        the token for :meth:`leave`), or None when the public path must be taken.
        ``attributes``: the span's own dict from now on (not copied)."""
        return self.begin_span(name, kind, parent_context, attributes, links, start_time)

    cdef object begin_span(self, object name, object kind, object parent_context, dict attributes,
                           object links, object start_time):
        if not self.direct:
            return self._begin_indirect(name, kind, parent_context, attributes, links, start_time)
        if not self.still_fits():
            return None
        current = self._get() if parent_context is None else parent_context
        key = self._key
        found = current.get(key)
        span = self._new_span(name, kind, None if found is None else found.get_span_context(), attributes, links,
                              start_time)
        context = self._context_type()
        if current:
            PyDict_Update(context, current)
        # (The C API's store: Context refuses item assignment from Python.)
        PyDict_SetItem(context, key, span)
        return span, context, PyContextVar_Set(self._variable, context)

    def _still_fits(self):
        """Whether the provider is still as the fast path was checked for (enabled, the
        same sampler, processors that fit): else the public path."""
        return self.still_fits()

    cdef bint still_fits(self) except -1:
        return not (self._config.is_enabled is not True or self._tracer.sampler is not self._sampler
                    or (self._multi._span_processors is not self._processors and self.processors() is None))

    def _made(self, name, kind, parent, attributes, links, start_time):
        """The span under ``parent`` (a SpanContext; None or invalid: a root), sampled by
        the plan: a FastSpan, or a NonRecordingSpan when not sampled."""
        return self._new_span(name, kind, parent, attributes, links, start_time)

    cdef object _new_span(self, object name, object kind, object parent, object attributes,
                          object links, object start_time):
        cdef IdSource ids = self.new_ids
        if parent is None or not parent.is_valid:
            parent = None
            trace_id = ids.new_trace_id()
            trace_state = None
            sampled = self._root
            if sampled is None:
                sampled = self.sampled_by(self._plan, None, trace_id)
                flags = self.flags_of[sampled, self._random_ids]
            else:
                flags = self._root_flags
        else:
            trace_id = parent.trace_id
            random_id = parent.trace_flags.random_trace_id
            trace_state = parent.trace_state
            sampled = self.sampled_by(self._plan, parent, trace_id)
            flags = self.flags_of[sampled, random_id]
        if trace_state is None:
            trace_state = self.default_trace_state
        span_id = ids.new_span_id()
        if self.tuple_contexts:
            # SpanContext's own tuple (fast_spans.span_context_layout_fits).
            # (tuple's own constructor called in C: the same object as tuple.__new__ makes.)
            fields = ((trace_id, span_id, False, flags, trace_state, True),)
            context = (<PyTypeObject *>tuple).tp_new(<type>self.span_context_type, <PyObject *>fields, NULL)
        else:
            context = self.span_context_type(trace_id, span_id, False, flags, trace_state)
        if not sampled:
            return self.non_recording(context)
        cdef SpanCore span = SpanCore.__new__(self.span_class)
        span._owner = self
        span._name = name
        span._kind = kind
        span._context = context
        span._parent = parent
        span._attributes = attributes
        span._links = self.links_of(self.limits, links) if links else ()
        span._events = ()
        span._status = self.unset_status
        span._end_time = None
        span._resource = self.resource
        span._instrumentation_info = self.instrumentation_info
        span._instrumentation_scope = self.scope
        span._start_time = wall_ns() if start_time is None else start_time
        return span

    def leave(self, token):
        """The context before :meth:`begin` made current again (``detach(token)``)."""
        self.leave_context(token)

    cdef int leave_context(self, object token) except -1:
        if not self.direct:
            self._reset(token)
            return 0
        try:
            PyContextVar_Reset(self._variable, token)
        except Exception:
            # The API's detach says what went wrong (logged, not raised).
            self._detach_public(token)
        return 0


@cython.auto_pickle(False)
cdef class SpanCore:
    """FastSpan's C part: its fields (ReadableSpan's names) and its hot methods."""

    def get_span_context(self):
        return self._context

    def is_recording(self):
        return self._end_time is None

    def end(self, end_time=None):
        self.end_span(end_time)

    cdef int end_span(self, object end_time) except -1:
        if self._end_time is not None:
            return 0
        self._end_time = end_time if end_time is not None else wall_ns()
        attributes = self._attributes
        if type(attributes) is not dict:
            attributes._immutable = True
        # (Processors added mid-span get it too, as the SDK's span would hand it on.)
        cdef TracerCore owner = <TracerCore?>self._owner
        ends = owner.ends if owner.multi._span_processors is owner.ends_of else owner.span_ends()
        for end in ends:
            end(self)
        return 0
