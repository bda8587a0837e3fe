"""ServerTelemetry: a SERVER span and the convention's metrics for every message a Server
routes, as an eager middleware of the request pipeline (so every transport and era gets
it the same way, and a request answered at once still needs no task).

Spans (OpenTelemetry's semantic conventions for MCP): one per request, named
``{mcp.method.name} {target}`` (target: the tool's or prompt's name; a resource URI is
kept out of the name and recorded as ``mcp.resource.uri``), kind SERVER, its parent the
context the request's ``params._meta`` carries (``traceparent`` / ``tracestate``), else the
one of the HTTP request's headers of those names (the reply channel's ``trace_headers``:
the HTTP transports capture them for a server whose telemetry :attr:`traces`), else the
ambient one. Attributes:
``mcp.method.name``, ``jsonrpc.request.id``, ``jsonrpc.protocol.version``,
``mcp.protocol.version``, ``mcp.session.id`` (a Streamable HTTP session),
``gen_ai.operation.name`` = ``execute_tool`` and ``gen_ai.tool.name`` for
tools/call, ``gen_ai.prompt.name``, ``mcp.resource.uri``, and the transport's
(``network.transport``, ``network.protocol.name`` / ``version``, ``server.address`` /
``port``: ``transport_attributes``, computed once), ``client.address`` / ``client.port``
from the connection's ``peer_address`` where the transport knows it. Progress the handler
reports (``notifications/progress``) becomes events of the span. A JSON-RPC error sets ``error.type``
and ``rpc.response.status_code`` to its code and the status to ERROR with its message; a
CallToolResult with ``isError: true`` sets ``error.type`` = ``tool_error``; any other
exception its class name (recorded as an exception event). ``capture_content=True`` adds
``gen_ai.tool.call.arguments`` and ``gen_ai.tool.call.result`` (JSON; they may hold
secrets, so off by default). Notifications from the client (progress, cancellation,
initialized ...) get short spans of their own with the same naming.

Links: ``tasks/get`` / ``tasks/result`` / ``tasks/cancel`` link to the span of the
tools/call that made the task, and a 2026-07-28 retry (its ``requestState``) to the span
that answered with the InputRequiredResult (both remembered in this process, bounded).

Metrics (:class:`~mcpfast.telemetry.metrics.MetricsSink`): ``mcp.server.operation.duration``
per request (attributes: ``mcp.method.name``, ``gen_ai.tool.name`` / ``gen_ai.prompt.name``,
``error.type``, ``mcp.protocol.version``, ``network.transport``; recorded in the span's
context, so the SDK's default exemplar filter links its exemplars to the trace),
``mcp.server.session.duration`` per handshake session (initialize to close),
and the counts of requests in flight, open sessions and open connections.
"""

from __future__ import annotations

import json
import time
from inspect import isawaitable
from time import time_ns
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Optional

from mcpfast.jsonrpc.driven import DrivenCall
from mcpfast.jsonrpc.errors import JSONRPCError
from mcpfast.jsonrpc.router import PLAIN_RESULT_TYPES, Handler
from mcpfast.protocol import methods
from mcpfast.server.middleware.pipeline import CallNext, Middleware
from mcpfast.telemetry import attributes as a
from mcpfast.telemetry.metrics import MetricsSink, gauge_for
from mcpfast.telemetry.targets import Target

if TYPE_CHECKING:
    from mcpfast.telemetry.fast_spans import FastTracer

__all__ = ["ServerTelemetry"]

_LINK_MEMO_LIMIT = 4096
_TARGET_MEMO_LIMIT = 1024
_TASK_METHODS = frozenset((methods.TASKS_GET, methods.TASKS_RESULT, methods.TASKS_CANCEL))


def _json(value: Any) -> str:
    return json.dumps(value, default=str, separators=(",", ":"))


