"""ClientTelemetry: a CLIENT span and ``mcp.client.operation.duration`` for every request
an mcpfast Client sends (a :class:`~mcpfast.client.observer.RequestObserver`).

The span is named and attributed as the server's (:mod:`mcpfast.telemetry.server`), kind
CLIENT, its parent the current span (so a gateway's upstream calls, made while its
server span is current, continue the downstream trace); its context goes to the server in
``params._meta`` (``traceparent`` / ``tracestate``, through the configured propagators),
and over HTTP as the headers of the same names. A JSON-RPC error answer sets ``error.type``
and ``rpc.response.status_code`` to its code, ``isError: true`` sets ``tool_error``, any
other failure (timeout, closed connection) its class name. ``mcp.client.session.duration``
spans initialize (or server/discover) to the connection's end.
"""

from __future__ import annotations

import json
import time
from typing import Any, Iterable, Mapping, Optional

from mcpfast.jsonrpc.errors import JSONRPCError
from mcpfast.protocol import methods
from mcpfast.telemetry import attributes as a
from mcpfast.telemetry.metrics import MetricsSink, gauge_for
from mcpfast.telemetry.targets import Target

__all__ = ["ClientTelemetry"]

_TARGET_MEMO_LIMIT = 1024


class _Call:
    """One observed request (the observer's token)."""

    __slots__ = ("method", "span", "target", "started")

    def __init__(self, method: str, span: Any, target: Target, started: float) -> None:
        self.method = method
        self.span = span
        self.target = target
        self.started = started


