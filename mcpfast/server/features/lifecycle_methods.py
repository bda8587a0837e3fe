"""The lifecycle methods: ``initialize`` (version negotiation, capabilities, server info,
instructions; a second one -32600, no string protocolVersion -32602),
``notifications/initialized``, ``ping`` (also before initialization) and the 2026-07-28
``server/discover`` (without the revision's ``_meta``: -32602)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from mcpfast.jsonrpc.errors import INVALID_REQUEST, InvalidParams, JSONRPCError
from mcpfast.protocol import meta_keys, methods
from mcpfast.protocol.features import features_for
from mcpfast.protocol.versions import STATELESS_VERSIONS, negotiate_version
from mcpfast.server.eras.stateless import discover_result
from mcpfast.server.features.params import connection_of, params_dict

if TYPE_CHECKING:
    from mcpfast.server.core import ServerCore
    from mcpfast.server.request.context import Context

__all__ = ["register"]

_LOGGER = logging.getLogger("mcpfast.server")


def register(server: ServerCore) -> None:
    """Register the lifecycle methods on ``server.router``."""
    empty: dict[str, Any] = {}

    def initialize(params: Any, ctx: Context) -> dict[str, Any]:
        state = ctx.state
        if state.protocol_version is not None:
            raise JSONRPCError(
                INVALID_REQUEST,
                "Invalid Request: the connection is already initialized (initialize may be "
                "sent only once)",
            )
        params = params_dict(params, "initialize")
        requested = params.get("protocolVersion")
        if type(requested) is not str:
            raise InvalidParams("initialize: params.protocolVersion must be a string")
        capabilities = params.get("capabilities", {})
        if not isinstance(capabilities, dict):
            raise InvalidParams("initialize: params.capabilities must be an object")
        client_info = params.get("clientInfo", {})
        if not isinstance(client_info, dict):
            raise InvalidParams("initialize: params.clientInfo must be an object")
        version = negotiate_version(requested)
        state.negotiate(version, client_info, capabilities)
        features = features_for(version)
        connection = connection_of(ctx)
        connection.session.allow_batches(features.batches)
        advertised = server.capabilities(features)
        connection.capabilities = advertised
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": advertised,
            "serverInfo": server.server_info(features),
        }
        if server.instructions is not None:
            result["instructions"] = server.instructions
        return result

    def initialized(params: Any, ctx: Context) -> None:
        if ctx.state.protocol_version is None:
            _LOGGER.debug("notifications/initialized before initialize; ignored")
            return
        connection_of(ctx).mark_initialized()

    def ping(params: Any, ctx: Context) -> dict[str, Any]:
        return empty

    def discover(params: Any, ctx: Context) -> dict[str, Any]:
        features = ctx.state.features
        if features is None or not features.stateless:
            raise InvalidParams(
                f"server/discover: params._meta must carry {meta_keys.PROTOCOL_VERSION!r} "
                f"(one of {', '.join(STATELESS_VERSIONS)}) and {meta_keys.CLIENT_CAPABILITIES!r}",
                {"param": f"_meta.{meta_keys.PROTOCOL_VERSION}"})
        return discover_result(server, ctx.state)

    router = server.router
    router.add_request_handler(methods.INITIALIZE, initialize)
    router.add_notification_handler(methods.INITIALIZED, initialized)
    router.add_request_handler(methods.PING, ping)
    router.add_request_handler(methods.DISCOVER, discover)
