"""Session: one JSON-RPC 2.0 connection, without I/O.

A Session takes frames in (``feed``) and hands frames out (``send`` and reply channels).
It routes incoming requests and notifications to handlers, answers errors, correlates the
responses to its own outgoing requests, and implements cancellation, progress and batches.
It never touches a socket, so every rule is testable with a list as the transport.

Transport interface
===================
A transport needs exactly this::

    session = Session(send, router=router)     # send(frame: bytes) -> None
    owes_reply = session.feed(frame)           # one complete frame received
    session.feed_error(exc)                    # the framer dropped a frame (FrameTooLarge)
    session.close(exc=None)                    # the connection is gone

``send(frame)``
    Called with every outgoing frame that is not a reply routed to a channel (see below):
    responses when no channel was given, the session's own requests and notifications.
    A frame is one compact JSON text (bytes, no trailing newline): the transport adds its
    framing (a newline for stdio/TCP, an SSE event, an HTTP body). Frames are handed over
    in the order they must be written; ``send`` must not block and is expected to queue.
    An exception raised by ``send`` while ``feed`` runs propagates out of ``feed``; one
    raised while a task completes is logged.

``feed(frame, channel=None) -> bool``
    ``frame``: bytes, bytearray, memoryview (zero-copy views from LineFramer are fine) or
    str holding one JSON-RPC message or batch. Returns True when the frame owes a reply (it
    held a request, or it was invalid and gets an error) and False when it does not (only
    notifications and/or responses). Replies to requests with sync handlers are sent before
    ``feed`` returns; replies from async handlers are sent when their task finishes.
    Raises ConnectionClosed after ``close``.

``channel`` (optional, for transports that answer per message -- Streamable HTTP)
    An object with two methods:

    ``channel.respond(frame: bytes | None)``
        the one reply to the fed frame: a response, an error, or a batch's array. Called
        exactly once when ``feed`` returned True (possibly before ``feed`` returns); None
        when nothing is left to send because the request was cancelled by the peer or the
        session closed. Never called when ``feed`` returned False.
    ``channel.send(frame: bytes)``
        a message related to a request in the fed frame, sent while it runs and before its
        reply: its progress notifications and whatever its handler sends through
        ``ctx.notify`` / ``ctx.request``. After ``respond`` the channel is not used again.

    Without a channel, replies and related messages all go to ``send``.

``feed_error(exc, channel=None) -> True``
    For frames that never reached the decoder: a ``FrameTooLarge`` from the framer is
    answered with MESSAGE_TOO_LARGE (-32012, the seed's code: the specification defines
    none for this) with id null and data ``{"limit": ..., "size": ...}``; a
    ``DecodeError`` with its own code, message and id; a ``JSONRPCError`` with its code,
    message and data and id null. The session goes on afterwards.

``close(exc=None)``
    Fails every outgoing request still waiting with ConnectionClosed (``__cause__`` =
    ``exc``), cancels the tasks of incoming requests (no replies are sent; channels get
    ``respond(None)``), stops the timeout timer. Idempotent.

All methods must be called from the thread running the event loop (a session is not
thread-safe). Sync handlers need no loop at all; async handlers, outgoing requests and
timeouts use ``loop`` or, when None, the running loop.

Incoming messages
=================
Handlers are registered on a :class:`~mcpfast.jsonrpc.router.Router` and called as
``handler(params, ctx)`` (params as decoded: dict, list or None; ctx a RequestContext).

* Sync handlers run inline: no task. Async handlers (found once, at registration) run as
  tasks, as does the awaitable a sync handler returns.
* A request handler's return value is the result. Raising JSONRPCError answers with that
  code, message and data as given. Any other exception is logged here (with traceback) and
  answered with -32603 "Internal error" -- nothing of it goes on the wire; a result that
  cannot be encoded is treated the same way. Unknown methods: -32601 with data
  ``{"method": name}``.
* Decoding errors: -32700 / -32600 with the codec's message and the id when it could be
  read, null otherwise. A request whose id is still in progress here gets -32600.
* ``before_dispatch(ctx)``: optional hook run for every incoming request and notification
  before routing (the MCP layer refuses requests before initialization, checks versions,
  fills its context fields). Raising JSONRPCError refuses a request with that error and
  drops a notification.
* ``notifications/cancelled`` naming an incoming request in progress cancels its task and
  suppresses its response; ``initialize`` is never cancelled; other ids are ignored (they
  go to a registered "notifications/cancelled" handler if there is one).
* ``params._meta.progressToken`` gives the handler ``ctx.progress`` (see progress.py).
* Batches (JSON arrays) are served only while ``batches_allowed`` is true (the MCP layer
  sets it when 2025-03-26 is negotiated); otherwise the whole array is answered with one
  -32600 error, id null. Served batches get one array holding the replies of their
  requests and invalid elements (in completion order), sent once all of them are done; a
  batch of only notifications and responses gets no reply. The empty array is -32600.

Outgoing messages
=================
``await session.request(method, params, timeout=..., progress=...)`` sends a request with
an id from the PendingTable and returns the result, or raises: JSONRPCError (or
MethodNotFound / InvalidParams / InternalError) for an error response, RequestTimeout,
RequestCancelled, ConnectionClosed. One timer (loop.call_at, re-armed for the earliest
deadline) serves all timeouts. A timed-out request and a request whose awaiting task is
cancelled are announced to the peer with notifications/cancelled (never for
``initialize``). ``progress`` is a callback ``progress(progress, total, message)`` (sync or
async) called for each notifications/progress the peer sends for the request (the request
carries ``_meta.progressToken`` = its id). Responses with unknown ids are logged at debug
level and dropped. ``send_request`` is the same without awaiting: it returns an
:class:`OutgoingRequest` handle (id, future, cancel). ``notify`` sends a notification.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import math
import time
from asyncio import CancelledError, get_running_loop
from typing import Any, Awaitable, Callable, Optional, Protocol

from mcpfast._core.codec import (
    DecodeError,
    ErrorResponse,
    Notification,
    Request,
    Response,
    decode,
    encode_batch,
    encode_error,
    encode_notification,
    encode_request,
    encode_response,
)
from mcpfast._core.framing import FrameTooLarge
from mcpfast._core.pending import DEFAULT_CAPACITY, PendingTable
from mcpfast.jsonrpc.context import RequestContext
from mcpfast.jsonrpc.errors import (
    ABSENT,
    INTERNAL_ERROR,
    INVALID_REQUEST,
    MESSAGE_TOO_LARGE,
    ConnectionClosed,
    JSONRPCError,
    MethodNotFound,
    RequestCancelled,
    RequestTimeout,
    error_from_response,
)
# Request ids and progress tokens follow the same type rule: a str or an int (not bool).
from mcpfast.jsonrpc.progress import PROGRESS_METHOD
from mcpfast.jsonrpc.progress import is_progress_token as _is_request_id
from mcpfast.jsonrpc.router import Router

__all__ = ["CANCELLED_METHOD", "INITIALIZE_METHOD", "OutgoingRequest", "ReplyChannel", "Session"]

CANCELLED_METHOD = "notifications/cancelled"
# The one request the specification forbids cancelling.
INITIALIZE_METHOD = "initialize"

_LOGGER = logging.getLogger("mcpfast.jsonrpc")

# Result types that are certainly not awaitable: the usual handler results skip the
# (slower) inspect.isawaitable check.
_PLAIN_RESULT_TYPES = frozenset({dict, list, str, int, float, bool, type(None), tuple})

# asyncio runs a timer up to one clock tick early; expiring with this slack keeps such a
# wake-up from finding nothing due and re-arming for the same instant.
_CLOCK_SLACK = time.get_clock_info("monotonic").resolution


class ReplyChannel(Protocol):
    """Where the replies to one fed frame go (see the module docstring)."""

    def respond(self, frame: Optional[bytes]) -> None: ...

    def send(self, frame: bytes) -> None: ...


def _check_timeout(timeout: Any) -> Optional[float]:
    """None, or a positive number of seconds (math.inf: never)."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(
            f"timeout must be a number of seconds or None, not {type(timeout).__name__}"
        )
    if not timeout > 0:
        raise ValueError(f"timeout must be positive, got {timeout!r}")
    return float(timeout)


