"""``tools/list`` and ``tools/call``: an unknown tool is -32602; everything else is a
CallToolResult (:mod:`mcpfast.server.features.tools`), or for a tool with task support a task
(:mod:`mcpfast.server.tasks.manager`); a 2025-11-25 ``params.task`` for a tool without: -32601.
The common call (a known tool's compiled call, no task) is made by the compiled
:class:`~mcpfast.server.tools_call.ToolsCall`; this module's handler decides every other."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcpfast.jsonrpc.errors import InvalidParams, JSONRPCError, MethodNotFound
from mcpfast.protocol import methods
from mcpfast.protocol.error_codes import HEADER_MISMATCH
from mcpfast.protocol.header_params import header_param_problem
from mcpfast.server.features.params import list_handler
from mcpfast.server.tools_call import ToolsCall

if TYPE_CHECKING:
    from mcpfast.server.core import ServerCore
    from mcpfast.server.request.context import Context

__all__ = ["register"]


def register(server: ServerCore) -> None:
    """Register tools/list and tools/call on ``server.router``."""
    tools = server.tools_catalog
    tools_get = tools.items.get
    task_manager = server.tasks

    def call_tool(params: Any, ctx: Context) -> Any:
        # Every call but the common one, which ToolsCall (compiled) makes itself: a known
        # tool's Tool._direct, when it has one and the call asks for no task.
        if type(params) is not dict:
            raise InvalidParams("tools/call: params must be an object with the tool name")
        name = params.get("name")
        tool = tools_get(name) if type(name) is str else None
        if tool is None:
            if type(name) is not str:
                raise InvalidParams("tools/call: params.name must be a string", {"param": "name"})
            raise InvalidParams(f"Unknown tool: {name}", {"tool": name})
        if tool.header_params:
            # Over HTTP the reply channel has the request's headers (2026-07-28 leg).
            headers = getattr(ctx.channel, "headers", None)
            if headers is not None:
                problem = header_param_problem(tool.header_params, params.get("arguments"), headers)
                if problem is not None:
                    raise JSONRPCError(HEADER_MISMATCH, problem)
        if tool.task_support is not None:
            return task_manager.call_tool(tool, params, ctx)
        if "task" in params and ctx.state.features is not None and ctx.state.features.experimental_tasks:
            # 2025-11-25: a task-augmented call of a tool that never runs as a task.
            raise MethodNotFound(f"Method not found: the tool {name!r} does not run as a task",
                                 {"tool": name})
        return tool.call(params.get("arguments"), ctx)

    router = server.router
    router.add_request_handler(methods.TOOLS_LIST, list_handler(tools, methods.TOOLS_LIST))
    router.add_request_handler(methods.TOOLS_CALL, ToolsCall(tools.items, call_tool))
