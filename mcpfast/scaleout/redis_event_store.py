"""SSE events shared by the processes of a deployment: :class:`RedisEventStore`.

The event store of Streamable HTTP resumability (:mod:`mcpfast.transports.http.event_store`)
in Redis, so that a client whose stream dropped -- its process restarted or was killed --
resumes with ``Last-Event-ID`` on any process and gets every event it missed.

- ``store()`` answers at once with the event's id (``<stream id>.<process>-<number>``) and
  queues the write; one writer sends everything queued in one pipelined round trip. The
  stream writes an event to its client only after ``written()`` (the queue up to it is in
  Redis), so nothing a client was sent can be missing from Redis.
- Keys: ``<prefix>sse:<stream id>``, a list of ``<process>-<number> <frame>`` entries,
  the newest ``max_events_per_stream`` kept, expiring ``ttl`` seconds after its last write.
- ``replay_after(event id)`` reads the stream's list: the entries after the one with that
  id. An id the list no longer holds (trimmed, or never written because its process died
  between sending and writing -- which ``written()`` rules out for events a client saw)
  replays from the last entry of the same process with a lower number, else everything
  kept. An unknown stream: None.
- Redis out of reach: ``start()`` raises :class:`RedisUnavailable`; at run time writes fail
  with a warning (once per outage; the events stay unresumable), a resume fails with
  RedisUnavailable (the endpoint answers 503). A read or a write whose connection broke
  (Redis restarted) is run again on a fresh connection: an RPUSH is not idempotent, so a
  write may land twice, and a replay skips an entry whose tag it has given already.

Needs the ``redis`` package (``pip install 'mcpfast[redis]'``).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import secrets
from collections import deque
from functools import partial
from typing import Any, Optional

from mcpfast.scaleout.redis_connection import Outage, RedisUnavailable, command, redis_client, safe_url
from mcpfast.transports.http.event_store import Replay

__all__ = ["RedisEventStore"]

_LOGGER = logging.getLogger("mcpfast.server")
DEFAULT_PREFIX = "mcpfast:"
DEFAULT_TTL = 3600.0
# A priming event (no data) is kept as its id only: it marks a place to resume from.
_PRIMING = b""


class RedisEventStore:
    """An EventStore in Redis (module docstring). ``url``: ``redis://[:password@]host:port/db``;
    ``prefix``: of every key (one per deployment)."""

    def __init__(self, url: str, prefix: str = DEFAULT_PREFIX, *,
                 max_events_per_stream: int = 1000, ttl: float = DEFAULT_TTL) -> None:
        if max_events_per_stream < 1:
            raise ValueError(f"max_events_per_stream must be >= 1, got {max_events_per_stream!r}")
        if not ttl > 0:
            raise ValueError(f"ttl must be > 0, got {ttl!r}")
        self._redis: Any = redis_client(url, "RedisEventStore")
        self.url = url
        self.prefix = prefix
        self.max_events_per_stream = max_events_per_stream
        self.ttl = ttl
        self.origin = secrets.token_hex(4)
        self._numbers = itertools.count(1)
        # Writes not yet sent: (key, entry), or (key, None) for a delete.
        self._queue: deque[tuple[str, Optional[bytes]]] = deque()
        self._writer: Optional[asyncio.Task[None]] = None
        # Writes queued and writes done (sent, or failed), counted: written() waits for
        # the ones queued before it only.
        self._queued = 0
        self._done = 0
        self._batch_done: Optional[asyncio.Future[None]] = None
        self._outage = Outage("RedisEventStore")

    def __repr__(self) -> str:
        return f"<RedisEventStore {safe_url(self.url)} prefix={self.prefix!r}>"

    def _key(self, stream_id: str) -> str:
        return f"{self.prefix}sse:{stream_id}"

    # -- EventStore ----------------------------------------------------------------------

    def store(self, stream_id: str, frame: Optional[bytes]) -> str:
        tag = f"{self.origin}-{next(self._numbers)}"
        self._queue.append((self._key(stream_id), tag.encode("ascii") + b" " + (frame or _PRIMING)))
        self._write_soon()
        return f"{stream_id}.{tag}"

    def forget(self, stream_id: str) -> None:
        self._queue.append((self._key(stream_id), None))
        self._write_soon()

    async def replay_after(self, event_id: str) -> Replay:
        stream_id, _, tag = event_id.rpartition(".")
        if not stream_id:
            return None
        await self.written()
        entries = await command(lambda: self._redis.lrange(self._key(stream_id), 0, -1), self.url,
                                idempotent=True)
        if not entries:
            return None
        parsed = [entry.partition(b" ") for entry in entries]
        start = _resume_index([entry_tag.decode("ascii", "replace") for entry_tag, _, _ in parsed], tag)
        given: set[bytes] = set()
        events = []
        for entry_tag, _, frame in parsed[start:]:
            if frame and entry_tag not in given:  # (a write run twice: module docstring)
                given.add(entry_tag)
                events.append((f"{stream_id}.{entry_tag.decode('ascii', 'replace')}", frame))
        return stream_id, events

    # -- writing -----------------------------------------------------------------------

    def _write_soon(self) -> None:
        self._queued += 1
        if self._writer is None or self._writer.done():
            self._writer = asyncio.get_running_loop().create_task(self._write())

    async def written(self) -> None:
        """Until everything stored so far is in Redis (or failed to get there)."""
        target = self._queued
        while self._done < target:
            if self._writer is None or self._writer.done():
                return  # nothing is writing (closed, or the loop that wrote has ended)
            if self._batch_done is None:
                self._batch_done = asyncio.get_running_loop().create_future()
            await asyncio.shield(self._batch_done)

    def _batch_written(self, count: int) -> None:
        self._done += count
        waiters, self._batch_done = self._batch_done, None
        if waiters is not None and not waiters.done():
            waiters.set_result(None)

    async def _write(self) -> None:
        try:
            await self._write_queue()
        finally:
            # Whatever happened, nobody waits for writes that will not come.
            self._batch_written(self._queued - self._done)

    async def _write_batch(self, batch: list[tuple[str, Optional[bytes]]]) -> None:
        async with self._redis.pipeline(transaction=False) as pipe:
            touched: dict[str, None] = {}
            for key, entry in batch:
                if entry is None:
                    pipe.delete(key)
                    touched.pop(key, None)
                else:
                    pipe.rpush(key, entry)
                    touched[key] = None
            for key in touched:
                pipe.ltrim(key, -self.max_events_per_stream, -1)
                pipe.expire(key, max(1, int(self.ttl)))
            await pipe.execute()

    async def _write_queue(self) -> None:
        queue = self._queue
        while queue:
            batch = list(queue)
            queue.clear()
            try:
                # Run again when its connection broke: a replay skips the repeats.
                await command(partial(self._write_batch, batch), self.url, idempotent=True)
            except RedisUnavailable as exc:
                self._batch_written(len(batch))
                self._outage.failed(f"cannot store events ({exc}); "
                                    f"streams cannot be resumed from them")
                continue
            self._batch_written(len(batch))
            self._outage.worked(f"storing events in {safe_url(self.url)} again")

    # -- lifecycle ----------------------------------------------------------------------

    async def start(self) -> None:
        """Check that Redis answers (RedisUnavailable otherwise)."""
        await command(self._redis.ping, self.url, idempotent=True)

    async def close(self) -> None:
        """Write what is queued, then close the connections."""
        await self.written()
        await self._redis.aclose()


def _resume_index(tags: list[str], tag: str) -> int:
    """Where a resume from ``tag`` starts in a stream's entries (module docstring)."""
    try:
        return tags.index(tag) + 1
    except ValueError:
        pass
    origin, _, number = tag.rpartition("-")
    if not number.isdigit():
        return 0
    after = int(number)
    start = 0
    for index, entry_tag in enumerate(tags):
        entry_origin, _, entry_number = entry_tag.rpartition("-")
        if entry_origin == origin and entry_number.isdigit() and int(entry_number) < after:
            start = index + 1
    return start