def _discard(awaitable: Any) -> None:
    """Dispose of an awaitable that will never be awaited (no 'never awaited' warning)."""
    if awaitable is None:
        return
    if inspect.iscoroutine(awaitable):
        awaitable.close()
    elif asyncio.isfuture(awaitable):
        awaitable.cancel()


def _request_id_in(params: Any, key: str) -> int | str | None:
    """params[key] when params is a dict and that is a request id (a str or an int), else
    None."""
    if type(params) is not dict:
        return None
    value = params.get(key)
    return value if _is_request_id(value) else None


def _with_progress_token(params: Any, token: int) -> dict:
    """A copy of params (a dict or None) with _meta.progressToken = token."""
    if params is None:
        return {"_meta": {"progressToken": token}}
    if not isinstance(params, dict):
        raise TypeError(
            f"a request with a progress callback needs params as a dict (to carry "
            f"_meta.progressToken), not {type(params).__name__}"
        )
    params = dict(params)
    meta = params.get("_meta")
    if meta is None:
        params["_meta"] = {"progressToken": token}
    elif isinstance(meta, dict):
        meta = dict(meta)
        meta["progressToken"] = token
        params["_meta"] = meta
    else:
        raise TypeError(f"params['_meta'] must be a dict, not {type(meta).__name__}")
    return params