class ClientTelemetry:
    """Spans and metrics for a Client's requests (module docstring): pass it as
    ``Client(observer=...)`` or ``connect(..., observer=...)``.

    tracer_provider: where spans go (None: no spans); metrics: the sinks metrics go to;
    transport_attributes: ``network.transport``, ``server.address`` ...; capture_content:
    record tool arguments and results (``gen_ai.tool.call.*``); fast_path: as
    :class:`~mcpfast.telemetry.server.ServerTelemetry`'s.
    """

    def __init__(self, tracer_provider: Any = None, metrics: Iterable[MetricsSink] = (), *,
                 transport_attributes: Optional[Mapping[str, Any]] = None,
                 capture_content: bool = False, fast_path: bool = True) -> None:
        self.metrics = tuple(metrics)
        # Requests awaiting an answer, counted here and read by the sinks when they report.
        self._in_flight, self._adding = gauge_for(self.metrics, a.CLIENT_ACTIVE_REQUESTS)
        self.capture_content = bool(capture_content)
        base: dict[str, Any] = {a.JSONRPC_PROTOCOL_VERSION: "2.0"}
        base.update(transport_attributes or {})
        self._span_base = base
        self._metric_base = {key: value for key, value in base.items()
                             if key in (a.NETWORK_TRANSPORT, a.NETWORK_PROTOCOL_NAME,
                                        a.NETWORK_PROTOCOL_VERSION, a.SERVER_ADDRESS, a.SERVER_PORT)}
        self._sessions: dict[int, tuple[float, dict]] = {}
        # Per (method, tool or prompt name): the span name and attribute sets.
        self._targets: dict[tuple, Target] = {}
        self._tracer = None
        self._fast: Any = None
        if tracer_provider is not None:
            from opentelemetry import trace as otel_trace

            from mcpfast import __version__
            from mcpfast.telemetry.fast_spans import fast_tracer
            from mcpfast.telemetry.propagation import inject_into_params

            self._tracer = tracer_provider.get_tracer("mcpfast", __version__)
            self._fast = fast_tracer(tracer_provider, "mcpfast", __version__) if fast_path else None
            self._set_span = otel_trace.set_span_in_context
            self._client_kind = otel_trace.SpanKind.CLIENT
            self._error = otel_trace.StatusCode.ERROR
            self._inject = inject_into_params

    def request_started(self, method: str, params: Any) -> tuple[Any, Any]:
        target = self._target_of(method, params)
        span = None
        tracer = self._tracer
        if tracer is not None:
            span_attrs = target.span_attributes
            if type(params) is dict:
                extra = None
                if target.resource and type(params.get("uri")) is str:
                    extra = {a.MCP_RESOURCE_URI: params["uri"]}
                if self.capture_content and method == methods.TOOLS_CALL and "arguments" in params:
                    extra = extra or {}
                    extra[a.GEN_AI_TOOL_CALL_ARGUMENTS] = json.dumps(params["arguments"], default=str)
                if extra is not None:
                    span_attrs = {**span_attrs, **extra}
            fast = self._fast
            if fast is not None:
                # The fast span keeps the dict it is given: a copy of the target's.
                span = fast.start(target.name, self._client_kind, None, dict(span_attrs))
            if span is None:
                # start_span copies the attributes: the target's own can be passed as they are.
                span = tracer.start_span(target.name, kind=self._client_kind, attributes=span_attrs)
            params = self._inject(params, self._set_span(span))
        if self.metrics:
            self._in_flight.value += 1
            for sink in self._adding:
                sink.add(a.CLIENT_ACTIVE_REQUESTS, 1)
        return params, _Call(method, span, target, time.perf_counter())

    def _target_of(self, method: str, params: Any) -> Target:
        # As the server's: per (method, tool or prompt name), bounded.
        name = None
        if type(params) is dict and (method == methods.TOOLS_CALL or method == methods.PROMPTS_GET):
            name = params.get("name")
            if type(name) is not str:
                name = None
        key = (method, name)
        target = self._targets.get(key)
        if target is None:
            target = Target(method, name, None, self._span_base, self._metric_base)
            if len(self._targets) < _TARGET_MEMO_LIMIT:
                self._targets[key] = target
        return target

    def request_sent(self, token: Any, request_id: Any) -> None:
        span = token.span
        if span is not None:
            span.set_attribute(a.JSONRPC_REQUEST_ID, str(request_id))

    def request_ended(self, token: Any, result: Any, error: Optional[BaseException]) -> None:
        call: _Call = token
        span = call.span
        error_type: Optional[str] = None
        if error is not None:
            if isinstance(error, JSONRPCError):
                error_type = str(error.code)
                if span is not None:
                    span.set_attribute(a.RPC_RESPONSE_STATUS_CODE, error_type)
                    span.set_status(self._error, error.message)
            else:
                error_type = type(error).__qualname__
                if span is not None:
                    if isinstance(error, Exception):
                        span.record_exception(error)
                    span.set_status(self._error, str(error))
            if span is not None:
                span.set_attribute(a.ERROR_TYPE, error_type)
        elif call.method == methods.TOOLS_CALL and type(result) is dict:
            if result.get("isError") is True:
                error_type = a.TOOL_ERROR
                if span is not None:
                    span.set_attribute(a.ERROR_TYPE, error_type)
                    span.set_status(self._error)
            elif span is not None and self.capture_content:
                span.set_attribute(a.GEN_AI_TOOL_CALL_RESULT, json.dumps(result, default=str))
        if span is not None:
            span.end()
        if self.metrics:
            seconds = time.perf_counter() - call.started
            attrs = call.target.metric_attributes(error_type, False)
            self._in_flight.value -= 1
            for sink in self._adding:
                sink.add(a.CLIENT_ACTIVE_REQUESTS, -1)
            for sink in self.metrics:
                sink.client_operation(seconds, attrs)

    def session_started(self, client: Any) -> None:
        if not self.metrics:
            return
        attrs = dict(self._metric_base)
        version = getattr(client, "protocol_version", None)
        if type(version) is str:
            attrs[a.MCP_PROTOCOL_VERSION] = version
        self._sessions[id(client)] = (time.perf_counter(), attrs)

    def session_ended(self, client: Any) -> None:
        session = self._sessions.pop(id(client), None)
        if session is None:
            return
        seconds = time.perf_counter() - session[0]
        for sink in self.metrics:
            sink.client_session(seconds, session[1])
