"""The server telemetry's per-message work in C: ``ServerTelemetryCore``, the base of
:class:`mcpfast.telemetry.server.ServerTelemetry` (a message's span begun and made current,
its count in flight, and at its end its outcome on the span and the duration metric), and
``ObservedRoute``, the handler of its around route (the pipeline's
:meth:`~mcpfast.server.middleware.pipeline.Middleware.around_route`).

The rules are the ones server.py's docstring states; what needs more than a look at the
message is its Python (``_target_of``, ``_links_for``, ``_remember``, ``_session_opened``,
``_traced_progress``, ``_awaited_inline``); the span's own work is span_core's.

Why compiled: reading the message, copying the target's attributes, beginning the span, and
at the end the outcome and the metric were a few hundred interpreted steps per request,
more than a compiled tools/call.
"""
cimport cython

from mcpfast.telemetry.clock cimport wall_ns
from cpython.dict cimport PyDict_GetItem
from cpython.object cimport PyObject

from mcpfast._core.dispatch cimport ContextCore

import json
from inspect import isawaitable as _isawaitable

from mcpfast._core.dispatch import PLAIN_RESULT_TYPES as _PLAIN_RESULT_TYPES
from mcpfast._core.driven import DrivenCall as _DrivenCall
from mcpfast.jsonrpc.errors import JSONRPCError as _JSONRPCError
from mcpfast.protocol import methods as _methods
from mcpfast.telemetry import attributes as _a

cdef object TOOLS_CALL = _methods.TOOLS_CALL
cdef object PROMPTS_GET = _methods.PROMPTS_GET
cdef object INITIALIZE = _methods.INITIALIZE
cdef frozenset TASK_METHODS = frozenset((_methods.TASKS_GET, _methods.TASKS_RESULT, _methods.TASKS_CANCEL))
cdef object JSONRPC_REQUEST_ID = _a.JSONRPC_REQUEST_ID
cdef object MCP_SESSION_ID = _a.MCP_SESSION_ID
cdef object MCP_RESOURCE_URI = _a.MCP_RESOURCE_URI
cdef object MCP_PROTOCOL_VERSION = _a.MCP_PROTOCOL_VERSION
cdef object GEN_AI_TOOL_CALL_ARGUMENTS = _a.GEN_AI_TOOL_CALL_ARGUMENTS
cdef object GEN_AI_TOOL_CALL_RESULT = _a.GEN_AI_TOOL_CALL_RESULT
cdef object ERROR_TYPE = _a.ERROR_TYPE
cdef object RPC_RESPONSE_STATUS_CODE = _a.RPC_RESPONSE_STATUS_CODE
cdef object TOOL_ERROR = _a.TOOL_ERROR
cdef object CLIENT_ADDRESS = _a.CLIENT_ADDRESS
cdef object CLIENT_PORT = _a.CLIENT_PORT
cdef object SERVER_ACTIVE_REQUESTS = _a.SERVER_ACTIVE_REQUESTS
cdef tuple PLAIN_RESULT_TYPES = tuple(_PLAIN_RESULT_TYPES)


def content_json(value):
    """A captured argument or result as the span records it (compact JSON)."""
    return json.dumps(value, default=str, separators=(",", ":"))


cdef int _add_peer(dict span_attrs, object peer, object port) except -1:
    # The connection's peer_address: a host (TCP) or a (host, port) pair.
    if type(peer) is tuple and len(peer) >= 2:
        peer, port = peer[0], peer[1]
    if type(peer) is str and peer:
        span_attrs[CLIENT_ADDRESS] = peer
        if type(port) is int:
            span_attrs[CLIENT_PORT] = port
    return 0


@cython.auto_pickle(False)
cdef class TargetCore:
    """The base of :class:`mcpfast.telemetry.targets.Target`: the fields every request
    reads, in C (set once, by Target's constructor)."""


@cython.final
@cython.auto_pickle(False)
cdef class Observed:
    """One message being observed: its span (None: no tracer), the context that span is
    current in, the token that made it current (None once left), when it started."""


