"""ServerTelemetry: a SERVER span and the convention's metrics for every message a Server
routes, as an eager middleware of the request pipeline (so every transport and era gets
it the same way, and a request answered at once still needs no task).

Spans (OpenTelemetry's semantic conventions for MCP): one per request, named
``{mcp.method.name} {target}`` (target: the tool's or prompt's name; a resource URI is
kept out of the name and recorded as ``mcp.resource.uri``), kind SERVER, its parent the
context the request's ``params._meta`` carries (``traceparent`` / ``tracestate``), else the
ambient one. Attributes: ``mcp.method.name``, ``jsonrpc.request.id``,
``jsonrpc.protocol.version``, ``mcp.protocol.version``, ``mcp.session.id`` (a Streamable
HTTP session), ``gen_ai.operation.name`` = ``execute_tool`` and ``gen_ai.tool.name`` for
tools/call, ``gen_ai.prompt.name``, ``mcp.resource.uri``, and the transport's
(``network.transport``, ``network.protocol.name`` / ``version``, ``server.address`` /
``port``: ``transport_attributes``, computed once). A JSON-RPC error sets ``error.type``
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
per request, ``mcp.server.session.duration`` per handshake session (initialize to close),
and the counts of requests in flight, open sessions and open connections.
"""

from __future__ import annotations

import json
import time
from typing import Any, Iterable, Mapping, Optional

from mcpfast.jsonrpc.errors import JSONRPCError
from mcpfast.protocol import methods
from mcpfast.server.middleware.pipeline import CallNext, Middleware
from mcpfast.telemetry import attributes as a
from mcpfast.telemetry.metrics import MetricsSink

__all__ = ["ServerTelemetry"]

_LINK_MEMO_LIMIT = 4096
_TASK_METHODS = frozenset((methods.TASKS_GET, methods.TASKS_RESULT, methods.TASKS_CANCEL))
_RESOURCE_METHODS = frozenset((methods.RESOURCES_READ, methods.RESOURCES_SUBSCRIBE,
                               methods.RESOURCES_UNSUBSCRIBE))


def _json(value: Any) -> str:
    return json.dumps(value, default=str, separators=(",", ":"))


