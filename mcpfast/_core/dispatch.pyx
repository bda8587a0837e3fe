"""The compiled part of a JSON-RPC session: a decoded request routed to its handler and,
when the handler answers at once, its response written -- the path of every request.

:class:`SessionCore` is the base class of :class:`mcpfast.jsonrpc.session.Session`, which
keeps everything else in Python (its constructor, notifications, batches, outgoing
requests, the tasks of async handlers, the error catalogue) and which this module calls
back for anything but the common case: a request refused before its handler runs (closed
session, id in use, too many in flight, unknown method), a handler that raises, an async
one or one returning an awaitable. The rules are the session's (its docstring); this is
the same steps without a Python frame, the fields they read kept in C.

Why compiled: the session's ``feed_request`` was about a third of the Python bytecodes of
a request served over HTTP, each of its dozen attribute reads and calls a round through
the interpreter.
"""
cimport cython
from cpython.object cimport PyObject, PyTypeObject

from mcpfast._core.cpython cimport mf_is_member_descriptor, mf_member_get, mf_writable_member_descriptor
from mcpfast._core.encode cimport Extension, encode_extended_response, encode_response
from mcpfast._core.driven cimport DrivenCall, DrivenEnd
from mcpfast._core.messages cimport Request, Response
from mcpfast._core.pending cimport OutgoingCore, PendingTable

from inspect import isawaitable as _isawaitable
from mcpfast._core.decode import DecodeError
from mcpfast._core.decode import decode as _decode
from types import GeneratorType

# Result types that are certainly not awaitable: the usual results of handlers and
# callbacks skip the slower inspect.isawaitable (also the session's, through its router).
cdef frozenset _PLAIN_RESULT_TYPES = frozenset({dict, list, str, int, float, bool,
                                                type(None), tuple})
PLAIN_RESULT_TYPES = _PLAIN_RESULT_TYPES


# The last type found awaitable by inspect.isawaitable (not a generator: whether one is
# awaitable depends on its code, not its type), so that the awaitable an inline chain
# returns each request (a DrivenCall) skips the ABC check isawaitable ends in.
cdef type _awaitable_type = None
cdef type _generator_type = GeneratorType


cdef bint _awaitable(object result) except -1:
    # inspect.isawaitable(result), its answer for the last awaitable type remembered.
    global _awaitable_type
    cdef type cls = type(result)
    if cls is _awaitable_type:
        return True
    if not _isawaitable(result):
        return False
    if cls is not _generator_type:
        _awaitable_type = cls
    return True


cdef object _result_frame(object request_id, object result, object ctx):
    # The response to a request whose handler returned ``result``, shaped by the
    # context's shape_result.
    shape = (<ContextCore>ctx).shape_result if isinstance(ctx, ContextCore) \
        else ctx.shape_result
    if shape is None:
        return encode_response(request_id, result)
    if type(shape) is Extension:
        # Members appended while encoding (no shaped value made).
        return encode_extended_response(request_id, result, <Extension>shape)
    return encode_response(request_id, shape(result))


