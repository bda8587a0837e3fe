"""The ``tasks/*`` methods a Server answers (:mod:`mcpfast.server.tasks.manager`).

Both task forms share the names where they can; what a request may use depends on its
protocol version:

- 2026-07-28 with the tasks extension in its client capabilities: ``tasks/get`` (the
  DetailedTask: result, error or ``inputRequests`` inlined), ``tasks/update`` (answers to
  ``inputRequests``; an empty acknowledgement, unknown keys ignored) and ``tasks/cancel``
  (an empty acknowledgement, also for an ended task). Without the extension: -32021 with
  ``data.requiredCapabilities.extensions``. ``tasks/result`` and ``tasks/list`` do not exist
  there (-32601, :mod:`mcpfast.server.eras.stateless`).
- 2025-11-25: ``tasks/get`` (the Task), ``tasks/result`` (waits for the end; the
  function's result, tagged with the task in ``_meta``, or its JSON-RPC error),
  ``tasks/list`` (the caller's tasks, paginated) and ``tasks/cancel`` (the cancelled Task;
  -32602 for an ended one).
- older versions: -32601.

An unknown task id, or one belonging to another caller: -32602.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcpfast.jsonrpc.errors import InvalidParams, JSONRPCError, RequestCancelled
from mcpfast.protocol import methods
from mcpfast.protocol.meta_keys import RELATED_TASK
from mcpfast.server.tasks.record import CANCELLED, EXTENSION

if TYPE_CHECKING:
    from mcpfast.server.core import ServerCore
    from mcpfast.server.request.context import Context

__all__ = ["install_task_handlers"]

# Tasks per tasks/list page when the server sets no page size.
LIST_PAGE = 100


def install_task_handlers(server: ServerCore) -> None:
    """Register the ``tasks/*`` methods of ``server`` on its router."""
    manager = server.tasks
    form_of = manager.form_of_method

    # Each handler refuses inline (sync) what its protocol version does not allow, then
    # returns the coroutine that reads the store.

    def get(params: Any, ctx: Context) -> Any:
        return _get(params, ctx, form_of(ctx, methods.TASKS_GET))

    async def _get(params: Any, ctx: Context, form: str) -> dict[str, Any]:
        record = await manager.find(ctx, params, form)
        return record.detailed() if form == EXTENSION else record.experimental()

    def update(params: Any, ctx: Context) -> Any:
        return _update(params, ctx, form_of(ctx, methods.TASKS_UPDATE))

    async def _update(params: Any, ctx: Context, form: str) -> dict[str, Any]:
        record = await manager.find(ctx, params, form)
        await manager.update(record, params.get("inputResponses"))
        return {}

    def cancel(params: Any, ctx: Context) -> Any:
        return _cancel(params, ctx, form_of(ctx, methods.TASKS_CANCEL))

    async def _cancel(params: Any, ctx: Context, form: str) -> dict[str, Any]:
        record = await manager.find(ctx, params, form)
        if form == EXTENSION:
            await manager.cancel(record)
            return {}
        if record.terminal:
            raise InvalidParams(f"Invalid params: task {record.task_id!r} has ended ({record.status}) "
                                f"and cannot be cancelled", {"taskId": record.task_id})
        return (await manager.cancel(record)).experimental()

    def result(params: Any, ctx: Context) -> Any:
        return _result(params, ctx, form_of(ctx, methods.TASKS_RESULT))

    async def _result(params: Any, ctx: Context, form: str) -> dict[str, Any]:
        record = await manager.wait_ended(ctx, params, form)
        error = record.error
        if error is not None:
            raise JSONRPCError(error["code"], error["message"], *(
                (error["data"],) if "data" in error else ()))
        if record.status == CANCELLED or record.result is None:
            raise RequestCancelled(f"task {record.task_id!r} was cancelled")
        answer = dict(record.result)
        meta = answer.get("_meta")
        answer["_meta"] = {**(meta if type(meta) is dict else {}),
                           RELATED_TASK: {"taskId": record.task_id}}
        return answer

    def list_tasks(params: Any, ctx: Context) -> Any:
        form = form_of(ctx, methods.TASKS_LIST)
        if params is not None and type(params) is not dict:
            raise InvalidParams("tasks/list: params must be an object")
        return _list(params.get("cursor") if params else None, ctx, form)

    async def _list(cursor: Any, ctx: Context, form: str) -> dict[str, Any]:
        page_size = server.tools_catalog.page_size or LIST_PAGE
        records, next_cursor = await manager.store.list(manager.principal(ctx, form), cursor, page_size)
        answer: dict[str, Any] = {"tasks": [record.experimental() for record in records]}
        if next_cursor is not None:
            answer["nextCursor"] = next_cursor
        return answer

    router = server.router
    router.add_request_handler(methods.TASKS_GET, get)
    router.add_request_handler(methods.TASKS_UPDATE, update)
    router.add_request_handler(methods.TASKS_CANCEL, cancel)
    router.add_request_handler(methods.TASKS_RESULT, result)
    router.add_request_handler(methods.TASKS_LIST, list_tasks)

