"""The server telemetry's per-message work in C (stubs; the compiled module's docstring
says more)."""

from typing import Any, Optional, final

def content_json(value: Any) -> str:
    """A captured argument or result as the span records it (compact JSON)."""

class TargetCore:
    """The base of Target: the fields every request reads."""

    name: str
    span_attributes: dict[str, Any]
    resource: bool
    success: dict[str, Any]

@final
class Observed:
    """One message being observed."""

    method: Any
    request_id: Any
    connection: Any
    target: Optional[TargetCore]
    span: Any
    context: Any
    token: Any
    fast: Any
    started: int

class ServerTelemetryCore:
    """ServerTelemetry's C part."""

    _tracer: Any
    _fast: Any
    _server_kind: Any
    _error: Any
    _attach: Any
    _detach: Any
    _set_span: Any
    _extract: Any
    _extract_headers: Any
    _sinks: tuple
    _in_flight: Any
    _adding: tuple
    capture_content: bool
    _targets: dict

    def _begin(self, ctx: Any) -> Observed:
        """A message's span begun (and made current) and its count in flight."""
    def _end(self, call: Observed, result: Any, exc: Optional[BaseException]) -> None:
        """The message's outcome on its span and metrics."""

@final
class ObservedRoute:
    """The around route's handler ``(params, ctx)``."""

    def __init__(self, telemetry: ServerTelemetryCore, inner: Any) -> None: ...
    def __call__(self, params: Any, ctx: Any) -> Any: ...
