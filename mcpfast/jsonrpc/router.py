"""Router: the method tables a Session dispatches incoming messages through.

Two tables, one for requests and one for notifications, map a method name to a
:class:`Route` (the handler and whether it is async). Whether a handler is async is found
once, when it is registered -- a coroutine function (also through functools.partial, bound
methods and objects whose ``__call__`` is a coroutine function) is async; anything else is
sync. The session looks a method up with one dict lookup per message and never inspects
the handler again: sync handlers run inline, async handlers as tasks. A sync handler may
still return an awaitable; the session then runs that as a task (a cheap type check on the
result, paid only by sync handlers).

Handler convention: ``handler(params, ctx)`` where params is the message's params as
decoded (dict, list or None when absent) and ctx the RequestContext. A request handler's
return value (any JSON value) is the result; raising JSONRPCError answers with that error.
A notification handler's return value is ignored.

One Router can serve many sessions (a server's method table is shared by its
connections); per-connection policy belongs in the session's ``before_dispatch`` hook.
Method names starting with "rpc." are reserved by JSON-RPC 2.0 and refused here.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Dict, Optional

# PLAIN_RESULT_TYPES: result types that are certainly not awaitable (the usual results of
# handlers and callbacks skip the slower inspect.isawaitable check).
from mcpfast._core.dispatch import PLAIN_RESULT_TYPES, RouteCore

__all__ = ["Handler", "PLAIN_RESULT_TYPES", "Route", "Router", "is_async_handler"]


Handler = Callable[[Any, Any], Any]


def is_async_handler(handler: Callable[..., Any]) -> bool:
    """True when calling handler returns a coroutine by construction.

    Coroutine functions, bound methods and functools.partial of them, and callable objects
    whose ``__call__`` is a coroutine function.
    """
    if inspect.iscoroutinefunction(handler):
        return True
    while isinstance(handler, functools.partial):
        handler = handler.func
        if inspect.iscoroutinefunction(handler):
            return True
    if inspect.isfunction(handler) or inspect.ismethod(handler) or inspect.isbuiltin(handler):
        return False
    # The class attribute, not callable(): an instance is async when its class defines async __call__.
    call = getattr(type(handler), "__call__", None)  # noqa: B004
    return call is not None and inspect.iscoroutinefunction(call)


class Route(RouteCore):
    """A registered handler: ``method``, ``handler`` and ``is_async`` (fixed at creation;
    the last two are fields of the compiled RouteCore, which the session's request path
    reads)."""

    __slots__ = ("method",)

    def __init__(self, method: str, handler: Handler, is_async: bool | None = None) -> None:
        if type(method) is not str:
            raise TypeError(f"a method name must be a str, not {type(method).__name__}")
        if method.startswith("rpc."):
            raise ValueError(
                f"method names starting with 'rpc.' are reserved by JSON-RPC 2.0: {method!r}"
            )
        if not callable(handler):
            raise TypeError(f"the handler for {method!r} is not callable: {handler!r}")
        self.method = method
        self.handler = handler
        self.is_async = is_async_handler(handler) if is_async is None else bool(is_async)

    def __repr__(self) -> str:
        kind = "async" if self.is_async else "sync"
        return f"<Route {self.method!r} {kind} {self.handler!r}>"


class Router:
    """Method name -> Route, for requests and for notifications.

    ``requests`` and ``notifications`` are plain dicts (read them freely; change them
    through the methods so every entry is a checked Route). Registering a method again
    replaces its handler.
    """

    __slots__ = ("requests", "notifications")

    def __init__(self) -> None:
        self.requests: Dict[str, Route] = {}
        self.notifications: Dict[str, Route] = {}

    def add_request_handler(self, method: str, handler: Handler, *,
                            is_async: bool | None = None) -> Route:
        """Route requests named method to handler(params, ctx) -> result."""
        route = Route(method, handler, is_async)
        self.requests[method] = route
        return route

    def add_notification_handler(self, method: str, handler: Handler, *,
                                 is_async: bool | None = None) -> Route:
        """Route notifications named method to handler(params, ctx)."""
        route = Route(method, handler, is_async)
        self.notifications[method] = route
        return route

    def request(self, method: str) -> Callable[[Handler], Handler]:
        """Decorator form of add_request_handler; returns the function unchanged."""

        def register(handler: Handler) -> Handler:
            self.add_request_handler(method, handler)
            return handler

        return register

    def notification(self, method: str) -> Callable[[Handler], Handler]:
        """Decorator form of add_notification_handler; returns the function unchanged."""

        def register(handler: Handler) -> Handler:
            self.add_notification_handler(method, handler)
            return handler

        return register

    def remove_request_handler(self, method: str) -> Route:
        """Unregister a request method; KeyError when it has no handler."""
        return self.requests.pop(method)

    def remove_notification_handler(self, method: str) -> Route:
        """Unregister a notification method; KeyError when it has no handler."""
        return self.notifications.pop(method)

    def route_request(self, method: str) -> Optional[Route]:
        """The Route for a request method, None when unknown."""
        return self.requests.get(method)

    def route_notification(self, method: str) -> Optional[Route]:
        """The Route for a notification method, None when unknown."""
        return self.notifications.get(method)

    def __repr__(self) -> str:
        return (
            f"<Router {len(self.requests)} request / "
            f"{len(self.notifications)} notification methods>"
        )
