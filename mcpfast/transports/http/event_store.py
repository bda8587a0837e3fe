"""Where SSE events are kept so that a client can resume a dropped stream.

Every event sent on a resumable stream gets an id from the store; a client that lost the
stream reconnects (GET) with ``Last-Event-ID`` and the server sends again what that stream
had after it -- only that stream's events, never another's.

:class:`MemoryEventStore`, the default, keeps the last ``max_events_per_stream`` events of
each stream and at most ``max_streams`` streams (the oldest is forgotten first), so its
memory is bounded whatever the traffic; a resume from an id it no longer holds replays
nothing. A store shared by several processes
(:class:`~mcpfast.scaleout.redis_event_store.RedisEventStore`) implements the same three
methods, its ``replay_after`` returning an awaitable; it may also have ``start()`` and
``close()`` coroutines (the endpoint calls them) and a ``written()`` coroutine (events reach
the client only after it: see :class:`~mcpfast.transports.http.sse_stream.SSEStream`).
"""

from __future__ import annotations

import itertools
from collections import OrderedDict, deque
from typing import Awaitable, Optional, Protocol, Union

__all__ = ["EventStore", "MemoryEventStore", "Replay"]

# What a resume replays: (stream id, [(event id, frame), ...]), None for an unknown id.
Replay = Optional[tuple[str, list[tuple[str, bytes]]]]


class EventStore(Protocol):
    """Stores the events of resumable streams (module docstring)."""

    def store(self, stream_id: str, frame: Optional[bytes]) -> str:
        """Keep one event (None: a priming event without data); return its id."""
        ...

    def replay_after(self, event_id: str) -> Union[Replay, Awaitable[Replay]]:
        """(stream id, [(event id, frame), ...] after event_id) or None when unknown (or
        an awaitable of it)."""
        ...

    def forget(self, stream_id: str) -> None:
        """Drop a stream's events (its session ended)."""
        ...


class MemoryEventStore:
    """A bounded in-process EventStore (module docstring)."""

    def __init__(self, max_events_per_stream: int = 1000, max_streams: int = 10_000) -> None:
        if max_events_per_stream < 1 or max_streams < 1:
            raise ValueError("MemoryEventStore bounds must be >= 1")
        self.max_events_per_stream = max_events_per_stream
        self.max_streams = max_streams
        self._streams: OrderedDict[str, deque[tuple[int, Optional[bytes]]]] = OrderedDict()
        self._counter = itertools.count(1)

    def store(self, stream_id: str, frame: Optional[bytes]) -> str:
        events = self._streams.get(stream_id)
        if events is None:
            events = self._streams[stream_id] = deque(maxlen=self.max_events_per_stream)
            while len(self._streams) > self.max_streams:
                self._streams.popitem(last=False)
        number = next(self._counter)
        events.append((number, frame))
        # The stream id rides in the event id, so a resume finds its stream directly.
        return f"{stream_id}.{number}"

    def replay_after(self, event_id: str) -> Optional[tuple[str, list[tuple[str, bytes]]]]:
        stream_id, _, number = event_id.rpartition(".")
        events = self._streams.get(stream_id)
        if events is None or not number.isdigit():
            return None
        after = int(number)
        return stream_id, [(f"{stream_id}.{n}", frame) for n, frame in events
                           if n > after and frame is not None]

    def forget(self, stream_id: str) -> None:
        self._streams.pop(stream_id, None)

    def __len__(self) -> int:
        return len(self._streams)
