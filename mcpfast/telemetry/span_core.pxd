# The fast span path's state in C (span_core.pyx): BatchQueue (a batch processor's
# queue as a span's destination), TracerCore under
# mcpfast.telemetry.fast_spans.FastTracer, SpanCore under its FastSpan. The fields keep
# the names the Python subclasses (and, for SpanCore, the SDK's ReadableSpan) read.

from libc.stdint cimport uint64_t


cdef class IdSource:
    # xoshiro256**'s state.
    cdef uint64_t _state[4]

    cdef uint64_t next64(self) noexcept
    cdef object new_span_id(self)
    cdef object new_trace_id(self)


cdef class BatchQueue:
    # The SDK's BatchProcessor, its deque, its worker's event, its batch size and limit.
    cdef object _processor
    cdef object _queue
    cdef object _awaken
    cdef Py_ssize_t _batch
    cdef Py_ssize_t _limit


cdef class TracerCore:
    # What the checks before each span compare (the SDK's objects, as first seen).
    cdef public object _tracer
    cdef public object _sampler
    cdef public object _config
    cdef public object _multi
    cdef public object multi
    cdef public object _processors
    # The sampling plan, the root decision (None: by trace id) and the root's flags.
    cdef public object _plan
    cdef public object _root
    cdef public object _root_flags
    cdef public object _random_ids
    # Spans' shared fields.
    cdef public object limits
    cdef public object resource
    cdef public object instrumentation_info
    cdef public object scope
    # What an ended span is handed to, and the processors that was made for.
    cdef public tuple ends
    cdef public object ends_of
    cdef public bint tuple_contexts
    cdef public bint direct
    # The API's context variable, the span's key in a Context, and Context.
    cdef public object _variable
    cdef public object _key
    cdef public object _context_type
    cdef public object _get
    cdef public object _set
    cdef public object _reset
    # The FastSpan class, and the Python rules this module applies (fast_spans.py).
    cdef public object span_class
    cdef public object sampled_by
    cdef public object flags_of
    cdef public object links_of
    cdef public IdSource new_ids
    cdef public object unset_status
    cdef public object default_trace_state
    cdef public object span_context_type
    cdef public object non_recording

    cdef object _new_span(self, object name, object kind, object parent, object attributes,
                          object links, object start_time)
    # Whether the provider is still as the fast path was checked for.
    cdef bint still_fits(self) except -1
    # begin() and leave() for a caller in C.
    cdef object begin_span(self, object name, object kind, object parent_context, dict attributes,
                           object links, object start_time)
    cdef int leave_context(self, object token) except -1


cdef class SpanCore:
    cdef public object _owner
    cdef public object _name
    cdef public object _kind
    cdef public object _context
    cdef public object _parent
    cdef public object _attributes
    cdef public object _links
    cdef public object _events
    cdef public object _status
    cdef public object _start_time
    cdef public object _end_time
    cdef public object _resource
    cdef public object _instrumentation_info
    cdef public object _instrumentation_scope

    # end() for a caller in C.
    cdef int end_span(self, object end_time) except -1
