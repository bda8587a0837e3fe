"""``logging/setLevel``: the connection's minimum level (an unknown level: -32602; a
server made with ``logging=False``: -32601)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcpfast.jsonrpc.errors import InvalidParams, MethodNotFound
from mcpfast.protocol import methods
from mcpfast.server.features.params import params_dict
from mcpfast.server.logs import level_index

if TYPE_CHECKING:
    from mcpfast.server.core import ServerCore
    from mcpfast.server.request.context import Context

__all__ = ["register"]


def register(server: ServerCore) -> None:
    """Register logging/setLevel on ``server.router``."""
    empty: dict[str, Any] = {}

    def set_level(params: Any, ctx: Context) -> dict[str, Any]:
        if not server.logging_enabled:
            raise MethodNotFound(data={"method": "logging/setLevel"})
        params = params_dict(params, "logging/setLevel")
        try:
            ctx.state.log_level = level_index(params.get("level"))
        except ValueError as exc:
            raise InvalidParams(f"logging/setLevel: {exc}", {"param": "level"}) from None
        return empty

    server.router.add_request_handler(methods.SET_LOG_LEVEL, set_level)
