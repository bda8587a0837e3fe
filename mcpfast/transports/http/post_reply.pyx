"""The reply channel of one POST, the connections of the stateless legs, and the feeding of
a POST's message into its connection: compiled, since every POST goes through all three.

:class:`PostReply`: the reply channel of one POST holding requests. The first thing the
server does decides the HTTP answer: a response before any other message is sent as one
``application/json`` body (the common case, and the cheapest); a message related to the
request first (a progress notification, a request to the client) turns the answer into an
SSE stream carrying those messages and then the response. With ``json_only`` (the
server's JSON-response mode, or a client that does not accept SSE) related messages go to
the session's GET stream instead (``side``) and the answer is always JSON.

:class:`Leg` and :class:`Lease`: a stateless POST is served by a connection of its own,
taken from its leg's idle connections (or made) and given back once the POST is answered.

:func:`feed_post`: the message of a POST into its connection, with a fresh PostReply;
the answer when it is known at once (202, or the JSON response of a request answered
while fed), else a :class:`DeferredAnswer` (the request is still being handled), or the
answer the endpoint's ``_answer`` makes of a reply decided otherwise (an SSE stream).
:func:`feed_leased`: the
same for a stateless POST's leased connection, bound to the caller's token first
(:func:`bind_token`).

Nothing here decides an MCP rule: the endpoint (Python) checks the request and chooses the
connection; this only moves the message in and the answer out. Why compiled: these were
five Python frames and about 170 bytecodes per POST, a quarter of the endpoint's cost.
"""
cimport cython

import asyncio
import logging

from mcpfast._core.cpython cimport mf_member_descriptor
from mcpfast._core.encode cimport error_code_of
from mcpfast._core.http_messages cimport HTTPResponse, new_response
from mcpfast._core.messages cimport Request

from sys import intern

from mcpfast.protocol import trace_context as _trace_context
from mcpfast.transports.http.messages import JSON_CONTENT_TYPE as _JSON_HEADER
from mcpfast.transports.http.messages import json_error_response as _json_error_response

_LOGGER = logging.getLogger("mcpfast.transports.http")

# Idle connections kept per leg: enough for the POSTs of many keep-alive clients at once.
IDLE_CONNECTIONS = 64
cdef Py_ssize_t _IDLE_CONNECTIONS = IDLE_CONNECTIONS

# The header of a JSON answer (a fresh list per response: callers may append to it).
cdef tuple _JSON_CONTENT_TYPE = _JSON_HEADER

# The trace context headers (interned, as the framer's header names are).
cdef str _TRACEPARENT = intern(_trace_context.TRACEPARENT)
cdef str _TRACESTATE = intern(_trace_context.TRACESTATE)

cdef tuple _JSON = ("json", None)
cdef tuple _SSE = ("sse", None)


