"""RedisBuckets: the token buckets of :class:`~mcpfast.server.middleware.rate_limit.RateLimit`
in Redis, one per key for every process of a deployment.

Each take is one Lua script run atomically in Redis: the bucket's tokens refilled for the
time since its last use (by the Redis server's clock, so processes on hosts whose clocks
differ agree), one taken or the wait computed, the bucket written back with an expiry of
the time it takes to refill plus a second (an idle caller's bucket leaves Redis by itself;
Redis memory is bounded by the callers active in that window). Keys are ``prefix`` +
the key's JSON (``mcpfast:ratelimit:["anonymous","echo"]``).

While Redis cannot be reached the calls are let through (a limiter must not take the service
down with it), with one warning when that starts and one when Redis answers again.
"""

from __future__ import annotations

import json
from typing import Hashable

from mcpfast.scaleout.redis_connection import Outage, redis_client, safe_url

__all__ = ["RedisBuckets"]

# KEYS[1]: the bucket; ARGV: rate (tokens/s), burst. Returns the seconds to wait (0: taken).
_TAKE = """
local now = redis.call('TIME')
now = tonumber(now[1]) + tonumber(now[2]) / 1000000
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local state = redis.call('HMGET', KEYS[1], 't', 's')
local tokens = tonumber(state[1]) or burst
local stamp = tonumber(state[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - stamp) * rate)
local wait = 0
if tokens >= 1 then tokens = tokens - 1 else wait = (1 - tokens) / rate end
redis.call('HSET', KEYS[1], 't', tostring(tokens), 's', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) / rate * 1000) + 1000)
return tostring(wait)
"""


class RedisBuckets:
    """Token buckets in the Redis at ``url`` (module docstring)."""

    def __init__(self, url: str, *, prefix: str = "mcpfast:ratelimit:") -> None:
        self.url = url
        self.prefix = prefix
        self._client = redis_client(url, "RedisBuckets")
        self._script = self._client.register_script(_TAKE)
        self._outage = Outage("RedisBuckets")

    def redis_key(self, key: Hashable) -> str:
        """The Redis key of a bucket."""
        return self.prefix + json.dumps(list(key) if isinstance(key, tuple) else key, default=str)

    async def take(self, key: Hashable, rate: float, burst: float) -> float:
        """Take a token of ``key``'s bucket: 0.0, or the seconds to wait for one."""
        from redis.exceptions import RedisError

        try:
            wait = float(await self._script(keys=[self.redis_key(key)], args=[rate, burst]))
        except (RedisError, OSError) as exc:
            self._outage.failed(f"cannot reach Redis at {safe_url(self.url)}, calls are not "
                                f"limited meanwhile: {exc}")
            return 0.0
        self._outage.worked(f"Redis at {safe_url(self.url)} answers again, calls are limited")
        return wait

    async def aclose(self) -> None:
        """Close the connections to Redis."""
        await self._client.aclose()
