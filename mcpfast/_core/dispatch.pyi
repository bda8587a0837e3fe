"""The compiled part of a JSON-RPC session (stubs; the compiled module's docstring says
what SessionCore does and why)."""

from typing import Any, Callable, Optional, TypeVar

from mcpfast._core.driven import DrivenCall, DrivenEnd
from mcpfast._core.messages import Request

# Result types that are certainly not awaitable.
PLAIN_RESULT_TYPES: frozenset[type]

class SessionCore(DrivenEnd):
    """The fields and the request path of a JSON-RPC session; subclassed by
    :class:`mcpfast.jsonrpc.session.Session`."""

    _closed: bool
    _in_flight: dict[Any, Any]
    _in_flight_limit: int
    _requests: dict[str, Any]
    _send: Callable[[bytes], Any]
    context_factory: Callable[..., Any]
    before_dispatch: Optional[Callable[[Any], None]]
    _base_finish: Callable[..., Any]

    _outgoing: Any

    def is_idle(self) -> bool:
        """True while open with no incoming request running and no outgoing one
        waiting."""

    def feed(self, frame: Any, channel: Any = None) -> bool:
        """Process one received frame; True when it owes a reply."""

    def feed_request(self, req: Request, channel: Any = None, batch: Any = None) -> None:
        """Process one decoded Request (it owes a reply): routed to its handler, the
        response written when the handler answers at once."""

    def _start_driven(self, ctx: Any, batch: Any, call: DrivenCall) -> None:
        """Run the rest of a request's handler as ``call`` (no task)."""

    def _finish(self, ctx: Any, frame: Optional[bytes]) -> None:
        """Complete an async request: bookkeeping, then its reply (None: none)."""

class RouteCore:
    """What the request path reads of a route; the base of
    :class:`mcpfast.jsonrpc.router.Route`."""

    handler: Callable[[Any, Any], Any]
    is_async: bool

class RouteHandler:
    """A synchronous request handler the request path calls in C (its compiled
    ``handle``); the base of :class:`mcpfast.server.tools_call.ToolsCall`."""

    def __call__(self, params: Any, ctx: Any) -> Any: ...

class ReplyChannelCore:
    """A reply channel the request path answers in C (its compiled ``respond_frame``);
    the base of :class:`mcpfast.transports.http.post_reply.PostReply`."""

    def respond(self, frame: Optional[bytes]) -> None: ...

class ContextCore:
    """The fields of a request's context the request path reads and writes; the base of
    :class:`mcpfast.jsonrpc.context.RequestContext`."""

    session: Any
    request_id: Any
    method: str
    params: Any
    meta: dict[str, Any]
    cancelled: bool
    cancel_reason: Optional[str]
    shape_result: Optional[Callable[[Any], Any]]
    progress: Any
    _channel: Any
    @property
    def channel(self) -> Any:
        """The reply channel of the request while it runs; None without one or once done."""

class ContextFactory:
    """A context factory the request path calls in C (its compiled ``make``); the base
    of :mod:`mcpfast.server.context_factories`' factories."""

    def __call__(self, session: Any, request_id: Any, method: Any, params: Any,
                 channel: Any = None) -> Any: ...

_C = TypeVar("_C", bound=ContextCore)

def fill_context(ctx: _C, session: Any, request_id: Any, method: Any, params: Any,
                 channel: Any = None) -> _C:
    """Set the fields of ``ctx`` as RequestContext's constructor does, but for
    ``progress`` (left None)."""

def new_context(cls: type[_C], session: Any, request_id: Any, method: Any, params: Any,
                channel: Any = None) -> _C:
    """A new context of ``cls`` filled by :func:`fill_context`, its constructor not
    called."""
