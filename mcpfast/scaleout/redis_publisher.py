"""Fan-out across processes through Redis pub/sub: :class:`RedisPublisher`.

Give every process of a deployment (``mcpfast run ... --workers N --redis URL``, or several
hosts) a RedisPublisher on the same Redis and channel, and an event one process publishes --
a resource update, a list change, a log broadcast -- reaches the clients of every process:
their connections and their 2026-07-28 ``subscriptions/listen`` streams.

- ``publish(event)`` delivers to this process's subscribers at once (as
  :class:`~mcpfast.server.publisher.LocalPublisher` does) and sends the event to Redis in
  the background, in the order published; each process delivers what arrives from the
  others (its own events come back tagged with its id and are skipped).
- ``start()`` (the server calls it before serving) connects and subscribes:
  :class:`RedisUnavailable` names the URL when Redis cannot be reached, so a deployment
  fails at start instead of serving half its events.
- At run time a lost Redis costs only the cross-process part: local delivery goes on,
  sending fails with a warning (once per outage) and is tried again, in order, until Redis
  answers (:class:`~mcpfast.scaleout.redis_connection.ChannelWriter`: at most ``max_unsent``
  events wait); the subscription reconnects with backoff (at most a second apart), so
  events published while a process is not subscribed do not reach it. Each event carries
  its process's number for it: one sent twice (resent after a connection broke under a
  publish that Redis had carried out) is delivered once.

Needs the ``redis`` package (``pip install 'mcpfast[redis]'``: redis-py's asyncio client,
whose connection pool every send shares).
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from typing import Any, Optional

from mcpfast.scaleout.redis_connection import (
    MAX_UNSENT,
    ChannelSubscription,
    ChannelWriter,
    Outage,
    RedisUnavailable,
    Sequence,
    close_redis,
    redis_client,
    safe_url,
    subscribe,
)
from mcpfast.server.publisher import (
    Event,
    ListChanged,
    LocalPublisher,
    LogMessage,
    ResourceUpdated,
    Subscriber,
    TaskStatus,
)

__all__ = ["DEFAULT_CHANNEL", "RedisPublisher", "RedisUnavailable"]

_LOGGER = logging.getLogger("mcpfast.server")

DEFAULT_CHANNEL = "mcpfast:events"
_EVENTS: dict[str, Any] = {"ListChanged": ListChanged, "ResourceUpdated": ResourceUpdated,
                           "LogMessage": LogMessage, "TaskStatus": TaskStatus}
class RedisPublisher:
    """A publisher whose events reach every process on the same Redis channel (module
    docstring). ``url``: ``redis://[:password@]host:port/db``; ``channel``: the pub/sub
    channel (one per deployment); ``max_unsent``: events kept for resending while Redis
    is out of reach (beyond, the oldest are dropped, with a warning)."""

    def __init__(self, url: str, channel: str = DEFAULT_CHANNEL, *, max_unsent: int = MAX_UNSENT) -> None:
        self._redis = redis_client(url, "RedisPublisher")
        self.url = url
        self.channel = channel
        self.origin = secrets.token_hex(8)
        self._local = LocalPublisher()
        self._subscription: Optional[ChannelSubscription] = None
        self._writer = ChannelWriter(
            self._redis, channel, url, Outage("RedisPublisher"),
            failure="cannot send events to {url} ({error}); other processes miss them until Redis is back",
            recovery="sending events to {url} again", max_unsent=max_unsent)
        self._numbers = Sequence()
        # Events from other processes delivered here (for tests and monitoring).
        self.received = 0

    # Local delivery is a LocalPublisher's, which skips parked subscribers.
    skips_parked = True

    def __len__(self) -> int:
        return len(self._local)

    def __repr__(self) -> str:
        return f"<RedisPublisher {safe_url(self.url)} channel={self.channel!r} subscribers={len(self._local)}>"

    # -- the Publisher interface --------------------------------------------------------

    def attach(self, subscriber: Subscriber) -> None:
        self._local.attach(subscriber)

    def detach(self, subscriber: Subscriber) -> None:
        self._local.detach(subscriber)

    def publish(self, event: Event) -> int:
        delivered = self._local.publish(event)
        try:
            payload = json.dumps({"o": self.origin, "n": self._numbers.stamp(), "t": type(event).__name__,
                                  "v": list(event)},
                                 separators=(",", ":"))
        except (TypeError, ValueError) as exc:
            # A value JSON cannot carry (a tool's result holding a Python object, say):
            # the other processes cannot be told; this one was.
            _LOGGER.warning("RedisPublisher: %s not sent to other processes: %s",
                            type(event).__name__, exc)
            return delivered
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            _LOGGER.warning("RedisPublisher: %s published outside an event loop: delivered in this "
                            "process only", type(event).__name__)
            return delivered
        self._writer.send(payload)
        return delivered

    # -- lifecycle ----------------------------------------------------------------------

    async def start(self) -> None:
        """Connect and subscribe (RedisUnavailable when Redis cannot be reached)."""
        if self._subscription is not None:
            return
        self._subscription = await subscribe(self.url, self.channel, self._arrived, "RedisPublisher")

    async def close(self) -> None:
        """Stop listening and close the connections (what is being sent is sent first)."""
        subscription, self._subscription = self._subscription, None
        await close_redis(self._writer.finish(), subscription, self._redis)

    # -- Redis --------------------------------------------------------------------------

    def _arrived(self, data: Any) -> None:
        try:
            message = json.loads(data)
            origin = message["o"]
            if origin == self.origin or not self._numbers.fresh(origin, message.get("n")):
                return  # our own, delivered when published; or a repeat
            event = _EVENTS[message["t"]](*message["v"])
        except (ValueError, KeyError, TypeError) as exc:
            _LOGGER.warning("RedisPublisher: ignored a malformed message on %r: %s", self.channel, exc)
            return
        self.received += 1
        self._local.publish(event)