@cython.auto_pickle(False)
cdef class PostReply:
    """The reply channel of one POST (module docstring). ``side(frame)``: where related
    messages go in JSON-only mode; ``new_stream()``: the SSE stream of the answer;
    ``headers``: the POST's headers, for checks comparing them with the body (Mcp-Param-*),
    set on the 2026-07-28 leg only; ``trace_headers``: the POST's ``traceparent`` /
    ``tracestate`` (:func:`trace_context_of`), set only when the endpoint captures them (a
    server recording spans), on every leg."""

    def __init__(self, bint json_only, side, new_stream, headers=None, trace_headers=None):
        _fill(self, json_only, side, new_stream, headers, trace_headers)

    # -- ReplyChannel ------------------------------------------------------------------

    def send(self, frame):
        if self.json_only:
            self._side(frame)
            return
        stream = self.stream
        if stream is None:
            stream = self.to_stream()
        stream.push(frame)

    cdef int respond_frame(self, object frame) except -1:
        # respond(frame), which the session's request path calls in C (ReplyChannelCore).
        stream = self.stream
        if stream is None:
            if self.outcome is None and self._waiter is None and self._deferred is None:
                # Answered while fed (nobody waits yet): the common case.
                self.outcome = ("json", frame)
            else:
                self._decide(("json", frame))
            return 0
        if frame is not None:
            stream.push(frame)
        stream.finish()
        return 0

    # -- for the endpoint --------------------------------------------------------------

    cpdef object to_stream(self):
        """Answer with an SSE stream from now on (first related message, or a long wait)."""
        stream = self.stream = self._new_stream()
        stream.attach()
        self._decide(_SSE)
        return stream

    cdef int _decide(self, tuple outcome) except -1:
        cdef DeferredAnswer deferred
        if self.outcome is None:
            self.outcome = outcome
            waiter = self._waiter
            if waiter is not None and not waiter.done():
                waiter.set_result(None)
            deferred = self._deferred
            if deferred is not None:
                self._deferred = None
                deferred._schedule()
        return 0

    async def wait(self, timeout):
        """Until the outcome is known; after ``timeout`` seconds the answer becomes a
        stream (so that keep-alive comments can flow) unless it must be JSON."""
        if self.outcome is not None:
            return
        self._waiter = waiter = asyncio.get_running_loop().create_future()
        try:
            if timeout is None or self.json_only:
                await waiter
                return
            try:
                await asyncio.wait_for(asyncio.shield(waiter), timeout)
            except asyncio.TimeoutError:
                if self.outcome is None:
                    self.to_stream()
        finally:
            self._waiter = None

    def __repr__(self):
        return f"<PostReply {self.outcome[0] if self.outcome else 'waiting'}>"


cdef inline int _fill(PostReply reply, bint json_only, object side, object new_stream,
                      object headers, object trace) except -1:
    reply.json_only = json_only
    reply.headers = headers
    reply.trace_headers = trace
    reply.outcome = None
    reply.stream = None
    reply._side = side
    reply._new_stream = new_stream
    reply._waiter = None
    reply._deferred = None
    return 0


cdef inline PostReply _new_reply(bint json_only, object side, object new_stream, object headers,
                                 object trace):
    # As PostReply(...) without its argument parsing (feed_post makes one per POST).
    cdef PostReply reply = PostReply.__new__(PostReply)
    _fill(reply, json_only, side, new_stream, headers, trace)
    return reply


