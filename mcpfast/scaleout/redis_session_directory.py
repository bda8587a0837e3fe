"""Streamable HTTP sessions shared by the processes of a deployment:
:class:`RedisSessionDirectory`.

The :class:`~mcpfast.transports.http.session_directory.SessionDirectory` of ``mcpfast run
--transport http --redis URL`` (or ``session_directory=`` of the HTTP endpoint): what
:mod:`~mcpfast.transports.http.shared_sessions` shares, kept in Redis.

- Records: a hash ``<prefix>session:<id>`` per session, expiring ``ttl`` seconds after it
  was last touched. ``create`` and ``update`` wait for Redis (a client may send its next
  request to another process at once); ``touch`` and ``remove`` are sent in the background.
- Messages: JSON on the pub/sub channel ``<prefix>sessions``, tagged with the sender's
  origin and number so that it skips its own and repeats, received on the process's one pub/sub connection
  (:func:`~mcpfast.scaleout.redis_connection.subscribe`: in order with the fan-out's events);
  ``publish`` waits for Redis, ``broadcast`` does not; both keep the order they were
  called in (:class:`~mcpfast.scaleout.redis_connection.ChannelWriter`: a ``broadcast``
  that failed is sent again once Redis answers). The subscription reconnects with
  backoff when Redis drops it (messages sent meanwhile are lost: a client's answer then
  times out on the server, as one lost on the network would).
- Liveness: ``<prefix>alive:<origin>`` is set every 2 s with a 6 s expiry while a process
  runs (``alive``: whether another process's stream can still go on).
- Redis out of reach: ``start`` raises :class:`RedisUnavailable`; at run time ``create``
  and ``lookup`` raise it (the endpoint answers 503), background writes fail with one
  warning per outage. Every command here is idempotent, so one whose connection broke
  (Redis restarted) is run again on a fresh one
  (:func:`~mcpfast.scaleout.redis_connection.command`).

Needs the ``redis`` package (``pip install 'mcpfast[redis]'``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from typing import Any, Awaitable, Callable, Optional

from mcpfast.scaleout.redis_connection import (
    MAX_UNSENT,
    ChannelSubscription,
    ChannelWriter,
    Outage,
    RedisUnavailable,
    Sequence,
    close_redis,
    command,
    redis_client,
    safe_url,
    subscribe,
)
from mcpfast.transports.http.session_directory import DirectoryMessage

__all__ = ["RedisSessionDirectory"]

_LOGGER = logging.getLogger("mcpfast.server")
DEFAULT_PREFIX = "mcpfast:"
# A process says it lives every HEARTBEAT_EVERY seconds; HEARTBEAT_TTL seconds of silence
# and it is taken for dead.
HEARTBEAT_EVERY = 2.0
HEARTBEAT_TTL = 6
# The warnings of an outage of background writes (one when they fail, one when they work).
_SHARED_AGAIN = "sessions are shared again once it is back"
_ANSWERS_AGAIN = "{url} answers again"


class RedisSessionDirectory:
    """A SessionDirectory in Redis (module docstring). ``url``:
    ``redis://[:password@]host:port/db``; ``prefix``: of every key and of the channel;
    ``max_unsent``: broadcasts kept for resending while Redis is out of reach."""

    def __init__(self, url: str, prefix: str = DEFAULT_PREFIX, *, max_unsent: int = MAX_UNSENT) -> None:
        self._redis: Any = redis_client(url, "RedisSessionDirectory")
        self.url = url
        self.prefix = prefix
        self.channel = f"{prefix}sessions"
        self.origin = secrets.token_hex(8)
        self._on_message: Optional[Callable[[DirectoryMessage], None]] = None
        self._subscription: Optional[ChannelSubscription] = None
        self._heartbeat: Optional[asyncio.Task[None]] = None
        self._background: set[asyncio.Task[Any]] = set()
        self._outage = Outage("RedisSessionDirectory")
        self._numbers = Sequence()
        self._writer = ChannelWriter(
            self._redis, self.channel, url, self._outage,
            failure="cannot reach Redis at {url}: {error}; " + _SHARED_AGAIN, recovery=_ANSWERS_AGAIN,
            max_unsent=max_unsent)

    def __repr__(self) -> str:
        return f"<RedisSessionDirectory {safe_url(self.url)} prefix={self.prefix!r}>"

    def _key(self, session_id: str) -> str:
        return f"{self.prefix}session:{session_id}"

    # -- SessionDirectory --------------------------------------------------------------

    async def start(self, on_message: Callable[[DirectoryMessage], None]) -> None:
        if self._subscription is not None:
            return
        self._on_message = on_message
        self._subscription = await subscribe(self.url, self.channel, self._arrived, "RedisSessionDirectory")
        await self._call(self._beat)
        self._heartbeat = asyncio.get_running_loop().create_task(self._beating())

    async def create(self, session_id: str, record: dict[str, str], ttl: float) -> None:
        key = self._key(session_id)

        async def write() -> None:
            async with self._redis.pipeline(transaction=True) as pipe:
                pipe.hset(key, mapping=record)
                pipe.expire(key, _seconds(ttl))
                await pipe.execute()

        await self._call(write)

    async def lookup(self, session_id: str) -> Optional[dict[str, str]]:
        found = await self._call(lambda: self._redis.hgetall(self._key(session_id)))
        if not found:
            return None
        return {field.decode("utf-8"): value.decode("utf-8") for field, value in found.items()}

    async def update(self, session_id: str, field: str, value: Optional[str]) -> None:
        key = self._key(session_id)
        if value is None:
            await self._call(lambda: self._redis.hdel(key, field))
        else:
            # Only an existing record (an ended session must not come back as a stub).
            await self._call(lambda: self._redis.eval(_SET_IF_EXISTS, 1, key, field, value))

    def touch(self, session_id: str, ttl: float) -> None:
        key = self._key(session_id)
        self._in_background(lambda: self._redis.expire(key, _seconds(ttl)))

    def remove(self, session_id: str) -> None:
        key = self._key(session_id)
        self._in_background(lambda: self._redis.delete(key))

    def broadcast(self, message: DirectoryMessage) -> None:
        self._writer.send(self._payload(message))

    async def publish(self, message: DirectoryMessage) -> None:
        await self._writer.send_now(self._payload(message))

    def _payload(self, message: DirectoryMessage) -> str:
        return json.dumps({**message, "o": self.origin, "#": self._numbers.stamp()}, separators=(",", ":"))

    async def alive(self, origin: str) -> bool:
        return bool(await self._call(lambda: self._redis.exists(self._alive_key(origin))))

    def _alive_key(self, origin: str) -> str:
        return f"{self.prefix}alive:{origin}"

    async def _beat(self) -> None:
        await self._redis.set(self._alive_key(self.origin), "1", ex=HEARTBEAT_TTL)

    async def _beating(self) -> None:
        while True:
            await asyncio.sleep(HEARTBEAT_EVERY)
            try:
                await self._call(self._beat)
            except RedisUnavailable as exc:
                self._outage.failed(f"{exc}; {_SHARED_AGAIN}")

    async def close(self) -> None:
        heartbeat, self._heartbeat = self._heartbeat, None
        if heartbeat is not None:
            heartbeat.cancel()
            await asyncio.gather(heartbeat, return_exceptions=True)
            self._in_background(lambda: self._redis.delete(self._alive_key(self.origin)))
        subscription, self._subscription = self._subscription, None
        await close_redis([*self._background, *self._writer.finish()], subscription, self._redis)

    # -- Redis -------------------------------------------------------------------------

    async def _call(self, operation: Callable[[], Awaitable[Any]]) -> Any:
        # Every command of the directory is idempotent (reads, HSET/EXPIRE of given values,
        # HDEL, DEL, the HSET-if-exists script): run again when its connection broke.
        return await command(operation, self.url, idempotent=True)

    def _in_background(self, operation: Callable[[], Awaitable[Any]]) -> None:
        task = asyncio.get_running_loop().create_task(self._quietly(operation))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _quietly(self, operation: Callable[[], Awaitable[Any]]) -> None:
        try:
            await self._call(operation)
        except RedisUnavailable as exc:
            self._outage.failed(f"{exc}; {_SHARED_AGAIN}")
            return
        self._outage.worked(_ANSWERS_AGAIN.format(url=safe_url(self.url)))

    def _arrived(self, data: Any) -> None:
        try:
            message = json.loads(data)
            origin = message.get("o")
            if origin == self.origin or not self._numbers.fresh(origin, message.pop("#", None)):
                return  # our own, or a repeat (ChannelWriter)
        except (ValueError, AttributeError) as exc:
            _LOGGER.warning("RedisSessionDirectory: ignored a malformed message on %r: %s", self.channel, exc)
            return
        if self._on_message is not None:
            self._on_message(message)


# HSET only when the record still exists.
_SET_IF_EXISTS = ("if redis.call('EXISTS', KEYS[1]) == 1 then "
                  "return redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end return 0")


def _seconds(ttl: float) -> int:
    return max(1, int(ttl + 0.999))
