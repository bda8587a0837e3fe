"""The request pipeline: middleware around every request and notification a Server routes.

A middleware is an async callable ``mw(ctx, call_next)``: ``ctx`` is the request's
:class:`~mcpfast.server.request.context.Context` (``method``, ``params``, ``request_id`` -- None for
a notification --, ``auth``, ``state``, ``lifespan`` ...) and ``await call_next(ctx)`` runs
the rest of the chain and the handler, returning the handler's result. A middleware may
change ``ctx.params`` before calling on, change or replace the result, answer by itself
(return without calling on), refuse (raise :class:`~mcpfast.jsonrpc.errors.JSONRPCError`,
which carries code, message and data to the client), time the call or run code after it.
Any other exception answers that request only with -32603 "Internal error", logged on the
server with its traceback (the session's rule for every handler failure). The first
middleware given is the outermost.

:class:`Middleware` is a base class with typed hooks, each ``hook(ctx, call_next)``,
nested from the most general to the most specific: ``on_message`` (everything), then
``on_request`` or ``on_notification``, then the method's own hook (:data:`METHOD_HOOKS`:
``on_call_tool``, ``on_read_resource``, ``on_get_prompt``, ``on_list_tools`` ... ,
``on_initialize``, ``on_discover``). A subclass overrides the hooks it needs; only those
are linked into the chain.

Where it sits: a :class:`PipelineRouter` wraps the server's Router, and the server hands
it to the connections it makes instead of the Router when middleware is installed
(:meth:`mcpfast.server.server.Server.dispatch_router`, the one place that choice is
made). Without middleware nothing here runs and the compiled request path is the whole
cost. With it, each request's route is the chain around the route's own handler, run as
the session runs any async handler (a task per request) -- unless every middleware of the
chain is ``eager`` (a class attribute, True for the built-in ones): then the chain runs
inline where the request is read until something in it suspends, and a request whose
handler answers at once needs no task (the rest, if it suspends, runs as a task). An eager
middleware must not need a task before its first ``await`` (``asyncio.current_task()``,
``asyncio.timeout()`` there find none). A notification's chain always runs that way, so that
notifications are handled in the order they came (``notifications/initialized`` before the
requests after it). Each inline chain runs in a copy of the context (context variables set
in it stay in it).

The chain sees what passes the per-connection checks (the initialization gate and
``request_checks``) and the results as their handlers give them, before the 2026-07-28
``resultType`` shaping. A task-augmented ``tools/call`` is answered by its CreateTaskResult
(the chain's code after ``call_next`` runs then; ``tasks/result`` passes the chain as its
own request); each 2026-07-28 retry of an InputRequiredResult is a request of its own.

A middleware may also answer a method in one call (:meth:`Middleware.direct_route`: a
handler run in the chain's place, which falls back to the chain where it cannot), or do
its work around the rest of the chain in plain calls (:meth:`Middleware.around_route`: a
handler around the handler of everything inside it, no coroutine of its own): each taken
only when no middleware outside it hooks that method (or all those that do have an around
route), so that nothing it skips would run.
"""

from __future__ import annotations

import contextvars
import inspect
import logging
from collections.abc import Mapping
from typing import Any, Awaitable, Callable, Iterable, Iterator, Optional

from mcpfast.jsonrpc.driven import DrivenCall
from mcpfast.jsonrpc.errors import MethodNotFound
from mcpfast.jsonrpc.router import PLAIN_RESULT_TYPES, Handler, Route, Router, is_async_handler
from mcpfast.protocol import methods
from mcpfast.server.middleware.routes_core import RoutesCore

__all__ = ["CallNext", "METHOD_HOOKS", "Middleware", "PipelineRouter", "check_middleware", "run_inline",
           "without_task"]

_LOGGER = logging.getLogger("mcpfast.server")
# Set by an eager middleware's first step: the rest of this request needs no task.
_WITHOUT_TASK: contextvars.ContextVar[bool] = contextvars.ContextVar("mcpfast_without_task", default=False)


def without_task() -> None:
    """Called from an eager middleware's first step (before it suspends): the rest of this
    request's chain awaits only futures and needs no current task, so it is driven by their
    callbacks (mcpfast.jsonrpc.driven) rather than by an asyncio task of its own."""
    _WITHOUT_TASK.set(True)

CallNext = Callable[[Any], Awaitable[Any]]

