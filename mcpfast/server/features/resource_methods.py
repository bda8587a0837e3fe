"""``resources/list``, ``resources/templates/list``, ``resources/read`` (unknown URI
-32002; under 2026-07-28 -32602 with the uri), ``resources/subscribe`` (a URI that is
neither a resource nor matches a template: -32002) and ``resources/unsubscribe`` (a URI
not subscribed is accepted: nothing to do)."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

from mcpfast.jsonrpc.errors import InvalidParams
from mcpfast.protocol import methods
from mcpfast.server.features.params import connection_of, list_handler, params_dict, required_str
from mcpfast.server.features.resources import ResourceNotFound

if TYPE_CHECKING:
    from mcpfast.server.core import ServerCore
    from mcpfast.server.request.context import Context

__all__ = ["register"]


def _not_found_2026(exc: ResourceNotFound) -> InvalidParams:
    return InvalidParams(exc.message, {"uri": exc.uri})


async def _read_2026(pending: Any) -> Any:
    try:
        return await pending
    except ResourceNotFound as exc:
        raise _not_found_2026(exc) from None


def register(server: ServerCore) -> None:
    """Register the resources methods on ``server.router``."""
    resources = server.resources_catalog
    templates = server.templates_catalog
    empty: dict[str, Any] = {}

    def read_resource(params: Any, ctx: Context) -> Any:
        uri = required_str(params_dict(params, "resources/read"), "uri", "resources/read")
        features = ctx.state.features
        if features is None or not features.stateless:
            return server.read_resource(uri, ctx)
        # 2026-07-28 answers an unknown resource with -32602 (data: the uri), not -32002.
        try:
            result = server.read_resource(uri, ctx)
        except ResourceNotFound as exc:
            raise _not_found_2026(exc) from None
        if inspect.isawaitable(result):
            return _read_2026(result)
        return result

    def subscribe(params: Any, ctx: Context) -> dict[str, Any]:
        uri = required_str(params_dict(params, "resources/subscribe"), "uri", "resources/subscribe")
        if not server.has_resource(uri):
            raise ResourceNotFound(uri)
        connection_of(ctx).subscriptions.add(uri)
        return empty

    def unsubscribe(params: Any, ctx: Context) -> dict[str, Any]:
        uri = required_str(params_dict(params, "resources/unsubscribe"), "uri", "resources/unsubscribe")
        connection_of(ctx).subscriptions.discard(uri)
        return empty

    router = server.router
    router.add_request_handler(methods.RESOURCES_LIST, list_handler(resources, methods.RESOURCES_LIST))
    router.add_request_handler(
        methods.RESOURCE_TEMPLATES_LIST, list_handler(templates, methods.RESOURCE_TEMPLATES_LIST))
    router.add_request_handler(methods.RESOURCES_READ, read_resource)
    router.add_request_handler(methods.RESOURCES_SUBSCRIBE, subscribe)
    router.add_request_handler(methods.RESOURCES_UNSUBSCRIBE, unsubscribe)
