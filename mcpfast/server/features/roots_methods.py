"""``notifications/roots/list_changed``: the server's roots-changed callbacks, in order
(the async ones then awaited in turn; one of those failing is logged, the next still
awaited)."""

from __future__ import annotations

import inspect
import logging
from typing import TYPE_CHECKING, Any

from mcpfast.protocol import methods

if TYPE_CHECKING:
    from mcpfast.server.core import ServerCore
    from mcpfast.server.request.context import Context

__all__ = ["register"]

_LOGGER = logging.getLogger("mcpfast.server")


def register(server: ServerCore) -> None:
    """Register notifications/roots/list_changed on ``server.router``."""

    def roots_changed(params: Any, ctx: Context) -> Any:
        callbacks = list(server.roots_changed_callbacks)
        if not callbacks:
            return None
        awaitables = []
        for callback in callbacks:
            outcome = callback(ctx)
            if inspect.isawaitable(outcome):
                awaitables.append(outcome)
        if awaitables:
            return _gather(awaitables)
        return None

    server.router.add_notification_handler(methods.ROOTS_LIST_CHANGED, roots_changed)


async def _gather(awaitables: list[Any]) -> None:
    for awaitable in awaitables:
        try:
            await awaitable
        except Exception:
            _LOGGER.exception("a roots-changed callback failed")