#: The typed hook of each method (Middleware's most specific hooks).
METHOD_HOOKS: dict[str, str] = {
    methods.TOOLS_CALL: "on_call_tool",
    methods.RESOURCES_READ: "on_read_resource",
    methods.PROMPTS_GET: "on_get_prompt",
    methods.TOOLS_LIST: "on_list_tools",
    methods.RESOURCES_LIST: "on_list_resources",
    methods.RESOURCE_TEMPLATES_LIST: "on_list_resource_templates",
    methods.PROMPTS_LIST: "on_list_prompts",
    methods.COMPLETE: "on_complete",
    methods.INITIALIZE: "on_initialize",
    methods.DISCOVER: "on_discover",
}


class Middleware:
    """A middleware with typed hooks (module docstring); every hook passes on unless
    overridden. An instance is itself a ``(ctx, call_next)`` middleware. ``eager``: whether
    its hooks may run outside a task until their first ``await`` (module docstring)."""

    eager = False

    async def on_message(self, ctx: Any, call_next: CallNext) -> Any:
        """Every request and notification."""
        return await call_next(ctx)

    async def on_request(self, ctx: Any, call_next: CallNext) -> Any:
        """Every request (``ctx.request_id`` is set)."""
        return await call_next(ctx)

    async def on_notification(self, ctx: Any, call_next: CallNext) -> Any:
        """Every notification from the client (its result is ignored)."""
        return await call_next(ctx)

    async def on_call_tool(self, ctx: Any, call_next: CallNext) -> Any:
        """tools/call (``ctx.params["name"]``, ``ctx.params.get("arguments")``)."""
        return await call_next(ctx)

    async def on_read_resource(self, ctx: Any, call_next: CallNext) -> Any:
        """resources/read (``ctx.params["uri"]``)."""
        return await call_next(ctx)

    async def on_get_prompt(self, ctx: Any, call_next: CallNext) -> Any:
        """prompts/get (``ctx.params["name"]``)."""
        return await call_next(ctx)

    async def on_list_tools(self, ctx: Any, call_next: CallNext) -> Any:
        """tools/list."""
        return await call_next(ctx)

    async def on_list_resources(self, ctx: Any, call_next: CallNext) -> Any:
        """resources/list."""
        return await call_next(ctx)

    async def on_list_resource_templates(self, ctx: Any, call_next: CallNext) -> Any:
        """resources/templates/list."""
        return await call_next(ctx)

    async def on_list_prompts(self, ctx: Any, call_next: CallNext) -> Any:
        """prompts/list."""
        return await call_next(ctx)

    async def on_complete(self, ctx: Any, call_next: CallNext) -> Any:
        """completion/complete."""
        return await call_next(ctx)

    async def on_initialize(self, ctx: Any, call_next: CallNext) -> Any:
        """initialize (the handshake versions)."""
        return await call_next(ctx)

    async def on_discover(self, ctx: Any, call_next: CallNext) -> Any:
        """server/discover (2026-07-28)."""
        return await call_next(ctx)

    async def __call__(self, ctx: Any, call_next: CallNext) -> Any:
        return await self.link(ctx.method, ctx.request_id is not None, call_next)(ctx)

    def direct_route(self, method: str, fallback: Handler) -> Optional[Handler]:
        """A handler ``(params, ctx)`` for requests of ``method`` answering in the place of
        this middleware and everything inside it, in one call where it can (the result, or
        a DrivenCall) and by returning ``fallback(params, ctx)`` (the whole chain) where it
        cannot; None (the default) when there is none. Used only when no middleware
        outside this one hooks ``method``."""
        return None

    def around_route(self, method: str, request: bool, inner: Handler) -> Optional[Handler]:
        """A handler ``(params, ctx)`` doing what this middleware's hooks do for ``method``
        (a request when ``request``) around ``inner``, the handler of everything inside
        it, in plain calls: it calls ``inner(params, ctx)`` once and returns what that
        returns (a result, or an awaitable it may wrap: a DrivenCall stays one) or raises
        what it raises. None (the default) when there is none. Used only when every
        middleware outside this one that hooks ``method`` has one too."""
        return None

    def link(self, method: str, request: bool, call_next: CallNext) -> CallNext:
        """``call_next`` wrapped in the hooks this middleware overrides for ``method`` (a
        request when ``request``), the most general outermost."""
        names = [METHOD_HOOKS[method]] if request and method in METHOD_HOOKS else []
        names += ["on_request" if request else "on_notification", "on_message"]
        for name in names:
            if getattr(type(self), name) is not getattr(Middleware, name):
                call_next = _linked(getattr(self, name), call_next)
        return call_next


