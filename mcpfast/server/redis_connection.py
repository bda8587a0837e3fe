"""What the Redis components share: the client (redis-py's asyncio client, pooled), the
error of an unreachable Redis, the one pub/sub connection of a process, which reconnects,
and the ordered sending of a component's messages to its channel.

Needs the ``redis`` package (``pip install 'mcpfast[redis]'``)."""

from __future__ import annotations

import asyncio
import logging
import weakref
from typing import Any, Callable, Iterable, Optional

__all__ = ["ChannelSubscription", "ChannelWriter", "Outage", "RedisUnavailable", "redis_client", "safe_url",
           "subscribe"]

_LOGGER = logging.getLogger("mcpfast.server")
# Seconds between reconnection attempts of a subscription, growing to the last.
BACKOFF = (0.1, 0.5, 1.0, 2.0, 5.0)
# A component's connections to Redis at most, and how long a command waits for a free one.
POOL_CONNECTIONS = 100
POOL_WAIT = 10.0


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
    pool = redis_asyncio.BlockingConnectionPool.from_url(url, max_connections=POOL_CONNECTIONS,
                                                         timeout=POOL_WAIT)
    return redis_asyncio.Redis.from_pool(pool)


async def _subscribed(client: Any, channels: list[str], url: str) -> Any:
    """A pub/sub subscribed to ``channels`` (RedisUnavailable when Redis cannot be reached)."""
    from redis.exceptions import RedisError

    pubsub = client.pubsub(ignore_subscribe_messages=True)
    try:
        await pubsub.subscribe(*channels)
    except (RedisError, OSError) as exc:
        await pubsub.aclose()
        raise RedisUnavailable(f"cannot reach Redis at {safe_url(url)}: {exc}") from None
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
    many connections". A batch that fails is lost (other processes miss it, as they miss
    messages while their subscription reconnects): one warning per outage through
    ``outage``, ``failure`` and then ``recovery`` (formats of ``url`` and ``error``)."""

    __slots__ = ("client", "channel", "url", "outage", "failure", "recovery", "_queue", "_sender")

    def __init__(self, client: Any, channel: str, url: str, outage: Outage, failure: str,
                 recovery: str) -> None:
        self.client = client
        self.channel = channel
        self.url = url
        self.outage = outage
        self.failure = failure
        self.recovery = recovery
        self._queue: list[tuple[str, Optional[asyncio.Future[None]]]] = []
        self._sender: Optional[asyncio.Task[None]] = None

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

    def _enqueue(self, payload: str, sent: Optional[asyncio.Future[None]]) -> None:
        self._queue.append((payload, sent))
        if self._sender is None:
            self._sender = asyncio.get_running_loop().create_task(self._send_queued())

    async def _send_queued(self) -> None:
        from redis.exceptions import RedisError

        batch: list[tuple[str, Optional[asyncio.Future[None]]]] = []
        try:
            while self._queue:
                batch, self._queue = self._queue, []
                try:
                    async with self.client.pipeline(transaction=False) as pipe:
                        for payload, _ in batch:
                            pipe.publish(self.channel, payload)
                        await pipe.execute()
                except (RedisError, OSError) as exc:
                    url = safe_url(self.url)
                    self.outage.failed(self.failure.format(url=url, error=exc))
                    _settle(batch, RedisUnavailable(f"cannot reach Redis at {url}: {exc}"))
                    continue
                except Exception as exc:  # not Redis's: said, and the batch's waiters told
                    _LOGGER.exception("%s: could not publish on %r", self.outage.user, self.channel)
                    _settle(batch, exc)
                    continue
                self.outage.worked(self.recovery.format(url=safe_url(self.url), error=None))
                _settle(batch, None)
        except asyncio.CancelledError:
            # The loop is going away: whoever waits for a message is told it was not sent.
            for _, sent in batch + self._queue:
                if sent is not None and not sent.done():
                    sent.cancel()
            self._queue = []
            raise
        finally:
            self._sender = None


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
                    raise RedisUnavailable(f"cannot reach Redis at {safe_url(self.url)}: {exc}") from None
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
