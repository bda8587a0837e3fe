"""The front door of the Streamable HTTP endpoint: the first steps of every request,
compiled, since a stateless POST spends most of the endpoint's Python time in them.

:class:`PostFront` owns the endpoint's path, bearer-token verifier and body limit (the
endpoint's attributes of those names read and write them here). Its ``handle(request)`` is
the endpoint's: a POST to the endpoint's path without a verifier goes to :meth:`post`,
anything else to the endpoint's Python ``_handle``. :meth:`post` reads the POST's header
verdict (cached by the values of the headers it depends on; a new combination is judged
by the endpoint's ``_post_verdict``), then the body's size and its decoding, and routes the
decoded message: a request other than ``initialize`` in stateless mode straight to its
leg's connection (:func:`~mcpfast.transports.http.post_reply.feed_post`); a request on the
2026-07-28 leg to that leg's connection when its routing headers were found to match such
a body before (:data:`~mcpfast.transports.http.routing_headers.ROUTING_PROBLEMS`, the
rule's verdicts by the values it compares), else to the endpoint's ``_post_2026``;
everything else to the endpoint's ``_post_decoded``. With ``capture_trace_headers`` (set by
a server that records spans) the POST's ``traceparent`` / ``tracestate`` go to its reply
channel (``trace_headers``), read once its connection is made (the server decides on its
first connection); without it they are not even looked up.

Nothing here decides an MCP rule: the verdicts are the endpoint's and the routing rule's,
and every refusal (with its status and message) is made by the endpoint's Python; this
only applies verdicts already made and moves the message on. Why compiled: these steps
were two Python frames and some 140 bytecodes per POST, four frames and some 270 on the
2026-07-28 leg.
"""
cimport cython

from mcpfast._core.http_messages cimport HTTPRequest
from mcpfast._core.messages cimport Request
from mcpfast.transports.http.post_reply cimport Lease, Leg, feed_leased, trace_context_of

from mcpfast._core.decode import DecodeError, decode
from mcpfast.protocol import meta_keys, methods
from mcpfast.transports.http import headers as h
from mcpfast.transports.http import routing_headers as _routing_headers
from mcpfast.transports.http.routing_headers import known_routing_problem

# The header names a POST's verdict depends on (interned: the framer's names are the same
# objects, so dict lookups compare by identity).
cdef str _HOST = h.HOST
cdef str _ORIGIN = h.ORIGIN
cdef str _CONTENT_TYPE = h.CONTENT_TYPE
cdef str _ACCEPT = h.ACCEPT
cdef str _MCP_PROTOCOL_VERSION = h.MCP_PROTOCOL_VERSION
cdef str _MCP_METHOD = h.MCP_METHOD
cdef str _MCP_NAME = h.MCP_NAME
cdef str _POST = "POST"
cdef str _INITIALIZE = methods.INITIALIZE
cdef str _LISTEN = methods.SUBSCRIPTIONS_LISTEN
cdef str _META = "_meta"
cdef str _VERSION_KEY = meta_keys.PROTOCOL_VERSION
cdef dict _NAME_SOURCES = _routing_headers.NAME_SOURCES
cdef dict _ROUTING_PROBLEMS = _routing_headers.ROUTING_PROBLEMS
# Not a problem (None) nor a message: not judged yet.
cdef object _UNJUDGED = object()


@cython.auto_pickle(False)
@cython.final
cdef class LastJudged:
    """The last verdict judged and the (up to six) values it was judged for, the very
    objects: the same objects again are told by identity compares, without a key tuple,
    its hash and a dict lookup. Values equal but other objects are looked up as before."""

    cdef inline bint holds(self, a, b, c, d, e, f):
        return (self.judged and a is self.a and b is self.b and c is self.c and d is self.d
                and e is self.e and f is self.f)

    cdef inline void keep(self, a, b, c, d, e, f, verdict):
        self.a = a
        self.b = b
        self.c = c
        self.d = d
        self.e = e
        self.f = f
        self.verdict = verdict
        self.judged = True


