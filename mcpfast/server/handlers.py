"""The MCP methods a Server answers, registered on its Router.

``install_handlers(server)`` registers one handler per MCP method. Handlers are sync
functions closing over the server's catalogs (no attribute chains per call); those whose
work is async (async tools, resources, prompts, completions) return a coroutine, which the
session runs as a task. Each reads the negotiated protocol facts from ``ctx.state``.

Methods and their errors:

- ``initialize``: version negotiation (:mod:`mcpfast.protocol.versions`), capabilities from
  what is registered, server info, instructions. A second initialize on the same
  connection: -32600. Params without a string protocolVersion: -32602.
- ``notifications/initialized``: completes initialization.
- ``server/discover`` (2026-07-28): the versions spoken, capabilities, instructions
  (:func:`mcpfast.server.stateless.discover_result`); without the revision's ``_meta``:
  -32602.
- ``subscriptions/listen`` (2026-07-28): a stream of list changes and resource updates
  (:mod:`mcpfast.server.listen`); under the handshake versions: -32601.
- ``ping``: ``{}``, also before initialization.
- ``logging/setLevel``: the connection's minimum level; an unknown level: -32602.
- ``tools/list``, ``resources/list``, ``resources/templates/list``, ``prompts/list``:
  cached per version, paginated when the server has a page size (bad cursor: -32602).
- ``tools/call``: unknown tool -32602; everything else is a CallToolResult (tools.py), or
  for a tool with task support a task (:mod:`mcpfast.server.tasks`); a 2025-11-25
  ``params.task`` for a tool without: -32601.
- ``tasks/*``: :mod:`mcpfast.server.task_methods`.
- ``resources/read``: unknown URI -32002 (resources.py).
- ``resources/subscribe`` / ``unsubscribe``: subscribing to a URI that is neither a
  resource nor matches a template is -32002; unsubscribing from a URI not subscribed is
  accepted (nothing to do).
- ``prompts/get``: unknown prompt or bad arguments -32602 (prompts.py).
- ``completion/complete``: -32601 when the server has no completion handler (the
  specification's "capability not supported") unless it advertises completions anyway
  (then no suggestions); unknown prompt or template -32602.
- ``notifications/roots/list_changed``: calls the server's roots-changed callbacks.
"""

from __future__ import annotations

import inspect
import logging
from typing import TYPE_CHECKING, Any

from mcpfast.jsonrpc.errors import INVALID_REQUEST, InvalidParams, JSONRPCError, MethodNotFound
from mcpfast.protocol import meta_keys, methods
from mcpfast.protocol.error_codes import HEADER_MISMATCH
from mcpfast.protocol.features import features_for
from mcpfast.protocol.header_params import header_param_problem
from mcpfast.protocol.versions import STATELESS_VERSIONS, negotiate_version
from mcpfast.server.completion import parse_completion_request
from mcpfast.server.listen import listen
from mcpfast.server.logs import level_index
from mcpfast.server.resources import ResourceNotFound
from mcpfast.server.stateless import discover_result
from mcpfast.server.task_methods import install_task_handlers
from mcpfast.server.tools_call import ToolsCall

if TYPE_CHECKING:
    from mcpfast.server.context import Context
    from mcpfast.server.core import ConnectionHandle, ServerCore

__all__ = ["install_handlers"]

_LOGGER = logging.getLogger("mcpfast.server")


def _params_dict(params: Any, method: str) -> dict[str, Any]:
    if params is None:
        return {}
    if type(params) is not dict:
        raise InvalidParams(f"{method}: params must be an object")
    return params


def _required_str(params: dict[str, Any], key: str, method: str) -> str:
    value = params.get(key)
    if type(value) is not str:
        raise InvalidParams(f"{method}: params.{key} must be a string", {"param": key})
    return value


def _not_found_2026(exc: ResourceNotFound) -> InvalidParams:
    return InvalidParams(exc.message, {"uri": exc.uri})


async def _read_2026(pending: Any) -> Any:
    try:
        return await pending
    except ResourceNotFound as exc:
        raise _not_found_2026(exc) from None


def _connection(ctx: Context) -> ConnectionHandle:
    connection = ctx.connection
    if connection is None:
        raise RuntimeError(f"{ctx.method} needs a server connection; this Context has none")
    return connection


