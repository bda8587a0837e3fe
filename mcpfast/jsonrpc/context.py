"""RequestContext: what a handler knows about the message it is handling.

Every handler is called as ``handler(params, ctx)``. ``ctx`` is a RequestContext (or the
subclass a higher layer passes to Session as ``context_factory``) holding:

  session        the Session the message came in on
  request_id     the request's id (int or str); None for a notification
  method         the method name
  params         the params as received (dict, list or None) -- the same object the handler
                 gets as its first argument
  meta           params["_meta"] when that is an object, else an empty dict
  progress       a ProgressReporter when params._meta.progressToken is a str or int and the
                 message is a request; None otherwise
  cancelled      True once the peer cancelled this request (notifications/cancelled); an
                 async handler is cancelled too, this flag serves code running elsewhere
                 (threads, callbacks) that checks it
  cancel_reason  the reason the peer gave, if any

and helpers that keep messages about this request on the same reply channel as its
response (for Streamable HTTP: the POST's SSE stream): ``notify``, ``request``,
``report_progress``; ``channel`` is that channel while the request runs.

The session tells the context what happens to its request through two methods (it never
touches the context's own fields): ``mark_cancelled(reason)`` when the peer cancels it and
``finish()`` once it is answered or dropped.

Extending it: the MCP layer subclasses RequestContext (adding __slots__ such as the
negotiated protocol version or the client's capabilities), fills them in its
``before_dispatch`` hook or in its own ``__init__``, and passes the subclass (or any
callable with the same signature) as ``context_factory``. The constructor signature is
``(session, request_id, method, params, channel)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

from mcpfast._core.codec import encode_notification
from mcpfast._core.dispatch import ContextCore, fill_context
from mcpfast.jsonrpc.contract import PeerSession, ReplyChannel
from mcpfast.jsonrpc.progress import reporter_for

if TYPE_CHECKING:
    from mcpfast.jsonrpc.batch import BatchReply
    from mcpfast.jsonrpc.runtime import TaskLike

__all__ = ["RequestContext"]


class RequestContext(ContextCore):
    """Context of one incoming request or notification (see the module docstring)."""

    # The fields of the module docstring are the compiled ContextCore's, filled by
    # fill_context (the session's request path reads them), and two more there:
    # ``shape_result``, applied to the handler's result before it is encoded (None: sent
    # as it is); ``_channel``, where messages about this request go while it runs (None:
    # the session's send).
    __slots__ = (
        # The session's bookkeeping of a request whose handler runs as a task, set when
        # the task is made (left unset for requests answered inline, which are most):
        # the task, the batch the reply joins (None: none), and whether it started (a
        # request cancelled before its task first runs never starts its handler).
        "_task",
        "_batch",
        "_started",
    )
    _task: TaskLike
    _batch: Optional[BatchReply]
    _started: bool

    def __init__(
        self,
        session: PeerSession,
        request_id: int | str | None,
        method: str,
        params: Any,
        channel: ReplyChannel | None = None,
    ) -> None:
        fill_context(self, session, request_id, method, params, channel)
        if "progressToken" in self.meta:
            self.progress = reporter_for(self.meta, request_id, session, channel)

    def mark_cancelled(self, reason: str | None) -> None:
        """The peer cancelled this request (the session calls this): sets ``cancelled`` and
        ``cancel_reason``."""
        self.cancelled = True
        self.cancel_reason = reason

    def finish(self) -> ReplyChannel | None:
        """The request is answered or dropped (the session calls this once): closes its
        progress reporter and detaches its reply channel, which it returns."""
        if self.progress is not None:
            self.progress.close()
        channel = self._channel
        self._channel = None
        return channel

    @property
    def is_notification(self) -> bool:
        """True when the message is a notification (no response will be sent)."""
        return self.request_id is None

    def report_progress(self, progress: float, total: float | None = None,
                        message: str | None = None) -> bool:
        """Report progress when the requester asked for it.

        Sends notifications/progress and returns True when the request carried a progress
        token; returns False and sends nothing otherwise. Same rules as
        ProgressReporter.report (strictly increasing values, ValueError otherwise).
        """
        reporter = self.progress
        if reporter is None:
            return False
        reporter.report(progress, total, message)
        return True

    def notify(self, method: str, params: Any = None) -> None:
        """Send a notification related to this request (on its reply channel while it runs)."""
        self.session.send_related(self._channel, encode_notification(method, params))

    async def request(
        self,
        method: str,
        params: Any = None,
        *,
        timeout: float | None = None,
        progress: Callable[..., Any] | None = None,
    ) -> Any:
        """Send a request to the peer on behalf of this request; same as Session.request.

        The request goes out on this request's reply channel while it runs.
        """
        return await self.session.request(
            method, params, timeout=timeout, progress=progress, origin=self
        )

    def __repr__(self) -> str:
        kind = "notification" if self.request_id is None else f"request id={self.request_id!r}"
        extra = " cancelled" if self.cancelled else ""
        return f"<{type(self).__name__} {kind} method={self.method!r}{extra}>"
