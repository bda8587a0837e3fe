"""The values of a tool's task options (:mod:`mcpfast.server.tasks.manager`): a leaf, so that a
Tool checks its options without importing the task machinery that runs it."""

from __future__ import annotations

__all__ = ["TASK_STARTS", "TASK_SUPPORT"]

# Whether a tool may run as a task: never, when the client asks, or always.
TASK_SUPPORT = ("forbidden", "optional", "required")
# When a task tool becomes a task: at the call, or when its handler says so.
TASK_STARTS = ("call", "handler")
