"""``prompts/list`` and ``prompts/get`` (an unknown prompt or bad arguments: -32602,
:mod:`mcpfast.server.features.prompts`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcpfast.jsonrpc.errors import InvalidParams
from mcpfast.protocol import methods
from mcpfast.server.features.params import list_handler, params_dict, required_str

if TYPE_CHECKING:
    from mcpfast.server.core import ServerCore
    from mcpfast.server.request.context import Context

__all__ = ["register"]


def register(server: ServerCore) -> None:
    """Register the prompts methods on ``server.router``."""
    prompts = server.prompts_catalog

    def get_prompt(params: Any, ctx: Context) -> Any:
        params = params_dict(params, "prompts/get")
        name = required_str(params, "name", "prompts/get")
        prompt = prompts.items.get(name)
        if prompt is None:
            raise InvalidParams(f"Unknown prompt: {name}", {"prompt": name})
        return prompt.render(params.get("arguments"), ctx)

    router = server.router
    router.add_request_handler(methods.PROMPTS_LIST, list_handler(prompts, methods.PROMPTS_LIST))
    router.add_request_handler(methods.PROMPTS_GET, get_prompt)
