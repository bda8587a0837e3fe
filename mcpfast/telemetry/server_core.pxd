# The server telemetry's per-message work in C (server_core.pyx): Observed (one message
# being observed), ServerTelemetryCore under mcpfast.telemetry.server.ServerTelemetry,
# ObservedRoute (its around route's handler).

from mcpfast.telemetry.span_core cimport SpanCore, TracerCore


cdef class TargetCore:
    # The span name, its attributes that do not change from request to request, whether
    # the span records mcp.resource.uri, a success's metric attributes.
    cdef public str name
    cdef public dict span_attributes
    cdef public bint resource
    cdef public dict success


cdef class Observed:
    cdef public object method
    cdef public object request_id
    cdef public object connection
    # The message's Target (span name, attribute sets).
    cdef public TargetCore target
    # Its span (None: no tracer), the context the span is current in, the token that made
    # it current (None once left), the FastTracer that began it (None: the public path).
    cdef public object span
    cdef public object context
    cdef public object token
    cdef public TracerCore fast
    cdef public long long started


cdef class ServerTelemetryCore:
    # The tracer (None: no spans), its fast path (None: the public calls) and what the
    # public path and the error status need.
    cdef public object _tracer
    cdef public TracerCore _fast
    cdef public object _server_kind
    cdef public object _error
    cdef public object _attach
    cdef public object _detach
    cdef public object _set_span
    cdef public object _extract
    cdef public object _extract_headers
    # The metric sinks, the in-flight gauge they track, those told each change instead.
    cdef public tuple _sinks
    cdef public object _in_flight
    cdef public tuple _adding
    cdef public bint capture_content
    # (method, tool or prompt name, protocol version) -> Target.
    cdef public dict _targets

    cdef Observed begin(self, object ctx)
    cdef int leave(self, Observed call) except -1
    cdef int end(self, Observed call, object result, object exc) except -1


cdef class ObservedRoute:
    cdef ServerTelemetryCore _telemetry
    cdef object _inner