class ServerTelemetry(Middleware):
    """Spans and metrics for every message (module docstring).

    tracer_provider: where spans go (None: no spans); metrics: the sinks metrics go to
    (none: no metrics); transport_attributes: the attributes every span and the metrics
    carry (``network.transport`` ...); capture_content: record tool arguments and results.
    Usually made by :func:`mcpfast.telemetry.instrument_server` or the Server itself.
    """

    eager = True

    def __init__(self, tracer_provider: Any = None, metrics: Iterable[MetricsSink] = (), *,
                 transport_attributes: Optional[Mapping[str, Any]] = None,
                 capture_content: bool = False) -> None:
        self.metrics = tuple(metrics)
        self.capture_content = bool(capture_content)
        base: dict[str, Any] = {a.JSONRPC_PROTOCOL_VERSION: "2.0"}
        base.update(transport_attributes or {})
        self._span_base = base
        # Metrics carry the low-cardinality transport facts only.
        self._metric_base = {key: value for key, value in base.items()
                             if key in (a.NETWORK_TRANSPORT, a.NETWORK_PROTOCOL_NAME,
                                        a.NETWORK_PROTOCOL_VERSION)}
        self._tracer = None
        if tracer_provider is not None:
            from opentelemetry import context as otel_context
            from opentelemetry import trace as otel_trace

            from mcpfast import __version__
            from mcpfast.telemetry.propagation import extract_from_meta

            self._tracer = tracer_provider.get_tracer("mcpfast", __version__)
            self._attach = otel_context.attach
            self._detach = otel_context.detach
            self._set_span = otel_trace.set_span_in_context
            self._server_kind = otel_trace.SpanKind.SERVER
            self._error = otel_trace.StatusCode.ERROR
            self._link = otel_trace.Link
            self._extract = extract_from_meta
        # Span contexts to link to: by task id, by requestState.
        self._task_spans: dict[str, Any] = {}
        self._retry_spans: dict[str, Any] = {}
        # Handshake sessions: connection -> (start, metric attributes).
        self._sessions: dict[Any, tuple[float, dict[str, Any]]] = {}

    # -- the pipeline ------------------------------------------------------------------

    async def on_message(self, ctx: Any, call_next: CallNext) -> Any:
        method = ctx.method
        params = ctx.params
        request_id = ctx.request_id
        span_attrs = dict(self._span_base)
        span_attrs[a.MCP_METHOD_NAME] = method
        metric_attrs = dict(self._metric_base)
        metric_attrs[a.MCP_METHOD_NAME] = method
        if request_id is not None:
            span_attrs[a.JSONRPC_REQUEST_ID] = str(request_id)
        version = ctx.state.protocol_version
        if version is not None:
            span_attrs[a.MCP_PROTOCOL_VERSION] = version
            metric_attrs[a.MCP_PROTOCOL_VERSION] = version
        connection = ctx.connection
        session_id = getattr(connection, "session_id", None)
        if session_id is not None:
            span_attrs[a.MCP_SESSION_ID] = session_id
        # The client's socket address where the transport knows it (spans only: the
        # metrics' attributes stay bounded).
        peer = getattr(connection, "peer_address", None)
        if peer is not None:
            span_attrs[a.CLIENT_ADDRESS] = peer
            port = getattr(connection, "peer_port", None)
            if port is not None:
                span_attrs[a.CLIENT_PORT] = port
        name = method
        if type(params) is dict:
            if method == methods.TOOLS_CALL:
                tool = params.get("name")
                span_attrs[a.GEN_AI_OPERATION_NAME] = metric_attrs[a.GEN_AI_OPERATION_NAME] = a.EXECUTE_TOOL
                if type(tool) is str:
                    name = f"{method} {tool}"
                    span_attrs[a.GEN_AI_TOOL_NAME] = metric_attrs[a.GEN_AI_TOOL_NAME] = tool
                if self.capture_content and "arguments" in params:
                    span_attrs[a.GEN_AI_TOOL_CALL_ARGUMENTS] = _json(params["arguments"])
            elif method == methods.PROMPTS_GET:
                prompt = params.get("name")
                if type(prompt) is str:
                    name = f"{method} {prompt}"
                    span_attrs[a.GEN_AI_PROMPT_NAME] = metric_attrs[a.GEN_AI_PROMPT_NAME] = prompt
            elif method in _RESOURCE_METHODS or method == methods.RESOURCE_UPDATED:
                uri = params.get("uri")
                if type(uri) is str:
                    span_attrs[a.MCP_RESOURCE_URI] = uri
        tracer = self._tracer
        span: Any = None
        token: Any = None
        if tracer is not None:
            parent = self._extract(params)
            links = self._links_for(method, params) if type(params) is dict else None
            span = tracer.start_span(name, context=parent, kind=self._server_kind,
                                     attributes=span_attrs, links=links)
            token = self._attach(self._set_span(span, parent))
        sinks = self.metrics
        for sink in sinks:
            sink.add(a.SERVER_ACTIVE_REQUESTS, 1)
        started = time.perf_counter()
        error_type: Optional[str] = None
        try:
            result = await call_next(ctx)
        except JSONRPCError as exc:
            error_type = str(exc.code)
            # A refused call may name a tool or prompt that does not exist (the peer chose
            # the name): kept out of the metric's attributes, whose sets must stay few.
            metric_attrs.pop(a.GEN_AI_TOOL_NAME, None)
            metric_attrs.pop(a.GEN_AI_PROMPT_NAME, None)
            if span is not None:
                span.set_attribute(a.ERROR_TYPE, error_type)
                span.set_attribute(a.RPC_RESPONSE_STATUS_CODE, error_type)
                span.set_status(self._error, exc.message)
            raise
        except BaseException as exc:
            error_type = "cancelled" if type(exc).__name__ == "CancelledError" else type(exc).__qualname__
            if span is not None:
                span.set_attribute(a.ERROR_TYPE, error_type)
                if isinstance(exc, Exception):
                    span.record_exception(exc)
                    span.set_status(self._error, str(exc))
            raise
        else:
            if type(result) is dict:
                if method == methods.TOOLS_CALL:
                    if result.get("isError") is True:
                        error_type = a.TOOL_ERROR
                        if span is not None:
                            span.set_attribute(a.ERROR_TYPE, error_type)
                            span.set_status(self._error)
                    elif span is not None and self.capture_content:
                        span.set_attribute(a.GEN_AI_TOOL_CALL_RESULT, _json(result))
                if span is not None:
                    self._remember(result, span)
                if method == methods.INITIALIZE:
                    negotiated = result.get("protocolVersion")
                    if span is not None and type(negotiated) is str:
                        span.set_attribute(a.MCP_PROTOCOL_VERSION, negotiated)
                    if connection is not None:
                        self._session_opened(connection, negotiated)
            return result
        finally:
            if span is not None:
                self._detach(token)
                span.end()
            if sinks:
                seconds = time.perf_counter() - started
                if error_type is not None:
                    metric_attrs[a.ERROR_TYPE] = error_type
                for sink in sinks:
                    sink.add(a.SERVER_ACTIVE_REQUESTS, -1)
                    if request_id is not None:
                        sink.server_operation(seconds, metric_attrs)

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
