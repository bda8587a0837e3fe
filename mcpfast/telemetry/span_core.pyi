"""The fast span path's per-span work in C: the bases of FastTracer and FastSpan
(stubs; the compiled module's docstring says more)."""

from typing import Any, Callable, Optional, final

@final
class IdSource:
    """Span and trace ids from a generator seeded from os.urandom (never 0)."""

    def reseed(self) -> None:
        """A new state from os.urandom (fast_spans calls it in a forked child)."""
    def span_id(self) -> int:
        """A new span id: 64 random bits, not 0."""
    def trace_id(self) -> int:
        """A new trace id: 128 random bits, not 0."""

@final
class BatchQueue:
    """A BatchSpanProcessor's queue as an ended span's destination."""

    def __init__(self, processor: Any) -> None: ...
    def emit(self, span: Any) -> None:
        """Queue ``span`` for export, as the processor's own ``emit`` does."""

class TracerCore:
    """FastTracer's C part."""

    _tracer: Any
    _sampler: Any
    _config: Any
    _multi: Any
    multi: Any
    _processors: Any
    _plan: Any
    _root: Any
    _root_flags: Any
    _random_ids: Any
    limits: Any
    resource: Any
    instrumentation_info: Any
    scope: Any
    ends: tuple
    ends_of: Any
    tuple_contexts: bool
    direct: bool
    _variable: Any
    _key: Any
    _context_type: Any
    _get: Callable[[], Any]
    _set: Callable[[Any], Any]
    _reset: Callable[[Any], Any]
    span_class: Any
    sampled_by: Callable[[Any, Any, int], bool]
    flags_of: Any
    links_of: Callable[[Any, Any], Any]
    new_ids: IdSource
    unset_status: Any
    default_trace_state: Any
    span_context_type: Any
    non_recording: Any

    def begin(self, name: str, kind: Any, parent_context: Any, attributes: dict,
              links: Optional[Any] = None, start_time: Optional[int] = None) -> Optional[tuple[Any, Any, Any]]:
        """A span started and made current: (span, its context, the token for leave), or None."""
    def _still_fits(self) -> bool:
        """Whether the provider is still as the fast path was checked for."""
    def _made(self, name: str, kind: Any, parent: Any, attributes: dict, links: Any,
              start_time: Optional[int]) -> Any:
        """The span under ``parent``, sampled by the plan."""
    def leave(self, token: Any) -> None:
        """The context before begin made current again."""

class SpanCore:
    """FastSpan's C part: its fields and its hot methods."""

    _owner: Any
    _name: Any
    _kind: Any
    _context: Any
    _parent: Any
    _attributes: Any
    _links: Any
    _events: Any
    _status: Any
    _start_time: Any
    _end_time: Any
    _resource: Any
    _instrumentation_info: Any
    _instrumentation_scope: Any

    def get_span_context(self) -> Any: ...
    def is_recording(self) -> bool: ...
    def end(self, end_time: Optional[int] = None) -> None: ...
