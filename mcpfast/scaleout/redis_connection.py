"""What the Redis components share: the client (redis-py's asyncio client, pooled), the
error of an unreachable Redis, a command run with one retry when its connection broke, the
one pub/sub connection of a process, which reconnects, and the ordered sending of a
component's messages to its channel, resent after an outage.

After Redis restarts, every pooled connection is dead: the pool replaces one that saw its
socket closed when it is next taken (redis-py's check, which its maintenance notifications
turn off -- so they are off here), and :func:`command` retries once, on a fresh connection,
a command whose connection broke under it (an idempotent one only: the caller says).

Needs the ``redis`` package (``pip install 'mcpfast[redis]'``)."""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections import deque
from typing import Any, Awaitable, Callable, Iterable, Optional

__all__ = ["ChannelSubscription", "ChannelWriter", "Outage", "RedisUnavailable", "Sequence", "command", "redis_client",
           "safe_url", "subscribe", "unreachable"]

_LOGGER = logging.getLogger("mcpfast.server")
# Seconds between reconnection attempts of a subscription (and resends of a writer's
# messages), growing to the last: at most a second, so that a process hears its channels
# again within a second of Redis answering.
BACKOFF = (0.05, 0.1, 0.25, 0.5, 1.0)
# A component's connections to Redis at most, and how long a command waits for a free one.
POOL_CONNECTIONS = 100
POOL_WAIT = 10.0
# Messages a ChannelWriter keeps for resending while Redis is out of reach; beyond, the
# oldest are dropped (one warning per outage).
MAX_UNSENT = 10_000


class RedisUnavailable(ConnectionError):
    """Redis could not be reached (the message names the URL, never its password)."""


class Outage:
    """The warnings of writes sent in the background: one when they start failing, one
    when they work again (not one per failed write)."""

    __slots__ = ("user", "failing")

    def __init__(self, user: str) -> None:
        self.user = user
        self.failing = False

    def failed(self, message: str) -> None:
        if not self.failing:
            _LOGGER.warning("%s: %s", self.user, message)
        self.failing = True

    def worked(self, message: str) -> None:
        if self.failing:
            _LOGGER.warning("%s: %s", self.user, message)
        self.failing = False


def safe_url(url: str) -> str:
    """``url`` without its password (for messages and logs)."""
    if "@" in url:
        scheme, _, rest = url.partition("://")
        return f"{scheme}://***@{rest.rpartition('@')[2]}"
    return url


def redis_client(url: str, user: str) -> Any:
    """An asyncio Redis client of ``url`` for ``user`` (a class name, for the errors).

    Its pool holds at most POOL_CONNECTIONS connections, and a command that finds them all
    busy waits for one (up to POOL_WAIT seconds) instead of failing: redis-py's default
    pool refuses the 101st concurrent command with "Too many connections", which a burst
    of requests (session lookups, task reads) reaches at once."""
    try:
        import redis.asyncio as redis_asyncio
    except ImportError:
        raise ImportError(f"{user} needs the redis package: pip install 'mcpfast[redis]'") from None
    if not isinstance(url, str) or not url.startswith(("redis://", "rediss://", "unix://")):
        raise ValueError(f"a Redis URL starts with redis://, rediss:// or unix://, got {url!r}")
    options: dict[str, Any] = {}
    try:
        from redis.maint_notifications import MaintNotificationsConfig
    except ImportError:  # redis-py before 7: no maintenance notifications to turn off
        pass
    else:
        # Enabled (redis-py's default with RESP3), they skip the pool's check that a
        # connection it hands out is not closed: after a restart every pooled connection
        # failed its next command.
        options["maint_notifications_config"] = MaintNotificationsConfig(enabled=False)
    pool = redis_asyncio.BlockingConnectionPool.from_url(url, max_connections=POOL_CONNECTIONS,
                                                         timeout=POOL_WAIT, **options)
    return redis_asyncio.Redis.from_pool(pool)


def unreachable(url: str, exc: BaseException) -> RedisUnavailable:
    """The error of a command that Redis at ``url`` did not answer."""
    return RedisUnavailable(f"cannot reach Redis at {safe_url(url)}: {exc}")


