"""Fan-out of server events: list changes, resource updates, log broadcasts and the
status changes of 2026-07-28 tasks.

The server publishes an event once; a :class:`Publisher` delivers it to every subscriber
(a connection today; a 2026-07-28 listen stream later), and each subscriber decides
whether its client wants it (the capabilities it was given, its subscriptions, its log
level). :class:`LocalPublisher`, the default, delivers in-process and synchronously. A
publisher for several processes (Redis pub/sub, say) implements the same interface: it
sends the event to the other processes and delivers what arrives to its local subscribers.

Events are small immutable values with only JSON-able fields, so that they can cross a
process boundary as they are.

A subscriber may be *parked* (its ``parked`` attribute true: a recycled stateless HTTP
connection waiting for its next request). A publisher whose ``skips_parked`` is true --
:class:`LocalPublisher` and the publishers built on it -- neither delivers to parked
subscribers nor counts them in ``len()``, so a connection parks and wakes without being
detached and attached again (:meth:`ServerConnection.recycle
<mcpfast.server.connection.ServerConnection.recycle>`); with any other publisher it is
detached while parked.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional, Protocol, Union

__all__ = [
    "Event",
    "ListChanged",
    "LocalPublisher",
    "LogMessage",
    "Publisher",
    "ResourceUpdated",
    "Subscriber",
    "TaskStatus",
]


class ListChanged(NamedTuple):
    """The list of ``kind`` ("tools", "resources" or "prompts") changed."""

    kind: str


class ResourceUpdated(NamedTuple):
    """The resource ``uri`` changed (for the clients subscribed to it)."""

    uri: str


class LogMessage(NamedTuple):
    """A log message for every client whose level lets it through."""

    level: str
    data: Any
    logger: Optional[str] = None


class TaskStatus(NamedTuple):
    """A task of the 2026-07-28 tasks extension changed: ``task`` is its DetailedTask as
    ``tasks/get`` would answer it now (for the listen streams that follow its id)."""

    task: dict


Event = Union[ListChanged, ResourceUpdated, LogMessage, TaskStatus]


class Subscriber(Protocol):
    """Receives published events."""

    def deliver(self, event: Event) -> bool:
        """Send the event to the client when it wants it; True when something was sent."""
        ...


class Publisher(Protocol):
    """Delivers published events to the subscribers (module docstring)."""

    def attach(self, subscriber: Subscriber) -> None:
        """Start delivering to ``subscriber``."""
        ...

    def detach(self, subscriber: Subscriber) -> None:
        """Stop delivering to ``subscriber`` (no error when it was not attached)."""
        ...

    def publish(self, event: Event) -> int:
        """Deliver ``event``; returns how many local subscribers sent it to their client."""
        ...


class LocalPublisher:
    """In-process publisher: delivers to its subscribers at once, in attach order, except
    to the parked ones (module docstring)."""

    __slots__ = ("_subscribers",)
    # Parked subscribers are skipped here: they may stay attached while parked.
    skips_parked = True

    def __init__(self) -> None:
        self._subscribers: dict[Subscriber, None] = {}

    def attach(self, subscriber: Subscriber) -> None:
        self._subscribers[subscriber] = None

    def detach(self, subscriber: Subscriber) -> None:
        self._subscribers.pop(subscriber, None)

    def publish(self, event: Event) -> int:
        # A copy: delivering may close a connection, which detaches it.
        return sum(1 for subscriber in tuple(self._subscribers)
                   if not getattr(subscriber, "parked", False) and subscriber.deliver(event))

    def __len__(self) -> int:
        """The subscribers events are delivered to (the parked ones are not counted)."""
        return sum(1 for subscriber in self._subscribers if not getattr(subscriber, "parked", False))

    def __repr__(self) -> str:
        return f"<LocalPublisher subscribers={len(self)}>"