@cython.auto_pickle(False)
cdef class SessionCore(DrivenEnd):
    """The fields and the request path of a JSON-RPC session (module docstring); not
    made alone: :class:`mcpfast.jsonrpc.session.Session` subclasses it."""

    def feed(self, frame, channel=None):
        """Process one received frame; True when it owes a reply (the session's docstring)."""
        if self._closed is not False:
            self._refuse_closed("feed")
        try:
            msg = _decode(frame)
        except DecodeError as exc:
            return self._refused(frame, exc, channel)
        cls = type(msg)
        if cls is Request:
            # The commonest messages, served without feed_message's frame.
            self.request(<Request>msg, channel, None)
            return True
        if cls is Response:
            self.response(<Response>msg)
            return False
        return self.feed_message(msg, channel)

    def feed_request(self, Request req not None, channel=None, batch=None):
        """Process one decoded Request: what ``feed_message`` does with one (it owes a
        reply), for a transport that tells requests apart itself -- one call less per
        request. ``batch`` is the session's own (the batch the request is an item of)."""
        self.request(req, channel, batch)

    cdef int request(self, Request req, object channel, object batch) except -1:
        cdef object request_id = req.id
        cdef str method = req.method
        cdef object ctx = None
        cdef object frame
        if batch is None:
            if self._closed is not False:
                self._refuse_closed("feed_request")
        else:
            # A batch's items: the session was open when the batch was fed.
            batch.owed = True
        # The payload without the property's attribute lookup (a subclass may override it).
        params = req.payload() if type(req) is Request else req.params
        try:
            in_flight = self._in_flight
            if _any(in_flight) and (request_id in in_flight
                                    or len(in_flight) >= self._in_flight_limit):
                # Refused (the session says how): the id is in use or the limit reached.
                self._check_in_flight(request_id)
            factory = self.context_factory
            if isinstance(factory, ContextFactory):
                ctx = (<ContextFactory>factory).make(self, request_id, method, params, channel)
            else:
                ctx = factory(self, request_id, method, params, channel)
            hook = self.before_dispatch
            if hook is not None:
                hook(ctx)
            requests = self._requests
            route = (<dict>requests).get(method) if type(requests) is dict \
                else requests.get(method)
            if route is None:
                self._no_route(method)
            if isinstance(route, RouteCore):
                is_async = (<RouteCore>route).is_async
                handler = (<RouteCore>route).handler
            else:
                is_async = route.is_async
                handler = route.handler
            if is_async:
                self._start(ctx, batch, handler, params, None)
                return 0
            if isinstance(handler, RouteHandler):
                result = (<RouteHandler>handler).handle(params, ctx)
            else:
                result = handler(params, ctx)
            if type(result) is DrivenCall:
                self.start_driven(ctx, batch, <DrivenCall>result)
                return 0
            if type(result) not in _PLAIN_RESULT_TYPES and _awaitable(result):
                self._start(ctx, batch, None, None, result)
                return 0
            frame = _result_frame(request_id, result, ctx)
        except Exception as exc:
            frame = self._failure_frame(request_id, method, exc)
        except BaseException as exc:
            # CancelledError from a handler run inline (anything else is raised again).
            frame = self._cancelled_frame(request_id, method, exc)
        # Answered inline (sync handler or error): no task, no bookkeeping.
        if ctx is not None:
            self._detach(ctx)
        if batch is not None:
            batch.add(frame)
        elif channel is None:
            self._send(frame)
        elif isinstance(channel, ReplyChannelCore):
            (<ReplyChannelCore>channel).respond_frame(frame)
        else:
            channel.respond(frame)
        return 0

    cdef object _detach(self, object ctx):
        # ctx.finish(): the request is answered or dropped; its reply channel returned.
        if isinstance(ctx, ContextCore) and (<ContextCore>ctx).progress is None \
                and self._finishes_plainly(type(ctx)):
            # What RequestContext.finish does here, without its frame.
            channel = (<ContextCore>ctx)._channel
            (<ContextCore>ctx)._channel = None
            return channel
        return ctx.finish()

    def _start_driven(self, ctx, batch, DrivenCall call not None):
        """Run the rest of a request's handler as ``call`` (by its futures' callbacks, no
        task): the session's ``_start`` for a DrivenCall."""
        self.start_driven(ctx, batch, call)

    cdef int start_driven(self, object ctx, object batch, DrivenCall call) except -1:
        ctx._batch = batch
        ctx._started = True
        ctx._task = call
        in_flight = self._in_flight
        in_flight[ctx.request_id] = ctx
        if batch is not None:
            batch.hold()
        return call.start_for(self, ctx)

    cdef int driven_end(self, object ctx, object result, object exc) except -1:
        # A DrivenCall's end, answered as the session's _run answers a task's (a failure
        # by the session's _driven_failed).
        if exc is not None:
            self._driven_failed(ctx, exc)
            return 0
        request_id = ctx.request_id
        try:
            frame = _result_frame(request_id, result, ctx)
        except Exception as error:
            frame = self._failure_frame(request_id, ctx.method, error)
        return self.finish(ctx, frame)

    def _finish(self, ctx, frame):
        """Complete an async request: bookkeeping, then its reply (None: none)."""
        self.finish(ctx, frame)

    cdef int finish(self, object ctx, object frame) except -1:
        request_id = ctx.request_id
        in_flight = self._in_flight
        if in_flight.get(request_id) is ctx:
            del in_flight[request_id]
        channel = self._detach(ctx)
        if ctx.cancelled:
            frame = None
        batch = ctx._batch
        try:
            if batch is not None:
                batch.release(frame)
            elif channel is None:
                if frame is not None and self._closed is False:
                    self._send(frame)
            else:
                if self._closed is not False:
                    frame = None
                if isinstance(channel, ReplyChannelCore):
                    (<ReplyChannelCore>channel).respond_frame(frame)
                else:
                    channel.respond(frame)
        except Exception:
            self._logger.exception("sending the reply to request id %r failed", request_id)
        return 0

    cdef int response(self, Response resp) except -1:
        # OutgoingRequests.on_response without its frame: the waiting request's future
        # resolved (an unknown id: the book's own on_response logs it).
        outgoing = self._outgoing
        table = _table_of(outgoing)
        out = (<PendingTable>table).pop(resp.id) if type(table) is PendingTable else None
        if out is None:
            # An unknown id (or a book of another kind): the book's own rule.
            outgoing.on_response(resp)
            return 0
        request = <OutgoingCore?>out
        if request.on_progress is not None:
            outgoing._progress.pop(request.id, None)
        future = request.future
        if not future.done():
            future.set_result(resp if request.raw else resp.result)
        return 0

    def is_idle(self):
        """True while open with no incoming request running and no outgoing one waiting
        (the session's ``idle``)."""
        return self.idle()

    cdef bint idle(self) except -1:
        # The book's PendingTable is asked directly: its length costs no Python call.
        return (self._closed is False and not _any(self._in_flight)
                and len(_table_of(self._outgoing)) == 0)

    cdef bint _finishes_plainly(self, object cls) except -1:
        # Whether contexts of class ``cls`` keep RequestContext.finish (remembered for the
        # last class seen: a session's contexts are of one class).
        if cls is self._plain_context_class:
            return True
        if getattr(cls, "finish", None) is self._base_finish:
            self._plain_context_class = cls
            return True
        return False


