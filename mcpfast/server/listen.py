"""``subscriptions/listen`` (2026-07-28): a request whose answer is a stream of list
changes and resource updates.

A client asks for the notification types it wants (``toolsListChanged``,
``promptsListChanged``, ``resourcesListChanged``, ``resourceSubscriptions``: URIs). The
server acknowledges first (``notifications/subscriptions/acknowledged``, with the subset it
honours: the kinds it serves), then sends only those notifications, each carrying the
listen request's id as ``_meta["io.modelcontextprotocol/subscriptionId"]``. The stream
lives until the client cancels it (closing the HTTP stream, or ``notifications/cancelled``
on stdio), the connection ends, or the server ends it (``Server.end_subscriptions()``, which
the HTTP server calls when it starts shutting down): then the listen request is answered
with a completion result carrying the subscription id. It is fed by the server's publisher
(:mod:`mcpfast.server.publisher`), so a publisher shared by several processes feeds every
process's listeners.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from mcpfast.jsonrpc.errors import InvalidParams, MethodNotFound
from mcpfast.protocol import meta_keys, methods
from mcpfast.server.publisher import Event, ListChanged, ResourceUpdated

if TYPE_CHECKING:
    from mcpfast.server.context import Context
    from mcpfast.server.server import Server

__all__ = ["ListenStream", "listen"]

# Filter field -> the kind of list it follows.
LIST_FIELDS = {"toolsListChanged": "tools", "promptsListChanged": "prompts",
               "resourcesListChanged": "resources"}
RESOURCE_FIELD = "resourceSubscriptions"


class ListenStream:
    """One listen request as a subscriber of the publisher."""

    __slots__ = ("ctx", "server", "meta", "kinds", "uris", "ended")

    def __init__(self, ctx: Context, server: Server, kinds: frozenset[str],
                 uris: frozenset[str]) -> None:
        self.ctx = ctx
        self.server = server
        # Done when the server ends the stream on its own (shutdown): a graceful end.
        self.ended: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.meta = {meta_keys.SUBSCRIPTION_ID: ctx.request_id}
        self.kinds = kinds
        self.uris = uris

    def deliver(self, event: Event) -> bool:
        ctx = self.ctx
        if ctx.cancelled or ctx.session.closed:
            # Ended before its task ever ran (cancelled in the same breath): leave now.
            self._leave()
            return False
        if isinstance(event, ListChanged):
            if event.kind not in self.kinds:
                return False
            self.ctx.notify(methods.LIST_CHANGED[event.kind], {"_meta": self.meta})
            return True
        if isinstance(event, ResourceUpdated):
            if event.uri not in self.uris:
                return False
            self.ctx.notify(methods.RESOURCE_UPDATED, {"_meta": self.meta, "uri": event.uri})
            return True
        return False

    def end(self) -> None:
        """End the stream gracefully: its request is answered (a completion result)."""
        if not self.ended.done():
            self.ended.set_result(None)

    def _leave(self) -> None:
        self.server.publisher.detach(self)
        self.server.listen_streams.discard(self)


def honoured_filter(server: Server, ctx: Context, params: Any) -> tuple[dict, frozenset, frozenset]:
    """The acknowledged filter and the kinds and URIs it stands for (-32602 when malformed)."""
    wanted = params.get("notifications", {}) if type(params) is dict else {}
    if type(wanted) is not dict:
        raise InvalidParams("subscriptions/listen: params.notifications must be an object",
                            {"param": "notifications"})
    assert ctx.state.features is not None
    offered = server.capabilities(ctx.state.features)
    honoured: dict[str, Any] = {}
    kinds = set()
    for field, kind in LIST_FIELDS.items():
        value = wanted.get(field)
        if value is not None and type(value) is not bool:
            raise InvalidParams(f"subscriptions/listen: {field} must be a boolean", {"param": field})
        if value and kind in offered:
            honoured[field] = True
            kinds.add(kind)
    uris: list[str] = []
    requested = wanted.get(RESOURCE_FIELD)
    if requested is not None:
        if type(requested) is not list or any(type(uri) is not str for uri in requested):
            raise InvalidParams(f"subscriptions/listen: {RESOURCE_FIELD} must be an array of URIs",
                                {"param": RESOURCE_FIELD})
        if "resources" in offered:
            uris = list(dict.fromkeys(requested))
            honoured[RESOURCE_FIELD] = uris
    return honoured, frozenset(kinds), frozenset(uris)


def listen(server: Server, params: Any, ctx: Context) -> Any:
    """The handler of subscriptions/listen (module docstring): checks and acknowledges at
    once (a malformed filter is answered without a task), then returns the coroutine that
    keeps the stream open."""
    features = ctx.state.features
    if features is None or not features.stateless:
        raise MethodNotFound(data={"method": methods.SUBSCRIPTIONS_LISTEN})
    honoured, kinds, uris = honoured_filter(server, ctx, params)
    stream = ListenStream(ctx, server, kinds, uris)
    ctx.notify(methods.SUBSCRIPTIONS_ACKNOWLEDGED, {"_meta": stream.meta, "notifications": honoured})
    server.publisher.attach(stream)
    server.listen_streams.add(stream)
    return _open(stream)


async def _open(stream: ListenStream) -> Any:
    try:
        # Until the client cancels it or the connection ends (both cancel this task), or
        # the server ends it (then the request gets its completion result).
        await stream.ended
    finally:
        stream._leave()
    return {"_meta": dict(stream.meta)}
