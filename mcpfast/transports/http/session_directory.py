"""Where the processes of one deployment find each other's Streamable HTTP sessions.

A session of the handshake era (2025-03-26 .. 2025-11-25) is made by one process, but a load
balancer sends the client's next requests wherever it likes. With a
:class:`SessionDirectory` shared by every process (in Redis:
:class:`~mcpfast.scaleout.redis_session_directory.RedisSessionDirectory`), a
process that receives a request for a session it has never seen looks the session up
and serves it (see :mod:`~mcpfast.transports.http.shared_sessions` for what is shared
and how).

The directory does two things: it keeps one record per session (a flat ``str -> str``
mapping, expiring when the session has been idle everywhere for its TTL), and it carries
small messages between the processes (JSON objects; a process never receives its own).

:class:`MemoryDirectoryHub` joins several endpoints of one process through one in-memory
directory each (:meth:`MemoryDirectoryHub.member`): the sans-Redis stand-in the endpoint
tests use to play several processes.
"""

from __future__ import annotations

import asyncio
import secrets
from time import monotonic
from typing import Any, Callable, Optional, Protocol

__all__ = ["DirectoryMessage", "MemoryDirectoryHub", "MemorySessionDirectory", "SessionDirectory"]

DirectoryMessage = dict[str, Any]


class SessionDirectory(Protocol):
    """Session records and messages shared by the processes of a deployment."""

    #: This process's id (in messages, so that a process skips its own).
    origin: str

    async def start(self, on_message: Callable[[DirectoryMessage], None]) -> None:
        """Connect; ``on_message`` then gets every message another process broadcasts.
        Raises ConnectionError (with the reason) when the shared store is out of reach."""
        ...

    async def create(self, session_id: str, record: dict[str, str], ttl: float) -> None:
        """Keep a new session's record for ``ttl`` seconds (renewed by :meth:`touch`)."""
        ...

    async def lookup(self, session_id: str) -> Optional[dict[str, str]]:
        """A session's record, None when it is unknown, ended or expired."""
        ...

    async def update(self, session_id: str, field: str, value: Optional[str]) -> None:
        """Set (or, with None, remove) one field of an existing record."""
        ...

    def touch(self, session_id: str, ttl: float) -> None:
        """The session is in use: its record lives ``ttl`` more seconds (background)."""
        ...

    def remove(self, session_id: str) -> None:
        """The session ended: forget its record (background)."""
        ...

    def broadcast(self, message: DirectoryMessage) -> None:
        """Send a message to every other process (background; JSON-able values)."""
        ...

    async def publish(self, message: DirectoryMessage) -> None:
        """Send a message to every other process now: once this returns, the message is
        ahead of anything published later by any process (ConnectionError when out of
        reach)."""
        ...

    async def alive(self, origin: str) -> bool:
        """Whether the process with that origin still runs (its directory is started and
        not closed; a killed process is taken for dead within seconds)."""
        ...

    async def close(self) -> None:
        """Stop receiving and close the connections."""
        ...


class MemoryDirectoryHub:
    """Records and messages shared by the in-memory directories made by :meth:`member`."""

    def __init__(self) -> None:
        self.records: dict[str, tuple[dict[str, str], float]] = {}
        self.members: list[MemorySessionDirectory] = []

    def member(self) -> MemorySessionDirectory:
        """A directory for one more endpoint ("process") of this hub."""
        member = MemorySessionDirectory(self)
        self.members.append(member)
        return member


class MemorySessionDirectory:
    """One endpoint's view of a :class:`MemoryDirectoryHub` (module docstring). Messages
    are delivered on the next turn of the event loop, as they would arrive from Redis."""

    def __init__(self, hub: MemoryDirectoryHub) -> None:
        self.hub = hub
        self.origin = secrets.token_hex(4)
        self._on_message: Optional[Callable[[DirectoryMessage], None]] = None

    async def start(self, on_message: Callable[[DirectoryMessage], None]) -> None:
        self._on_message = on_message

    async def create(self, session_id: str, record: dict[str, str], ttl: float) -> None:
        self.hub.records[session_id] = (dict(record), monotonic() + ttl)

    async def lookup(self, session_id: str) -> Optional[dict[str, str]]:
        found = self.hub.records.get(session_id)
        if found is None or found[1] < monotonic():
            return None
        return dict(found[0])

    async def update(self, session_id: str, field: str, value: Optional[str]) -> None:
        found = self.hub.records.get(session_id)
        if found is not None:
            if value is None:
                found[0].pop(field, None)
            else:
                found[0][field] = value

    def touch(self, session_id: str, ttl: float) -> None:
        found = self.hub.records.get(session_id)
        if found is not None:
            self.hub.records[session_id] = (found[0], monotonic() + ttl)

    def remove(self, session_id: str) -> None:
        self.hub.records.pop(session_id, None)

    def broadcast(self, message: DirectoryMessage) -> None:
        loop = asyncio.get_running_loop()
        for member in self.hub.members:
            if member is not self and member._on_message is not None:
                loop.call_soon(member._on_message, dict(message))

    async def publish(self, message: DirectoryMessage) -> None:
        self.broadcast(message)

    async def alive(self, origin: str) -> bool:
        return any(member.origin == origin for member in self.hub.members)

    async def close(self) -> None:
        self._on_message = None
        if self in self.hub.members:
            self.hub.members.remove(self)
