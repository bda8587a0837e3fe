"""A task's state, and how each protocol era shows it on the wire.

A task is a request (today only ``tools/call``) that the server answers with a handle
instead of its result, and whose result the client fetches later. :class:`TaskRecord` is
what a :class:`~mcpfast.server.tasks.store.TaskStore` keeps of one: its status, the
result or error once it ends, the questions it waits on, and its timestamps. The record
is plain data (``to_json`` / ``from_json``) so that a store may keep it outside the
process.

Two wire forms exist:

- the 2026-07-28 tasks extension (``io.modelcontextprotocol/tasks``, SEP-2663):
  ``ttlMs`` / ``pollIntervalMs``, a flat CreateTaskResult (``resultType: "task"``), and
  ``tasks/get`` answering a DetailedTask with the result, error or ``inputRequests``
  inlined (:meth:`TaskRecord.detailed`);
- the 2025-11-25 experimental tasks: ``ttl`` / ``pollInterval``, the Task wrapped in
  ``{"task": ...}`` by CreateTaskResult, the result fetched with ``tasks/result``
  (:meth:`TaskRecord.experimental`).

Statuses: ``working`` and ``input_required`` go on; ``completed``, ``failed`` and
``cancelled`` are terminal, and a terminal task never changes again.
"""

from __future__ import annotations

import dataclasses
import time
from datetime import datetime, timezone
from typing import Any, Optional

__all__ = ["CANCELLED", "COMPLETED", "EXPERIMENTAL", "EXTENSION", "FAILED", "INPUT_REQUIRED",
           "TERMINAL", "WORKING", "TaskRecord", "iso8601"]

WORKING = "working"
INPUT_REQUIRED = "input_required"
COMPLETED = "completed"
FAILED = "failed"
CANCELLED = "cancelled"
TERMINAL = frozenset({COMPLETED, FAILED, CANCELLED})

# The two wire forms (module docstring).
EXTENSION = "extension"
EXPERIMENTAL = "experimental"


def iso8601(timestamp: float) -> str:
    """A POSIX time as an ISO 8601 UTC timestamp with milliseconds (``...Z``)."""
    moment = datetime.fromtimestamp(timestamp, timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclasses.dataclass
class TaskRecord:
    """What is known of one task (module docstring).

    ``principal`` binds it to whoever created it (the authenticated subject, or for the
    2025-11-25 form without authentication the connection): a request from anyone else
    sees no such task. ``ttl_ms`` None: kept until the store needs the room.
    ``input_requests``: the questions it waits on, by key (``input_required``).
    """

    task_id: str
    method: str
    form: str
    principal: Optional[str]
    ttl_ms: Optional[int]
    poll_interval_ms: Optional[int]
    status: str = WORKING
    status_message: Optional[str] = None
    created_at: float = dataclasses.field(default_factory=time.time)
    updated_at: float = 0.0
    result: Optional[dict[str, Any]] = None
    error: Optional[dict[str, Any]] = None
    input_requests: dict[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.updated_at:
            self.updated_at = self.created_at

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    def expires_at(self) -> Optional[float]:
        """When the store may forget the task (None: no TTL)."""
        return None if self.ttl_ms is None else self.created_at + self.ttl_ms / 1000.0

    def touch(self, status: Optional[str] = None, now: Optional[float] = None) -> None:
        """Record a change (and a new status)."""
        if status is not None:
            self.status = status
        self.updated_at = time.time() if now is None else now

    # -- wire forms --------------------------------------------------------------------

    def _task(self, ttl_key: str, poll_key: str) -> dict[str, Any]:
        # The two forms differ only in the names of the TTL and polling fields.
        task: dict[str, Any] = {"taskId": self.task_id, "status": self.status}
        if self.status_message is not None:
            task["statusMessage"] = self.status_message
        task["createdAt"] = iso8601(self.created_at)
        task["lastUpdatedAt"] = iso8601(self.updated_at)
        task[ttl_key] = self.ttl_ms
        if self.poll_interval_ms is not None:
            task[poll_key] = self.poll_interval_ms
        return task

    def extension(self) -> dict[str, Any]:
        """The Task of the 2026-07-28 extension (CreateTaskResult is it plus
        ``resultType: "task"``)."""
        return self._task("ttlMs", "pollIntervalMs")

    def detailed(self) -> dict[str, Any]:
        """The DetailedTask of the 2026-07-28 extension (``tasks/get``): the Task with
        ``inputRequests``, ``result`` or ``error`` inlined by status."""
        task = self.extension()
        if self.status == INPUT_REQUIRED:
            task["inputRequests"] = dict(self.input_requests)
        elif self.status == COMPLETED and self.result is not None:
            task["result"] = self.result
        elif self.status == FAILED and self.error is not None:
            task["error"] = self.error
        return task

    def experimental(self) -> dict[str, Any]:
        """The Task of 2025-11-25 (``tasks/get``, ``tasks/cancel``, ``tasks/list``)."""
        return self._task("ttl", "pollInterval")

    # -- storage -----------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """The record as JSON-able data (for stores outside the process)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TaskRecord:
        fields = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in fields})
