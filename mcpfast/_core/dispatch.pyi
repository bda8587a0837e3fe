"""The compiled part of a JSON-RPC session (stubs; the compiled module's docstring says
what SessionCore does and why)."""

from typing import Any, Callable, Optional

from mcpfast._core.messages import Request

# Result types that are certainly not awaitable.
PLAIN_RESULT_TYPES: frozenset[type]

class SessionCore:
    """The fields and the request path of a JSON-RPC session; subclassed by
    :class:`mcpfast.jsonrpc.session.Session`."""

    _closed: bool
    _in_flight: dict[Any, Any]
    _requests: dict[str, Any]
    _send: Callable[[bytes], Any]
    context_factory: Callable[..., Any]
    before_dispatch: Optional[Callable[[Any], None]]
    _base_finish: Callable[..., Any]

    def feed_request(self, req: Request, channel: Any = None, batch: Any = None) -> None:
        """Process one decoded Request (it owes a reply): routed to its handler, the
        response written when the handler answers at once."""

class RouteCore:
    """What the request path reads of a route; the base of
    :class:`mcpfast.jsonrpc.router.Route`."""

    handler: Callable[[Any, Any], Any]
    is_async: bool

class ContextCore:
    """The fields of a request's context the request path reads and writes; the base of
    :class:`mcpfast.jsonrpc.context.RequestContext`."""

    shape_result: Optional[Callable[[Any], Any]]
    progress: Any
    _channel: Any
