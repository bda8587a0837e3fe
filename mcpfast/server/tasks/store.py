"""Where tasks are kept: the :class:`TaskStore` interface and the in-process store.

The server writes a task's :class:`~mcpfast.server.tasks.record.TaskRecord` to its store
when the task is created (before the client is told its id, so that a ``tasks/get``
sent at once finds it), at every status change, and when it ends; ``tasks/get``,
``tasks/result`` and ``tasks/list`` read it back. A store shared by several processes
(Redis, say) lets any of them answer for a task; the work itself runs in the process
that created it.

:class:`MemoryTaskStore` (the default) keeps records in a dict, bounded: expired tasks
(past their TTL) are dropped, and when ``max_tasks`` are kept the oldest ended task makes
room; with every kept task still running, creating one more fails with
:class:`TaskStoreFull` (-32603, "try later") instead of growing without end.
"""

from __future__ import annotations

import base64
import dataclasses
import time
from typing import Optional, Protocol

from mcpfast.jsonrpc.errors import INTERNAL_ERROR, InvalidParams, JSONRPCError
from mcpfast.server.tasks.record import TaskRecord

__all__ = ["DEFAULT_MAX_TASKS", "MemoryTaskStore", "TaskStore", "TaskStoreFull"]

DEFAULT_MAX_TASKS = 10_000


class TaskStoreFull(JSONRPCError):
    """The store holds as many running tasks as it may (-32603)."""

    def __init__(self, limit: int) -> None:
        super().__init__(INTERNAL_ERROR,
                         f"Internal error: the server already runs {limit} tasks; try later",
                         {"maxTasks": limit})


class TaskStore(Protocol):
    """Keeps task records (module docstring). Every method may be a network round trip."""

    async def put(self, record: TaskRecord) -> None:
        """Create or replace the record of ``record.task_id``."""

    async def get(self, task_id: str) -> Optional[TaskRecord]:
        """The record of a task (None: unknown or expired). A copy: change it, then put."""

    async def list(self, principal: Optional[str], cursor: Optional[str],
                   limit: int) -> tuple[list[TaskRecord], Optional[str]]:
        """A page of ``principal``'s tasks, oldest first, and the cursor of the next page
        (None: last page). An invalid cursor: InvalidParams (-32602)."""


def _copy(record: TaskRecord) -> TaskRecord:
    return dataclasses.replace(record, input_requests=dict(record.input_requests))


class MemoryTaskStore:
    """Task records in this process (module docstring)."""

    __slots__ = ("max_tasks", "_records", "_next_sweep")

    def __init__(self, max_tasks: int = DEFAULT_MAX_TASKS) -> None:
        if isinstance(max_tasks, bool) or not isinstance(max_tasks, int) or max_tasks < 1:
            raise ValueError(f"max_tasks must be an int >= 1, got {max_tasks!r}")
        self.max_tasks = max_tasks
        # Insertion order is creation order (a record is replaced in place).
        self._records: dict[str, TaskRecord] = {}
        self._next_sweep = 0.0

    def __len__(self) -> int:
        return len(self._records)

    def _sweep(self, now: float) -> None:
        if now < self._next_sweep:
            return
        self._next_sweep = now + 1.0
        expired = [task_id for task_id, record in self._records.items()
                   if (at := record.expires_at()) is not None and now > at]
        for task_id in expired:
            del self._records[task_id]

    async def put(self, record: TaskRecord) -> None:
        records = self._records
        if record.task_id not in records and len(records) >= self.max_tasks:
            self._next_sweep = 0.0
            self._sweep(time.time())
            if len(records) >= self.max_tasks:
                oldest_ended = next((task_id for task_id, kept in records.items() if kept.terminal), None)
                if oldest_ended is None:
                    raise TaskStoreFull(self.max_tasks)
                del records[oldest_ended]
        records[record.task_id] = _copy(record)

    async def get(self, task_id: str) -> Optional[TaskRecord]:
        now = time.time()
        self._sweep(now)
        record = self._records.get(task_id)
        if record is None:
            return None
        at = record.expires_at()
        if at is not None and now > at:
            del self._records[task_id]
            return None
        return _copy(record)

    async def list(self, principal: Optional[str], cursor: Optional[str],
                   limit: int) -> tuple[list[TaskRecord], Optional[str]]:
        self._sweep(time.time())
        mine = [record for record in self._records.values() if record.principal == principal]
        start = 0
        if cursor is not None:
            # The cursor names the last task of the previous page; it may have gone since.
            after = _decode_cursor(cursor)
            ids = [record.task_id for record in mine]
            if after not in ids:
                raise InvalidParams("Invalid params: the cursor is not valid (any more)",
                                    {"param": "cursor"})
            start = ids.index(after) + 1
        page = [_copy(record) for record in mine[start:start + limit]]
        more = start + limit < len(mine)
        return page, (_encode_cursor(page[-1].task_id) if more and page else None)


def _encode_cursor(task_id: str) -> str:
    return base64.urlsafe_b64encode(task_id.encode()).decode("ascii")


def _decode_cursor(cursor: object) -> str:
    if type(cursor) is not str:
        raise InvalidParams("Invalid params: the cursor must be a string", {"param": "cursor"})
    try:
        return base64.urlsafe_b64decode(cursor.encode("ascii")).decode()
    except (ValueError, UnicodeError):
        raise InvalidParams("Invalid params: the cursor is not valid", {"param": "cursor"}) from None
