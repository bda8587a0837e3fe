"""Outgoing requests: the requests this side sent and is waiting for.

:class:`OutgoingRequests` is the session's book of them: ids and deadlines in a
:class:`~mcpfast._core.pending.PendingTable`, one timer (re-armed for the earliest deadline)
for all timeouts, the progress callbacks of requests that asked for progress, and the
``notifications/cancelled`` told to the peer when a request is given up. It settles each
request's future exactly once: with the result, or with the error response
(:func:`~mcpfast.jsonrpc.errors.error_from_response`), RequestTimeout, RequestCancelled,
MessageTooLarge (its response was too large to read) or ConnectionClosed.

Progress routing: a request sent with a progress callback carries
``_meta.progressToken`` = its own id, so a ``notifications/progress`` naming that token is
routed to the callback (``on_progress``) until the request is settled.

Why ``notifications/cancelled`` and ``notifications/progress`` live at this level although
they are MCP names: they are the request-lifecycle conventions of the JSON-RPC peers MCP
talks to (the Language Server Protocol has the same pair), they need the session's own
bookkeeping (request ids, reply channels, timers), and no MCP semantics beyond their
shape. Which methods may never be cancelled (MCP: ``initialize``) is the caller's rule,
given as ``uncancellable``.
"""

from __future__ import annotations

import inspect
import logging
from asyncio import CancelledError
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional

from mcpfast._core.codec import (
    ErrorResponse,
    Response,
    encode_notification,
)
from mcpfast._core.pending import DEFAULT_CAPACITY, OutgoingCore, PendingTable
from mcpfast.jsonrpc.contract import ReplyChannel, Send
from mcpfast.jsonrpc.errors import (
    ABSENT,
    ConnectionClosed,
    RequestCancelled,
    RequestTimeout,
    error_from_response,
)
from mcpfast.jsonrpc.outgoing_core import OutgoingBook, check_timeout
from mcpfast.jsonrpc.progress import request_id_in
from mcpfast.jsonrpc.router import PLAIN_RESULT_TYPES
from mcpfast.jsonrpc.runtime import FutureLike, Runtime, TimerHandle

if TYPE_CHECKING:
    from mcpfast.jsonrpc.context import RequestContext

__all__ = [
    "CANCELLED_METHOD",
    "OutgoingRequest",
    "OutgoingRequests",
    "cancel_reason",
    "check_timeout",
]

CANCELLED_METHOD = "notifications/cancelled"

def cancel_reason(exc: CancelledError) -> Optional[str]:
    """The message given to Task.cancel(msg), if any: the reason told to the peer."""
    if exc.args and isinstance(exc.args[0], str):
        return exc.args[0]
    return None


class OutgoingRequest(OutgoingCore):
    """A request this side sent and is waiting for.

    ``id`` (int), ``method``, ``future`` (resolved with the result or failed with the
    exception ``Session.request`` documents), ``timeout`` (seconds or None), ``raw``
    (the future is resolved with the Response message itself, its result unread); also
    ``book`` (the OutgoingRequests it is in), ``on_progress`` and ``origin``. The fields
    and the constructor ``(book, id, method, future, on_progress, origin, timeout,
    raw=False)`` are the compiled OutgoingCore's.
    """

    __slots__ = ()
    book: OutgoingRequests
    id: int
    method: str
    future: FutureLike
    on_progress: Optional[Callable[..., Any]]
    origin: Optional[RequestContext]
    timeout: Optional[float]
    raw: bool

    @property
    def done(self) -> bool:
        """True once the response, an error, a timeout, a cancellation or close settled it."""
        return self.future.done()

    def cancel(self, reason: Optional[str] = None, *, notify: bool = True) -> bool:
        """Give the request up: its future fails with RequestCancelled(reason).

        Unless notify is False or the method is uncancellable, the peer is sent
        notifications/cancelled {requestId, reason}. Returns False (and does nothing) when
        the request was already settled.
        """
        return self.book.abandon(self, reason, notify, RequestCancelled(reason, self.id))

    async def wait(self) -> Any:
        """The result; cancelling the awaiting task cancels the request (see Session.request)."""
        try:
            return await self.future
        except CancelledError as exc:
            self.book.abandon(self, cancel_reason(exc), True, None)
            raise

    def __repr__(self) -> str:
        state = "done" if self.future.done() else "waiting"
        return f"<OutgoingRequest id={self.id} method={self.method!r} {state}>"


