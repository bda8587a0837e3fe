"""The order in which an HTTP client's messages leave: :class:`PostOrder`.

Each message a client sends over Streamable HTTP (or the legacy HTTP+SSE transport) is a
POST of its own, on whichever pooled connection is free, so two POSTs started one after
the other may reach the server -- or, behind a load balancer, two servers -- in either
order. MCP needs some order: ``notifications/initialized`` before the requests that follow
it (a server refuses requests before it), a response to the server's question before the
client's next request, a cancellation after the request it cancels. The rule kept here is
the official SDKs': a message that owes no answer (a notification, a response, a batch of
those) is delivered -- its POST answered -- before anything sent after it leaves; requests
leave side by side, each after the messages of the first kind sent before it. A server
that never answers such a POST holds what follows for HOLD seconds at most (the official
Python SDK's HTTP timeout), then it leaves anyway.
"""

from __future__ import annotations

import asyncio
from typing import Any, Optional

from mcpfast._core.messages import Request

__all__ = ["HOLD", "PostOrder", "request_ids_of", "wait_turn"]

# Seconds a POST waits at most for the one it follows.
HOLD = 30.0


def request_ids_of(message: Any) -> tuple[Any, ...]:
    """The ids of the requests in a sent message (one, or a batch): none for a message
    that owes no answer."""
    items = message if isinstance(message, list) else (message,)
    return tuple(item.id for item in items if type(item) is Request)


class PostOrder:
    """One client's order of POSTs (module docstring): ``turn()`` is what a new POST
    waits for before it leaves, ``posted(message, task)`` records the POST's task."""

    __slots__ = ("_delivering",)

    def __init__(self) -> None:
        # The POST of the last message that owes no answer, while under way.
        self._delivering: Optional[asyncio.Task[Any]] = None

    def turn(self) -> Optional[asyncio.Task[Any]]:
        """The POST a new one waits for (None: it may leave at once)."""
        delivering = self._delivering
        if delivering is not None and delivering.done():
            delivering = self._delivering = None
        return delivering

    def posted(self, message: Any, task: asyncio.Task[Any]) -> None:
        """``task`` posts ``message`` (decoded; None when it did not decode)."""
        if not request_ids_of(message):
            self._delivering = task


async def wait_turn(before: Optional[asyncio.Task[Any]]) -> None:
    """Until ``before`` (from :meth:`PostOrder.turn`) has ended, however it ended, or HOLD
    seconds have passed."""
    if before is not None and not before.done():
        await asyncio.wait((before,), timeout=HOLD)
