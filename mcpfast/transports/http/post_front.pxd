# The Streamable HTTP endpoint's front door (see post_front.pyx): C-level fields, so that
# a POST's first steps make no Python frame.
from mcpfast._core.http_messages cimport HTTPRequest
from mcpfast._core.messages cimport Request
from mcpfast.transports.http.post_reply cimport ErrorStatuses, Leg


cdef class LastJudged:
    cdef object a, b, c, d, e, f
    # The verdict for those values, once judged.
    cdef object verdict
    cdef bint judged

    cdef inline bint holds(self, a, b, c, d, e, f)
    cdef inline void keep(self, a, b, c, d, e, f, verdict)


cdef class PostFront:
    cdef public str path
    # The endpoint's bearer-token verifier (a BearerAuth) or None.
    cdef public object auth
    cdef public Py_ssize_t max_body_size
    # Hand the POST's traceparent / tracestate to its reply channel (the server says so).
    cdef public bint capture_trace_headers
    cdef object _endpoint
    # The 2026-07-28 leg and the HTTP statuses of its error answers (the endpoint's).
    cdef Leg _leg_2026
    cdef ErrorStatuses _statuses_2026
    # The older versions' (HTTP refusals only; None: none applied).
    cdef ErrorStatuses _statuses
    # The endpoint's POST verdicts by header values (its dict, shared).
    cdef dict _verdicts
    # The last header verdict with the values it was found for: the framer hands out the
    # same str for a header that repeats its value, so a client's next POST is told by
    # identity compares. The same for the 2026-07-28 routing check.
    cdef LastJudged _last_verdict
    cdef LastJudged _last_problem
    # The endpoint's methods, bound once.
    cdef object _handle_other
    cdef object _verdict_of
    cdef object _refused
    cdef object _undecodable
    cdef object _post_2026
    cdef object _post_decoded

    cpdef object handle(self, HTTPRequest request)
    cpdef object post(self, HTTPRequest request, object token)
    cpdef object trace_of(self, dict headers)
    cdef tuple _verdict(self, host, origin, content_type, accept, version_header)
    cdef object _routing_problem(self, version_header, header_method, header_name,
                                 body_version, method, body_name)
    cdef object _request_2026(self, dict headers, object version_header, object body,
                              Request message, tuple verdict, object token, object client)