def _linked(middleware: Callable[[Any, CallNext], Awaitable[Any]], call_next: CallNext) -> CallNext:
    def call(ctx: Any) -> Awaitable[Any]:
        return middleware(ctx, call_next)

    return call


def check_middleware(middleware: Any) -> Any:
    """``middleware`` when it can be one (a Middleware or an async callable); TypeError
    otherwise."""
    if isinstance(middleware, Middleware):
        return middleware
    if not callable(middleware):
        raise TypeError(f"a middleware must be callable as mw(ctx, call_next), not "
                        f"{type(middleware).__name__}")
    if not is_async_handler(middleware):
        raise TypeError(f"a middleware must be an async callable mw(ctx, call_next); "
                        f"{middleware!r} is not a coroutine function")
    return middleware


def _endpoint(handler: Handler) -> CallNext:
    # The innermost link: the route's own handler with the params as the chain left them.
    async def call(ctx: Any) -> Any:
        result = handler(ctx.params, ctx)
        if type(result) not in PLAIN_RESULT_TYPES and inspect.isawaitable(result):
            result = await result
        return result

    return call


async def _unlinked(ctx: Any) -> Any:
    # What a middleware that hooks nothing for a method returns from link() as it is.
    raise AssertionError("never called")


async def _unknown_request(ctx: Any) -> Any:
    # The session's own answer to an unknown method, given after the chain.
    raise MethodNotFound(data={"method": ctx.method})


async def _unknown_notification(ctx: Any) -> None:
    _LOGGER.debug("no handler for notification %r; ignored", ctx.method)


def _chain(middleware: tuple[Any, ...], method: str, request: bool, endpoint: CallNext) -> CallNext:
    call = endpoint
    for mw in reversed(middleware):
        call = mw.link(method, request, call) if isinstance(mw, Middleware) else _linked(mw, call)
    return call


