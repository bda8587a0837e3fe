"""RateLimit: a token bucket per caller and tool, answered with RATE_LIMITED (-32010).

Each key gets a bucket holding at most ``burst`` tokens, refilled at ``rate`` tokens per
second; a call takes one token, and a call finding none is refused with -32010 (the error
catalogue's "Rate limit exceeded", severity warning: it may succeed later) and data
``{"retryAfter": <seconds until a token is there>, "limit": {"rate", "burst"}}``, before
its handler runs. The error is a :class:`~mcpfast.jsonrpc.errors.RateLimited`: the
Streamable HTTP endpoint answers a POST whose only request it refused with 429 and
``Retry-After`` (whole seconds, rounded up); elsewhere the JSON-RPC error is the answer.

The key is ``(caller, tool)``: the caller is the authenticated subject (``ctx.auth``)
when the transport authenticates, else ``"address:<ip>"`` with the client's address when
the transport knows it (``ctx.peer_address``: TCP, WebSocket, HTTP), else "anonymous" -- every such
caller then shares one bucket per tool, so give ``key=`` (``key(ctx) -> hashable``) to
tell callers apart another way; the tool is the tools/call's name when it names a registered tool,
else "?" (names from the peer never make buckets of their own). ``methods``: which requests
are limited ("tools/call" unless given; every request: ``methods=None``, keyed by method
instead of tool). At most ``max_keys`` buckets are kept (10,000): beyond, the bucket used
least recently is dropped (a dropped bucket comes back full). ``clock``: seconds
(``time.monotonic`` unless given; a test passes a fake one). The buckets live in this
process unless ``store=`` holds them elsewhere: an object whose ``async take(key, rate,
burst) -> float`` does what :meth:`RateLimit.retry_after` does, such as
:class:`~mcpfast.scaleout.redis_rate_limit.RedisBuckets` (one bucket per key for
every process of a deployment; ``mcpfast run --rate-limit ... --redis URL``).
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable, Hashable, Iterable, Optional

from mcpfast.jsonrpc.errors import RateLimited
from mcpfast.protocol import methods as mcp_methods
from mcpfast.server.middleware.pipeline import CallNext, Middleware

__all__ = ["DEFAULT_MAX_KEYS", "RateLimit", "TokenBucket"]

DEFAULT_MAX_KEYS = 10_000


class TokenBucket:
    """``burst`` tokens at most, ``rate`` more per second; ``take(now)`` takes one and
    answers 0.0, or answers the seconds until one is there (taking nothing)."""

    __slots__ = ("rate", "burst", "tokens", "stamp")

    def __init__(self, rate: float, burst: float, now: float) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.stamp = now

    def take(self, now: float) -> float:
        tokens = min(self.burst, self.tokens + max(0.0, now - self.stamp) * self.rate)
        self.stamp = now
        if tokens >= 1.0:
            self.tokens = tokens - 1.0
            return 0.0
        self.tokens = tokens
        return (1.0 - tokens) / self.rate


def _positive(label: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 \
            or not math.isfinite(value):
        raise ValueError(f"{label} must be a finite number > 0, got {value!r}")
    return float(value)


class RateLimit(Middleware):
    """A token bucket per caller and tool (module docstring)."""

    eager = True

    def __init__(self, rate: float, burst: Optional[float] = None, *,
                 key: Optional[Callable[[Any], Hashable]] = None,
                 methods: Optional[Iterable[str]] = (mcp_methods.TOOLS_CALL,),
                 max_keys: int = DEFAULT_MAX_KEYS,
                 clock: Callable[[], float] = time.monotonic,
                 store: Any = None) -> None:
        self.rate = _positive("rate", rate)
        self.burst = _positive("burst", burst if burst is not None else max(1.0, self.rate))
        if self.burst < 1:
            raise ValueError(f"burst must be at least 1 (one call), got {burst!r}")
        if isinstance(max_keys, bool) or not isinstance(max_keys, int) or max_keys < 1:
            raise ValueError(f"max_keys must be an int >= 1, got {max_keys!r}")
        self.methods = None if methods is None else frozenset(methods)
        self.key = key if key is not None else self.default_key
        self.max_keys = max_keys
        self.clock = clock
        if store is not None and not callable(getattr(store, "take", None)):
            raise TypeError(f"store must have an async take(key, rate, burst), not {type(store).__name__}")
        self.store = store
        self._buckets: dict[Hashable, TokenBucket] = {}

    @classmethod
    def from_flag(cls, text: str, store: Any = None) -> RateLimit:
        """The limiter of ``mcpfast run --rate-limit RATE[:BURST]`` (ValueError, saying
        why, for anything else)."""
        rate, _, burst = text.partition(":")
        try:
            return cls(float(rate), float(burst) if burst else None, store=store)
        except ValueError as exc:
            raise ValueError(f"--rate-limit takes RATE[:BURST] (calls per second, bucket size), "
                             f"got {text!r}: {exc}") from None

    def default_key(self, ctx: Any) -> Hashable:
        """(the subject, else "address:<client address>", else "anonymous"; the
        registered tool's name or "?", or the method for requests other than tools/call)."""
        auth = ctx.auth
        if auth is not None:
            caller = auth.subject
        else:
            address = ctx.peer_address
            caller = f"address:{address}" if address is not None else "anonymous"
        if ctx.method != mcp_methods.TOOLS_CALL:
            return caller, ctx.method
        params = ctx.params
        name = params.get("name") if type(params) is dict else None
        # The core's own dict of tools (ctx.server.tools is a read-only view of it, made per read).
        return caller, name if type(name) is str and name in ctx.core.tools_catalog.items else "?"

    def retry_after(self, key: Hashable) -> float:
        """Take a token of ``key``'s bucket: 0.0, or the seconds to wait for one."""
        now = self.clock()
        buckets = self._buckets
        bucket = buckets.pop(key, None)
        if bucket is None:
            if len(buckets) >= self.max_keys:
                # The least recently used: the first in the dict (each use moves a bucket last).
                del buckets[next(iter(buckets))]
            bucket = TokenBucket(self.rate, self.burst, now)
        buckets[key] = bucket
        return bucket.take(now)

    async def on_request(self, ctx: Any, call_next: CallNext) -> Any:
        if self.methods is None or ctx.method in self.methods:
            key = self.key(ctx)
            store = self.store
            wait = self.retry_after(key) if store is None else await store.take(key, self.rate, self.burst)
            if wait > 0.0:
                raise RateLimited(wait, limit={"rate": self.rate, "burst": self.burst})
        return await call_next(ctx)