@cython.auto_pickle(False)
@cython.final
cdef class DeferredAnswer:
    """The HTTP answer to a POST whose request is still being handled (what
    :func:`feed_post` returns then): made by the endpoint's ``_answer`` once the POST's
    reply is decided, and handed to one listener.

    ``listen(listener, loop)``: ``listener(response)`` is called on ``loop`` once the
    answer is known -- on the loop turn after the reply was decided, so that the session
    has finished the request before its connection is answered (and, stateless, given
    back). Undecided for the endpoint's ``keepalive_interval`` seconds, the answer becomes
    an SSE stream (keep-alive comments can then flow), unless it must be JSON.
    ``cancel()``: the client went away first: the request is cancelled (the server is
    sent notifications/cancelled) and a leased connection closed; the listener is not
    called. Awaiting it (the ASGI adapter, a wrapper of the endpoint) gives the response
    and cancels the answer when the awaiting task is cancelled.

    Why not a task awaiting the reply: a task, a shield and a wait_for per POST were five
    loop turns and a dozen Python frames for every request answered after it was fed (an
    async tool awaiting I/O, a gateway's forwarded call).
    """

    def __init__(self):
        raise TypeError("DeferredAnswer is made by feed_post")

    cpdef listen(self, object listener, object loop):
        """Call ``listener(response)`` on ``loop`` once the answer is known (class docstring)."""
        if self._listener is not None or self._settled:
            raise RuntimeError("a DeferredAnswer is listened to once")
        self._listener = listener
        self._loop = loop
        reply = self.reply
        if reply.outcome is not None:
            self._schedule()
            return
        reply._deferred = self
        if not reply.json_only:
            timeout = self.endpoint.keepalive_interval
            if timeout is not None:
                self._timer = loop.call_later(timeout, self._undecided)

    cpdef cancel(self):
        """The client went away before its answer (class docstring); nothing once answered."""
        if self._settled:
            return
        self._settled = True
        self._listener = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self.reply._deferred is self:
            self.reply._deferred = None
        self.endpoint._cancel(self.connection, self.message, "the HTTP client disconnected")
        if self.lease is not None:
            self.lease.close()

    cdef int _schedule(self) except -1:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._scheduled and not self._settled:
            self._scheduled = True
            self._loop.call_soon(self._ready)
        return 0

    def _undecided(self):
        # The keep-alive interval passed with no outcome: a stream from now on.
        self._timer = None
        if self.reply.outcome is None and not self._settled:
            self.reply.to_stream()

    def _ready(self):
        if self._settled:
            return
        self._settled = True
        listener = self._listener
        self._listener = None
        try:
            response = self.endpoint._answer(self.session, self.connection, self.reply, self.message,
                                             self.admit, self.lease)
        except Exception:
            _LOGGER.exception("the MCP endpoint failed making an answer")
            response = _json_error_response(500, -32603, "Internal error")
        listener(response)

    def __await__(self):
        return self._awaited().__await__()

    async def _awaited(self):
        future = asyncio.get_running_loop().create_future()
        self.listen(future.set_result, future.get_loop())
        try:
            return await future
        except asyncio.CancelledError:
            self.cancel()
            raise

    def __repr__(self):
        return f"<DeferredAnswer {'answered' if self._settled else 'waiting'}>"


cdef DeferredAnswer _deferred_answer(object endpoint, object session, object connection,
                                     PostReply reply, object message, object admit, Lease lease):
    cdef DeferredAnswer deferred = DeferredAnswer.__new__(DeferredAnswer)
    deferred.endpoint = endpoint
    deferred.session = session
    deferred.connection = connection
    deferred.reply = reply
    deferred.message = message
    deferred.admit = admit
    deferred.lease = lease
    return deferred


cpdef dict trace_context_of(dict headers):
    """The W3C trace context headers of a POST (``headers``: its dict, lower-case names):
    a new dict of its ``traceparent`` and, when there, ``tracestate``; None when it has no
    ``traceparent``. Only these two are kept (not the other headers, nor a reference to
    them): what a span's parent needs, for as long as the request runs."""
    traceparent = headers.get(_TRACEPARENT)
    if type(traceparent) is not str:
        return None
    tracestate = headers.get(_TRACESTATE)
    if type(tracestate) is str:
        return {_TRACEPARENT: traceparent, _TRACESTATE: tracestate}
    return {_TRACEPARENT: traceparent}


@cython.auto_pickle(False)
cdef class Leg:
    """The idle connections of one stateless leg (a protocol version of stateless mode, or
    the 2026-07-28 leg). ``make()`` makes a connection for it; a connection with the
    transport contract's optional ``recycle()`` / ``revive()`` (ServerConnection) serves
    POST after POST, the others one each. Why: making a connection and its session for
    every POST was most of a stateless request's cost. ``new_stream``: the endpoint's maker
    of a POST's own SSE stream, given to its POSTs' replies (None: :func:`feed_post` reads
    the endpoint's ``_new_lone_stream`` per POST)."""

    def __init__(self, make, new_stream=None):
        self.idle = []
        self.count = 0
        self._make = make
        self._new_stream = new_stream

    # The idle leases are idle[:count]; the slots past it hold None and are reused. Why
    # not pop() and append(): a list shrinking to empty frees its storage and growing again
    # allocates it, a malloc and a free per POST when one connection serves them all.

    @cython.boundscheck(False)
    @cython.wraparound(False)
    cpdef Lease lease(self):
        """A connection for one POST: an idle one (revived), else a new one."""
        cdef Lease lease
        if self.count == 0:
            return _new_lease(self._make(), self)
        self.count -= 1
        lease = <Lease>self.idle[self.count]
        self.idle[self.count] = None
        if lease.revive is not None:
            lease.revive()
        return lease

    @cython.boundscheck(False)
    @cython.wraparound(False)
    cdef int _keep(self, Lease lease) except -1:
        if self.count < len(self.idle):
            self.idle[self.count] = lease
        else:
            self.idle.append(lease)
        self.count += 1
        return 0

    cpdef list take_idle(self):
        """The idle connections, taken out (the endpoint closes them)."""
        idle = [(<Lease>lease).connection for lease in self.idle[:self.count]]
        self.idle = []
        self.count = 0
        return idle

    def __len__(self):
        return self.count


