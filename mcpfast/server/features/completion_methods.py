"""``completion/complete``: -32601 when the server has no completion handler (the
specification's "capability not supported") unless it advertises completions anyway (then
no suggestions); an unknown prompt or template: -32602."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcpfast.jsonrpc.errors import InvalidParams, MethodNotFound
from mcpfast.protocol import methods
from mcpfast.server.features.completion import parse_completion_request

if TYPE_CHECKING:
    from mcpfast.server.core import ServerCore
    from mcpfast.server.request.context import Context

__all__ = ["register"]


def register(server: ServerCore) -> None:
    """Register completion/complete on ``server.router``."""
    resources = server.resources_catalog
    templates = server.templates_catalog
    prompts = server.prompts_catalog

    def complete(params: Any, ctx: Context) -> Any:
        completer = server.completer
        if completer is None and "completions" not in server.advertise:
            raise MethodNotFound(
                "Method not found: this server has no completion support",
                {"method": "completion/complete"},
            )
        ref, argument, context = parse_completion_request(params)
        if ref.type == "prompt":
            if ref.name not in prompts.items:
                raise InvalidParams(f"Unknown prompt: {ref.name}", {"prompt": ref.name})
        elif ref.uri not in templates.items and ref.uri not in resources.items:
            raise InvalidParams(f"Unknown resource template: {ref.uri}", {"uri": ref.uri})
        if completer is None:
            return {"completion": {"values": []}}
        return completer.complete(ref, argument, context, ctx)

    server.router.add_request_handler(methods.COMPLETE, complete)
