"""Session: one JSON-RPC 2.0 connection, without I/O.

A Session takes frames in (``feed``) and hands frames out (``send`` and reply channels).
It routes incoming requests and notifications to handlers, answers errors, correlates the
responses to its own outgoing requests (:mod:`mcpfast.jsonrpc.outgoing`), and implements
cancellation, progress and batches. It never touches a socket, so every rule is testable
with a list as the transport; it never touches an event loop either: futures, tasks,
timers and the clock come from a :class:`~mcpfast.jsonrpc.runtime.Runtime` (asyncio's
running loop by default), so a test can drive it with a fake clock and no loop.

Transport interface
===================
A Session is a :class:`~mcpfast.jsonrpc.contract.Connection` (the contract, with the
``send`` and reply-channel rules, is documented in :mod:`mcpfast.jsonrpc.contract`)::

    session = Session(send, router=router)     # send(frame: bytes) -> None
    owes_reply = session.feed(frame)           # one complete frame received
    session.feed_error(exc)                    # the framer dropped a frame (FrameTooLarge)
    session.close(exc=None)                    # the connection is gone

``feed_error(exc, channel=None) -> True``
    For frames that never reached the decoder. A ``FrameTooLarge`` from the framer is
    answered with MESSAGE_TOO_LARGE (-32012, from erlmcp's error catalogue (the seed design): the specification
    defines none for this), message "Message too large", data ``{"limit": ..., "size":
    ...}``. When the framer could read the line's id and kind from its first bytes
    (``exc.request_id``, ``exc.kind``; absent on older framers):

    * ``kind == "request"``: the error carries that id, so the peer's request fails at
      once instead of waiting forever;
    * ``kind == "response"`` and the id is one of our waiting requests: that request fails
      at once with :class:`~mcpfast.jsonrpc.errors.MessageTooLarge`; the peer still gets
      the error with id null (its id names *our* request: echoing it would read as an
      answer to the peer's own request with the same id);
    * otherwise (kind unknown): id null, as the id cannot be told apart from the other
      direction's ids.

    A ``DecodeError`` is answered with its own code, message and id; a ``JSONRPCError``
    with its code, message and data and id null. The session goes on afterwards.

Frames the decoder refuses although they are valid JSON (an integer beyond 64 bits, a
lone surrogate escape, a number out of the double range; see refused_frames.py) are read
again for their envelope: a request is answered INVALID_PARAMS (-32602) with its id and
data ``{"method", "reason"}``; a response fails our waiting request at once with a
PARSE_ERROR JSONRPCError saying why; a notification is dropped (logged at debug).

``close(exc=None)``
    Fails every outgoing request still waiting with ConnectionClosed (``__cause__`` =
    ``exc``), cancels the tasks of incoming requests (no replies are sent; channels get
    ``respond(None)``), stops the timeout timer. Idempotent.

All methods must be called from one thread (a session is not thread-safe). Sync handlers
need no runtime at all; async handlers, outgoing requests and timeouts use the runtime.

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
* At most ``max_in_flight`` incoming requests run at once (async handlers still running;
  default DEFAULT_MAX_IN_FLIGHT = 10,000; None: no limit). A request arriving while that many run is answered at
  once with RATE_LIMITED (-32010, erlmcp's "rate limit exceeded" (the seed design's catalogue), severity
  "warning": the same request can succeed later), message "Too many requests in
  progress", data ``{"limit": max_in_flight}``, and its handler never runs. An error
  reply rather than pausing reads, because the session is sans-I/O (it cannot stop a
  transport from reading) and because pausing reads would also hold back what frees the
  slots: the peer's cancellations, and the responses to the requests our running
  handlers made to the peer (a handler awaiting sampling would deadlock). Memory stays
  bounded either way; the peer gets a clear, retryable answer.
* ``before_dispatch(ctx)``: optional hook run for every incoming request and notification
  before routing (the MCP layer refuses requests before initialization, checks versions,
  fills its context fields). Raising JSONRPCError refuses a request with that error and
  drops a notification.
* ``notifications/cancelled`` naming an incoming request in progress cancels its task and
  suppresses its response, unless its method is in ``uncancellable`` (the MCP layers pass
  ``{"initialize"}``); other ids are ignored (they go to a registered
  "notifications/cancelled" handler if there is one).
* ``params._meta.progressToken`` gives the handler ``ctx.progress`` (see progress.py).
* Batches (JSON arrays) are served only while ``batches_allowed`` is true (the MCP layer
  calls ``allow_batches(True)`` when 2025-03-26 is negotiated); otherwise the whole array
  is answered with one -32600 error, id null. Served batches get one array holding the
  replies of their requests and invalid elements (in completion order), sent once all of
  them are done; a batch of only notifications and responses gets no reply. The empty
  array is -32600.

Why ``notifications/cancelled`` and ``notifications/progress`` are known here although
their names come from MCP: they are conventions about the life of a JSON-RPC request (the
Language Server Protocol has the same pair) that need the session's own bookkeeping --
request ids, tasks, reply channels -- and no MCP semantics beyond their shape. MCP
method rules (which request may not be cancelled, what is allowed before initialization)
are passed in by the MCP layers (``uncancellable``, ``before_dispatch``).

Outgoing messages
=================
``await session.request(method, params, timeout=..., progress=...)`` sends a request with
an id from the PendingTable and returns the result, or raises: JSONRPCError (or
MethodNotFound / InvalidParams / InternalError / MessageTooLarge) for an error response,
RequestTimeout, RequestCancelled, MessageTooLarge (the response was too large to read),
ConnectionClosed. One timer (runtime.call_at, re-armed for the earliest deadline) serves
all timeouts. A timed-out request and a request whose awaiting task is cancelled are
announced to the peer with notifications/cancelled (never for ``uncancellable``
methods). ``progress`` is a callback ``progress(progress, total, message)`` (sync or
async) called for each notifications/progress the peer sends for the request (the request
carries ``_meta.progressToken`` = its id). Responses with unknown ids are logged at debug
level and dropped. ``send_request`` is the same without awaiting: it returns an
:class:`~mcpfast.jsonrpc.outgoing.OutgoingRequest` handle (id, future, cancel).
``notify`` sends a notification.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import sys
from asyncio import CancelledError
from typing import Any, Callable, Coroutine, Iterable, Optional

from mcpfast._core.codec import (
    DecodeError,
    ErrorResponse,
    Notification,
    Request,
    Response,
    encode_error,
    encode_notification,
    encode_response,
)
from mcpfast._core.dispatch import SessionCore
from mcpfast._core.framing import FrameTooLarge
from mcpfast._core.pending import DEFAULT_CAPACITY
from mcpfast.jsonrpc.batch import BatchReply
from mcpfast.jsonrpc.context import RequestContext
from mcpfast.jsonrpc.contract import Frame, ReplyChannel, Send
from mcpfast.jsonrpc.driven import DrivenCall
from mcpfast.jsonrpc.errors import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    MESSAGE_TOO_LARGE,
    PARSE_ERROR,
    RATE_LIMITED,
    ConnectionClosed,
    JSONRPCError,
    MessageTooLarge,
    MethodNotFound,
)
from mcpfast.jsonrpc.outgoing import (
    CANCELLED_METHOD,
    OutgoingRequest,
    OutgoingRequests,
    cancel_reason,
    check_timeout,
)
from mcpfast.jsonrpc.progress import PROGRESS_METHOD, is_progress_token, request_id_in
from mcpfast.jsonrpc.refused_frames import invalid_params_reply, refusal
from mcpfast.jsonrpc.router import PLAIN_RESULT_TYPES, Router
from mcpfast.jsonrpc.runtime import Runtime, TaskLike, as_runtime, bound

# The finish of contexts whose class keeps RequestContext's (feed_request inlines it).
_BASE_FINISH = RequestContext.finish

__all__ = ["CANCELLED_METHOD", "DEFAULT_MAX_IN_FLIGHT", "OutgoingRequest", "ReplyChannel",
           "Session", "check_max_in_flight"]

# Incoming requests allowed to run at once per session unless the caller says otherwise.
# A transport feeds every frame of one read before any handler task gets to run, so a
# peer pipelining a burst of quick calls has them all "in flight" at once: the cap must sit
# well above such bursts (the tests pipeline 5,000) or legitimate calls are refused. A slow
# call held about 3.5 KB (100,000 of them: 363 MB), so 10,000 bounds a flood of slow calls
# to a few tens of MB per session.
DEFAULT_MAX_IN_FLIGHT = 10_000

_LOGGER = logging.getLogger("mcpfast.jsonrpc")


def check_max_in_flight(max_in_flight: Optional[int]) -> Optional[int]:
    """max_in_flight when valid (an int >= 1 or None); TypeError / ValueError otherwise."""
    if max_in_flight is not None:
        if type(max_in_flight) is not int:
            raise TypeError(
                f"max_in_flight must be an int or None, not {type(max_in_flight).__name__}"
            )
        if max_in_flight < 1:
            raise ValueError(f"max_in_flight must be at least 1, got {max_in_flight}")
    return max_in_flight


def _discard(awaitable: Any) -> None:
    """Dispose of an awaitable that will never be awaited (no 'never awaited' warning)."""
    if awaitable is None:
        return
    if inspect.iscoroutine(awaitable):
        awaitable.close()
    elif asyncio.isfuture(awaitable):
        awaitable.cancel()


class Session(SessionCore):
    """One JSON-RPC 2.0 connection without I/O (see the module docstring).

    send: called with each outgoing frame (bytes).
    router: the method tables (a new empty Router when None); shared Routers are fine.
    before_dispatch: hook(ctx) run before routing each incoming request/notification.
    context_factory: builds the ctx: (session, request_id, method, params, channel).
    runtime: futures, tasks, timers and the clock (see runtime.py); None: asyncio.
    loop: the asyncio loop for the default runtime (None: the running loop); give
        runtime or loop, not both.
    logger: where handler failures and protocol oddities are logged.
    batches_allowed: serve JSON-RPC batches (else refuse them with -32600); change it
        later with allow_batches().
    request_timeout: default timeout of outgoing requests in seconds (None: none).
    max_pending: most outgoing requests in flight at once (PendingTable capacity).
    max_in_flight: most incoming requests running at once (None: no limit); beyond it a
        request is answered RATE_LIMITED (module docstring).
    uncancellable: methods whose requests are never cancelled, in either direction (the
        MCP layers pass {"initialize"}).
    """

    def __init__(
        self,
        send: Send,
        *,
        router: Optional[Router] = None,
        before_dispatch: Optional[Callable[[RequestContext], None]] = None,
        context_factory: Callable[..., RequestContext] = RequestContext,
        runtime: Optional[Runtime] = None,
        loop: Optional[asyncio.AbstractEventLoop] = None,
        logger: Optional[logging.Logger] = None,
        batches_allowed: bool = False,
        request_timeout: Optional[float] = None,
        max_pending: int = DEFAULT_CAPACITY,
        max_in_flight: Optional[int] = DEFAULT_MAX_IN_FLIGHT,
        uncancellable: Iterable[str] = frozenset(),
    ) -> None:
        if not callable(send):
            raise TypeError(f"send must be callable, not {type(send).__name__}")
        if router is None:
            router = Router()
        elif not isinstance(router, Router):
            raise TypeError(f"router must be a Router, not {type(router).__name__}")
        check_max_in_flight(max_in_flight)
        if isinstance(uncancellable, str):
            raise TypeError("uncancellable must be a collection of method names, not a str")
        self._send = send
        self._router = router
        # The router's own dicts: routes added later are seen without indirection.
        self._requests = router.requests
        self._notifications = router.notifications
        self.before_dispatch = before_dispatch
        self.context_factory = context_factory
        self._batches_allowed = bool(batches_allowed)
        self._runtime = as_runtime(runtime, loop)
        # The runtime's create_task, bound to its loop on first use (see _task_factory).
        self._create_task: Optional[Callable[[Coroutine[Any, Any, Any]], TaskLike]] = None
        self._logger = logger if logger is not None else _LOGGER
        self._uncancellable = frozenset(uncancellable)
        self._max_in_flight = max_in_flight
        # One comparison on the hot path, whether or not there is a limit.
        self._in_flight_limit = sys.maxsize if max_in_flight is None else max_in_flight
        self._outgoing = OutgoingRequests(
            send,
            self._runtime,
            capacity=max_pending,
            default_timeout=request_timeout,
            uncancellable=self._uncancellable,
            spawn=self._spawn,
            logger=self._logger,
        )
        # The hot path of every outgoing request: no extra call between caller and book.
        self.send_request = self._outgoing.start  # type: ignore[method-assign]
        # Incoming requests whose async handler is running, by request id.
        self._in_flight: dict[Any, RequestContext] = {}
        # Tasks of notification handlers and progress callbacks (kept referenced).
        self._tasks: set[Any] = set()
        self._closed = False
        self._base_finish = _BASE_FINISH

    # -- properties --------------------------------------------------------------------

    @property
    def router(self) -> Router:
        """The Router this session dispatches through."""
        return self._router

    @property
    def runtime(self) -> Runtime:
        """Where futures, tasks, timers and the clock come from."""
        return self._runtime

    @property
    def closed(self) -> bool:
        """True once close() was called."""
        return self._closed

    @property
    def in_flight(self) -> int:
        """Incoming requests whose async handler is still running."""
        return len(self._in_flight)

    @property
    def max_in_flight(self) -> Optional[int]:
        """The most incoming requests running at once (None: no limit)."""
        return self._max_in_flight

    @property
    def idle(self) -> bool:
        """True while open with no incoming request running and no outgoing one waiting."""
        return self.is_idle()

    # is_idle() (SessionCore, compiled): as idle, a method (a stateless HTTP connection
    # asks once per request).

    @property
    def pending(self) -> int:
        """Outgoing requests waiting for their response."""
        return len(self._outgoing)

    @property
    def outgoing(self) -> OutgoingRequests:
        """The book of outgoing requests (for inspection: counts, timer)."""
        return self._outgoing

    @property
    def uncancellable(self) -> frozenset[str]:
        """Methods whose requests are never cancelled."""
        return self._uncancellable

    @property
    def batches_allowed(self) -> bool:
        """Whether JSON-RPC batches are served (set with allow_batches)."""
        return self._batches_allowed

    def allow_batches(self, enabled: bool) -> None:
        """Serve JSON-RPC batches from now on (True) or refuse them with -32600 (False)."""
        self._batches_allowed = bool(enabled)

    @property
    def request_timeout(self) -> Optional[float]:
        """Default timeout of outgoing requests in seconds (None: none)."""
        return self._outgoing.default_timeout

    @request_timeout.setter
    def request_timeout(self, value: Optional[float]) -> None:
        self._outgoing.default_timeout = check_timeout(value)

    # -- transport side ----------------------------------------------------------------

    # feed(frame, channel=None) -> bool (SessionCore, compiled): one received frame
    # decoded and processed, True when it owes a reply (module docstring); requests and
    # responses in C, everything else through feed_message.

    def feed_message(self, msg: Any, channel: Optional[ReplyChannel] = None) -> bool:
        """Process one message the transport decoded already (``decode(frame)``'s result:
        a message or a batch); otherwise as :meth:`feed`."""
        if self._closed:
            raise ConnectionClosed("feed_message() called on a closed session")
        cls = type(msg)
        if cls is Request:
            self.feed_request(msg, channel)
            return True
        if cls is Notification:
            self._on_notification(msg)
            return False
        if cls is Response:
            self._outgoing.on_response(msg)
            return False
        if cls is ErrorResponse:
            self._outgoing.on_error_response(msg)
            return False
        return self._on_batch(msg, channel)

    def feed_error(self, exc: BaseException, channel: Optional[ReplyChannel] = None) -> bool:
        """Answer a frame the transport could not deliver (module docstring); returns True."""
        if self._closed:
            raise ConnectionClosed("feed_error() called on a closed session")
        if isinstance(exc, FrameTooLarge):
            frame = self._frame_too_large(exc)
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

    def _refused(self, frame: Frame, exc: DecodeError, channel: Optional[ReplyChannel]) -> bool:
        """Answer a frame the decoder refused (module docstring); True when a reply went."""
        found = refusal(frame, exc)
        if found is None:
            self._deliver_reply(channel, encode_error(exc.id, exc.code, exc.message))
            return True
        # Valid JSON holding a value mcpfast cannot represent: say which, to its owner.
        envelope, reason = found
        if envelope.kind == "request":
            self._deliver_reply(channel, invalid_params_reply(envelope, reason))
            return True
        if envelope.kind == "notification":
            self._logger.debug("notification %r dropped: %s", envelope.method, reason)
            return False

        def undecodable(out: OutgoingRequest) -> JSONRPCError:
            return JSONRPCError(
                PARSE_ERROR,
                f"The response to {out.method!r} (id {out.id!r}) holds a value that cannot "
                f"be decoded: {reason}",
                {"reason": reason},
            )

        if not self._outgoing.fail(envelope.id, undecodable):
            self._logger.debug("undecodable response for unknown id %r dropped", envelope.id)
        return False

    def _frame_too_large(self, exc: FrameTooLarge) -> bytes:
        """The reply to an oversize line; fails our waiting request when it was its
        response (module docstring)."""
        limit = exc.limit
        size = exc.size
        data: Any = {"limit": limit, "size": size}
        # Framers that predate these attributes, or could not read the prefix: None.
        request_id = getattr(exc, "request_id", None)
        kind = getattr(exc, "kind", None)
        if not is_progress_token(request_id):
            request_id = None
        if request_id is not None and kind == "request":
            return encode_error(request_id, MESSAGE_TOO_LARGE, "Message too large", data)
        if request_id is not None and kind == "response":

            def too_large(out: OutgoingRequest) -> MessageTooLarge:
                return MessageTooLarge(
                    f"The response to {out.method!r} (id {out.id!r}) is larger than the "
                    f"frame limit of {limit} bytes ({size} bytes read); it was dropped",
                    data,
                )

            if not self._outgoing.fail(request_id, too_large):
                self._logger.debug(
                    "oversize response for unknown request id %r dropped", request_id
                )
        return encode_error(None, MESSAGE_TOO_LARGE, "Message too large", data)

    def close(self, exc: Optional[BaseException] = None) -> None:
        """End the session (module docstring). Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._outgoing.close(exc)
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
        raw: bool = False,
        future: Any = None,
    ) -> OutgoingRequest:
        """Send a request now and return its handle (see Session.request for the rest).

        Await ``handle.wait()`` (not ``handle.future``) for cancellation to reach the peer.
        ``raw``: the handle resolves with the Response message, its result unread.
        ``future``: the handle's future instead of a new one (a ``driven.Answer``).
        (Documentation only: __init__ binds send_request straight to the outgoing book.)
        """
        return self._outgoing.start(
            method, params, timeout=timeout, progress=progress, origin=origin, raw=raw,
            future=future
        )

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
        Raises JSONRPCError (MethodNotFound, InvalidParams, InternalError,
        MessageTooLarge for those codes) when the peer answers with an error,
        RequestTimeout, RequestCancelled (cancelled through the handle), MessageTooLarge
        (the response was over our frame limit), ConnectionClosed; before sending:
        EncodeError (a ValueError) for params that are not JSON,
        mcpfast._core.pending.PendingTableFull when max_pending requests are already
        waiting. Cancelling the awaiting task sends the peer notifications/cancelled
        (with the message given to Task.cancel as reason).
        """
        out = self.send_request(method, params, timeout=timeout, progress=progress, origin=origin)
        try:
            return await out.future
        except CancelledError as exc:
            self._outgoing.abandon(out, cancel_reason(exc), True, None)
            raise

    # -- incoming requests -------------------------------------------------------------

    # feed_request (SessionCore, compiled): a decoded request routed and, when answered
    # at once, its reply written; it calls the methods below for anything else.

    def _refuse_closed(self, call: str) -> None:
        raise ConnectionClosed(f"{call}() called on a closed session")

    def _check_in_flight(self, request_id: Any) -> None:
        """Refuse a request whose id a running request uses, or one past the limit."""
        in_flight = self._in_flight
        if request_id in in_flight:
            raise JSONRPCError(
                INVALID_REQUEST,
                f"Request id {request_id!r} is already in use by a request in progress",
            )
        if len(in_flight) >= self._in_flight_limit:
            raise JSONRPCError(
                RATE_LIMITED, "Too many requests in progress", {"limit": self._max_in_flight},
            )

    def _no_route(self, method: str) -> None:
        raise MethodNotFound(data={"method": method})

    def _failure_frame(self, request_id: Any, method: str, exc: Exception) -> bytes:
        """The error response of a request whose handling raised ``exc``."""
        if isinstance(exc, JSONRPCError):
            return self._error_frame(request_id, method, exc)
        return self._internal_error_frame(request_id, method, exc)

    def _cancelled_frame(self, request_id: Any, method: str, exc: BaseException) -> bytes:
        """A handler run inline raised CancelledError (nothing here was cancelled): the
        peer gets the answer a handler cancelled locally gets, and the transport goes on
        reading. Any other BaseException goes on up."""
        if not isinstance(exc, CancelledError):
            raise exc
        self._logger.warning("handler for %r (request id %r) raised CancelledError",
                             method, request_id)
        return encode_error(request_id, INTERNAL_ERROR, "Request cancelled")

    def _task_factory(self) -> Callable[[Coroutine[Any, Any, Any]], TaskLike]:
        # A session runs on one loop: create_task is bound to it on first use.
        create: Callable[[Coroutine[Any, Any, Any]], TaskLike] = bound(self._runtime, "create_task")
        self._create_task = create
        return create

    def _start(self, ctx: RequestContext, batch: Optional[BatchReply], handler: Any,
               params: Any, awaitable: Any) -> None:
        """Run an async handler (or the awaitable a sync one returned) as a task (a
        DrivenCall: by its futures' callbacks, no task)."""
        if type(awaitable) is DrivenCall:
            self._start_driven(ctx, batch, awaitable)  # (compiled, as feed_request does it)
            return
        ctx._batch = batch
        ctx._started = False
        coroutine = self._run(ctx, handler, params, awaitable)
        try:
            ctx._task = (self._create_task or self._task_factory())(coroutine)
        except BaseException:
            # No runtime to run it (no event loop): the request is answered with an error.
            coroutine.close()
            _discard(awaitable)
            raise
        self._in_flight[ctx.request_id] = ctx
        if batch is not None:
            batch.hold()

    async def _run(self, ctx: RequestContext, handler: Any, params: Any, awaitable: Any) -> None:
        if ctx.cancelled or self._closed:
            # Cancelled (or closed) before the task got to run: the handler never starts.
            _discard(awaitable)
            self._finish(ctx, None)
            return
        ctx._started = True
        request_id: Any = ctx.request_id
        try:
            if awaitable is None:
                awaitable = handler(params, ctx)
            result = await awaitable
            if ctx.shape_result is not None:
                result = ctx.shape_result(result)
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

    def _driven_failed(self, ctx: RequestContext, exc: BaseException) -> None:
        # A DrivenCall that raised, answered as _run answers a task's (SessionCore's
        # driven_end answers one that returned and calls this for the rest).
        request_id: Any = ctx.request_id
        if isinstance(exc, CancelledError):
            if ctx.cancelled or self._closed:
                frame = None
            else:
                self._logger.warning("handler for %r (request id %r) was cancelled locally",
                                     ctx.method, request_id)
                frame = encode_error(request_id, INTERNAL_ERROR, "Request cancelled")
        elif isinstance(exc, JSONRPCError):
            frame = self._error_frame(request_id, ctx.method, exc)
        elif isinstance(exc, Exception):
            frame = self._internal_error_frame(request_id, ctx.method, exc)
        else:
            self._finish(ctx, encode_error(request_id, INTERNAL_ERROR, "Internal error"))
            raise exc  # KeyboardInterrupt, SystemExit: not the request's to keep
        self._finish(ctx, frame)

    # _finish(ctx, frame) (SessionCore, compiled): an async request completed, its
    # bookkeeping, then its reply (None: none).

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
            if self._outgoing.on_progress(params):
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
            if type(result) not in PLAIN_RESULT_TYPES and inspect.isawaitable(result):
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

    def _spawn(self, coroutine_function: Callable[..., Coroutine[Any, Any, None]],
               *args: Any) -> None:
        """Run coroutine_function(*args) as a task the session keeps track of."""
        coroutine = coroutine_function(*args)
        try:
            task = (self._create_task or self._task_factory())(coroutine)
        except BaseException:
            coroutine.close()
            for arg in args:
                if inspect.isawaitable(arg):
                    _discard(arg)
            raise
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _on_cancelled(self, params: Any) -> bool:
        """notifications/cancelled; True when it named an incoming request in progress."""
        request_id = request_id_in(params, "requestId")
        if request_id is None:
            return False
        ctx = self._in_flight.get(request_id)
        if ctx is None:
            self._logger.debug("cancellation of unknown request id %r ignored", request_id)
            return False
        if ctx.method in self._uncancellable:
            self._logger.debug("cancellation of %r (id %r) ignored", ctx.method, request_id)
            return True
        reason = params.get("reason")
        ctx.mark_cancelled(reason if type(reason) is str else None)
        del self._in_flight[request_id]
        if ctx._started:
            ctx._task.cancel(ctx.cancel_reason)
        return True

    # -- batches -----------------------------------------------------------------------

    def _on_batch(self, items: list, channel: Optional[ReplyChannel]) -> bool:
        if not self._batches_allowed:
            self._deliver_reply(
                channel,
                encode_error(None, INVALID_REQUEST, "Invalid Request: batches are not supported"),
            )
            return True

        def deliver(frame: Optional[bytes]) -> None:
            self._deliver_reply(channel, frame)

        batch = BatchReply(deliver)
        outgoing = self._outgoing
        for item in items:
            cls = type(item)
            if cls is Request:
                self.feed_request(item, channel, batch)
            elif cls is Notification:
                self._on_notification(item)
            elif cls is Response:
                outgoing.on_response(item)
            elif cls is ErrorResponse:
                outgoing.on_error_response(item)
            else:
                # A DecodeError standing in for an invalid element.
                batch.owed = True
                batch.add(encode_error(item.id, item.code, item.message))
        owed = batch.owed
        batch.release(None)
        return owed

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return (
            f"<Session {state} in_flight={len(self._in_flight)} "
            f"pending={len(self._outgoing)} batches_allowed={self._batches_allowed}>"
        )