async def command(operation: Callable[[], Awaitable[Any]], url: str, *, idempotent: bool) -> Any:
    """``operation()``'s result; RedisUnavailable when Redis at ``url`` fails it.

    An ``idempotent`` operation (one that leaves the same state however often it runs: a
    read, a SET of a given value, a DEL) whose connection broke is run once more, on a
    fresh connection (the pool drops the broken one). Why: a connection can die in the
    instant between the pool's check and the command (Redis restarted), and the caller
    would fail although Redis answers. Others (a PUBLISH, an RPUSH, an INCR) are not: the
    first attempt may have reached Redis before the connection broke, and a second would
    deliver or add twice."""
    from redis.exceptions import ConnectionError as BrokenConnection
    from redis.exceptions import RedisError

    try:
        return await operation()
    except (BrokenConnection, OSError) as exc:
        if not idempotent:
            raise unreachable(url, exc) from None
    except RedisError as exc:
        raise unreachable(url, exc) from None
    try:
        return await operation()
    except (RedisError, OSError) as exc:
        raise unreachable(url, exc) from None


async def _subscribed(client: Any, channels: list[str], url: str) -> Any:
    """A pub/sub subscribed to ``channels`` (RedisUnavailable when Redis cannot be reached)."""
    from redis.exceptions import RedisError

    pubsub = client.pubsub(ignore_subscribe_messages=True)
    try:
        await pubsub.subscribe(*channels)
    except (RedisError, OSError) as exc:
        await pubsub.aclose()
        raise unreachable(url, exc) from None
    return pubsub


class ChannelSubscription:
    """One component's channel on its process's pub/sub connection (:func:`subscribe`);
    ``close()`` unsubscribes."""

    __slots__ = ("hub", "channel", "on_message", "user")

    def __init__(self, hub: _ChannelHub, channel: str, on_message: Callable[[Any], None],
                 user: str) -> None:
        self.hub = hub
        self.channel = channel
        self.on_message = on_message
        self.user = user

    async def close(self) -> None:
        await self.hub.remove(self)


async def subscribe(url: str, channel: str, on_message: Callable[[Any], None],
                    user: str) -> ChannelSubscription:
    """Hand every message of ``channel`` on the Redis at ``url`` to ``on_message(data)``
    until the returned subscription is closed (RedisUnavailable when Redis cannot be
    reached; ``user`` names the component in warnings).

    Every component of a process (and event loop) subscribing on one Redis shares one
    pub/sub connection: messages of all its channels arrive in the order Redis sent them.
    Why: a session's subscription change, published before an update, must reach every
    process before that update. A lost connection is made again (with backoff, a warning
    each time) and resubscribes every channel; messages sent meanwhile are lost."""
    loop = asyncio.get_running_loop()
    hubs = _HUBS.setdefault(loop, {})
    hub = hubs.get(url)
    if hub is None:
        hub = hubs[url] = _ChannelHub(url, hubs)
    subscription = ChannelSubscription(hub, channel, on_message, user)
    await hub.add(subscription)
    return subscription


