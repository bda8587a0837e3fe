"""``subscriptions/listen`` (2026-07-28): a request whose answer is a stream of list
changes, resource updates and task status changes.

A client asks for the notification types it wants (``toolsListChanged``,
``promptsListChanged``, ``resourcesListChanged``, ``resourceSubscriptions``: URIs;
``taskIds``: tasks of the tasks extension, which the client must declare in its
capabilities, else -32021). The server acknowledges first
(``notifications/subscriptions/acknowledged``, with the subset it honours: the kinds it
serves, and the task ids the caller may follow -- those ``tasks/get`` would answer for it),
then sends only those notifications, each carrying the listen request's id as
``_meta["io.modelcontextprotocol/subscriptionId"]``. A followed task's notifications are
``notifications/tasks`` with its DetailedTask as ``tasks/get`` would answer it at that
moment: one right after the acknowledgement (its state then: a task that had already ended
is not followed in vain), then one per change of its status or pending questions. The stream
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
from mcpfast.server.publisher import Event, ListChanged, ResourceUpdated, TaskStatus
from mcpfast.server.tasks.manager import missing_extension

if TYPE_CHECKING:
    from mcpfast.server.core import ServerCore
    from mcpfast.server.request.context import Context

__all__ = ["ListenStream", "listen", "register"]

# Filter field -> the kind of list it follows.
LIST_FIELDS = {"toolsListChanged": "tools", "promptsListChanged": "prompts",
               "resourcesListChanged": "resources"}
RESOURCE_FIELD = "resourceSubscriptions"
TASKS_FIELD = "taskIds"
# At most this many task ids per listen request (each is looked up in the task store).
MAX_TASK_IDS = 1000


class ListenStream:
    """One listen request as a subscriber of the publisher."""

    __slots__ = ("ctx", "server", "meta", "kinds", "uris", "task_ids", "ended")

    def __init__(self, ctx: Context, server: ServerCore, kinds: frozenset[str],
                 uris: frozenset[str], task_ids: frozenset[str] = frozenset()) -> None:
        self.ctx = ctx
        self.server = server
        # Done when the server ends the stream on its own (shutdown): a graceful end.
        self.ended: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.meta = {meta_keys.SUBSCRIPTION_ID: ctx.request_id}
        self.kinds = kinds
        self.uris = uris
        self.task_ids = task_ids

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
        if isinstance(event, TaskStatus):
            if event.task.get("taskId") not in self.task_ids:
                return False
            self.send_task(event.task)
            return True
        return False

    def send_task(self, task: dict) -> None:
        """notifications/tasks: the DetailedTask, tagged with the subscription."""
        self.ctx.notify(methods.TASKS_NOTIFICATION, {**task, "_meta": self.meta})

    def end(self) -> None:
        """End the stream gracefully: its request is answered (a completion result)."""
        if not self.ended.done():
            self.ended.set_result(None)

    def _leave(self) -> None:
        self.server.publisher.detach(self)
        self.server.listen_streams.discard(self)


def requested_filter(params: Any) -> dict[str, Any]:
    """``params.notifications`` (-32602 when it is no object)."""
    wanted = params.get("notifications", {}) if type(params) is dict else {}
    if type(wanted) is not dict:
        raise InvalidParams("subscriptions/listen: params.notifications must be an object",
                            {"param": "notifications"})
    return wanted


def requested_tasks(ctx: Context, wanted: dict[str, Any]) -> list[str]:
    """The task ids asked for, once each in the order asked: -32602 when malformed,
    -32021 when the client did not declare the tasks extension on this request."""
    requested = wanted.get(TASKS_FIELD)
    if requested is None:
        return []
    if type(requested) is not list or any(type(task_id) is not str for task_id in requested):
        raise InvalidParams(f"subscriptions/listen: {TASKS_FIELD} must be an array of task ids",
                            {"param": TASKS_FIELD})
    task_ids = list(dict.fromkeys(requested))
    if len(task_ids) > MAX_TASK_IDS:
        raise InvalidParams(f"subscriptions/listen: at most {MAX_TASK_IDS} {TASKS_FIELD} per "
                            f"request, got {len(task_ids)}", {"param": TASKS_FIELD})
    extensions = ctx.state.client_capabilities.get("extensions")
    if task_ids and (type(extensions) is not dict or meta_keys.TASKS_EXTENSION not in extensions):
        raise missing_extension("subscriptions/listen with taskIds")
    return task_ids


def honoured_filter(server: ServerCore, ctx: Context, wanted: dict[str, Any]) -> tuple[dict, frozenset, frozenset]:
    """The acknowledged filter of lists and resources and the kinds and URIs it stands
    for (-32602 when malformed)."""
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


def register(server: ServerCore) -> None:
    """Register subscriptions/listen on ``server.router``."""
    server.router.add_request_handler(methods.SUBSCRIPTIONS_LISTEN,
                                      lambda params, ctx: listen(server, params, ctx))


def listen(server: ServerCore, params: Any, ctx: Context) -> Any:
    """The handler of subscriptions/listen (module docstring): checks the filter at once (a
    malformed one is answered without a task) and, unless task ids need looking up first,
    acknowledges; returns the coroutine that keeps the stream open."""
    features = ctx.state.features
    if features is None or not features.stateless:
        raise MethodNotFound(data={"method": methods.SUBSCRIPTIONS_LISTEN})
    wanted = requested_filter(params)
    task_ids = requested_tasks(ctx, wanted)
    honoured, kinds, uris = honoured_filter(server, ctx, wanted)
    if task_ids:
        return _open_following(server, ctx, honoured, kinds, uris, task_ids)
    return _open(_start(server, ctx, honoured, kinds, uris, []))


def _start(server: ServerCore, ctx: Context, honoured: dict, kinds: frozenset[str],
           uris: frozenset[str], tasks: list[Any]) -> ListenStream:
    """Acknowledge, start delivering, and send the followed tasks' state as it is now."""
    stream = ListenStream(ctx, server, kinds, uris, frozenset(record.task_id for record in tasks))
    if tasks:
        honoured[TASKS_FIELD] = [record.task_id for record in tasks]
    ctx.notify(methods.SUBSCRIPTIONS_ACKNOWLEDGED, {"_meta": stream.meta, "notifications": honoured})
    server.publisher.attach(stream)
    server.listen_streams.add(stream)
    for record in tasks:
        stream.send_task(record.detailed())
    return stream


async def _open_following(server: ServerCore, ctx: Context, honoured: dict, kinds: frozenset[str],
                          uris: frozenset[str], task_ids: list[str]) -> Any:
    # The store may be another process's (Redis): a change made while the ids are looked
    # up reaches this stream only through a later change or tasks/get.
    tasks = await server.tasks.visible(ctx, task_ids)
    return await _open(_start(server, ctx, honoured, kinds, uris, tasks))


async def _open(stream: ListenStream) -> Any:
    try:
        # Until the client cancels it or the connection ends (both cancel this task), or
        # the server ends it (then the request gets its completion result).
        await stream.ended
    finally:
        stream._leave()
    return {"_meta": dict(stream.meta)}