class ServerTelemetry(Middleware):
    """Spans and metrics for every message (module docstring).

    tracer_provider: where spans go (None: no spans); metrics: the sinks metrics go to
    (none: no metrics); transport_attributes: the attributes every span and the metrics
    carry (``network.transport`` ...); capture_content: record tool arguments and results;
    fast_path: build finished spans directly where that is the SDK's own result
    (:mod:`mcpfast.telemetry.fast_spans`; False: always the tracer's ``start_span``).
    Usually made by :func:`mcpfast.telemetry.instrument_server` or the Server itself.
    """

    eager = True

    def __init__(self, tracer_provider: Any = None, metrics: Iterable[MetricsSink] = (), *,
                 transport_attributes: Optional[Mapping[str, Any]] = None,
                 capture_content: bool = False, fast_path: bool = True) -> None:
        self.metrics = tuple(metrics)
        # Requests in flight, counted here and read by the sinks when they report (no
        # call per change); a sink that cannot track a gauge is told each change.
        self._in_flight, self._adding = gauge_for(self.metrics, a.SERVER_ACTIVE_REQUESTS)
        self.capture_content = bool(capture_content)
        base: dict[str, Any] = {a.JSONRPC_PROTOCOL_VERSION: "2.0"}
        base.update(transport_attributes or {})
        self._span_base = base
        # Metrics carry the convention's low-cardinality facts only (each attribute of a
        # measurement is validated and hashed by the SDK on every record).
        self._metric_base = {key: value for key, value in base.items() if key == a.NETWORK_TRANSPORT}
        self._tracer = None
        self._fast: Optional[FastTracer] = None
        if tracer_provider is not None:
            from opentelemetry import context as otel_context
            from opentelemetry import trace as otel_trace

            from mcpfast import __version__
            from mcpfast.telemetry.fast_spans import fast_tracer
            from mcpfast.telemetry.propagation import extract_from_headers, extract_from_meta

            self._tracer = tracer_provider.get_tracer("mcpfast", __version__)
            self._fast = fast_tracer(tracer_provider, "mcpfast", __version__) if fast_path else None
            self._attach = otel_context.attach
            self._detach = otel_context.detach
            self._set_span = otel_trace.set_span_in_context
            self._server_kind = otel_trace.SpanKind.SERVER
            self._error = otel_trace.StatusCode.ERROR
            self._link = otel_trace.Link
            self._extract = extract_from_meta
            self._extract_headers = extract_from_headers
        # Span contexts to link to: by task id, by requestState.
        self._task_spans: dict[str, Any] = {}
        self._retry_spans: dict[str, Any] = {}
        # Per (method, tool or prompt, version): the span name and attribute sets.
        self._targets: dict[tuple, Target] = {}
        # Handshake sessions: connection -> (start, metric attributes).
        self._sessions: dict[Any, tuple[float, dict[str, Any]]] = {}

    @property
    def traces(self) -> bool:
        """Whether spans are recorded (so the HTTP transports hand on the trace headers)."""
        return self._tracer is not None

    # -- the pipeline ------------------------------------------------------------------

    async def on_message(self, ctx: Any, call_next: CallNext) -> Any:
        call = self._begin(ctx)
        try:
            result = await call_next(ctx)
        except BaseException as exc:
            self._end(call, None, exc)
            raise
        self._end(call, result, None)
        return result

    def around_route(self, method: str, request: bool, inner: Handler) -> Optional[Handler]:
        """The same spans and metrics around ``inner`` in plain calls (the pipeline's
        around route): a request answered at once is observed with no coroutine; one that
        suspends is observed at its end (a DrivenCall through its observer, any other
        awaitable in a coroutine that awaits it with the span current)."""
        begin = self._begin
        end = self._end
        driven_end = self._driven_end
        awaited = self._awaited

        def observed(params: Any, ctx: Any) -> Any:
            call = begin(ctx)
            try:
                result = inner(params, ctx)
            except BaseException as exc:
                end(call, None, exc)
                raise
            if type(result) in PLAIN_RESULT_TYPES or not isawaitable(result):
                end(call, result, None)
                return result
            # The rest runs in its own context (a chain begun inline copied this one, the
            # span current) or in a task's (awaited() makes the span current there).
            self._leave(call)
            if type(result) is DrivenCall:
                result.observe(driven_end, call)
                return result
            return awaited(call, result)

        return observed

    async def _awaited(self, call: "_Observed", awaitable: Any) -> Any:
        if call.context is not None:
            call.token = self._enter(call.context)
        try:
            result = await awaitable
        except BaseException as exc:
            self._end(call, None, exc)
            raise
        self._end(call, result, None)
        return result

    def _driven_end(self, call: "_Observed", result: Any, exc: Optional[BaseException]) -> None:
        self._end(call, result, exc)

    def _begin(self, ctx: Any) -> "_Observed":
        # A message's span begun (and made current) and its count in flight: what _end ends.
        method = ctx.method
        params = ctx.params
        request_id = ctx.request_id
        # The target's memo looked up here (the call is for the first request of one).
        name = None
        if type(params) is dict and (method == methods.TOOLS_CALL or method == methods.PROMPTS_GET):
            name = params.get("name")
            if type(name) is not str:
                name = None
        version = ctx.state.protocol_version
        target = self._targets.get((method, name, version))
        if target is None:
            target = self._target_of(method, name, version)
        connection = ctx.connection
        call = _Observed(ctx, target)
        tracer = self._tracer
        if tracer is not None:
            # The attributes go in once, at start (the sampler sees them; one validation
            # pass instead of one per set_attribute): the target's, then this request's.
            span_attrs = target.span_attributes.copy()
            if request_id is not None:
                span_attrs[a.JSONRPC_REQUEST_ID] = str(request_id)
            if connection is not None:
                session_id = getattr(connection, "session_id", None)
                if session_id is not None:
                    span_attrs[a.MCP_SESSION_ID] = session_id
                peer = getattr(connection, "peer_address", None)
                if peer is not None:
                    _add_peer(span_attrs, peer, getattr(connection, "peer_port", None))
            parent = None
            links = None
            if type(params) is dict:
                if target.resource and type(params.get("uri")) is str:
                    span_attrs[a.MCP_RESOURCE_URI] = params["uri"]
                if self.capture_content and method == methods.TOOLS_CALL and "arguments" in params:
                    span_attrs[a.GEN_AI_TOOL_CALL_ARGUMENTS] = _json(params["arguments"])
                # (Calls only where there is something to find: most requests carry neither.)
                if "_meta" in params:
                    parent = self._extract(params)
                if method in _TASK_METHODS or "requestState" in params:
                    links = self._links_for(method, params)
            if parent is None:
                # Over HTTP the reply channel holds the POST's trace headers (else, on an
                # endpoint made by hand, the 2026-07-28 leg's headers): the parent when
                # the message's _meta has none.
                channel = ctx.channel
                if channel is not None:
                    headers = getattr(channel, "trace_headers", None) or getattr(channel, "headers", None)
                    if headers is not None:
                        parent = self._extract_headers(headers)
            # One clock read for the span's start and the duration metric's.
            started = call.started = time_ns()
            fast = self._fast
            begun = None if fast is None else fast.begin(target.name, self._server_kind, parent, span_attrs, links,
                                                         started)
            if begun is not None:
                call.span, call.context, call.token = begun
                call.fast = fast
            else:
                span = call.span = tracer.start_span(target.name, context=parent, kind=self._server_kind,
                                                     attributes=span_attrs, links=links, start_time=started)
                context = call.context = self._set_span(span, parent)
                call.token = self._attach(context)
            if ctx.progress is not None:
                # notifications/progress the handler sends become events of this span.
                ctx.progress = _TracedProgress(ctx.progress, call.span)
        if self.metrics:
            self._in_flight.value += 1
            if self._adding:
                for sink in self._adding:
                    sink.add(a.SERVER_ACTIVE_REQUESTS, 1)
            if call.span is None:
                call.started = time_ns()
        return call

    def _enter(self, context: Any) -> Any:
        # ``context`` (a span's, made by _begin) current again: the token for _leave.
        return self._attach(context)

    def _leave(self, call: "_Observed") -> None:
        # The context before the span's made current again (once).
        token = call.token
        if token is not None:
            call.token = None
            if call.fast is not None:
                call.fast.leave(token)
            else:
                self._detach(token)

    def _end(self, call: "_Observed", result: Any, exc: Optional[BaseException]) -> None:
        # The message's outcome (``exc`` None: it returned ``result``) on its span and metrics.
        span = call.span
        error_type: Optional[str] = None
        refused = False
        if exc is None:
            if type(result) is dict:
                method = call.method
                if method == methods.TOOLS_CALL:
                    if result.get("isError") is True:
                        error_type = a.TOOL_ERROR
                        if span is not None:
                            span.set_attribute(a.ERROR_TYPE, error_type)
                            span.set_status(self._error)
                    elif span is not None and self.capture_content:
                        span.set_attribute(a.GEN_AI_TOOL_CALL_RESULT, _json(result))
                if span is not None and ("task" in result or "requestState" in result):
                    self._remember(result, span)
                if method == methods.INITIALIZE:
                    negotiated = result.get("protocolVersion")
                    if span is not None and type(negotiated) is str:
                        span.set_attribute(a.MCP_PROTOCOL_VERSION, negotiated)
                    if call.connection is not None:
                        self._session_opened(call.connection, negotiated)
        elif isinstance(exc, JSONRPCError):
            error_type = str(exc.code)
            # A refused call may name a tool or prompt that does not exist (the peer chose
            # the name): kept out of the metric's attributes, whose sets must stay few.
            refused = True
            if span is not None:
                span.set_attributes({a.ERROR_TYPE: error_type, a.RPC_RESPONSE_STATUS_CODE: error_type})
                span.set_status(self._error, exc.message)
        else:
            error_type = "cancelled" if type(exc).__name__ == "CancelledError" else type(exc).__qualname__
            if span is not None:
                span.set_attribute(a.ERROR_TYPE, error_type)
                if isinstance(exc, Exception):
                    span.record_exception(exc)
                    span.set_status(self._error, str(exc))
        ended = time_ns()
        if span is not None:
            if call.token is not None:
                self._leave(call)
            span.end(ended)
        sinks = self.metrics
        if sinks:
            self._in_flight.value -= 1
            if self._adding:
                for sink in self._adding:
                    sink.add(a.SERVER_ACTIVE_REQUESTS, -1)
            if call.request_id is not None:
                # The span's own duration where there is one (the same two clock reads).
                seconds = (ended - call.started) / 1e9
                target = call.target
                attrs = target.success if error_type is None else target.metric_attributes(error_type, refused)
                for sink in sinks:
                    sink.server_operation(seconds, attrs, call.context)

    def _target_of(self, method: str, name: Optional[str], version: Optional[str]) -> Target:
        # What every request of this method, tool or prompt and version shares: computed
        # once (bounded: the names come from the peer).
        key = (method, name, version)
        target = self._targets.get(key)
        if target is None:
            target = Target(method, name, version, self._span_base, self._metric_base)
            if len(self._targets) < _TARGET_MEMO_LIMIT:
                self._targets[key] = target
        return target

    # -- links -------------------------------------------------------------------------

    def _links_for(self, method: str, params: dict) -> Optional[list]:
        # The span a later request of the same work continues: the task's creator, or the
        # request that asked for input.
        remembered = None
        if method in _TASK_METHODS:
            task_id = params.get("taskId")
            if type(task_id) is str:
                remembered = self._task_spans.get(task_id)
        elif "requestState" in params:
            state = params["requestState"]
            if type(state) is str:
                remembered = self._retry_spans.get(state)
        return [self._link(remembered)] if remembered is not None else None

    def _remember(self, result: dict, span: Any) -> None:
        task = result.get("task")
        if type(task) is dict and type(task.get("taskId")) is str:
            _bounded_put(self._task_spans, task["taskId"], span.get_span_context())
        state = result.get("requestState")
        if type(state) is str and "inputRequests" in result:
            _bounded_put(self._retry_spans, state, span.get_span_context())

    # -- sessions and connections (the server calls these) -----------------------------

    def connection_opened(self, connection: Any) -> None:
        """A server connection was made."""
        for sink in self.metrics:
            sink.add(a.SERVER_ACTIVE_CONNECTIONS, 1)

    def connection_closed(self, connection: Any) -> None:
        """A server connection closed: ends its session, if initialize began one."""
        session = self._sessions.pop(connection, None)
        for sink in self.metrics:
            sink.add(a.SERVER_ACTIVE_CONNECTIONS, -1)
            if session is not None:
                sink.add(a.SERVER_ACTIVE_SESSIONS, -1)
                sink.server_session(time.perf_counter() - session[0], session[1])

    def _session_opened(self, connection: Any, version: Any) -> None:
        if not self.metrics or connection in self._sessions:
            return
        attrs = dict(self._metric_base)
        if type(version) is str:
            attrs[a.MCP_PROTOCOL_VERSION] = version
        self._sessions[connection] = (time.perf_counter(), attrs)
        for sink in self.metrics:
            sink.add(a.SERVER_ACTIVE_SESSIONS, 1)


