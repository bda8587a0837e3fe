"""Resource subscriptions: the updates of one subscribed URI, as an async iterator or callback.

``sub = await client.subscribe(uri)`` sends ``resources/subscribe`` and returns a
:class:`Subscription`. Each ``notifications/resources/updated`` for that URI is then either
passed to the callback given to ``subscribe`` or queued for ``async for params in sub``
(``params`` is the notification's params: ``{"uri": ..., ...}``; read the resource again to
see what changed). The queue keeps the latest ``MAX_QUEUED`` updates; older ones are dropped
(an update only says "changed since you last looked", so the newest ones suffice).

Ending: ``await sub.unsubscribe()`` (or leaving ``async with sub:``) stops delivery; the
iterator then yields what is queued and stops. When the connection drops, the iterator
yields what is queued and then raises ConnectionClosed.

Several Subscriptions to one URI share the server-side subscription: each sends
``resources/subscribe`` (subscribing twice is harmless) and ``resources/unsubscribe`` is sent
only when the last of them ends.
"""

from __future__ import annotations

import asyncio
import collections
import inspect
import logging
from typing import Any, Awaitable, Callable, Optional

from mcpfast.jsonrpc.errors import ConnectionClosed

__all__ = ["MAX_QUEUED", "Subscription"]

#: Updates a Subscription without callback keeps for its iterator (the oldest are dropped).
MAX_QUEUED = 1024

_LOGGER = logging.getLogger("mcpfast.client")


class Subscription:
    """The updates of one subscribed resource (see the module docstring).

    ``uri``: the resource; ``active``: True until unsubscribed or disconnected.
    ``release(subscription)``: what ends it on the client's side (given by the client,
    which feeds it :meth:`push` and :meth:`end`).
    """

    __slots__ = ("uri", "_release", "_callback", "_queue", "_waiter", "_active", "_error")

    def __init__(self, release: Callable[[Subscription], Awaitable[None]], uri: str,
                 callback: Optional[Callable[[dict], Any]] = None) -> None:
        if callback is not None and not callable(callback):
            raise TypeError(f"callback must be callable, not {type(callback).__name__}")
        self.uri = uri
        self._release = release
        self._callback = callback
        self._queue: collections.deque = collections.deque(maxlen=MAX_QUEUED)
        self._waiter: Optional[asyncio.Future] = None
        self._active = True
        self._error: Optional[BaseException] = None

    @property
    def active(self) -> bool:
        """True while updates are delivered (not unsubscribed, connection open)."""
        return self._active

    # -- fed by the client ---------------------------------------------------------------

    def push(self, params: dict) -> Any:
        """Deliver one update; returns an awaitable when an async callback needs running."""
        if not self._active:
            return None
        callback = self._callback
        if callback is not None:
            try:
                result = callback(params)
            except Exception:
                _LOGGER.exception("the update callback of the subscription to %r failed", self.uri)
                return None
            return result if inspect.isawaitable(result) else None
        self._queue.append(params)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
        return None

    def end(self, error: Optional[BaseException] = None) -> None:
        """Stop delivery: unsubscribed (error None) or disconnected (error set)."""
        if not self._active:
            return
        self._active = False
        self._error = error
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # -- consumer side ---------------------------------------------------------------------

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> dict:
        while True:
            if self._queue:
                return self._queue.popleft()
            if not self._active:
                if self._error is not None:
                    error = ConnectionClosed(
                        f"the connection closed while subscribed to {self.uri!r}"
                    )
                    error.__cause__ = self._error
                    raise error
                raise StopAsyncIteration
            if self._callback is not None:
                raise TypeError(
                    "this subscription delivers its updates to its callback; it cannot also "
                    "be iterated"
                )
            waiter = self._waiter = asyncio.get_running_loop().create_future()
            try:
                await waiter
            finally:
                self._waiter = None

    def pending(self) -> int:
        """Updates queued and not yet taken by the iterator."""
        return len(self._queue)

    async def unsubscribe(self) -> None:
        """Stop this subscription (``resources/unsubscribe`` when it was the URI's last)."""
        await self._release(self)

    async def __aenter__(self) -> Subscription:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        if self._active:
            await self.unsubscribe()

    def __repr__(self) -> str:
        state = "active" if self._active else "ended"
        return f"<Subscription {self.uri!r} {state} queued={len(self._queue)}>"
