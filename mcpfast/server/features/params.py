"""What the methods of every feature check their params with, and the list handler they
share."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from mcpfast.jsonrpc.errors import InvalidParams

if TYPE_CHECKING:
    from mcpfast.server.core import ConnectionHandle
    from mcpfast.server.request.context import Context

__all__ = ["connection_of", "list_handler", "params_dict", "required_str"]


def params_dict(params: Any, method: str) -> dict[str, Any]:
    """The params as a dict ({} when absent); -32602 when they are not an object."""
    if params is None:
        return {}
    if type(params) is not dict:
        raise InvalidParams(f"{method}: params must be an object")
    return params


def required_str(params: dict[str, Any], key: str, method: str) -> str:
    """``params[key]``, a string; -32602 naming the param otherwise."""
    value = params.get(key)
    if type(value) is not str:
        raise InvalidParams(f"{method}: params.{key} must be a string", {"param": key})
    return value


def connection_of(ctx: Context) -> ConnectionHandle:
    """The request's connection (RuntimeError for a Context made without one)."""
    connection = ctx.connection
    if connection is None:
        raise RuntimeError(f"{ctx.method} needs a server connection; this Context has none")
    return connection


def list_handler(catalog: Any, method: str) -> Callable[[Any, Context], dict[str, Any]]:
    """The handler of a ``*/list`` method: the catalog's page for the request's version
    (cached per version; a bad cursor is -32602)."""
    def handler(params: Any, ctx: Context) -> dict[str, Any]:
        cursor = None
        if params is not None:
            cursor = params_dict(params, method).get("cursor")
        return catalog.list_result(ctx.state.features, cursor)

    handler.__name__ = method.replace("/", "_")
    return handler