cdef inline bint _any(object in_flight) except -1:
    # Whether the session's dict of running requests has any (its length, not a truth
    # test through its type).
    return len(<dict>in_flight) != 0 if type(in_flight) is dict else bool(in_flight)


# OutgoingRequests._table's member descriptor (its own or a base's), found on first use
# (the class lives in the jsonrpc layer, above this one): read through it, the book's
# table costs no attribute lookup per idle check.
cdef type _outgoing_type = None
cdef object _outgoing_table = None


cdef object _table_of(object outgoing):
    global _outgoing_type, _outgoing_table
    cdef type cls = type(outgoing)
    if cls is not _outgoing_type:
        descr = None
        for klass in cls.__mro__:  # (the field may be a compiled base's)
            descr = klass.__dict__.get("_table")
            if descr is not None:
                break
        if descr is None or not mf_is_member_descriptor(descr):
            return outgoing._table
        _outgoing_type = cls
        _outgoing_table = descr
    return mf_member_get(_outgoing_table, outgoing)


@cython.auto_pickle(False)
cdef class RouteCore:
    """What the request path reads of a route, ``handler`` and ``is_async``: the base of
    :class:`mcpfast.jsonrpc.router.Route`, which sets them."""


@cython.auto_pickle(False)
cdef class RouteHandler:
    """A synchronous request handler the request path calls in C: calling it is its
    ``handle``, which a compiled subclass defines (:mod:`mcpfast.server.tools_call`).
    Used like any handler, ``handler(params, ctx)``."""

    def __call__(self, params, ctx):
        return self.handle(params, ctx)

    cdef object handle(self, object params, object ctx):
        raise NotImplementedError(f"{type(self).__name__} does not define handle()")


@cython.auto_pickle(False)
cdef class ReplyChannelCore:
    """A request's reply channel (:class:`mcpfast.jsonrpc.contract.ReplyChannel`) the
    request path answers in C: its ``respond(frame)`` is its ``respond_frame``, which a
    compiled subclass defines (:class:`mcpfast.transports.http.post_reply.PostReply`)."""

    def respond(self, frame):
        self.respond_frame(frame)

    cdef int respond_frame(self, object frame) except -1:
        raise NotImplementedError(f"{type(self).__name__} does not define respond_frame()")


@cython.auto_pickle(False)
cdef class ContextCore:
    """The fields every request's context has (``session``, ``request_id``, ``method``,
    ``params``, ``meta``, ``progress``, ``cancelled``, ``cancel_reason``,
    ``shape_result``, ``_channel``): the base of
    :class:`mcpfast.jsonrpc.context.RequestContext`, which documents them and fills them
    with :func:`fill_context`."""

    @property
    def channel(self):
        """The reply channel of the request while it runs; None without one or once done."""
        return self._channel