class ChannelWriter:
    """A component's messages to one pub/sub channel, published in the order they were
    sent, by one task that sends what has queued up meanwhile as one pipeline (one
    connection, so Redis receives them in that order).

    Why: a publish per task, on the pool's connections, let Redis receive two messages
    sent one after the other in either order (a relayed stream's end overtaking its last
    event), and a burst of more messages than the pool has connections failed with "Too
    many connections".

    A batch that fails is sent again -- at once (a dead pooled connection is replaced),
    then with backoff until Redis answers -- in order, before anything sent after it; the
    messages of ``send_now`` are not (their caller is told, and decides). Up to
    ``max_unsent`` messages wait; beyond, the oldest are dropped with a warning. A batch can reach Redis
    although its connection broke before the answer, so a resent message may arrive
    twice: receivers skip repeats with :class:`Sequence`. One warning per outage through
    ``outage``, ``failure`` and then ``recovery`` (formats of ``url`` and ``error``)."""

    __slots__ = ("client", "channel", "url", "outage", "failure", "recovery", "max_unsent", "_queue",
                 "_sender", "_closing", "_dropped")

    def __init__(self, client: Any, channel: str, url: str, outage: Outage, failure: str,
                 recovery: str, max_unsent: int = MAX_UNSENT) -> None:
        if type(max_unsent) is not int or max_unsent < 1:
            raise ValueError(f"max_unsent must be an int >= 1, got {max_unsent!r}")
        self.max_unsent = max_unsent
        self.client = client
        self.channel = channel
        self.url = url
        self.outage = outage
        self.failure = failure
        self.recovery = recovery
        self._queue: deque[tuple[str, Optional[asyncio.Future[None]]]] = deque()
        self._sender: Optional[asyncio.Task[None]] = None
        self._closing = False
        self._dropped = 0

    def send(self, payload: str) -> None:
        """Queue ``payload`` (sent in the background, after everything sent before it)."""
        self._enqueue(payload, None)

    async def send_now(self, payload: str) -> None:
        """Queue ``payload`` and wait until Redis has it (RedisUnavailable if it could not
        be sent)."""
        sent: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._enqueue(payload, sent)
        await sent

    def pending(self) -> list[asyncio.Task[None]]:
        """The sending under way (for :func:`close_redis` to wait for)."""
        return [] if self._sender is None else [self._sender]

    def finish(self) -> list[asyncio.Task[None]]:
        """The sending under way, which now tries once more at most (a closing component
        must not wait for an absent Redis)."""
        self._closing = True
        return self.pending()

    def _enqueue(self, payload: str, sent: Optional[asyncio.Future[None]]) -> None:
        queue = self._queue
        queue.append((payload, sent))
        if len(queue) > self.max_unsent:
            _, lost = queue.popleft()
            if lost is not None and not lost.done():
                lost.set_exception(RedisUnavailable(f"cannot reach Redis at {safe_url(self.url)}: "
                                                    f"{self.max_unsent} messages wait already"))
            if not self._dropped:
                _LOGGER.warning("%s: more than %d messages wait for %s; dropping the oldest",
                                self.outage.user, self.max_unsent, safe_url(self.url))
            self._dropped += 1
        if self._sender is None:
            self._sender = asyncio.get_running_loop().create_task(self._send_queued())

    async def _publish(self, batch: list[tuple[str, Optional[asyncio.Future[None]]]]) -> None:
        async with self.client.pipeline(transaction=False) as pipe:
            for payload, _ in batch:
                pipe.publish(self.channel, payload)
            await pipe.execute()

    async def _send_queued(self) -> None:
        from redis.exceptions import RedisError

        batch: list[tuple[str, Optional[asyncio.Future[None]]]] = []
        failures = 0
        try:
            while self._queue:
                if failures > 1:
                    await asyncio.sleep(BACKOFF[min(failures - 2, len(BACKOFF) - 1)])
                batch = list(self._queue)
                self._queue.clear()
                try:
                    await self._publish(batch)
                except (RedisError, OSError) as exc:
                    failures += 1
                    url = safe_url(self.url)
                    self.outage.failed(self.failure.format(url=url, error=exc))
                    _settle(batch, unreachable(self.url, exc))
                    if not self._closing or failures < 2:
                        # Sent again before what came since (waiters were told already).
                        self._queue.extendleft(reversed([item for item in batch if item[1] is None]))
                    batch = []
                    continue
                except Exception as exc:  # not Redis's: said, and the batch's waiters told
                    _LOGGER.exception("%s: could not publish on %r", self.outage.user, self.channel)
                    _settle(batch, exc)
                    continue
                failures = 0
                if self._dropped:
                    _LOGGER.warning("%s: %d messages to %s were dropped while it was out of reach",
                                    self.outage.user, self._dropped, safe_url(self.url))
                    self._dropped = 0
                self.outage.worked(self.recovery.format(url=safe_url(self.url), error=None))
                _settle(batch, None)
        except asyncio.CancelledError:
            # The loop is going away: whoever waits for a message is told it was not sent.
            for _, sent in batch + list(self._queue):
                if sent is not None and not sent.done():
                    sent.cancel()
            self._queue.clear()
            raise
        finally:
            self._sender = None


class Sequence:
    """Message numbers of one sender, and the repeats a receiver skips: a ChannelWriter
    may deliver a resent message twice (its docstring). ``stamp`` gives the next number;
    ``fresh(origin, number)`` is False for a number of ``origin`` seen already (messages
    of one sender arrive in order: one writer, one subscription)."""

    __slots__ = ("_next", "_seen")

    def __init__(self) -> None:
        self._next = 0
        self._seen: dict[str, int] = {}

    def stamp(self) -> int:
        self._next += 1
        return self._next

    def fresh(self, origin: str, number: Any) -> bool:
        if type(number) is not int:
            return True  # a sender that does not number its messages
        if number <= self._seen.get(origin, 0):
            return False
        self._seen[origin] = number
        return True


