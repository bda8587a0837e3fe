"""Callbacks for the notifications a server sends.

:class:`NotificationCallbacks` keeps, per notification method, the callbacks registered for
it and installs one route per method on the client's Router. A callback is called with the
notification's params (a dict; ``{}`` when the notification had none), may be sync or async
(async ones run as tasks), and one that raises is logged without affecting the others.

The client's convenience forms (``on_log``, ``on_list_changed``, ``on_resource_updated``)
are thin adapters over ``add``; ``notifications/progress`` and ``notifications/cancelled``
are handled by the JSON-RPC session itself (progress callbacks are per request).
"""

from __future__ import annotations

import inspect
import logging
from typing import Any, Callable, Optional

from mcpfast.jsonrpc.router import Router
from mcpfast.protocol import methods

__all__ = [
    "LIST_CHANGED_METHODS",
    "LOG_METHOD",
    "NotificationCallbacks",
    "RESOURCE_UPDATED_METHOD",
    "await_all",
]

LOG_METHOD = methods.LOG_MESSAGE
RESOURCE_UPDATED_METHOD = methods.RESOURCE_UPDATED
# notification method -> the kind of list that changed
LIST_CHANGED_METHODS = {method: kind for kind, method in methods.LIST_CHANGED.items()}

_LOGGER = logging.getLogger("mcpfast.client")


async def await_all(method: str, awaitables: list) -> None:
    """Await each of awaitables in turn, logging (not raising) their failures."""
    for awaitable in awaitables:
        try:
            await awaitable
        except Exception:
            _LOGGER.exception("a callback for %r failed", method)


class NotificationCallbacks:
    """Callbacks by notification method, routed through a Router (module docstring).

    A method may also have one *hook*, ``hook(params) -> awaitable | None``, called before
    its callbacks (the client delivers resource updates to its subscriptions this way).
    """

    __slots__ = ("_router", "_callbacks", "_hooks", "_logger")

    def __init__(self, router: Router, logger: Optional[logging.Logger] = None) -> None:
        self._router = router
        self._callbacks: dict[str, list[Callable[[Any], Any]]] = {}
        self._hooks: dict[str, Callable[[Any], Any]] = {}
        self._logger = logger if logger is not None else _LOGGER

    def add(self, method: str, callback: Callable[[Any], Any]) -> Callable[[Any], Any]:
        """Call ``callback(params)`` for every notification named method; returns callback."""
        if type(method) is not str or not method:
            raise TypeError(f"a notification method must be a non-empty str, got {method!r}")
        if not callable(callback):
            raise TypeError(f"a notification callback must be callable, not {type(callback).__name__}")
        callbacks = self._callbacks.get(method)
        if callbacks is None:
            callbacks = self._callbacks[method] = []
            self._install(method)
        callbacks.append(callback)
        return callback

    def remove(self, method: str, callback: Callable[[Any], Any]) -> None:
        """Stop calling callback for method (ValueError when it was not registered)."""
        callbacks = self._callbacks.get(method)
        if not callbacks or callback not in callbacks:
            raise ValueError(f"{callback!r} is not registered for {method!r}")
        callbacks.remove(callback)

    def add_hook(self, method: str, hook: Callable[[Any], Any]) -> None:
        """Call ``hook(params)`` before the callbacks of method (one hook per method)."""
        self._hooks[method] = hook
        if method not in self._callbacks:
            self._callbacks[method] = []
            self._install(method)

    def count(self, method: str) -> int:
        """How many callbacks are registered for method."""
        return len(self._callbacks.get(method, ()))

    def _install(self, method: str) -> None:
        callbacks = self._callbacks[method]
        hooks = self._hooks
        logger = self._logger

        def route(params: Any, ctx: Any) -> Any:
            if params is None:
                params = {}
            awaitables = None
            hook = hooks.get(method)
            if hook is not None:
                try:
                    result = hook(params)
                except Exception:
                    logger.exception("handling %r failed", method)
                else:
                    if result is not None:
                        awaitables = [result]
            for callback in tuple(callbacks):
                try:
                    result = callback(params)
                except Exception:
                    logger.exception("a callback for %r failed", method)
                    continue
                if result is not None and inspect.isawaitable(result):
                    if awaitables is None:
                        awaitables = [result]
                    else:
                        awaitables.append(result)
            if awaitables is not None:
                return await_all(method, awaitables)
            return None

        self._router.add_notification_handler(method, route, is_async=False)