@cython.auto_pickle(False)
cdef class ContextFactory:
    """A context factory the request path calls in C: calling it is its ``make``, which
    a compiled subclass defines (:mod:`mcpfast.server.context_factories`). Used like any
    context factory, ``factory(session, request_id, method, params, channel)``."""

    def __call__(self, session, request_id, method, params, channel=None):
        return self.make(session, request_id, method, params, channel)

    cdef object make(self, object session, object request_id, object method, object params,
                     object channel):
        raise NotImplementedError(f"{type(self).__name__} does not define make()")


cdef tuple _NO_ARGS = ()
# The last class new_context found to be a ContextCore.
cdef object _context_class = None


cpdef object fill_context(ContextCore ctx, object session, object request_id, object method,
                          object params, object channel=None):
    """Set the fields of ``ctx`` as RequestContext's constructor does, but for
    ``progress`` (left None: the caller makes the reporter of a progress token): ``meta``
    is ``params["_meta"]`` when that is an object, else a new empty dict; not cancelled,
    no result shaper. Returns ``ctx``."""
    meta = None
    if type(params) is dict:
        meta = (<dict>params).get("_meta")
    if type(meta) is not dict:
        meta = {}
    ctx.session = session
    ctx.request_id = request_id
    ctx.method = method
    ctx.params = params
    ctx.meta = meta
    ctx.cancelled = False
    ctx.cancel_reason = None
    ctx.shape_result = None
    ctx.progress = None
    ctx._channel = channel
    return ctx


cpdef object new_context(type cls, object session, object request_id, object method,
                         object params, object channel=None):
    """A new context of ``cls`` (a subclass of ContextCore), filled by
    :func:`fill_context` without calling its constructor (the fields its own class adds
    are left for the caller to set)."""
    global _context_class
    if cls is not _context_class:
        if not issubclass(cls, ContextCore):
            raise TypeError(f"new_context() needs a ContextCore class, not {cls.__name__}")
        _context_class = cls
    ctx = <ContextCore>(<PyTypeObject *>cls).tp_new(cls, <PyObject *>_NO_ARGS, NULL)
    return fill_context(ctx, session, request_id, method, params, channel)


# The fields Python reads and writes often (the session's methods, the server's
# connection): member descriptors, which the interpreter specializes, instead of the
# getset properties Cython makes for `cdef public object` fields. Never deleted (a
# deleted one would be NULL here).
cdef extern from *:
    """
    #define MF_SESSION(tp, f) MF_EXPOSE(tp, __pyx_obj_7mcpfast_5_core_8dispatch_SessionCore, f)
    #define MF_ROUTE(tp, f) MF_EXPOSE(tp, __pyx_obj_7mcpfast_5_core_8dispatch_RouteCore, f)
    #define MF_CONTEXT(tp, f) MF_EXPOSE(tp, __pyx_obj_7mcpfast_5_core_8dispatch_ContextCore, f)
    #define MF_EXPOSE_FIELDS(s_, r_, c_) (( \
    MF_SESSION(s_, _closed) || \
    MF_SESSION(s_, _in_flight) || \
    MF_SESSION(s_, _in_flight_limit) || \
    MF_SESSION(s_, _requests) || \
    MF_SESSION(s_, _send) || \
    MF_SESSION(s_, context_factory) || \
    MF_SESSION(s_, before_dispatch) || \
    MF_SESSION(s_, _base_finish) || \
    MF_SESSION(s_, _outgoing) || \
    MF_ROUTE(r_, handler) || \
    MF_ROUTE(r_, is_async) || \
    MF_CONTEXT(c_, session) || \
    MF_CONTEXT(c_, request_id) || \
    MF_CONTEXT(c_, method) || \
    MF_CONTEXT(c_, params) || \
    MF_CONTEXT(c_, meta) || \
    MF_CONTEXT(c_, cancelled) || \
    MF_CONTEXT(c_, cancel_reason) || \
    MF_CONTEXT(c_, shape_result) || \
    MF_CONTEXT(c_, progress) || \
    MF_CONTEXT(c_, _channel)) ? -1 : 0)
    """
    int MF_EXPOSE_FIELDS(object session, object route, object context) except -1

MF_EXPOSE_FIELDS(SessionCore, RouteCore, ContextCore)
