"""GatewayMiddleware: the requests a gateway answers from its upstreams, in the server's
request pipeline.

List requests get the server's own items (through the rest of the chain) followed, on
their last page, by every upstream's items under their public names; tools/call,
prompts/get, resources/read, completion/complete and resources/(un)subscribe for a
mounted name or URI go to that upstream's shared session (names and argument names
mapped back), anything else to the server itself. Progress the upstream reports is
passed to the downstream request that asked for it; a downstream cancellation cancels
the upstream request (the client sends notifications/cancelled).

Results pass through as bytes where nothing would change them: a tools/call (not
task-augmented), prompts/get, resources/read or completion/complete answered by a
handshake-era upstream goes downstream as the upstream's ``result`` unread (a
:class:`~mcpfast._core.messages.Verbatim`, which the encoder writes from the upstream
response's tape under the downstream request's id) when no middleware sits outside this one
(it would read the result), the downstream's era shapes no result (``ctx.shape_result``)
and its version is one whose results :func:`~mcpfast.gateway.eras.shaped_result` leaves
as they are. Lists are never passed through: their names are the gateway's.

The commonest of those, a plain tools/call (name and arguments only) of a mounted tool
from a client of a handshake version whose results are current and that asked for no
progress, takes a direct route (:meth:`GatewayMiddleware.direct_route`, compiled:
:class:`~mcpfast.gateway.forward_core.PlainToolCall`, where the rule of which calls take
it lives): one call sends it upstream and the session waits on the answer's future itself
(``Upstream.forward_plain``), no coroutine between; every other call takes
:meth:`GatewayMiddleware.on_call_tool`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Optional, Protocol

from mcpfast.gateway.eras import shaped_items, shaped_result
from mcpfast.gateway.forward_core import PlainToolCall
from mcpfast.gateway.tasks import call_params, task_list, task_made, task_request
from mcpfast.jsonrpc.errors import InvalidParams, JSONRPCError
from mcpfast.jsonrpc.router import Handler
from mcpfast.protocol import methods
from mcpfast.protocol.error_codes import HEADER_MISMATCH
from mcpfast.protocol.header_params import header_param_problem
from mcpfast.server.middleware.pipeline import CallNext, Middleware, without_task
from mcpfast.server.pagination import InvalidCursor

if TYPE_CHECKING:
    from mcpfast.gateway.catalogue import MountedTool
    from mcpfast.gateway.tasks import ForwardedTasks
    from mcpfast.gateway.upstream import Upstream
    from mcpfast.server.pagination import Paginator


class MountTable(Protocol):
    """What the middleware reads of the gateway that installs it (the Gateway is one): the
    mounted catalogues, the upstream owning a name or URI, the forwarded tasks, and the
    subscriptions it keeps upstream."""

    @property
    def upstreams(self) -> Mapping[str, Upstream]: ...

    @property
    def tasks(self) -> ForwardedTasks: ...

    def listed(self, kind: str) -> list[dict[str, Any]]: ...

    def paginator(self, kind: str) -> Optional[Paginator[dict[str, Any]]]: ...

    def tool(self, name: Any) -> Optional[tuple[Upstream, MountedTool]]: ...

    def prompt(self, name: Any) -> Optional[tuple[Upstream, str]]: ...

    def resource_owner(self, uri: Any, *, template: bool = False) -> Optional[Upstream]: ...

    async def subscribe(self, upstream: Upstream, uri: str, connection: Any) -> None: ...

    async def unsubscribe(self, upstream: Upstream, uri: str, connection: Any) -> None: ...

    async def log_level_asked(self, level: Any) -> None: ...

    def outermost(self, middleware: Any) -> bool: ...

__all__ = ["GATEWAY_CURSOR", "GatewayMiddleware", "results_unshaped"]

_PROTOCOL_META = "io.modelcontextprotocol/"
#: How the cursors of the gateway's own pages begin (the server's never contain a ".").
GATEWAY_CURSOR = "gw."


def _params(ctx: Any) -> dict[str, Any]:
    params = ctx.params
    return params if isinstance(params, dict) else {}


def _progress_of(ctx: Any) -> Any:
    # Only when the downstream asked for progress: then the upstream is asked too.
    if getattr(ctx, "progress", None) is None:
        return None

    def report(progress: Any, total: Any = None, message: Any = None) -> None:
        try:
            ctx.report_progress(progress, total, message)
        except (ValueError, TypeError):
            pass  # an upstream's progress that does not grow is not passed on

    return report


def _page(kind: str, items: list, following: Any) -> dict[str, Any]:
    page: dict[str, Any] = {kind: items}
    if following is not None:
        page["nextCursor"] = GATEWAY_CURSOR + following
    return page


def results_unshaped(ctx: Any) -> bool:
    """Whether :func:`~mcpfast.gateway.eras.shaped_result` leaves the results for the
    client of ``ctx`` as they are: a client of no known version, or of one whose content
    and result members are the current ones (tests/gateway check the two agree)."""
    features = ctx.state.features
    return features is None or features.content_current


def _forwarded(params: dict[str, Any], **changes: Any) -> dict[str, Any]:
    # The downstream's params for the upstream: of its _meta, the progressToken is the
    # upstream client's own business and the io.modelcontextprotocol/ keys are the
    # downstream leg's protocol facts (2026-07-28); the rest (the client's own) goes on.
    meta = params.get("_meta")
    if meta is None:
        out = dict(params)  # the common call: nothing to filter
        out.update(changes)
        return out
    out = {key: value for key, value in params.items() if key != "_meta"}
    if isinstance(meta, dict):
        kept = {key: value for key, value in meta.items()
                if key != "progressToken" and not key.startswith(_PROTOCOL_META)}
        if kept:
            out["_meta"] = kept
    out.update(changes)
    return out


class GatewayMiddleware(Middleware):
    """The gateway's routing (module docstring); one per gateway, outermost-last in the
    server's chain."""

    eager = True

    def __init__(self, gateway: MountTable) -> None:
        self.gateway = gateway
        # Whether no middleware is outside this one (set when the chain is linked).
        self.outermost = False

    def _unread(self, ctx: Any) -> bool:
        # Whether the upstream's result may go downstream unread (module docstring).
        return self.outermost and ctx.shape_result is None

    async def _listed(self, ctx: Any, call_next: CallNext, kind: str) -> Any:
        # The server's own pages first, then the upstreams' items: in one page when the
        # gateway has no page size, else in pages of their own, behind cursors marked as
        # the gateway's (GATEWAY_CURSOR) so that the server's own cursors pass untouched.
        cursor = _params(ctx).get("cursor")
        paginator = self.gateway.paginator(kind)
        if isinstance(cursor, str) and cursor.startswith(GATEWAY_CURSOR) and paginator is not None:
            mounted = shaped_items(kind, self.gateway.listed(kind), ctx.state.features)
            try:
                page, following = paginator.page(mounted, cursor[len(GATEWAY_CURSOR):])
            except InvalidCursor as exc:
                raise InvalidParams(f"Invalid params: {exc}", {"param": "cursor"}) from None
            return _page(kind, page, following)
        result = await call_next(ctx)
        if not isinstance(result, dict) or result.get("nextCursor"):
            return result
        mounted = self.gateway.listed(kind)
        if not mounted:
            return result
        mounted = shaped_items(kind, mounted, ctx.state.features)
        following = None
        if paginator is not None:
            mounted, following = paginator.page(mounted, None)
        out = _page(kind, [*result.get(kind, ()), *mounted], following)
        return {**result, **out}

    async def on_list_tools(self, ctx: Any, call_next: CallNext) -> Any:
        return await self._listed(ctx, call_next, "tools")

    async def on_list_prompts(self, ctx: Any, call_next: CallNext) -> Any:
        return await self._listed(ctx, call_next, "prompts")

    async def on_list_resources(self, ctx: Any, call_next: CallNext) -> Any:
        return await self._listed(ctx, call_next, "resources")

    async def on_list_resource_templates(self, ctx: Any, call_next: CallNext) -> Any:
        return await self._listed(ctx, call_next, "resourceTemplates")

    async def on_call_tool(self, ctx: Any, call_next: CallNext) -> Any:
        # Every forwarded call's path: the common call's steps inline (no helper frames).
        params = ctx.params
        if not isinstance(params, dict):
            params = {}
        found = self.gateway.tool(params.get("name"))
        if found is None:
            return await call_next(ctx)
        upstream, tool = found
        if tool.header_params:
            # Over HTTP the reply channel has the request's headers (the 2026-07-28 leg).
            headers = getattr(ctx.channel, "headers", None)
            if headers is not None:
                problem = header_param_problem(tool.header_params, params.get("arguments"), headers)
                if problem is not None:
                    raise JSONRPCError(HEADER_MISMATCH, problem)
        if "_meta" in params:
            forwarded = _forwarded(params, name=tool.upstream_name)
        else:
            forwarded = dict(params)  # the common call: no _meta to filter
            forwarded["name"] = tool.upstream_name
        if tool.arguments_back and "arguments" in params:
            forwarded["arguments"] = tool.upstream_arguments(params["arguments"])
        features = ctx.state.features
        expecting = False
        if features is not None and (features.stateless or "task" in params):
            # A call that may make a task, in either form (gateway.tasks).
            forwarded = call_params(ctx, params, tool.listed, upstream, forwarded)
            expecting = "task" in forwarded  # a 2025-11-25 task upstream (for either era downstream)
        # The rest awaits the upstream's answer only: no task of its own (pipeline.without_task).
        without_task()
        # Passed through as bytes where nothing reads or reshapes the answer (not a call
        # that may make a task: its CreateTaskResult is rewritten below; results_unshaped
        # inline).
        raw = (self.outermost and ctx.shape_result is None and "task" not in forwarded
               and (features is None or features.content_current))
        progress = None if getattr(ctx, "progress", None) is None else _progress_of(ctx)
        call = upstream.request(methods.TOOLS_CALL, forwarded, progress=progress, origin=ctx, raw=raw)
        result = await (self.gateway.tasks.expecting(upstream, call) if expecting else call)
        if type(result) is dict and ("task" in result or result.get("resultType") == "task"):
            # A CreateTaskResult: a task this caller owns, under the gateway's id.
            made = await task_made(self.gateway.tasks, ctx, forwarded, upstream, result)
            if made is not None:
                return made
        return result if raw else shaped_result(methods.TOOLS_CALL, result, ctx.state.features)

    def direct_route(self, method: str, fallback: Handler) -> Optional[Handler]:
        """tools/call's direct route (module docstring): the answer passed through as
        bytes, or ``fallback`` (the chain: on_call_tool) for any call it does not fit."""
        if method != methods.TOOLS_CALL:
            return None
        return PlainToolCall(self, self.gateway, fallback)

    async def on_get_prompt(self, ctx: Any, call_next: CallNext) -> Any:
        params = _params(ctx)
        found = self.gateway.prompt(params.get("name"))
        if found is None:
            return await call_next(ctx)
        upstream, name = found
        raw = self._unread(ctx) and results_unshaped(ctx)
        result = await upstream.request(methods.PROMPTS_GET, _forwarded(params, name=name),
                                        progress=_progress_of(ctx), origin=ctx, raw=raw)
        return result if raw else shaped_result(methods.PROMPTS_GET, result, ctx.state.features)

    async def on_read_resource(self, ctx: Any, call_next: CallNext) -> Any:
        params = _params(ctx)
        upstream = self.gateway.resource_owner(params.get("uri"))
        if upstream is None:
            return await call_next(ctx)
        raw = self._unread(ctx) and results_unshaped(ctx)
        result = await upstream.request(methods.RESOURCES_READ, _forwarded(params),
                                        progress=_progress_of(ctx), origin=ctx, raw=raw)
        return result if raw else shaped_result(methods.RESOURCES_READ, result, ctx.state.features)

    async def on_complete(self, ctx: Any, call_next: CallNext) -> Any:
        params = _params(ctx)
        ref = params.get("ref")
        if not isinstance(ref, dict):
            return await call_next(ctx)
        upstream: Any = None
        if ref.get("type") == "ref/prompt":
            found = self.gateway.prompt(ref.get("name"))
            if found is not None:
                upstream, name = found
                ref = {**ref, "name": name}
        elif ref.get("type") == "ref/resource":
            upstream = self.gateway.resource_owner(ref.get("uri"), template=True)
        if upstream is None:
            return await call_next(ctx)
        return await upstream.request(methods.COMPLETE, _forwarded(params, ref=ref), origin=ctx,
                                      raw=self._unread(ctx))

    def link(self, method: str, request: bool, call_next: CallNext) -> CallNext:
        # resources/(un)subscribe have no typed hook: linked for those two methods only, so
        # that every other request passes one hook fewer.
        linked = super().link(method, request, call_next)
        # Linked once the chain is final (the server adds none once it serves).
        self.outermost = self.gateway.outermost(self)
        if request and method == methods.RESOURCES_SUBSCRIBE:
            return lambda ctx: self._subscribe(ctx, linked)
        if request and method == methods.RESOURCES_UNSUBSCRIBE:
            return lambda ctx: self._unsubscribe(ctx, linked)
        if request and method in (methods.TASKS_GET, methods.TASKS_RESULT, methods.TASKS_UPDATE,
                                   methods.TASKS_CANCEL):
            return lambda ctx: self._task_request(ctx, linked)
        if request and method == methods.TASKS_LIST:
            return lambda ctx: self._task_list(ctx, linked)
        if request and method == methods.SET_LOG_LEVEL:
            return lambda ctx: self._set_log_level(ctx, linked)
        return linked

    async def _set_log_level(self, ctx: Any, call_next: CallNext) -> Any:
        # The server sets this client's level (and refuses a bad one); then the upstreams.
        result = await call_next(ctx)
        await self.gateway.log_level_asked(_params(ctx).get("level"))
        return result

    async def _task_request(self, ctx: Any, call_next: CallNext) -> Any:
        # tasks/get, tasks/result, tasks/update, tasks/cancel of a task an upstream runs
        # for this caller (gateway.tasks).
        return await task_request(self.gateway.tasks, ctx, call_next, _forwarded(_params(ctx)))

    async def _task_list(self, ctx: Any, call_next: CallNext) -> Any:
        return await task_list(self.gateway.tasks, ctx, await call_next(ctx))

    async def _subscribe(self, ctx: Any, call_next: CallNext) -> Any:
        uri = _params(ctx).get("uri")
        upstream = self.gateway.resource_owner(uri)
        if upstream is None or ctx.connection is None or not isinstance(uri, str):
            return await call_next(ctx)
        await self.gateway.subscribe(upstream, uri, ctx.connection)
        ctx.connection.subscriptions.add(uri)
        return {}

    async def _unsubscribe(self, ctx: Any, call_next: CallNext) -> Any:
        uri = _params(ctx).get("uri")
        result = await call_next(ctx)
        upstream = self.gateway.resource_owner(uri)
        if upstream is not None and isinstance(uri, str) and ctx.connection is not None:
            await self.gateway.unsubscribe(upstream, uri, ctx.connection)
        return result