cdef Lease _new_lease(object connection, Leg leg):
    cdef Lease lease = Lease.__new__(Lease)
    lease.connection = connection
    lease.leg = leg
    # Looked up once per connection, not per POST.
    lease.feed_message = getattr(connection, "feed_message", None)
    lease.feed_request = getattr(connection, "feed_request", None)
    lease.recycle = getattr(connection, "recycle", None) if leg is not None else None
    lease.revive = getattr(connection, "revive", None)
    return lease


@cython.auto_pickle(False)
cdef class Lease:
    """A connection serving one stateless POST: ``release()`` once the POST is answered
    (back to its leg when it can serve another: its ``recycle()`` says so, else closed),
    ``close()`` on the error paths (a client that went away, a failed feed). Made by
    :meth:`Leg.lease` and :func:`single_lease`."""

    cpdef release(self):
        leg = self.leg
        recycle = self.recycle
        if recycle is not None and leg.count < _IDLE_CONNECTIONS and recycle():
            leg._keep(self)
        else:
            self.connection.close()

    cpdef close(self):
        self.connection.close()


# ``Lease.connection`` is read by the endpoint on every stateless POST: a member descriptor
# instead of Cython's property (see mf_member_descriptor), at the offset of the struct
# Cython generates.
cdef extern from *:
    """
    #include <stddef.h>
    #define MF_LEASE_CONNECTION ((Py_ssize_t)offsetof( \
        struct __pyx_obj_7mcpfast_10transports_4http_10post_reply_Lease, connection))
    """
    Py_ssize_t MF_LEASE_CONNECTION

mf_member_descriptor(Lease, "connection", MF_LEASE_CONNECTION)


cpdef Lease single_lease(object connection):
    """A lease of ``connection`` for one POST only: closed when released."""
    return _new_lease(connection, None)


cpdef object feed_post(object endpoint, object session, object connection, object message,
                       object body, bint json_only, object admit, Lease lease=None,
                       object headers=None, object trace=None):
    """Feed a POST's decoded ``message`` into ``connection`` (of ``session``, or of
    ``lease`` for a stateless POST) with a fresh PostReply (its ``headers`` and
    ``trace_headers`` these two; see PostReply); the HTTPResponse when the answer
    is known at once (202 when nothing is owed; the JSON response of a request answered
    while fed, through ``admit(response, frame)`` when given), a :class:`DeferredAnswer`
    while the request is being handled, else the endpoint's ``_answer`` of the reply."""
    cdef PostReply reply
    cdef HTTPResponse response
    if session is not None:
        reply = _new_reply(json_only, session.send_unrelated, session.new_stream, headers, trace)
    else:
        new_stream = None if lease is None or lease.leg is None else lease.leg._new_stream
        reply = _new_reply(json_only, _drop_side,
                           endpoint._new_lone_stream if new_stream is None else new_stream, headers,
                           trace)
    try:
        # The body is decoded already: a connection that takes the message skips a
        # second decode (and a second parse of its params); one that takes a request
        # alone, the dispatch on the message's type too.
        feed_request = None
        if type(message) is Request:
            feed_request = (lease.feed_request if lease is not None
                            else getattr(connection, "feed_request", None))
        if feed_request is not None:
            feed_request(message, reply)
            owes = True
        else:
            feed_message = (lease.feed_message if lease is not None
                            else getattr(connection, "feed_message", None))
            owes = (feed_message(message, reply) if feed_message is not None
                    else connection.feed(body, reply))
    except Exception:
        if lease is not None:
            lease.close()
        raise
    if not owes:
        if lease is not None:
            lease.release()
        return new_response(202, [], b"")
    outcome = reply.outcome
    if outcome is None:
        return _deferred_answer(endpoint, session, connection, reply, message, admit, lease)
    frame = (<tuple>outcome)[1]
    if frame is not None and (<tuple>outcome)[0] == "json":
        # Answered while fed (a sync handler, an error): the common case, inline.
        if lease is not None:
            lease.release()
        response = new_response(200, [_JSON_CONTENT_TYPE], frame)
        if admit is None:
            return response
        if type(admit) is ErrorStatuses:
            return (<ErrorStatuses>admit).apply(response, frame)  # without a Python call
        return admit(response, frame)
    return endpoint._answer(session, connection, reply, message, admit, lease)