class OutgoingRequests(OutgoingBook):
    """The outgoing requests of one session (see the module docstring).

    send: the session's writer (frames not tied to an incoming request's channel).
    runtime: futures, timers and the clock.
    capacity: most requests waiting at once (PendingTableFull beyond).
    default_timeout: seconds, None for none; a request's own timeout overrides it.
    uncancellable: methods never announced as cancelled to the peer.
    spawn: runs a coroutine function as a tracked task (for async progress callbacks).
    logger: where failures of callbacks and of sending cancellations are logged.
    """

    # (The compiled OutgoingBook's fields: _send, _runtime, _table, _progress,
    # _timer_when, _closed, default_timeout, _create_future, _time, _request_type; its
    # start() is Session.send_request.)
    __slots__ = ("_timer", "_uncancellable", "_spawn", "_logger")
    _send: Send
    _runtime: Runtime
    _table: PendingTable[OutgoingRequest]
    _progress: dict[Any, OutgoingRequest]
    _timer_when: Optional[float]
    _closed: bool
    default_timeout: Optional[float]
    _create_future: Optional[Callable[[], Any]]
    _time: Optional[Callable[[], float]]
    _request_type: type[OutgoingRequest]

    def __init__(
        self,
        send: Send,
        runtime: Runtime,
        *,
        capacity: int = DEFAULT_CAPACITY,
        default_timeout: Optional[float] = None,
        uncancellable: Iterable[str] = frozenset(),
        spawn: Callable[..., None],
        logger: logging.Logger,
    ) -> None:
        self._send = send
        self._runtime = runtime
        # The runtime's create_future and time, bound to its loop on first use (bound()).
        self._create_future = None
        self._time = None
        # The handles start() makes.
        self._request_type = OutgoingRequest
        self._table = PendingTable(capacity)
        # Requests that asked for progress, by progress token (= request id).
        self._progress = {}
        self._timer: Optional[TimerHandle] = None
        self._timer_when = None
        self._closed = False
        self._uncancellable = frozenset(uncancellable)
        self._spawn = spawn
        self._logger = logger
        self.default_timeout = check_timeout(default_timeout)

    def __len__(self) -> int:
        """Requests waiting for their response."""
        return len(self._table)

    def number_from(self, first_id: int) -> None:
        """Issue request ids from ``first_id`` on (ValueError while requests are waiting,
        or outside 0..MAX_REQUEST_ID): for peers that must tell several senders' ids apart."""
        table = self._table
        if len(table):
            raise ValueError("request ids can be renumbered only while none is waiting")
        self._table = PendingTable(table.capacity, first_id)

    def __contains__(self, request_id: object) -> bool:
        """Whether a request of ours with that id is waiting."""
        return request_id in self._table

    @property
    def listening(self) -> int:
        """Requests waiting that route the peer's progress notifications to a callback."""
        return len(self._progress)

    @property
    def timer_deadline(self) -> Optional[float]:
        """When the one timeout timer fires (runtime clock), None when none is armed."""
        return self._timer_when

    # -- sending -----------------------------------------------------------------------

    # start(method, params=None, *, timeout=None, progress=None, origin=None, raw=False):
    # the compiled OutgoingBook's (register and send one request; its handle).

    # -- what the peer sends -----------------------------------------------------------

    def on_response(self, resp: Response) -> None:
        out = self._table.pop(resp.id)
        if out is None:
            self._logger.debug("response for unknown request id %r dropped", resp.id)
            return
        if out.on_progress is not None:
            self._progress.pop(out.id, None)
        future = out.future
        if not future.done():
            future.set_result(resp if out.raw else resp.result)

    def on_error_response(self, resp: ErrorResponse) -> None:
        request_id = resp.id
        if request_id is None:
            self._logger.warning(
                "the peer could not read a message of ours: error %d %r (id null)",
                resp.code, resp.message,
            )
            return
        data = resp.data if resp.has_data else ABSENT
        if not self.fail(request_id,
                         lambda out: error_from_response(resp.code, resp.message, data)):
            self._logger.debug("error response for unknown request id %r dropped", request_id)

    def fail(self, request_id: Any,
             error: Callable[[OutgoingRequest], BaseException]) -> bool:
        """Settle the waiting request with that id with ``error(request)`` (nothing is
        sent to the peer); False when no request of ours has that id."""
        out = self._table.pop(request_id)
        if out is None:
            return False
        if out.on_progress is not None:
            self._progress.pop(out.id, None)
        future = out.future
        if not future.done():
            future.set_exception(error(out))
        return True

    def on_progress(self, params: Any) -> bool:
        """notifications/progress; True when it was for a request of ours."""
        # Our progress tokens are our request ids.
        token = request_id_in(params, "progressToken")
        if token is None:
            return False
        out = self._progress.get(token)
        if out is None:
            return False
        progress = params.get("progress")
        if isinstance(progress, bool) or not isinstance(progress, (int, float)):
            self._logger.debug("notifications/progress for %r without a number; ignored", token)
            return True
        callback = out.on_progress
        assert callback is not None  # only requests with a callback are listed
        try:
            result = callback(progress, params.get("total"), params.get("message"))
            if type(result) not in PLAIN_RESULT_TYPES and inspect.isawaitable(result):
                self._spawn(self._run_progress_callback, out, result)
        except Exception as exc:
            self._logger.error(
                "progress callback of request %r (id %r) failed", out.method, out.id, exc_info=exc
            )
        return True

    async def _run_progress_callback(self, out: OutgoingRequest, awaitable: Any) -> None:
        try:
            await awaitable
        except Exception as exc:
            self._logger.error(
                "progress callback of request %r (id %r) failed", out.method, out.id, exc_info=exc
            )

    # -- giving up ---------------------------------------------------------------------

    def abandon(self, out: OutgoingRequest, reason: Optional[str], notify: bool,
                exc: Optional[BaseException]) -> bool:
        """Drop a waiting request; fail its future with exc; tell the peer when notify."""
        if self._table.cancel(out.id) is None:
            return False
        if out.on_progress is not None:
            self._progress.pop(out.id, None)
        future = out.future
        if exc is not None and not future.done():
            future.set_exception(exc)
        if notify:
            self._send_cancelled(out, reason)
        return True

    def close(self, exc: Optional[BaseException]) -> None:
        """Fail every waiting request with ConnectionClosed (cause exc); stop the timer."""
        if self._closed:
            return
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
            self._timer_when = None
        message = "Connection closed" if exc is None else f"Connection closed: {exc}"
        for out in self._table.clear():
            future = out.future
            if not future.done():
                error = ConnectionClosed(message)
                error.__cause__ = exc
                future.set_exception(error)
        self._progress.clear()

    def _send_cancelled(self, out: OutgoingRequest, reason: Optional[str]) -> None:
        if out.method in self._uncancellable or self._closed:
            return
        params: dict[str, Any] = {"requestId": out.id}
        if reason is not None:
            params["reason"] = reason
        frame = encode_notification(CANCELLED_METHOD, params)
        try:
            self._send_for(out.origin, frame)
        except Exception:
            self._logger.exception("sending the cancellation of request id %r failed", out.id)

    def _send_for(self, origin: Optional[RequestContext], frame: bytes) -> None:
        """Send a frame about a request made on behalf of origin: on origin's reply
        channel while it has one, else through send."""
        channel: Optional[ReplyChannel] = origin.channel if origin is not None else None
        if channel is None:
            self._send(frame)
        else:
            channel.send(frame)

    # -- timeouts ----------------------------------------------------------------------

    def _arm_timer(self, deadline: float) -> None:
        """Make sure the timer fires no later than deadline (one timer for all requests)."""
        when = self._timer_when
        if when is not None:
            if when <= deadline:
                return
            self._timer.cancel()  # type: ignore[union-attr]
        self._timer_when = deadline
        self._timer = self._runtime.call_at(deadline, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        self._timer_when = None
        if self._closed:
            return
        runtime = self._runtime
        for out in self._table.expire(runtime.time() + runtime.timer_slack):
            if out.on_progress is not None:
                self._progress.pop(out.id, None)
            future = out.future
            if not future.done():
                future.set_exception(RequestTimeout(out.id, out.method, out.timeout))
            self._send_cancelled(out, "Request timed out")
        deadline = self._table.next_deadline()
        if deadline is not None:
            self._arm_timer(deadline)
