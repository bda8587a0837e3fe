"""What RedisPublisher and RedisTaskStore share: the client (redis-py's asyncio client,
pooled), the error of an unreachable Redis, and a pub/sub subscription that reconnects.

Needs the ``redis`` package (``pip install 'mcpfast[redis]'``)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable

__all__ = ["RedisUnavailable", "listen_forever", "redis_client", "safe_url", "subscribe"]

_LOGGER = logging.getLogger("mcpfast.server")
# Seconds between reconnection attempts of a subscription, growing to the last.
BACKOFF = (0.1, 0.5, 1.0, 2.0, 5.0)


class RedisUnavailable(ConnectionError):
    """Redis could not be reached (the message names the URL, never its password)."""


def safe_url(url: str) -> str:
    """``url`` without its password (for messages and logs)."""
    if "@" in url:
        scheme, _, rest = url.partition("://")
        return f"{scheme}://***@{rest.rpartition('@')[2]}"
    return url


def redis_client(url: str, user: str) -> Any:
    """An asyncio Redis client of ``url`` for ``user`` (a class name, for the errors)."""
    try:
        import redis.asyncio as redis_asyncio
    except ImportError:
        raise ImportError(f"{user} needs the redis package: pip install 'mcpfast[redis]'") from None
    if not isinstance(url, str) or not url.startswith(("redis://", "rediss://", "unix://")):
        raise ValueError(f"a Redis URL starts with redis://, rediss:// or unix://, got {url!r}")
    return redis_asyncio.Redis.from_url(url)


async def subscribe(client: Any, channel: str, url: str) -> Any:
    """A pub/sub subscribed to ``channel`` (RedisUnavailable when Redis cannot be reached)."""
    from redis.exceptions import RedisError

    pubsub = client.pubsub(ignore_subscribe_messages=True)
    try:
        await pubsub.subscribe(channel)
    except (RedisError, OSError) as exc:
        await pubsub.aclose()
        raise RedisUnavailable(f"cannot reach Redis at {safe_url(url)}: {exc}") from None
    return pubsub


async def listen_forever(client: Any, channel: str, url: str, pubsub: Any,
                         on_message: Callable[[Any], None], user: str) -> None:
    """Hand every message of ``channel`` to ``on_message`` until cancelled, resubscribing
    (with backoff, a warning each time) when the connection to Redis is lost."""
    from redis.exceptions import RedisError

    attempt = 0
    while True:
        try:
            async for message in pubsub.listen():
                attempt = 0
                if message.get("type") == "message":
                    on_message(message.get("data"))
        except asyncio.CancelledError:
            await pubsub.aclose()
            raise
        except (RedisError, OSError) as exc:
            _LOGGER.warning("%s: lost the subscription to %s (%s); reconnecting", user, safe_url(url), exc)
        await pubsub.aclose()
        while True:
            await asyncio.sleep(BACKOFF[min(attempt, len(BACKOFF) - 1)])
            attempt += 1
            try:
                pubsub = await subscribe(client, channel, url)
                _LOGGER.warning("%s: subscribed to %s again", user, safe_url(url))
                break
            except RedisUnavailable:
                continue
