"""ForwardedTasks: the upstream tasks (2025-11-25 task-augmented ``tools/call``) the
gateway's downstream clients made, and whose they are.

Every downstream client reaches an upstream through the gateway's one shared session, so
to the upstream all tasks belong to the gateway; this table keeps, per task id, the
upstream and the downstream connection that made it, and answers ``tasks/get``,
``tasks/result``, ``tasks/cancel`` and ``tasks/list`` for that connection only (another
client's task id is unknown to it, as a server answers). Bounded: past ``capacity`` the
oldest entries are forgotten (their tasks have long expired upstream).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Optional

__all__ = ["DEFAULT_TASK_CAPACITY", "ForwardedTasks"]

DEFAULT_TASK_CAPACITY = 10_000


class ForwardedTasks:
    """Task id -> (upstream, owning connection) (module docstring)."""

    def __init__(self, capacity: int = DEFAULT_TASK_CAPACITY) -> None:
        self.capacity = capacity
        self._tasks: OrderedDict[str, tuple[Any, Any]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._tasks)

    def record(self, result: Any, upstream: Any, owner: Any) -> None:
        """Remember the task of a CreateTaskResult ``result`` (anything else: nothing)."""
        task = result.get("task") if isinstance(result, dict) else None
        task_id = task.get("taskId") if isinstance(task, dict) else None
        if not isinstance(task_id, str) or owner is None:
            return
        self._tasks[task_id] = (upstream, owner)
        while len(self._tasks) > self.capacity:
            self._tasks.popitem(last=False)

    def upstream_of(self, task_id: Any, owner: Any) -> Optional[Any]:
        """The upstream of ``task_id`` when ``owner`` made it, else None."""
        entry = self._tasks.get(task_id) if isinstance(task_id, str) else None
        if entry is None or entry[1] is not owner:
            return None
        return entry[0]

    def owner_of(self, task_id: Any) -> Optional[Any]:
        """The connection that made ``task_id`` (None when unknown)."""
        entry = self._tasks.get(task_id) if isinstance(task_id, str) else None
        return None if entry is None else entry[1]

    def owned(self, owner: Any, upstream: Any) -> set[str]:
        """The ids of ``owner``'s tasks on ``upstream``."""
        return {task_id for task_id, (up, who) in self._tasks.items() if up is upstream and who is owner}

    def forget_owner(self, owner: Any) -> None:
        """Drop the tasks of a connection that closed."""
        for task_id in [task_id for task_id, (_, who) in self._tasks.items() if who is owner]:
            del self._tasks[task_id]
