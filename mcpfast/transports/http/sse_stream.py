"""One SSE stream of a Streamable HTTP session: the events of a POST's reply or of the
session's GET stream, queued for the HTTP response that writes them.

A stream outlives the HTTP response writing it when the session is resumable (it has an
event store): every event is stored first, and a client that lost the response reconnects
with ``Last-Event-ID``; a new response then replays what it missed and takes the stream
over (:meth:`attach`). While no response is attached, events are only stored. Without a
store there is nothing to resume: events that find no response are dropped. A store that
writes in the background (shared by several processes) has a ``written()`` coroutine: an
event is written to the client only after it.

Backpressure: the response writes the queue only as fast as its client reads (the HTTP
connection waits below the transport's high-water mark), and ``push`` cannot wait (a
session's send is synchronous). So the queue is bounded: once more than ``max_buffer``
bytes wait for a client that does not read, the stream overflows -- the queue is dropped,
a warning is logged, and the response ends as a broken stream (the connection closes, so
the client cannot take it for a complete one); a resumable stream's events stay in the
store for a resume. A client that reads nothing at all is cut by its connection's timeout.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from typing import AsyncIterator, Callable, Optional

from mcpfast.transports.http.event_store import EventStore
from mcpfast.transports.http.sse import comment, message_event, priming_event

__all__ = ["DEFAULT_MAX_STREAM_BUFFER", "SSEStream", "StreamOverflow", "check_stream_buffer"]

_LOGGER = logging.getLogger("mcpfast.transports.http")

# Bytes of events a stream holds for a client that does not read them, at most.
DEFAULT_MAX_STREAM_BUFFER = 8 * 1024 * 1024


def check_stream_buffer(size: int) -> None:
    """ValueError unless ``size`` is a valid max_stream_buffer (an int >= 1)."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"max_stream_buffer must be an int >= 1, got {size!r}")


class StreamOverflow(Exception):
    """A stream's client fell more than ``max_buffer`` bytes behind (module docstring)."""


class SSEStream:
    """Events of one stream (module docstring). ``push`` and ``finish`` never block."""

    __slots__ = ("stream_id", "store", "keepalive", "retry_ms", "prime", "finished",
                 "attached", "relay", "max_buffer", "overflowed", "_priming", "_queue",
                 "_queued", "_waiter")

    def __init__(self, stream_id: str, store: Optional[EventStore], keepalive: float,
                 retry_ms: Optional[int] = None, prime: bool = False,
                 max_buffer: int = DEFAULT_MAX_STREAM_BUFFER) -> None:
        self.stream_id = stream_id
        self.store = store
        self.keepalive = keepalive
        self.retry_ms = retry_ms
        self.prime = prime and store is not None
        self.finished = False
        self.attached = False
        # Where the events of this stream go while no response is attached here, besides
        # the store: ``relay(event_id, frame)``, ``relay(None, None)`` at its end (a stream
        # of a shared session, which the client may resume in another process).
        self.relay: Optional[Callable[[Optional[str], Optional[bytes]], None]] = None
        # The priming event, stored when the first response attaches, written first.
        self._priming: Optional[bytes] = None
        self._queue: deque[bytes] = deque()
        # Bytes in _queue; the response ends with StreamOverflow once it passed max_buffer.
        self._queued = 0
        self.max_buffer = max_buffer
        self.overflowed = False
        self._waiter: Optional[asyncio.Future[None]] = None

    def push(self, frame: bytes) -> None:
        """Send one JSON-RPC message on the stream."""
        if self.finished:
            return
        event_id = self.store.store(self.stream_id, frame) if self.store is not None else None
        if self.attached:
            self._queue_event(message_event(frame, event_id))
        elif self.relay is not None:
            self.relay(event_id, frame)

    def push_stored(self, event_id: Optional[str], frame: bytes) -> None:
        """Send an event another process stored (a stream relayed from there)."""
        if not self.finished and self.attached:
            self._queue_event(message_event(frame, event_id))

    def _queue_event(self, event: bytes) -> None:
        if self.overflowed:
            return
        self._queued += len(event)
        if self._queued > self.max_buffer:
            _LOGGER.warning("SSE stream %s ended: its client is over %d bytes behind "
                            "(max_stream_buffer); the connection closes", self.stream_id,
                            self.max_buffer)
            self.overflowed = True
            self._queue.clear()
            self._queued = 0
        else:
            self._queue.append(event)
        self._wake()

    def finish(self) -> None:
        """No more events: the attached response ends after the queued ones."""
        if not self.finished and not self.attached and self.relay is not None:
            self.relay(None, None)
        self.finished = True
        self._wake()

    def attach(self, resumed: bool = False) -> None:
        """A response starts writing this stream (ValueError when one already does). A
        response of a resumable stream of 2025-11-25 that is not a resume starts with a
        priming event, stored now: before any message pushed from here on, so that a
        resume from it misses none."""
        if self.attached:
            raise ValueError(f"stream {self.stream_id} already has a response")
        self.attached = True
        if self.prime and not resumed and self.store is not None:
            self._priming = priming_event(self.store.store(self.stream_id, None), self.retry_ms)

    def detach(self) -> None:
        """The writing response went away; later events are only stored."""
        self.attached = False
        self._queue.clear()
        self._queued = 0
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def events(self, replay: tuple[bytes, ...] = ()) -> AsyncIterator[bytes]:
        """The chunks an attached response writes: the priming event (see :meth:`attach`),
        ``replay``, then live events until :meth:`finish`; a keep-alive comment whenever
        ``keepalive`` seconds pass without one."""
        # A store shared with other processes writes in the background: an event goes to
        # the client only once stored, so that a resume elsewhere finds everything sent.
        written = getattr(self.store, "written", None)
        priming, self._priming = self._priming, None
        if priming is not None:
            if written is not None:
                await written()
            yield priming
        for chunk in replay:
            yield chunk
        queue = self._queue
        loop = asyncio.get_running_loop()
        while self.attached:
            if self.overflowed:
                raise StreamOverflow(f"the client of stream {self.stream_id} fell over "
                                     f"{self.max_buffer} bytes behind")
            if queue:
                if written is not None:
                    await written()
                    if not self.attached:
                        return
                # Everything queued in one write.
                chunk = b"".join(queue)
                queue.clear()
                self._queued = 0
                yield chunk
                continue
            if self.finished:
                return
            self._waiter = waiter = loop.create_future()
            try:
                await asyncio.wait_for(asyncio.shield(waiter), self.keepalive)
            except asyncio.TimeoutError:
                yield comment("keep-alive")
            finally:
                self._waiter = None