def _settle(batch: list[tuple[str, Optional[asyncio.Future[None]]]], exc: Optional[BaseException]) -> None:
    """Tell whoever waits for a message of ``batch`` that it was sent (``exc`` None) or not."""
    for _, sent in batch:
        if sent is not None and not sent.done():
            if exc is None:
                sent.set_result(None)
            else:
                sent.set_exception(exc)


async def close_redis(pending: Iterable[asyncio.Future[Any]], subscription: Optional[ChannelSubscription],
                      client: Any) -> None:
    """A Redis component's close: its writes still ``pending`` finish (their errors are
    theirs), then its ``subscription`` (if any) ends, then its ``client`` closes."""
    pending = list(pending)
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)
    if subscription is not None:
        await subscription.close()
    await client.aclose()


# The pub/sub connections of this process: per event loop, per URL.
_HUBS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, _ChannelHub]] = weakref.WeakKeyDictionary()


class _ChannelHub:
    """One pub/sub connection to one Redis, shared by the channels of a process."""

    def __init__(self, url: str, registry: dict[str, _ChannelHub]) -> None:
        self.url = url
        self._registry = registry
        self._client: Any = None
        self._subscriptions: dict[str, list[ChannelSubscription]] = {}
        self._pubsub: Any = None
        self._listener: Optional[asyncio.Task[None]] = None

    async def add(self, subscription: ChannelSubscription) -> None:
        from redis.exceptions import RedisError

        channel = subscription.channel
        listeners = self._subscriptions.setdefault(channel, [])
        listeners.append(subscription)
        if len(listeners) > 1:
            return  # subscribed already
        try:
            if self._pubsub is None:
                if self._client is None:
                    self._client = redis_client(self.url, subscription.user)
                self._pubsub = await _subscribed(self._client, [channel], self.url)
                self._listener = asyncio.get_running_loop().create_task(self._listen())
            else:
                try:
                    await self._pubsub.subscribe(channel)
                except (RedisError, OSError) as exc:
                    raise unreachable(self.url, exc) from None
        except BaseException:
            await self.remove(subscription)
            raise

    async def remove(self, subscription: ChannelSubscription) -> None:
        from redis.exceptions import RedisError

        channel = subscription.channel
        listeners = self._subscriptions.get(channel, [])
        if subscription in listeners:
            listeners.remove(subscription)
        if listeners:
            return
        self._subscriptions.pop(channel, None)
        if self._subscriptions:
            if self._pubsub is not None:
                try:
                    await self._pubsub.unsubscribe(channel)
                except (RedisError, OSError):
                    pass  # resubscribing after a reconnection leaves it out
            return
        if self._registry.get(self.url) is self:
            del self._registry[self.url]
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.cancel()
            await asyncio.gather(listener, return_exceptions=True)
        pubsub, self._pubsub = self._pubsub, None
        if pubsub is not None:
            await pubsub.aclose()
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    def _dispatch(self, message: Any) -> None:
        channel = message.get("channel")
        if isinstance(channel, bytes):
            channel = channel.decode("utf-8", "replace")
        for subscription in tuple(self._subscriptions.get(channel, ())):
            try:
                subscription.on_message(message.get("data"))
            except Exception:  # one component's failure must not stop the others'
                _LOGGER.exception("%s: failed to handle a message on %r", subscription.user, channel)

    async def _listen(self) -> None:
        from redis.exceptions import RedisError

        attempt = 0
        while True:
            pubsub = self._pubsub
            try:
                async for message in pubsub.listen():
                    attempt = 0
                    if message.get("type") == "message":
                        self._dispatch(message)
            except asyncio.CancelledError:
                raise
            except (RedisError, OSError) as exc:
                _LOGGER.warning("lost the subscription to %s (%s); reconnecting", safe_url(self.url), exc)
            await pubsub.aclose()
            while True:
                await asyncio.sleep(BACKOFF[min(attempt, len(BACKOFF) - 1)])
                attempt += 1
                try:
                    self._pubsub = await _subscribed(self._client, list(self._subscriptions), self.url)
                    _LOGGER.warning("subscribed to %s again", safe_url(self.url))
                    break
                except RedisUnavailable:
                    continue