def install_handlers(server: ServerCore) -> None:
    """Register every MCP method of ``server`` on ``server.router``."""
    router = server.router
    tools = server.tools_catalog
    resources = server.resources_catalog
    templates = server.templates_catalog
    prompts = server.prompts_catalog
    tools_get = tools.items.get
    task_manager = server.tasks
    empty: dict[str, Any] = {}

    # -- lifecycle -----------------------------------------------------------------

    def initialize(params: Any, ctx: Context) -> dict[str, Any]:
        state = ctx.state
        if state.protocol_version is not None:
            raise JSONRPCError(
                INVALID_REQUEST,
                "Invalid Request: the connection is already initialized (initialize may be "
                "sent only once)",
            )
        params = _params_dict(params, "initialize")
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
        connection = _connection(ctx)
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
        _connection(ctx).mark_initialized()

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

    def set_level(params: Any, ctx: Context) -> dict[str, Any]:
        if not server.logging_enabled:
            raise MethodNotFound(data={"method": "logging/setLevel"})
        params = _params_dict(params, "logging/setLevel")
        try:
            ctx.state.log_level = level_index(params.get("level"))
        except ValueError as exc:
            raise InvalidParams(f"logging/setLevel: {exc}", {"param": "level"}) from None
        return empty

    # -- lists -----------------------------------------------------------------------

    def list_handler(catalog: Any, method: str) -> Any:
        def handler(params: Any, ctx: Context) -> dict[str, Any]:
            cursor = None
            if params is not None:
                cursor = _params_dict(params, method).get("cursor")
            return catalog.list_result(ctx.state.features, cursor)

        handler.__name__ = method.replace("/", "_")
        return handler

    # -- tools -----------------------------------------------------------------------

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

    # -- resources -------------------------------------------------------------------

    def read_resource(params: Any, ctx: Context) -> Any:
        uri = _required_str(_params_dict(params, "resources/read"), "uri", "resources/read")
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
        uri = _required_str(_params_dict(params, "resources/subscribe"), "uri", "resources/subscribe")
        if not server.has_resource(uri):
            raise ResourceNotFound(uri)
        _connection(ctx).subscriptions.add(uri)
        return empty

    def unsubscribe(params: Any, ctx: Context) -> dict[str, Any]:
        uri = _required_str(_params_dict(params, "resources/unsubscribe"), "uri", "resources/unsubscribe")
        _connection(ctx).subscriptions.discard(uri)
        return empty

    # -- prompts ---------------------------------------------------------------------

    def get_prompt(params: Any, ctx: Context) -> Any:
        params = _params_dict(params, "prompts/get")
        name = _required_str(params, "name", "prompts/get")
        prompt = prompts.items.get(name)
        if prompt is None:
            raise InvalidParams(f"Unknown prompt: {name}", {"prompt": name})
        return prompt.render(params.get("arguments"), ctx)

    # -- completion ------------------------------------------------------------------

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

    # -- notifications from the client -----------------------------------------------

    def roots_changed(params: Any, ctx: Context) -> Any:
        callbacks = list(server.roots_changed_callbacks)
        if not callbacks:
            return None
        awaitables = []
        for callback in callbacks:
            outcome = callback(ctx)
            if inspect.isawaitable(outcome):
                awaitables.append(outcome)
        if awaitables:
            return _gather(awaitables)
        return None

    router.add_request_handler(methods.INITIALIZE, initialize)
    router.add_notification_handler(methods.INITIALIZED, initialized)
    router.add_request_handler(methods.PING, ping)
    router.add_request_handler(methods.DISCOVER, discover)
    router.add_request_handler(methods.SUBSCRIPTIONS_LISTEN,
                               lambda params, ctx: listen(server, params, ctx))
    router.add_request_handler(methods.SET_LOG_LEVEL, set_level)
    router.add_request_handler(methods.TOOLS_LIST, list_handler(tools, methods.TOOLS_LIST))
    router.add_request_handler(methods.TOOLS_CALL, ToolsCall(tools.items, call_tool))
    router.add_request_handler(methods.RESOURCES_LIST, list_handler(resources, methods.RESOURCES_LIST))
    router.add_request_handler(
        methods.RESOURCE_TEMPLATES_LIST, list_handler(templates, methods.RESOURCE_TEMPLATES_LIST)
    )
    router.add_request_handler(methods.RESOURCES_READ, read_resource)
    router.add_request_handler(methods.RESOURCES_SUBSCRIBE, subscribe)
    router.add_request_handler(methods.RESOURCES_UNSUBSCRIBE, unsubscribe)
    router.add_request_handler(methods.PROMPTS_LIST, list_handler(prompts, methods.PROMPTS_LIST))
    router.add_request_handler(methods.PROMPTS_GET, get_prompt)
    router.add_request_handler(methods.COMPLETE, complete)
    router.add_notification_handler(methods.ROOTS_LIST_CHANGED, roots_changed)
    install_task_handlers(server)


async def _gather(awaitables: list[Any]) -> None:
    for awaitable in awaitables:
        try:
            await awaitable
        except Exception:
            _LOGGER.exception("a roots-changed callback failed")
