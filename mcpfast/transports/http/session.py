"""A Streamable HTTP session (and, re-exported, the reply channel of one POST).

:class:`HTTPSession`: one MCP connection reached through HTTP requests that carry its
``Mcp-Session-Id``. Messages the server sends outside any request (list changes, log
broadcasts, its own requests) go to the session's GET stream; where the client opened
none they are dropped (the specification lets a server send them only on that stream).

:class:`PostReply`: the reply channel of one POST holding requests, compiled in
:mod:`mcpfast.transports.http.post_reply` (which says what decides its answer).
"""

from __future__ import annotations

import itertools
import logging
import secrets
from time import monotonic
from typing import TYPE_CHECKING, Any, Callable, Optional

from mcpfast.jsonrpc.contract import Connection
from mcpfast.transports.http.event_store import EventStore
from mcpfast.transports.http.post_reply import PostReply
from mcpfast.transports.http.sse_stream import DEFAULT_MAX_STREAM_BUFFER, SSEStream

if TYPE_CHECKING:
    from mcpfast.transports.http.shared_sessions import SharedSessions

__all__ = ["HTTPSession", "PostReply"]

_LOGGER = logging.getLogger("mcpfast.transports.http")


class HTTPSession:
    """One MCP connection behind a session id (module docstring)."""

    __slots__ = ("id", "connection", "get_stream", "streams", "last_active", "closed",
                 "store", "keepalive", "retry_ms", "prime", "max_stream_buffer", "principal", "shared",
                 "shared_touched", "get_taken_at", "stream_prefix", "_stream_ids")

    def __init__(self, session_id: str, factory: Callable[[Callable[[bytes], None]], Connection],
                 store: Optional[EventStore], keepalive: float, retry_ms: Optional[int]) -> None:
        self.id = session_id
        self.store = store
        self.keepalive = keepalive
        self.retry_ms = retry_ms
        # Priming events once the client speaks 2025-11-25 (set by the endpoint).
        self.prime = False
        # The most bytes of events a stream holds for a client that does not read (set by
        # the endpoint).
        self.max_stream_buffer = DEFAULT_MAX_STREAM_BUFFER
        # The subject of the access token that created the session (bearer auth), if any.
        self.principal: Optional[str] = None
        self.get_stream: Optional[SSEStream] = None
        # Live streams by id, for clients resuming with Last-Event-ID.
        self.streams: dict[str, SSEStream] = {}
        self.last_active = monotonic()
        self.closed = False
        # Set when the session is shared by several processes (SharedSessions): messages
        # for a GET stream held elsewhere go there; the record's last renewal.
        self.shared: Optional[SharedSessions] = None
        self.shared_touched = 0.0
        # When this copy took the GET stream (time.time(); the newest holder keeps it).
        self.get_taken_at = 0.0
        self._stream_ids = itertools.count(1)
        # Stream ids are unique across the copies of a shared session (its event store
        # may be shared too): a random part per copy (for a shared session, the process's
        # origin: SharedSessions.prepare).
        self.stream_prefix = f"{session_id}.{secrets.token_hex(3)}-"
        self.connection = factory(self.send_unrelated)
        # The session id, for what observes the connection (telemetry's mcp.session.id);
        # a connection with fixed attributes goes without.
        try:
            self.connection.mcp_session_id = session_id  # type: ignore[attr-defined]
        except AttributeError:
            pass

    def send_unrelated(self, frame: bytes) -> None:
        """A message outside any request: to the GET stream when there is one (held by
        another process for a shared session)."""
        stream = self.get_stream
        if stream is not None:
            stream.push(frame)
        elif self.shared is not None:
            self.shared.pass_unrelated(self, frame)
        else:
            _LOGGER.debug("session %s: no GET stream open; a server message was dropped", self.id)

    def new_stream(self) -> SSEStream:
        """A fresh stream for one POST's reply."""
        stream = SSEStream(f"{self.stream_prefix}{next(self._stream_ids)}", self.store,
                           self.keepalive, self.retry_ms, self.prime, self.max_stream_buffer)
        if self.shared is not None and self.store is not None:
            stream.relay = self.shared.relay_of(stream.stream_id)
        if self.store is not None:
            self.streams[stream.stream_id] = stream
        return stream

    def open_get_stream(self) -> SSEStream:
        """The session's GET stream, created on first use."""
        stream = self.get_stream
        if stream is None:
            stream = self.get_stream = SSEStream(f"{self.id}.get", self.store, self.keepalive,
                                                 self.retry_ms, self.prime,
                                                 self.max_stream_buffer)
            self.streams[stream.stream_id] = stream
        return stream

    def drop_get_stream(self) -> None:
        """Another process holds the GET stream now: this copy's ends (its stored events
        stay, they are the stream's history)."""
        stream = self.get_stream
        if stream is not None:
            self.get_stream = None
            self.streams.pop(stream.stream_id, None)
            stream.finish()

    def stream_done(self, stream: SSEStream) -> None:
        if stream is not self.get_stream:
            self.streams.pop(stream.stream_id, None)

    def touch(self) -> None:
        self.last_active = monotonic()

    def close(self) -> None:
        """End the session: its connection, its streams, its stored events. Idempotent."""
        if self.closed:
            return
        self.closed = True
        self.connection.close()
        for stream in list(self.streams.values()):
            stream.finish()
            if self.store is not None:
                self.store.forget(stream.stream_id)
        self.streams.clear()
        if self.get_stream is not None:
            self.get_stream.finish()

    def __repr__(self) -> str:
        return f"<HTTPSession {self.id[:8]}... streams={len(self.streams)} closed={self.closed}>"


def request_ids(message: Any) -> list[Any]:
    """The ids of the requests in a decoded message or batch (for cancellation)."""
    items = message if isinstance(message, list) else [message]
    return [item.id for item in items if getattr(item, "method", None) is not None
            and getattr(item, "id", None) is not None]
