"""mcpfast.server.tasks: tools/call requests that run as tasks (the 2026-07-28 extension
``io.modelcontextprotocol/tasks`` and the 2025-11-25 experimental tasks).

  manager.py   TaskManager and TaskRun: creating, running, answering and following tasks
  methods.py   the tasks/* methods, registered on the core's router
  store.py     TaskStore, the interface of where records live, and MemoryTaskStore
  record.py    TaskRecord: one task's record, in both forms
  support.py   the values of a tool's task options (a leaf: tools.py checks them)

The Redis task store is :mod:`mcpfast.scaleout.redis_task_store`.
"""