@cython.auto_pickle(False)
@cython.final
cdef class PostFront:
    """The endpoint's front door (module docstring). ``endpoint``: a
    StreamableHTTPEndpoint, whose ``_post_verdicts`` dict (kept, never replaced) and
    ``_handle``, ``_post_verdict``, ``_post_refused``, ``_post_undecodable``,
    ``_post_2026`` and ``_post_decoded`` are looked up once, here;
    ``statuses_2026``: the HTTP statuses of the 2026-07-28 leg's error answers;
    ``statuses``: the same for the older versions' answers (the HTTP refusals only)."""

    def __init__(self, endpoint, str path, auth, Py_ssize_t max_body_size, statuses_2026,
                 statuses=None):
        self.path = path
        self.auth = auth
        self.max_body_size = max_body_size
        self._endpoint = endpoint
        self._leg_2026 = endpoint._leg_2026
        self._statuses_2026 = statuses_2026
        self._statuses = statuses
        self._verdicts = endpoint._post_verdicts
        self._handle_other = endpoint._handle
        self._verdict_of = endpoint._post_verdict
        self._refused = endpoint._post_refused
        self._undecodable = endpoint._post_undecodable
        self._post_2026 = endpoint._post_2026
        self._post_decoded = endpoint._post_decoded
        self._last_verdict = LastJudged()
        self._last_problem = LastJudged()
        self.capture_trace_headers = False

    cpdef object handle(self, HTTPRequest request):
        """The response to one request, or an awaitable of it (the endpoint's ``handle``)."""
        if self.auth is None and request.method == _POST and request.path == self.path:
            return self.post(request, None)
        return self._handle_other(request)

    cpdef object post(self, HTTPRequest request, object token):
        """A POST to the endpoint's path, its bearer token (if any) accepted."""
        cdef tuple verdict
        cdef dict headers
        cdef Lease lease
        # A dict, as the servers make them: its get() is then a C call. Another mapping
        # (middleware may set one) is read into a dict first.
        if type(request.headers) is dict:
            headers = <dict>request.headers
        else:
            headers = dict(request.headers)
        # Read once: part of the verdict's key, and compared with the body on the
        # 2026-07-28 leg.
        version_header = headers.get(_MCP_PROTOCOL_VERSION)
        host = headers.get(_HOST)
        origin = headers.get(_ORIGIN)
        content_type = headers.get(_CONTENT_TYPE)
        accept = headers.get(_ACCEPT)
        if self._last_verdict.holds(host, origin, content_type, accept, version_header, None):
            # The values of the last POST, the same objects: its verdict.
            verdict = <tuple>self._last_verdict.verdict
        else:
            verdict = self._verdict(host, origin, content_type, accept, version_header)
        # (refusal, json_only, sse_ok, version, spoken, leg_2026, leg): see the endpoint.
        body = request.body
        if verdict[0] is not None or len(body) > self.max_body_size:
            return self._refused(verdict, body)
        try:
            message = decode(body)
        except DecodeError as exc:
            return self._undecodable(exc, body)
        # The client's (host, port) when the server knows it: the connection fed is told.
        client = request.client
        if type(message) is Request:
            # A request of a version spoken here (the verdict of an unspoken one has
            # neither leg): the two common cases, routed without the endpoint's frame.
            if verdict[5]:
                return self._request_2026(headers, version_header, body, <Request>message,
                                          verdict, token, client)
            leg = verdict[6]
            if leg is not None and (<Request>message).method != _INITIALIZE:
                lease = (<Leg>leg).lease()
                return feed_leased(self._endpoint, lease, message, body, verdict[1],
                                   self._statuses, token, None, client, self.trace_of(headers))
        return self._post_decoded(headers, body, message, verdict, token, client,
                                  self.trace_of(headers))

    cpdef object trace_of(self, dict headers):
        """The POST's trace context headers for its reply channel when they are captured
        (:func:`~mcpfast.transports.http.post_reply.trace_context_of`), else None. Called
        once the POST's connection is made (the endpoint's slower paths call it too)."""
        if not self.capture_trace_headers:
            return None
        return trace_context_of(headers)

    cdef tuple _verdict(self, host, origin, content_type, accept, version_header):
        # The verdict of these header values (kept in the endpoint's verdicts, judged by
        # its _post_verdict on a miss), remembered with the values as the last one.
        key = (host, origin, content_type, accept, version_header)
        found = self._verdicts.get(key)
        verdict = <tuple>(found if found is not None else self._verdict_of(key))
        self._last_verdict.keep(host, origin, content_type, accept, version_header, None, verdict)
        return verdict

    cdef object _routing_problem(self, version_header, header_method, header_name,
                                 body_version, method, body_name):
        # The routing rule's verdict on these values (ROUTING_PROBLEMS, judged by
        # known_routing_problem on a miss): None or the mismatch's message. The last one
        # is remembered with its values (the framer and the decoder hand out the same str
        # for a repeated value).
        if self._last_problem.holds(version_header, header_method, header_name, body_version,
                                    method, body_name):
            return self._last_problem.verdict
        problem = _ROUTING_PROBLEMS.get(
            (version_header, header_method, header_name, body_version, method, body_name),
            _UNJUDGED)
        if problem is _UNJUDGED:
            problem = known_routing_problem(version_header, header_method, header_name,
                                            body_version, method, body_name)
        self._last_problem.keep(version_header, header_method, header_name, body_version,
                                method, body_name, problem)
        return problem

    cdef object _request_2026(self, dict headers, object version_header, object body,
                              Request message, tuple verdict, object token, object client):
        # A request on the 2026-07-28 leg whose _meta names a version and whose routing
        # headers were found to match such a body before (ROUTING_PROBLEMS, by the values
        # compared): to the leg's connection. Anything else (no _meta or version, a
        # mismatch, values of other types, a listen) is the endpoint's _post_2026.
        cdef Lease lease
        method = message.method
        # The payload without the property's attribute lookup (a subclass may override it).
        params = message.payload() if type(message) is Request else message.params
        if method != _LISTEN and type(params) is dict:
            meta = (<dict>params).get(_META)
            if type(meta) is dict:
                body_version = (<dict>meta).get(_VERSION_KEY)
                source = _NAME_SOURCES.get(method)
                body_name = None if source is None else (<dict>params).get(source)
                if type(body_version) is str and (body_name is None or type(body_name) is str):
                    problem = self._routing_problem(
                        version_header, headers.get(_MCP_METHOD), headers.get(_MCP_NAME),
                        body_version, method, body_name)
                    if problem is None:
                        lease = self._leg_2026.lease()
                        return feed_leased(self._endpoint, lease, message, body, verdict[1],
                                           self._statuses_2026, token, headers, client,
                                           self.trace_of(headers))
        return self._post_2026(headers, body, message, verdict[1], verdict[2], token, client)
