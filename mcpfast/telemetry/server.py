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
CallToolResult with ``isError: true`` sets ``error.type`` = ``tool_error``; a request
cancelled or abandoned before it ended (CancelledError, GeneratorExit) ``cancelled``; any
other exception its class name (recorded as an exception event). ``capture_content=True`` adds
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

import time
from typing import Any, Iterable, Mapping, Optional

from mcpfast.jsonrpc.router import Handler
from mcpfast.protocol import methods
from mcpfast.server.middleware.pipeline import CallNext, Middleware, run_inline
from mcpfast.telemetry import attributes as a
from mcpfast.telemetry.metrics import MetricsSink, gauge_for
from mcpfast.telemetry.server_core import Observed, ObservedRoute, ServerTelemetryCore
from mcpfast.telemetry.targets import Target

__all__ = ["ServerTelemetry"]

_LINK_MEMO_LIMIT = 4096
_TARGET_MEMO_LIMIT = 1024
_TASK_METHODS = frozenset((methods.TASKS_GET, methods.TASKS_RESULT, methods.TASKS_CANCEL))


class ServerTelemetry(ServerTelemetryCore, Middleware):
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
        self.capture_content = bool(capture_content)
        base: dict[str, Any] = {a.JSONRPC_PROTOCOL_VERSION: "2.0"}
        base.update(transport_attributes or {})
        self._span_base = base
        # Metrics carry the convention's low-cardinality facts only (each attribute of a
        # measurement is validated and hashed by the SDK on every record).
        self._metric_base = {key: value for key, value in base.items() if key == a.NETWORK_TRANSPORT}
        self._tracer = None
        self._fast = None
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
    def metrics(self) -> tuple[MetricsSink, ...]:
        """The sinks metrics go to (set again: the in-flight count follows the new ones)."""
        return self._sinks

    @metrics.setter
    def metrics(self, sinks: Iterable[MetricsSink]) -> None:
        self._sinks = tuple(sinks)
        # Requests in flight, counted here and read by the sinks when they report (no
        # call per change); a sink that cannot track a gauge is told each change.
        self._in_flight, self._adding = gauge_for(self._sinks, a.SERVER_ACTIVE_REQUESTS)

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
        around route, compiled: :class:`~mcpfast.telemetry.server_core.ObservedRoute`): a
        request answered at once is observed with no coroutine; one that suspends at its
        end (a DrivenCall through its observer, any other awaitable in :meth:`_awaited`,
        begun at once, which awaits it with the span current)."""
        return ObservedRoute(self, inner)

    def _awaited_inline(self, call: Observed, awaitable: Any) -> Any:
        # _awaited begun here (so that a request closed or cancelled before its task runs
        # still ends its span and its count): its result, or what goes on with the rest.
        return run_inline(self._awaited(call, awaitable))

    async def _awaited(self, call: Observed, awaitable: Any) -> Any:
        if call.context is not None:
            call.token = self._attach(call.context)
        try:
            result = await awaitable
        except GeneratorExit as exc:
            # Closed before it ended, often from another context (the request dropped, the
            # coroutine finalized later): the one the span was made current in is gone.
            call.token = None
            self._end(call, None, exc)
            raise
        except BaseException as exc:
            self._end(call, None, exc)
            raise
        self._end(call, result, None)
        return result

    def _traced_progress(self, reporter: Any, span: Any) -> "_TracedProgress":
        # A request's progress reporter whose reports are also events of its span.
        return _TracedProgress(reporter, span)

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