class _Awaited:
    """What a coroutine driven by hand yielded (a future, or None for a bare yield), to be
    awaited by the task that goes on driving it."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __await__(self) -> Any:
        return (yield self.value)


async def _drive(coroutine: Any, context: contextvars.Context, yielded: Any) -> Any:
    # The rest of a chain begun inline: each step in the context its first step ran in.
    while True:
        try:
            sent = await _Awaited(yielded)
        except BaseException as exc:  # noqa: BLE001 -- handed to the chain, as a task would
            step = coroutine.throw
            value: Any = exc
        else:
            step = coroutine.send
            value = sent
        try:
            yielded = context.run(step, value)
        except StopIteration as stop:
            return stop.value


def run_inline(coroutine: Any) -> Any:
    """``coroutine``'s first step run here, in a copy of the context: what it returned if
    that ended it, else what goes on with the rest in the same context -- a DrivenCall when
    that step called :func:`without_task`, else a coroutine for the session's task. Once
    begun, a coroutine closed or cancelled before the rest runs still gets to end (its
    ``except`` and ``finally`` run), which one never started does not."""
    context = contextvars.copy_context()
    try:
        yielded = context.run(coroutine.send, None)
    except StopIteration as stop:
        return stop.value
    if context.get(_WITHOUT_TASK):
        return DrivenCall(coroutine, context, yielded)
    return _drive(coroutine, context, yielded)


def _inline_handler(chain: CallNext) -> Handler:
    # The chain's first step where the message is read; a chain that suspends goes on in
    # the task the session makes of the awaitable returned.
    def handle(params: Any, ctx: Any) -> Any:
        return run_inline(chain(ctx))  # a coroutine: middleware are coroutine functions

    return handle


def _request_handler(chain: CallNext) -> Handler:
    async def handle(params: Any, ctx: Any) -> Any:
        return await chain(ctx)

    return handle


class _Routes(RoutesCore, Mapping[str, Route]):
    """The routes of one table of a Router, each wrapped in the chain when first asked
    for (and again when the Router's route for the method changed)."""

    __slots__ = ("_middleware", "_request")

    def __init__(self, base: dict[str, Route], middleware: tuple[Any, ...], request: bool) -> None:
        self._base = base
        self._middleware = middleware
        self._request = request
        # method -> (the Router's route, its wrapped route): one per registered method.
        self._wrapped: dict[str, tuple[Route, Route]] = {}

    def _wrap(self, method: str, endpoint: CallNext, handler: Optional[Handler] = None) -> Route:
        # handler: the Router's own handler for the method (None: an unknown method, whose
        # route is made per request and answers an error: the chain as it is).
        if handler is not None:
            plain = self._plain(self._middleware, method, handler, endpoint, outermost=True)
            if plain is not None:
                return Route(method, plain, is_async=False)
        handler, is_async = self._chained(self._middleware, method, endpoint)
        return Route(method, handler, is_async=is_async)

    def _chained(self, middleware: tuple[Any, ...], method: str, endpoint: CallNext) -> tuple[Handler, bool]:
        # The chain of ``middleware`` around the endpoint as a handler, and whether it is async.
        chain = _chain(middleware, method, self._request, endpoint)
        if not self._request or all(getattr(mw, "eager", False) is True for mw in middleware):
            return _inline_handler(chain), False
        return _request_handler(chain), True

    def _plain(self, middleware: tuple[Any, ...], method: str, handler: Handler,
               endpoint: CallNext, outermost: bool = False) -> Optional[Handler]:
        # The route in plain calls, where the outermost middleware that hooks ``method``
        # has a direct route, or an around route over this of the ones inside it (or the
        # chain of those); inside an around route, the Router's handler itself where none
        # hooks it (outermost, the chain as before: it runs in a context of its own); else None.
        for index, mw in enumerate(middleware):
            if not isinstance(mw, Middleware):
                return None  # a plain callable sees every message
            if mw.link(method, self._request, _unlinked) is _unlinked:
                continue
            if self._request:
                direct = mw.direct_route(method, self._chained(middleware[index:], method, endpoint)[0])
                if direct is not None:
                    return direct
            rest = middleware[index + 1:]
            inner = self._plain(rest, method, handler, endpoint)
            if inner is None:
                inner = self._chained(rest, method, endpoint)[0]
            return mw.around_route(method, self._request, inner)
        return None if outermost else handler

    # get(method, default) is RoutesCore's (compiled): a wrapped route already made in two
    # dict reads, else one of these.

    def _unrouted(self, method: Any, default: Any) -> Any:
        # A method with no route of its own.
        if type(method) is not str or method.startswith("rpc."):
            return default
        # Unknown methods pass the chain too (a logger or limiter sees them); not
        # remembered, since their names come from the peer.
        return self._wrap(method, _unknown_request if self._request else _unknown_notification)

    def _wrap_known(self, method: str, route: Route) -> Route:
        # The route of a registered method wrapped (first asked for, or its route changed).
        wrapped = self._wrap(method, _endpoint(route.handler), route.handler)
        self._wrapped[method] = (route, wrapped)
        return wrapped

    def __getitem__(self, method: str) -> Route:
        if method not in self._base:
            raise KeyError(method)
        return self.get(method)

    def __iter__(self) -> Iterator[str]:
        return iter(self._base)

    def __len__(self) -> int:
        return len(self._base)


class PipelineRouter(Router):
    """A Router whose routes are another Router's, each inside the middleware chain
    (module docstring). Routes are added to and removed from the Router it wraps."""

    __slots__ = ("base", "middleware")

    def __init__(self, base: Router, middleware: Iterable[Any]) -> None:
        self.base = base
        self.middleware = tuple(check_middleware(mw) for mw in middleware)
        self.requests = _Routes(base.requests, self.middleware, True)  # type: ignore[assignment]
        self.notifications = _Routes(base.notifications, self.middleware, False)  # type: ignore[assignment]

    def add_request_handler(self, method: str, handler: Handler, *,
                            is_async: Optional[bool] = None) -> Route:
        return self.base.add_request_handler(method, handler, is_async=is_async)

    def add_notification_handler(self, method: str, handler: Handler, *,
                                 is_async: Optional[bool] = None) -> Route:
        return self.base.add_notification_handler(method, handler, is_async=is_async)

    def remove_request_handler(self, method: str) -> Route:
        return self.base.remove_request_handler(method)

    def remove_notification_handler(self, method: str) -> Route:
        return self.base.remove_notification_handler(method)

    def __repr__(self) -> str:
        return f"<PipelineRouter {len(self.middleware)} middleware around {self.base!r}>"
