"""A bound on the bytes of incomplete lines held by all connections of one server.

Each connection's framer holds at most one incomplete line (up to max_frame_size), so the
memory a server pins for peers that never finish their lines grows with the number of
connections. An :class:`InputBudget` keeps their sum under a limit: when it is exceeded,
the connection holding the largest incomplete line is dropped (logged; its conn.close()
gets InputBudgetExceeded). Dropping, rather than pausing reads, frees the memory at once
and never lets a few stalled peers hold the server's memory for the others: a peer
honestly sending a large frame is the one most likely to be dropped only when the
server as a whole is over budget.
"""

from __future__ import annotations

from typing import Dict, Protocol

from mcpfast.transports.option_checks import check_positive_int

__all__ = ["BudgetHolder", "InputBudget"]


class BudgetHolder(Protocol):
    """What holds bytes under a budget (a FrameProtocol): told when it is dropped."""

    def drop_for_budget(self, total: int, limit: int) -> None:
        """Drop the incomplete line held (``total`` bytes were held, above ``limit``)."""


class InputBudget:
    """Tracks the incomplete-line bytes of a group of FrameProtocols; drops the largest
    holder while their sum is above ``limit``."""

    __slots__ = ("limit", "_held", "_total")

    def __init__(self, limit: int) -> None:
        self.limit = check_positive_int("max_buffered", limit)
        self._held: Dict[BudgetHolder, int] = {}
        self._total = 0

    @property
    def total(self) -> int:
        """Bytes of incomplete lines held by the connections right now."""
        return self._total

    def update(self, protocol: BudgetHolder, held: int) -> None:
        """protocol now holds ``held`` bytes of an incomplete line; enforce the limit."""
        self._total += held - self._held.pop(protocol, 0)
        if held:
            self._held[protocol] = held
        while self._total > self.limit and self._held:
            victim = max(self._held, key=self._held.__getitem__)
            total = self._total
            self.release(victim)
            victim.drop_for_budget(total, self.limit)

    def release(self, protocol: BudgetHolder) -> None:
        """protocol holds nothing any more (closed, or dropped)."""
        self._total -= self._held.pop(protocol, 0)
