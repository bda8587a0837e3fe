# SessionCore: the fields the compiled request path reads, set by the Python Session
# (mcpfast.jsonrpc.session) through member descriptors (dispatch.pyx); RouteCore and
# ContextCore: the same for a route and a request's context.
from mcpfast._core.driven cimport DrivenCall, DrivenEnd
from mcpfast._core.messages cimport Request, Response


cdef class SessionCore(DrivenEnd):
    # False while open, True once closed.
    cdef object _closed
    # Incoming requests whose async handler is running, by request id.
    cdef object _in_flight
    # The most of them at once (sys.maxsize: no limit).
    cdef object _in_flight_limit
    # The router's dict of request routes (method -> Route).
    cdef object _requests
    # The book of outgoing requests (mcpfast.jsonrpc.outgoing.OutgoingRequests).
    cdef object _outgoing
    # Where a frame goes when there is no reply channel.
    cdef object _send
    cdef object context_factory
    cdef object before_dispatch
    # RequestContext.finish: a context whose class keeps it needs no call to finish.
    cdef object _base_finish
    # The last context class found to keep it.
    cdef object _plain_context_class
    cdef bint _finishes_plainly(self, object cls) except -1
    cdef int request(self, Request req, object channel, object batch) except -1
    cdef int response(self, Response resp) except -1
    # A request whose handler's chain goes on as a DrivenCall: registered and started.
    # ctx.finish() (without its frame where the context keeps RequestContext's).
    cdef object _detach(self, object ctx)
    cdef int start_driven(self, object ctx, object batch, DrivenCall call) except -1
    # Complete a request answered later: bookkeeping, then its reply (None: none).
    cdef int finish(self, object ctx, object frame) except -1
    # is_idle() without a Python call.
    cdef bint idle(self) except -1


cdef class RouteCore:
    cdef object handler
    cdef object is_async


# A synchronous handler whose ``handle`` the request path calls without a Python call.
cdef class RouteHandler:
    cdef object handle(self, object params, object ctx)


cdef class ContextCore:
    cdef object session
    cdef object request_id
    cdef object method
    cdef object params
    cdef object meta
    cdef object cancelled
    cdef object cancel_reason
    cdef object shape_result
    cdef object progress
    cdef object _channel


# A reply channel whose ``respond`` the request path calls without a Python call.
cdef class ReplyChannelCore:
    cdef int respond_frame(self, object frame) except -1


# A context factory whose ``make`` the request path calls without a Python call.
cdef class ContextFactory:
    cdef object make(self, object session, object request_id, object method, object params,
                     object channel)


cpdef object fill_context(ContextCore ctx, object session, object request_id, object method,
                          object params, object channel=*)
cpdef object new_context(type cls, object session, object request_id, object method,
                         object params, object channel=*)
