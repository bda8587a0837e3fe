"""The transport contract: what a transport may call and what it must provide.

A transport only moves bytes. It knows a *connection* (made by a *connection factory*
from the transport's ``send``) and, for transports that answer per message (Streamable
HTTP), a *reply channel* per fed frame. A :class:`~mcpfast.jsonrpc.session.Session`
satisfies :class:`Connection`; the MCP server's ``Server.connect`` and the client's
``Client.bind`` are :class:`ConnectionFactory` functions.

``send(frame: bytes) -> None`` (:data:`Send`)
    Given by the transport. Called with every outgoing frame that is not a reply routed
    to a channel: responses when no channel was given, the session's own requests and
    notifications. A frame is one compact JSON text (bytes, no trailing newline): the
    transport adds its framing (a newline for stdio/TCP, an SSE event, an HTTP body).
    Frames are handed over in the order they must be written; ``send`` must not block and
    is expected to queue. An exception raised by ``send`` while ``feed`` runs propagates
    out of ``feed``; one raised while a task completes is logged.

``connection.feed(frame, channel=None) -> bool``
    ``frame``: bytes, bytearray, memoryview (zero-copy views from LineFramer are fine) or
    str holding one JSON-RPC message or batch. Returns True when the frame owes a reply
    (it held a request, or it was invalid and gets an error) and False when it does not
    (only notifications and/or responses). Replies to requests with sync handlers are
    sent before ``feed`` returns; replies from async handlers when their task finishes.
    Raises ConnectionClosed after ``close``.

``connection.feed_message(message, channel=None) -> bool`` (optional)
    The same for a message the transport decoded already (``decode(frame)``: a message
    or a batch; the Streamable HTTP endpoint reads the body before it chooses a
    connection). A transport uses it when the connection has it, else ``feed``.

``connection.feed_request(request, channel=None)`` (optional)
    For a decoded message the transport knows is a ``Request``: what ``feed_message``
    does with it (it always owes a reply), one call less per request. A transport may
    use it for requests when the connection has it, else ``feed_message``.

``connection.feed_error(exc, channel=None) -> bool``
    For frames that never reached the decoder (an oversize line: ``FrameTooLarge``); the
    connection answers what can be answered and goes on. Returns True (the error is
    answered).

``connection.close(exc=None)``
    The transport is gone (``exc``: why, None for an orderly end). Idempotent.

``channel`` (:class:`ReplyChannel`, optional)
    ``channel.respond(frame: bytes | None)``: the one reply to the fed frame -- a
    response, an error, or a batch's array. Called exactly once when ``feed`` returned
    True (possibly before ``feed`` returns); None when nothing is left to send because
    the request was cancelled by the peer or the session closed. Never called when
    ``feed`` returned False.
    ``channel.send(frame: bytes)``: a message related to a request in the fed frame,
    sent while it runs and before its reply: its progress notifications and whatever its
    handler sends through ``ctx.notify`` / ``ctx.request``. After ``respond`` the channel
    is not used again.
    Without a channel, replies and related messages all go to ``send``.
    A channel may also be a :class:`RelatedChannel`: its ``related_request_id`` names the
    connection's own request on whose reply stream the fed frame arrived (a Streamable
    HTTP client: the POST's SSE stream), so that a request from the peer can be tied to
    the request it belongs to (the handler reads it from ``ctx.channel``).

All of these are called from one thread (the one running the event loop, if any).
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Protocol, Union, runtime_checkable

__all__ = ["Connection", "ConnectionFactory", "Frame", "PeerSession", "RelatedChannel", "ReplyChannel", "Send",
           "related_request_id"]

# What feed() accepts: one JSON text as bytes (or a zero-copy view of them) or str.
Frame = Union[bytes, bytearray, memoryview, str]

# The transport's writer: one compact JSON frame, no framing.
Send = Callable[[bytes], None]


@runtime_checkable
class ReplyChannel(Protocol):
    """Where the replies to one fed frame go (see the module docstring)."""

    def respond(self, frame: Optional[bytes]) -> None: ...

    def send(self, frame: bytes) -> None: ...


@runtime_checkable
class RelatedChannel(ReplyChannel, Protocol):
    """A reply channel of frames that arrived in reply to one of the connection's own
    requests (see the module docstring)."""

    related_request_id: Any


def related_request_id(channel: Optional[ReplyChannel]) -> Any:
    """The id of the connection's own request a frame fed on ``channel`` belongs to (None:
    the transport does not tie it to one)."""
    return channel.related_request_id if isinstance(channel, RelatedChannel) else None


class PeerSession(Protocol):
    """What a request's context and progress reporter use of the session the request
    came in on (:class:`~mcpfast.jsonrpc.session.Session` is one)."""

    @property
    def closed(self) -> bool: ...

    def send_related(self, channel: Optional[ReplyChannel], frame: bytes) -> None: ...

    async def request(self, method: str, params: Any = None, *, timeout: Optional[float] = None,
                      progress: Optional[Callable[..., Any]] = None, origin: Any = None) -> Any: ...


@runtime_checkable
class Connection(Protocol):
    """What a transport drives (see the module docstring)."""

    def feed(self, frame: Frame, channel: Optional[ReplyChannel] = None) -> bool: ...

    def feed_error(self, exc: BaseException, channel: Optional[ReplyChannel] = None) -> bool: ...

    def close(self, exc: Optional[BaseException] = None) -> None: ...


@runtime_checkable
class ConnectionFactory(Protocol):
    """Makes the connection for one transport connection: ``factory(send)``."""

    def __call__(self, send: Send) -> Connection: ...
