"""A 2026-07-28 ``subscriptions/listen`` stream seen from the client: an async iterator.

::

    async with client.listen(tools=True, uris=["file:///notes.md"], task_ids=[task_id]) as stream:
        print(stream.acknowledged)          # what the server agreed to send
        async for note in stream:           # {"method": ..., "params": ...}
            ...

The listen request stays open while the block runs; leaving it cancels the request (the
server stops the stream). Notifications are told apart by the subscription id the server
puts in their ``_meta`` (the listen request's id), so several streams share a connection.
A stream the server ends gracefully (a result for the listen request) or a connection
that closes ends the iteration.
"""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator, Callable, Optional

__all__ = ["Listening"]

_END = object()


class Listening:
    """One listen stream (module docstring). ``requested``: the filter asked for;
    ``acknowledged``: the filter the server honours (None until its acknowledgement
    arrives).

    ``open(stream)`` sends the listen request and returns it (its ``id``, ``future`` and
    ``cancel``); ``forget(stream)`` tells the sender the stream ended. The client gives
    both, and feeds the stream's notifications to :meth:`push`."""

    def __init__(self, open: Callable[[Listening], Any], forget: Callable[[Listening], None],
                 notifications: dict[str, Any], timeout: Optional[float]) -> None:
        self._open = open
        self._forget = forget
        self.requested = notifications
        self._timeout = timeout
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._acknowledged: asyncio.Future[dict] = asyncio.get_running_loop().create_future()
        self._request: Any = None
        self.id: Any = None
        self.acknowledged: Optional[dict] = None

    async def __aenter__(self) -> Listening:
        self._request = self._open(self)
        self.id = self._request.id
        self._request.future.add_done_callback(self._ended)
        waiter = asyncio.ensure_future(asyncio.shield(self._acknowledged))
        done, _ = await asyncio.wait({waiter, self._request.future}, timeout=self._timeout,
                                     return_when=asyncio.FIRST_COMPLETED)
        if waiter not in done:
            waiter.cancel()
            await self.close()
            failure = self._request.future.exception() if self._request.future.done() else None
            if failure is not None:
                raise failure
            raise asyncio.TimeoutError("the server did not acknowledge subscriptions/listen")
        self.acknowledged = waiter.result()
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.close()

    async def close(self) -> None:
        """Stop listening (cancels the listen request). Idempotent."""
        request = self._request
        if request is not None and not request.future.done():
            request.cancel("the client stopped listening")
        self._forget(self)
        self._queue.put_nowait(_END)

    # -- from the client's notification routing ----------------------------------------

    def push(self, method: str, params: Any) -> None:
        """One notification tagged with this stream's id (the acknowledgement or an event)."""
        if method == "notifications/subscriptions/acknowledged":
            notifications = params.get("notifications") if type(params) is dict else None
            if not self._acknowledged.done():
                self._acknowledged.set_result(notifications if type(notifications) is dict else {})
            return
        self._queue.put_nowait({"method": method, "params": params})

    def _ended(self, future: Any) -> None:
        if not future.cancelled():
            future.exception()  # marked retrieved: a stream that ends is no error to log
        self._queue.put_nowait(_END)

    # -- iteration ---------------------------------------------------------------------

    def __aiter__(self) -> AsyncIterator[dict]:
        return self

    async def __anext__(self) -> dict:
        item = await self._queue.get()
        if item is _END:
            self._queue.put_nowait(_END)  # every later call ends too
            raise StopAsyncIteration
        return item

    def __repr__(self) -> str:
        return f"<Listening id={self.id!r} {self.requested}>"


def listen_filter(tools: bool, prompts: bool, resources: bool, uris: Any,
                  task_ids: Any = ()) -> dict[str, Any]:
    """The ``notifications`` filter of a listen request."""
    notifications: dict[str, Any] = {}
    if tools:
        notifications["toolsListChanged"] = True
    if prompts:
        notifications["promptsListChanged"] = True
    if resources:
        notifications["resourcesListChanged"] = True
    uri_list = list(uris)
    if any(type(uri) is not str for uri in uri_list):
        raise TypeError("uris must be strings")
    if uri_list:
        notifications["resourceSubscriptions"] = uri_list
    if isinstance(task_ids, str):
        raise TypeError("task_ids must be an iterable of task ids, not one string")
    task_list = list(task_ids)
    if any(type(task_id) is not str for task_id in task_list):
        raise TypeError("task_ids must be strings")
    if task_list:
        notifications["taskIds"] = task_list
    if not notifications:
        raise ValueError("listen to something: tools, prompts, resources, uris or task_ids")
    return notifications
