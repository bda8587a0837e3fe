"""The tools/call handler's common case, compiled (stubs; the compiled module's docstring
says what it does and why)."""

from typing import Any, Callable

from mcpfast._core.dispatch import RouteHandler

class ToolsCall(RouteHandler):
    """``handler(params, ctx)`` of tools/call: the common call compiled, every other one
    given to ``fully``."""

    @property
    def fully(self) -> Callable[[Any, Any], Any]: ...

    def __init__(self, tools: dict[str, Any], fully: Callable[[Any, Any], Any]) -> None: ...
