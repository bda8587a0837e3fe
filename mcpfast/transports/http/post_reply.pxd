# The reply channel of one POST, the stateless legs' connections, the feeding of a POST
# (see the module docstring).
from mcpfast._core.dispatch cimport ReplyChannelCore
from mcpfast._core.http_messages cimport HTTPResponse

# (Declared below; named by the classes before them.)
cdef class DeferredAnswer
cdef class Lease


cdef class PostReply(ReplyChannelCore):
    cdef public bint json_only
    # None while undecided, then ("json", frame or None) or ("sse", None).
    cdef public object outcome
    cdef public object stream
    cdef public object headers
    # The POST's traceparent / tracestate when captured (trace_context_of), else None.
    cdef public object trace_headers
    cdef object _side
    cdef object _new_stream
    cdef object _waiter
    # The DeferredAnswer told once the outcome is known, if one listens.
    cdef DeferredAnswer _deferred

    cpdef object to_stream(self)
    cdef int _decide(self, tuple outcome) except -1


cdef class DeferredAnswer:
    # What the endpoint's _answer makes the HTTP answer from (feed_post's arguments).
    cdef readonly object endpoint
    cdef readonly object session
    cdef readonly object connection
    cdef readonly PostReply reply
    cdef readonly object message
    cdef readonly object admit
    cdef readonly Lease lease
    # listener(response), once; the loop it runs on; the keep-alive timer while undecided.
    cdef object _listener
    cdef object _loop
    cdef object _timer
    # The answer was made (or the client went away): nothing more happens.
    cdef bint _settled
    # _ready is on the loop's queue.
    cdef bint _scheduled

    cpdef listen(self, object listener, object loop)
    cpdef cancel(self)
    cdef int _schedule(self) except -1


cdef class Leg:
    cdef list idle
    cdef Py_ssize_t count
    cdef object _make
    # The endpoint's maker of a POST's own SSE stream, for its connections' replies (None:
    # feed_post asks the endpoint).
    cdef object _new_stream

    cpdef Lease lease(self)
    cdef int _keep(self, Lease lease) except -1
    cpdef list take_idle(self)


cdef class Lease:
    cdef readonly object connection
    # None for a single lease (closed once released).
    cdef Leg leg
    cdef object feed_message
    cdef object feed_request
    cdef object recycle
    cdef object revive

    cpdef release(self)
    cpdef close(self)


cdef class ErrorStatuses:
    cdef readonly dict statuses
    cdef readonly object refuse
    cdef readonly frozenset refusal_codes

    cdef HTTPResponse apply(self, HTTPResponse response, object frame)


cpdef Lease single_lease(object connection)
cpdef object feed_post(object endpoint, object session, object connection, object message,
                       object body, bint json_only, object admit, Lease lease=*,
                       object headers=*, object trace=*)
cpdef bind_token(object connection, object token)
cpdef bind_peer(object connection, tuple client)
cpdef object feed_leased(object endpoint, Lease lease, object message, object body,
                         bint json_only, object admit, object token, object headers=*,
                         object client=*, object trace=*)
cpdef dict trace_context_of(dict headers)