def _bounded_put(memo: dict, key: str, value: Any) -> None:
    if len(memo) >= _LINK_MEMO_LIMIT:
        # Oldest first out (dicts keep insertion order).
        del memo[next(iter(memo))]
    memo[key] = value


class _Observed:
    """One message being observed: its span (None: no tracer), the context that span is
    current in, the token that made it current (None once left), when it started."""

    __slots__ = ("method", "request_id", "connection", "target", "span", "context", "token", "fast", "started")

    def __init__(self, ctx: Any, target: Target) -> None:
        self.method = ctx.method
        self.request_id = ctx.request_id
        self.connection = ctx.connection
        self.target = target
        self.span: Any = None
        self.context: Any = None
        self.token: Any = None
        self.fast: Any = None
        self.started = 0


class _TracedProgress:
    """A request's progress reporter whose reports are also events (``progress``) of the
    request's span; everything else is the reporter's."""

    __slots__ = ("_reporter", "_span")

    def __init__(self, reporter: Any, span: Any) -> None:
        self._reporter = reporter
        self._span = span

    def report(self, progress: float, total: Optional[float] = None, message: Optional[str] = None) -> None:
        self._reporter.report(progress, total, message)
        span = self._span
        if span.is_recording():
            event: dict[str, Any] = {"mcp.progress": progress}
            if total is not None:
                event["mcp.progress.total"] = total
            if message is not None:
                event["mcp.progress.message"] = message
            span.add_event("notifications/progress", event)

    def close(self) -> None:
        self._reporter.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._reporter, name)


def _add_peer(span_attrs: dict[str, Any], peer: Any, port: Any) -> None:
    # The connection's peer_address: a host (TCP) or a (host, port) pair.
    if type(peer) is tuple and len(peer) >= 2:
        peer, port = peer[0], peer[1]
    if type(peer) is str and peer:
        span_attrs[a.CLIENT_ADDRESS] = peer
        if type(port) is int:
            span_attrs[a.CLIENT_PORT] = port