class _BatchReply:
    """Collects the replies to one batch and sends them as one array when all are done.

    ``pending`` counts async requests still running plus one for the batch loop itself;
    ``owed`` is True once the batch held a request or an invalid element.
    """

    __slots__ = ("session", "channel", "frames", "pending", "owed")

    def __init__(self, session: Session, channel: Optional[ReplyChannel]) -> None:
        self.session = session
        self.channel = channel
        self.frames: list[bytes] = []
        self.pending = 1
        self.owed = False

    def release(self, frame: Optional[bytes]) -> None:
        if frame is not None:
            self.frames.append(frame)
        self.pending -= 1
        if self.pending == 0 and self.owed:
            frames = self.frames
            self.session._deliver_reply(self.channel, encode_batch(frames) if frames else None)


class OutgoingRequest:
    """A request this side sent and is waiting for.

    ``id`` (int), ``method``, ``future`` (resolved with the result or failed with the
    exception ``Session.request`` documents), ``timeout`` (seconds or None).
    """

    __slots__ = ("session", "id", "method", "future", "on_progress", "origin", "timeout")

    def __init__(self, session: Session, id: int, method: str, future: asyncio.Future,
                 on_progress: Optional[Callable[..., Any]], origin: Optional[RequestContext],
                 timeout: Optional[float]) -> None:
        self.session = session
        self.id = id
        self.method = method
        self.future = future
        self.on_progress = on_progress
        self.origin = origin
        self.timeout = timeout

    @property
    def done(self) -> bool:
        """True once the response, an error, a timeout, a cancellation or close settled it."""
        return self.future.done()

    def cancel(self, reason: Optional[str] = None, *, notify: bool = True) -> bool:
        """Give the request up: its future fails with RequestCancelled(reason).

        Unless notify is False or the method is initialize, the peer is sent
        notifications/cancelled {requestId, reason}. Returns False (and does nothing) when
        the request was already settled.
        """
        return self.session._abandon(self, reason, notify, RequestCancelled(reason, self.id))

    async def wait(self) -> Any:
        """The result; cancelling the awaiting task cancels the request (see Session.request)."""
        try:
            return await self.future
        except CancelledError as exc:
            self.session._abandon(self, _cancel_reason(exc), True, None)
            raise

    def __repr__(self) -> str:
        state = "done" if self.future.done() else "waiting"
        return f"<OutgoingRequest id={self.id} method={self.method!r} {state}>"


def _cancel_reason(exc: CancelledError) -> Optional[str]:
    """The message given to Task.cancel(msg), if any: the reason told to the peer."""
    if exc.args and isinstance(exc.args[0], str):
        return exc.args[0]
    return None


