"""SessionTable: the live 2025-era sessions of one Streamable HTTP endpoint, by id.

The endpoint owns one and makes its sessions through it; what else needs the sessions
(:class:`~mcpfast.transports.http.shared_sessions.SharedSessions`, which copies sessions
from a directory shared by several processes and ends them when another process does)
uses the same public methods, not the endpoint.
"""

from __future__ import annotations

from typing import Callable, Iterator, Optional

from mcpfast.transports.http.session import HTTPSession

__all__ = ["SessionTable"]


class SessionTable:
    """The sessions of one endpoint (module docstring).

    ``make(session_id)`` builds a session with the endpoint's settings; ``admitted()`` is
    called after each session enters the table (the endpoint schedules its idle reaper).
    ``idle_timeout`` (seconds, None: never) and ``keepalive_interval`` are the endpoint's,
    for those that keep sessions elsewhere for as long."""

    __slots__ = ("sessions", "idle_timeout", "keepalive_interval", "_make", "_admitted")

    def __init__(self, make: Callable[[str], HTTPSession], admitted: Callable[[], None], *,
                 idle_timeout: Optional[float], keepalive_interval: float) -> None:
        self.sessions: dict[str, HTTPSession] = {}
        self.idle_timeout = idle_timeout
        self.keepalive_interval = keepalive_interval
        self._make = make
        self._admitted = admitted

    def __len__(self) -> int:
        return len(self.sessions)

    def __iter__(self) -> Iterator[HTTPSession]:
        return iter(list(self.sessions.values()))

    def get(self, session_id: str) -> Optional[HTTPSession]:
        """The live session with this id, or None."""
        return self.sessions.get(session_id)

    def new(self, session_id: str) -> HTTPSession:
        """A new session with this id, not in the table yet (see :meth:`admit`)."""
        return self._make(session_id)

    def admit(self, session: HTTPSession) -> None:
        """Put a session made by :meth:`new` in the table: requests may use it now."""
        self.sessions[session.id] = session
        self._admitted()

    def end(self, session: HTTPSession) -> None:
        """Take a session out of the table and close it."""
        self.sessions.pop(session.id, None)
        session.close()

    def end_all(self) -> None:
        """End every session (the endpoint closes)."""
        sessions = list(self.sessions.values())
        self.sessions.clear()
        for session in sessions:
            session.close()