@cython.auto_pickle(False)
cdef class ServerTelemetryCore:
    """ServerTelemetry's C part (module docstring)."""

    def _begin(self, ctx):
        """A message's span begun (and made current) and its count in flight: what
        :meth:`_end` ends."""
        return self.begin(ctx)

    def _end(self, Observed call not None, result, exc):
        """The message's outcome (``exc`` None: it returned ``result``) on its span and
        metrics."""
        self.end(call, result, exc)

    cdef Observed begin(self, object ctx):
        cdef ContextCore core = None
        if isinstance(ctx, ContextCore):
            # (Every server context is one: its fields read in C.)
            core = <ContextCore>ctx
            method = core.method
            params = core.params
            request_id = core.request_id
        else:
            method = ctx.method
            params = ctx.params
            request_id = ctx.request_id
        cdef bint is_dict = type(params) is dict
        # The target's memo looked up here (the call is for the first request of one).
        name = None
        if is_dict and (method == TOOLS_CALL or method == PROMPTS_GET):
            name = (<dict>params).get("name")
            if type(name) is not str:
                name = None
        version = ctx.state.protocol_version
        cdef PyObject *found = PyDict_GetItem(self._targets, (method, name, version))
        cdef TargetCore target = <TargetCore?>(<object>found if found != NULL
                                               else self._target_of(method, name, version))
        connection = ctx.connection
        cdef Observed call = Observed.__new__(Observed)
        cdef TracerCore fast
        call.method = method
        call.request_id = request_id
        call.connection = connection
        call.target = target
        tracer = self._tracer
        cdef dict span_attrs
        if tracer is not None:
            # The attributes go in once, at start (the sampler sees them; one validation
            # pass instead of one per set_attribute): the target's, then this request's.
            span_attrs = target.span_attributes.copy()
            if request_id is not None:
                span_attrs[JSONRPC_REQUEST_ID] = str(request_id)
            if connection is not None:
                session_id = getattr(connection, "session_id", None)
                if session_id is not None:
                    span_attrs[MCP_SESSION_ID] = session_id
                peer = getattr(connection, "peer_address", None)
                if peer is not None:
                    _add_peer(span_attrs, peer, getattr(connection, "peer_port", None))
            parent = None
            links = None
            if is_dict:
                if target.resource and type((<dict>params).get("uri")) is str:
                    span_attrs[MCP_RESOURCE_URI] = (<dict>params)["uri"]
                if self.capture_content and method == TOOLS_CALL and "arguments" in <dict>params:
                    span_attrs[GEN_AI_TOOL_CALL_ARGUMENTS] = content_json((<dict>params)["arguments"])
                # (Calls only where there is something to find: most requests carry neither.)
                if "_meta" in <dict>params:
                    parent = self._extract(params)
                if method in TASK_METHODS or "requestState" in <dict>params:
                    links = self._links_for(method, params)
            if parent is None:
                # Over HTTP the reply channel holds the POST's trace headers (else, on an
                # endpoint made by hand, the 2026-07-28 leg's headers): the parent when
                # the message's _meta has none.
                channel = core._channel if core is not None else ctx.channel
                if channel is not None:
                    headers = getattr(channel, "trace_headers", None) or getattr(channel, "headers", None)
                    if headers is not None:
                        parent = self._extract_headers(headers)
            # One clock read for the span's start and the duration metric's.
            started = wall_ns()
            call.started = started
            fast = self._fast
            begun = None if fast is None else fast.begin_span(target.name, self._server_kind, parent, span_attrs,
                                                              links, started)
            if begun is not None:
                call.span, call.context, call.token = <tuple>begun
                call.fast = fast
            else:
                span = call.span = tracer.start_span(target.name, context=parent, kind=self._server_kind,
                                                     attributes=span_attrs, links=links, start_time=started)
                context = call.context = self._set_span(span, parent)
                call.token = self._attach(context)
            if (core.progress if core is not None else ctx.progress) is not None:
                # notifications/progress the handler sends become events of this span.
                ctx.progress = self._traced_progress(ctx.progress, call.span)
        if self._sinks:
            gauge = self._in_flight
            gauge.value = gauge.value + 1
            if self._adding:
                for sink in self._adding:
                    sink.add(SERVER_ACTIVE_REQUESTS, 1)
            if call.span is None:
                call.started = wall_ns()
        return call

    cdef int leave(self, Observed call) except -1:
        token = call.token
        if token is not None:
            call.token = None
            if call.fast is not None:
                call.fast.leave_context(token)
            else:
                self._detach(token)
        return 0

    cdef int end(self, Observed call, object result, object exc) except -1:
        span = call.span
        error_type = None
        cdef bint refused = False
        if exc is None:
            if type(result) is dict:
                method = call.method
                if method == TOOLS_CALL:
                    if (<dict>result).get("isError") is True:
                        error_type = TOOL_ERROR
                        if span is not None:
                            span.set_attribute(ERROR_TYPE, error_type)
                            span.set_status(self._error)
                    elif span is not None and self.capture_content:
                        span.set_attribute(GEN_AI_TOOL_CALL_RESULT, content_json(result))
                if span is not None and ("task" in <dict>result or "requestState" in <dict>result):
                    self._remember(result, span)
                if method == INITIALIZE:
                    negotiated = (<dict>result).get("protocolVersion")
                    if span is not None and type(negotiated) is str:
                        span.set_attribute(MCP_PROTOCOL_VERSION, negotiated)
                    if call.connection is not None:
                        self._session_opened(call.connection, negotiated)
        elif isinstance(exc, _JSONRPCError):
            error_type = str(exc.code)
            # A refused call may name a tool or prompt that does not exist (the peer chose
            # the name): kept out of the metric's attributes, whose sets must stay few.
            refused = True
            if span is not None:
                span.set_attributes({ERROR_TYPE: error_type, RPC_RESPONSE_STATUS_CODE: error_type})
                span.set_status(self._error, exc.message)
        else:
            # (Closed, GeneratorExit: abandoned before it ended, as a cancelled one is.)
            error_type = ("cancelled" if type(exc).__name__ in ("CancelledError", "GeneratorExit")
                          else type(exc).__qualname__)
            if span is not None:
                span.set_attribute(ERROR_TYPE, error_type)
                if isinstance(exc, Exception):
                    span.record_exception(exc)
                    span.set_status(self._error, str(exc))
        ended = wall_ns()
        if span is not None:
            if call.token is not None:
                self.leave(call)
            if isinstance(span, SpanCore):
                (<SpanCore>span).end_span(ended)
            else:
                span.end(ended)
        sinks = self._sinks
        if sinks:
            gauge = self._in_flight
            gauge.value = gauge.value - 1
            if self._adding:
                for sink in self._adding:
                    sink.add(SERVER_ACTIVE_REQUESTS, -1)
            if call.request_id is not None:
                # The span's own duration where there is one (the same two clock reads).
                seconds = (ended - call.started) / 1e9
                attrs = (call.target.success if error_type is None
                         else call.target.metric_attributes(error_type, refused))
                for sink in sinks:
                    sink.server_operation(seconds, attrs, call.context)
        return 0


@cython.final
@cython.auto_pickle(False)
cdef class ObservedRoute:
    """The around route's handler ``(params, ctx)``: the message observed around
    ``inner`` (ServerTelemetry.around_route says how what suspends is observed)."""

    def __init__(self, ServerTelemetryCore telemetry not None, inner):
        if not callable(inner):
            raise TypeError(f"inner must be callable, not {type(inner).__name__}")
        self._telemetry = telemetry
        self._inner = inner

    def __call__(self, params, ctx):
        telemetry = self._telemetry
        cdef Observed call = telemetry.begin(ctx)
        try:
            result = self._inner(params, ctx)
        except BaseException as exc:
            telemetry.end(call, None, exc)
            raise
        if type(result) in PLAIN_RESULT_TYPES or not _isawaitable(result):
            telemetry.end(call, result, None)
            return result
        # The rest runs in its own context (a chain begun inline copied this one, the
        # span current) or in _awaited's (begun at once, it makes the span current there).
        telemetry.leave(call)
        if type(result) is _DrivenCall:
            result.observe(telemetry._end, call)
            return result
        return telemetry._awaited_inline(call, result)