class Session:
    """One JSON-RPC 2.0 connection without I/O (see the module docstring).

    send: called with each outgoing frame (bytes).
    router: the method tables (a new empty Router when None); shared Routers are fine.
    before_dispatch: hook(ctx) run before routing each incoming request/notification.
    context_factory: builds the ctx: (session, request_id, method, params, channel).
    loop: the event loop for tasks, futures and timers; None: the running loop.
    logger: where handler failures and protocol oddities are logged.
    batches_allowed: serve JSON-RPC batches (else refuse them with -32600).
    request_timeout: default timeout of outgoing requests in seconds (None: none).
    max_pending: most outgoing requests in flight at once (PendingTable capacity).
    """

    def __init__(
        self,
        send: Callable[[bytes], None],
        *,
        router: Optional[Router] = None,
        before_dispatch: Optional[Callable[[RequestContext], None]] = None,
        context_factory: Callable[..., RequestContext] = RequestContext,
        loop: Optional[asyncio.AbstractEventLoop] = None,
        logger: Optional[logging.Logger] = None,
        batches_allowed: bool = False,
        request_timeout: Optional[float] = None,
        max_pending: int = DEFAULT_CAPACITY,
    ) -> None:
        if not callable(send):
            raise TypeError(f"send must be callable, not {type(send).__name__}")
        if router is None:
            router = Router()
        elif not isinstance(router, Router):
            raise TypeError(f"router must be a Router, not {type(router).__name__}")
        self._send = send
        self._router = router
        # The router's own dicts: routes added later are seen without indirection.
        self._requests = router.requests
        self._notifications = router.notifications
        self.before_dispatch = before_dispatch
        self.context_factory = context_factory
        self.batches_allowed = bool(batches_allowed)
        self.request_timeout = _check_timeout(request_timeout)
        self._loop = loop
        self._logger = logger if logger is not None else _LOGGER
        self._pending = PendingTable(max_pending)
        # Outgoing requests that asked for progress, by progress token (= request id).
        self._progress_listeners: dict[int, OutgoingRequest] = {}
        # Incoming requests whose async handler is running, by request id.
        self._in_flight: dict[Any, RequestContext] = {}
        # Tasks of notification handlers and progress callbacks (kept referenced).
        self._tasks: set[asyncio.Task] = set()
        self._timer: Optional[asyncio.TimerHandle] = None
        self._timer_when: Optional[float] = None
        self._closed = False

    # -- properties --------------------------------------------------------------------

    @property
    def router(self) -> Router:
        """The Router this session dispatches through."""
        return self._router

    @property
    def closed(self) -> bool:
        """True once close() was called."""
        return self._closed

    @property
    def in_flight(self) -> int:
        """Incoming requests whose async handler is still running."""
        return len(self._in_flight)

    @property
    def pending(self) -> int:
        """Outgoing requests waiting for their response."""
        return len(self._pending)

    # -- transport side ----------------------------------------------------------------

    def feed(self, frame: Any, channel: Optional[ReplyChannel] = None) -> bool:
        """Process one received frame; True when it owes a reply (module docstring)."""
        if self._closed:
            raise ConnectionClosed("feed() called on a closed session")
        try:
            msg = decode(frame)
        except DecodeError as exc:
            self._deliver_reply(channel, encode_error(exc.id, exc.code, exc.message))
            return True
        cls = type(msg)
        if cls is Request:
            self._on_request(msg, channel, None)
            return True
        if cls is Notification:
            self._on_notification(msg)
            return False
        if cls is Response:
            self._on_response(msg)
            return False
        if cls is ErrorResponse:
            self._on_error_response(msg)
            return False
        return self._on_batch(msg, channel)

    def feed_error(self, exc: BaseException, channel: Optional[ReplyChannel] = None) -> bool:
        """Answer a frame the transport could not deliver (module docstring); returns True."""
        if self._closed:
            raise ConnectionClosed("feed_error() called on a closed session")
        if isinstance(exc, FrameTooLarge):
            frame = encode_error(
                None, MESSAGE_TOO_LARGE, "Message too large",
                {"limit": exc.limit, "size": exc.size},
            )
        elif isinstance(exc, DecodeError):
            frame = encode_error(exc.id, exc.code, exc.message)
        elif isinstance(exc, JSONRPCError):
            if exc.has_data:
                frame = encode_error(None, exc.code, exc.message, exc.data)
            else:
                frame = encode_error(None, exc.code, exc.message)
        else:
            raise TypeError(
                f"feed_error() takes FrameTooLarge, DecodeError or JSONRPCError, "
                f"not {type(exc).__name__}"
            )
        self._deliver_reply(channel, frame)
        return True

    def close(self, exc: Optional[BaseException] = None) -> None:
        """End the session (module docstring). Idempotent."""
        if self._closed:
            return
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
            self._timer_when = None
        message = "Connection closed" if exc is None else f"Connection closed: {exc}"
        for out in self._pending.clear():
            future = out.future
            if not future.done():
                error = ConnectionClosed(message)
                error.__cause__ = exc
                future.set_exception(error)
        self._progress_listeners.clear()
        in_flight = list(self._in_flight.values())
        self._in_flight.clear()
        for ctx in in_flight:
            # A task that has not started yet sees the session closed when it does.
            if ctx._started:
                ctx._task.cancel()
        for task in list(self._tasks):
            task.cancel()

    # -- outgoing ----------------------------------------------------------------------

    def notify(self, method: str, params: Any = None) -> None:
        """Send a notification to the peer."""
        if self._closed:
            raise ConnectionClosed("the session is closed")
        self._send(encode_notification(method, params))

    def send_related(self, channel: Optional[ReplyChannel], frame: bytes) -> None:
        """Send a frame tied to an incoming request: on its channel, else through send."""
        if self._closed:
            raise ConnectionClosed("the session is closed")
        if channel is None:
            self._send(frame)
        else:
            channel.send(frame)

    def send_request(
        self,
        method: str,
        params: Any = None,
        *,
        timeout: Optional[float] = None,
        progress: Optional[Callable[..., Any]] = None,
        origin: Optional[RequestContext] = None,
    ) -> OutgoingRequest:
        """Send a request now and return its handle (see Session.request for the rest).

        Await ``handle.wait()`` (not ``handle.future``) for cancellation to reach the peer.
        """
        if self._closed:
            raise ConnectionClosed("the session is closed")
        loop = self._loop or get_running_loop()
        timeout = self.request_timeout if timeout is None else _check_timeout(timeout)
        if progress is not None and not callable(progress):
            raise TypeError(f"progress must be callable, not {type(progress).__name__}")
        pending = self._pending
        request_id = pending.next_id()
        if progress is not None:
            params = _with_progress_token(params, request_id)
        frame = encode_request(request_id, method, params)
        future = loop.create_future()
        out = OutgoingRequest(self, request_id, method, future, progress, origin, timeout)
        if timeout is None or timeout == math.inf:
            deadline = None
        else:
            deadline = loop.time() + timeout
        # Registered before sending: a transport may deliver the response re-entrantly.
        pending.add(request_id, out, deadline)
        if progress is not None:
            self._progress_listeners[request_id] = out
        if deadline is not None:
            self._arm_timer(loop, deadline)
        channel = origin._channel if origin is not None else None
        try:
            if channel is None:
                self._send(frame)
            else:
                channel.send(frame)
        except BaseException:
            pending.pop(request_id)
            self._progress_listeners.pop(request_id, None)
            raise
        return out

    async def request(
        self,
        method: str,
        params: Any = None,
        *,
        timeout: Optional[float] = None,
        progress: Optional[Callable[..., Any]] = None,
        origin: Optional[RequestContext] = None,
    ) -> Any:
        """Send a request to the peer and return its result.

        timeout: seconds (math.inf: none); None uses the session's request_timeout.
        progress: callback(progress, total, message), sync or async, for the peer's
        notifications/progress about this request; params (a dict or None) then carry
        _meta.progressToken.
        origin: the incoming request this one is made for (its reply channel is used).
        Raises JSONRPCError (MethodNotFound, InvalidParams, InternalError for those codes)
        when the peer answers with an error, RequestTimeout, RequestCancelled (cancelled
        through the handle), ConnectionClosed; before sending: EncodeError (a ValueError)
        for params that are not JSON, mcpfast._core.pending.PendingTableFull when max_pending
        requests are already waiting. Cancelling the awaiting task sends the peer
        notifications/cancelled (with the message given to Task.cancel as reason).
        """
        out = self.send_request(method, params, timeout=timeout, progress=progress, origin=origin)
        try:
            return await out.future
        except CancelledError as exc:
            self._abandon(out, _cancel_reason(exc), True, None)
            raise

    # -- incoming requests -------------------------------------------------------------

    def _on_request(self, req: Request, channel: Optional[ReplyChannel],
                    batch: Optional[_BatchReply]) -> None:
        request_id = req.id
        method = req.method
        params = req.params
        ctx = None
        if batch is not None:
            batch.owed = True
        try:
            ctx = self.context_factory(self, request_id, method, params, channel)
            if batch is not None:
                ctx._batch = batch
            if self._in_flight and request_id in self._in_flight:
                raise JSONRPCError(
                    INVALID_REQUEST,
                    f"Request id {request_id!r} is already in use by a request in progress",
                )
            hook = self.before_dispatch
            if hook is not None:
                hook(ctx)
            route = self._requests.get(method)
            if route is None:
                raise MethodNotFound(data={"method": method})
            if route.is_async:
                self._start(ctx, route.handler, params, None)
                return
            result = route.handler(params, ctx)
            if type(result) not in _PLAIN_RESULT_TYPES and inspect.isawaitable(result):
                self._start(ctx, None, None, result)
                return
            frame = encode_response(request_id, result)
        except JSONRPCError as exc:
            frame = self._error_frame(request_id, method, exc)
        except Exception as exc:
            frame = self._internal_error_frame(request_id, method, exc)
        # Answered inline (sync handler or error): no task, no bookkeeping.
        if ctx is not None:
            if ctx.progress is not None:
                ctx.progress.close()
            ctx._channel = None
        if batch is not None:
            batch.frames.append(frame)
        elif channel is None:
            self._send(frame)
        else:
            channel.respond(frame)

    def _start(self, ctx: RequestContext, handler: Any, params: Any, awaitable: Any) -> None:
        """Run an async handler (or the awaitable a sync one returned) as a task."""
        loop = self._loop
        if loop is None:
            try:
                loop = get_running_loop()
            except RuntimeError:
                _discard(awaitable)
                raise
        ctx._task = loop.create_task(self._run(ctx, handler, params, awaitable))
        self._in_flight[ctx.request_id] = ctx
        if ctx._batch is not None:
            ctx._batch.pending += 1

    async def _run(self, ctx: RequestContext, handler: Any, params: Any, awaitable: Any) -> None:
        if ctx.cancelled or self._closed:
            # Cancelled (or closed) before the task got to run: the handler never starts.
            _discard(awaitable)
            self._finish(ctx, None)
            return
        ctx._started = True
        request_id = ctx.request_id
        try:
            if awaitable is None:
                awaitable = handler(params, ctx)
            result = await awaitable
            frame = encode_response(request_id, result)
        except CancelledError:
            if ctx.cancelled or self._closed:
                self._finish(ctx, None)
            else:
                # Cancelled by something other than the peer: the peer still needs an answer.
                self._logger.warning(
                    "handler for %r (request id %r) was cancelled locally", ctx.method, request_id
                )
                self._finish(ctx, encode_error(request_id, INTERNAL_ERROR, "Request cancelled"))
            raise
        except JSONRPCError as exc:
            frame = self._error_frame(request_id, ctx.method, exc)
        except Exception as exc:
            frame = self._internal_error_frame(request_id, ctx.method, exc)
        self._finish(ctx, frame)

    def _finish(self, ctx: RequestContext, frame: Optional[bytes]) -> None:
        """Complete an async request: bookkeeping, then its reply (None: none)."""
        request_id = ctx.request_id
        if self._in_flight.get(request_id) is ctx:
            del self._in_flight[request_id]
        if ctx.progress is not None:
            ctx.progress.close()
        channel = ctx._channel
        ctx._channel = None
        if ctx.cancelled:
            frame = None
        batch = ctx._batch
        try:
            if batch is not None:
                batch.release(frame)
            else:
                self._deliver_reply(channel, frame)
        except Exception:
            self._logger.exception("sending the reply to request id %r failed", request_id)

    def _deliver_reply(self, channel: Optional[ReplyChannel], frame: Optional[bytes]) -> None:
        if self._closed:
            frame = None
        if channel is None:
            if frame is not None:
                self._send(frame)
        else:
            channel.respond(frame)

    def _error_frame(self, request_id: Any, method: str, exc: JSONRPCError) -> bytes:
        """The error response for a JSONRPCError raised while handling a request."""
        try:
            if exc.has_data:
                return encode_error(request_id, exc.code, exc.message, exc.data)
            return encode_error(request_id, exc.code, exc.message)
        except Exception as encode_exc:
            self._logger.error(
                "cannot encode the error %r raised for %r (request id %r)",
                exc, method, request_id, exc_info=encode_exc,
            )
            return encode_error(request_id, INTERNAL_ERROR, "Internal error")

    def _internal_error_frame(self, request_id: Any, method: str, exc: Exception) -> bytes:
        """Log an unexpected failure here; the peer only learns "Internal error"."""
        self._logger.error(
            "handling %r (request id %r) failed", method, request_id, exc_info=exc
        )
        return encode_error(request_id, INTERNAL_ERROR, "Internal error")

    # -- incoming notifications --------------------------------------------------------

    def _on_notification(self, note: Notification) -> None:
        method = note.method
        params = note.params
        if method == CANCELLED_METHOD:
            if self._on_cancelled(params):
                return
        elif method == PROGRESS_METHOD:
            if self._on_progress(params):
                return
        route = self._notifications.get(method)
        hook = self.before_dispatch
        if route is None and hook is None:
            self._logger.debug("no handler for notification %r; ignored", method)
            return
        try:
            ctx = self.context_factory(self, None, method, params, None)
            if hook is not None:
                hook(ctx)
            if route is None:
                self._logger.debug("no handler for notification %r; ignored", method)
                return
            if route.is_async:
                self._spawn(self._run_notification, ctx, route.handler, params, None)
                return
            result = route.handler(params, ctx)
            if type(result) not in _PLAIN_RESULT_TYPES and inspect.isawaitable(result):
                self._spawn(self._run_notification, ctx, None, None, result)
        except JSONRPCError as exc:
            self._logger.debug("notification %r refused: %s", method, exc)
        except Exception as exc:
            self._logger.error("handler for notification %r failed", method, exc_info=exc)

    async def _run_notification(self, ctx: RequestContext, handler: Any, params: Any,
                                awaitable: Any) -> None:
        try:
            if awaitable is None:
                awaitable = handler(params, ctx)
            await awaitable
        except JSONRPCError as exc:
            self._logger.debug("notification %r refused: %s", ctx.method, exc)
        except Exception as exc:
            self._logger.error("handler for notification %r failed", ctx.method, exc_info=exc)

    def _spawn(self, coroutine_function: Callable[..., Awaitable[None]], *args: Any) -> None:
        """Run coroutine_function(*args) as a task the session keeps track of."""
        loop = self._loop
        if loop is None:
            try:
                loop = get_running_loop()
            except RuntimeError:
                for arg in args:
                    if inspect.isawaitable(arg):
                        _discard(arg)
                raise
        task = loop.create_task(coroutine_function(*args))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _on_cancelled(self, params: Any) -> bool:
        """notifications/cancelled; True when it named an incoming request in progress."""
        request_id = _request_id_in(params, "requestId")
        if request_id is None:
            return False
        ctx = self._in_flight.get(request_id)
        if ctx is None:
            self._logger.debug("cancellation of unknown request id %r ignored", request_id)
            return False
        if ctx.method == INITIALIZE_METHOD:
            self._logger.debug("cancellation of initialize (id %r) ignored", request_id)
            return True
        reason = params.get("reason")
        ctx.cancelled = True
        ctx.cancel_reason = reason if type(reason) is str else None
        del self._in_flight[request_id]
        if ctx._started:
            ctx._task.cancel(ctx.cancel_reason)
        return True

    def _on_progress(self, params: Any) -> bool:
        """notifications/progress; True when it was for an outgoing request of ours."""
        # Our progress tokens are our request ids.
        token = _request_id_in(params, "progressToken")
        if token is None:
            return False
        out = self._progress_listeners.get(token)
        if out is None:
            return False
        progress = params.get("progress")
        if isinstance(progress, bool) or not isinstance(progress, (int, float)):
            self._logger.debug("notifications/progress for %r without a number; ignored", token)
            return True
        callback = out.on_progress
        try:
            result = callback(progress, params.get("total"), params.get("message"))
            if type(result) not in _PLAIN_RESULT_TYPES and inspect.isawaitable(result):
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

    # -- incoming responses ------------------------------------------------------------

    def _on_response(self, resp: Response) -> None:
        out = self._pending.pop(resp.id)
        if out is None:
            self._logger.debug("response for unknown request id %r dropped", resp.id)
            return
        if out.on_progress is not None:
            self._progress_listeners.pop(out.id, None)
        future = out.future
        if not future.done():
            future.set_result(resp.result)

    def _on_error_response(self, resp: ErrorResponse) -> None:
        request_id = resp.id
        if request_id is None:
            self._logger.warning(
                "the peer could not read a message of ours: error %d %r (id null)",
                resp.code, resp.message,
            )
            return
        out = self._pending.pop(request_id)
        if out is None:
            self._logger.debug("error response for unknown request id %r dropped", request_id)
            return
        if out.on_progress is not None:
            self._progress_listeners.pop(out.id, None)
        future = out.future
        if not future.done():
            data = resp.data if resp.has_data else ABSENT
            future.set_exception(error_from_response(resp.code, resp.message, data))

    # -- batches -----------------------------------------------------------------------

    def _on_batch(self, items: list, channel: Optional[ReplyChannel]) -> bool:
        if not self.batches_allowed:
            self._deliver_reply(
                channel,
                encode_error(None, INVALID_REQUEST, "Invalid Request: batches are not supported"),
            )
            return True
        batch = _BatchReply(self, channel)
        for item in items:
            cls = type(item)
            if cls is Request:
                self._on_request(item, channel, batch)
            elif cls is Notification:
                self._on_notification(item)
            elif cls is Response:
                self._on_response(item)
            elif cls is ErrorResponse:
                self._on_error_response(item)
            else:
                # A DecodeError standing in for an invalid element.
                batch.owed = True
                batch.frames.append(encode_error(item.id, item.code, item.message))
        owed = batch.owed
        batch.release(None)
        return owed

    # -- outgoing bookkeeping ----------------------------------------------------------

    def _abandon(self, out: OutgoingRequest, reason: Optional[str], notify: bool,
                 exc: Optional[BaseException]) -> bool:
        """Drop a pending outgoing request; fail its future with exc; tell the peer."""
        if self._pending.cancel(out.id) is None:
            return False
        if out.on_progress is not None:
            self._progress_listeners.pop(out.id, None)
        future = out.future
        if exc is not None and not future.done():
            future.set_exception(exc)
        if notify:
            self._send_cancelled(out, reason)
        return True

    def _send_cancelled(self, out: OutgoingRequest, reason: Optional[str]) -> None:
        if out.method == INITIALIZE_METHOD or self._closed:
            return
        params: dict[str, Any] = {"requestId": out.id}
        if reason is not None:
            params["reason"] = reason
        frame = encode_notification(CANCELLED_METHOD, params)
        origin = out.origin
        channel = origin._channel if origin is not None else None
        try:
            if channel is None:
                self._send(frame)
            else:
                channel.send(frame)
        except Exception:
            self._logger.exception("sending the cancellation of request id %r failed", out.id)

    def _arm_timer(self, loop: asyncio.AbstractEventLoop, deadline: float) -> None:
        """Make sure the timer fires no later than deadline (one timer for all requests)."""
        when = self._timer_when
        if when is not None:
            if when <= deadline:
                return
            self._timer.cancel()
        self._timer_when = deadline
        self._timer = loop.call_at(deadline, self._on_timer, loop)

    def _on_timer(self, loop: asyncio.AbstractEventLoop) -> None:
        self._timer = None
        self._timer_when = None
        if self._closed:
            return
        for out in self._pending.expire(loop.time() + _CLOCK_SLACK):
            if out.on_progress is not None:
                self._progress_listeners.pop(out.id, None)
            future = out.future
            if not future.done():
                future.set_exception(RequestTimeout(out.id, out.method, out.timeout))
            self._send_cancelled(out, "Request timed out")
        deadline = self._pending.next_deadline()
        if deadline is not None:
            self._arm_timer(loop, deadline)

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return (
            f"<Session {state} in_flight={len(self._in_flight)} "
            f"pending={len(self._pending)} batches_allowed={self.batches_allowed}>"
        )