cpdef bind_token(object connection, object token):
    """Give ``connection`` the caller's verified access token: the transport contract's
    optional ``auth`` attribute, what its handlers read as ``ctx.auth``."""
    connection.auth = token


cpdef bind_peer(object connection, tuple client):
    """Tell ``connection`` who sent the request it is fed: the transport contract's
    optional ``peer_address`` / ``peer_port`` attributes (what its handlers read as
    ``ctx.peer_address`` / ``ctx.peer_port``), from the request's ``client`` (host, port).
    A connection without them is left alone."""
    host = client[0]
    port = client[1]
    try:
        # The same socket's next request: the same tuple's objects, nothing to store.
        if connection.peer_address is host and connection.peer_port is port:
            return
    except AttributeError:
        return
    connection.peer_address = host
    connection.peer_port = port


cpdef object feed_leased(object endpoint, Lease lease, object message, object body,
                         bint json_only, object admit, object token, object headers=None,
                         object client=None, object trace=None):
    """:func:`feed_post` of a stateless POST into its leased connection, bound first to
    ``token`` (the caller's verified access token; None without auth) and to ``client``
    (the request's (host, port), None when the server knows none); ``trace``: the POST's
    trace context headers, when captured."""
    connection = lease.connection
    if token is not None:
        bind_token(connection, token)
    if client is not None:
        bind_peer(connection, <tuple>client)
    return feed_post(endpoint, None, connection, message, body, json_only, admit, lease, headers,
                     trace)


@cython.auto_pickle(False)
@cython.final
cdef class ErrorStatuses:
    """An ``admit`` for feed_post and the endpoint: gives a JSON answer that is a JSON-RPC
    error the HTTP status its code maps to in ``statuses`` (codes not there: the status
    stays). The table is the caller's (the 2026-07-28 leg's rule); this only applies it.
    ``refuse``: for an error whose code is in ``refusal_codes`` (an HTTP refusal carried by
    a JSON-RPC error: 429, 403), ``refuse(response, frame)`` makes the answer instead."""

    def __init__(self, dict statuses, refuse=None, refusal_codes=()):
        self.statuses = dict(statuses)
        self.refuse = refuse
        self.refusal_codes = frozenset(refusal_codes) if refuse is not None else frozenset()

    def __call__(self, HTTPResponse response, frame):
        return self.apply(response, frame)

    cdef HTTPResponse apply(self, HTTPResponse response, object frame):
        if frame is not None and response.status == 200:
            code = error_code_of(frame)
            if code is not None:
                if code in self.refusal_codes:
                    return self.refuse(response, frame)
                response.status = self.statuses.get(code, 200)
        return response


def _drop_side(frame):
    _LOGGER.debug("stateless POST: a message related to the request could not be sent")
