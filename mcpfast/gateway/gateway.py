"""Gateway: upstream MCP servers mounted on one Server, served behind its endpoint.

    app = Server("gateway")
    app.mount(["npx", "-y", "@modelcontextprotocol/server-memory"], namespace="memory")
    app.mount("http://127.0.0.1:9000/mcp", namespace="remote", deny=["delete_all"])
    app.mount(other_app, namespace="local")          # a Server in this process
    app.run("http", port=8000)

The Gateway installs one :class:`~mcpfast.gateway.routing.GatewayMiddleware` in the
server's pipeline (before it serves), declares the tools, resources, prompts and
completions capabilities, and starts each upstream's session when the server's lifespan
starts (waiting for each first attempt to end, so a server that never starts delays
nothing beyond its start timeout), closing them when it ends. Catalogue changes upstream
become ``notifications/*/list_changed`` downstream; upstream log messages are broadcast
with the upstream's name as their logger; resource updates go to the downstream clients
subscribed to that URI.

What it needs of the server is :class:`GatewayHost` (the public API of
:class:`mcpfast.Server`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from typing import Any, AsyncContextManager, AsyncIterator, Callable, Iterable, Mapping, Optional, Protocol

from mcpfast.client.connect import parse_target
from mcpfast.client.versions import check_requested_version
from mcpfast.gateway.catalogue import MountedTool
from mcpfast.gateway.forward_core import MountTableCore
from mcpfast.gateway.options import MountOptions
from mcpfast.gateway.routing import GatewayMiddleware
from mcpfast.gateway.tasks import ForwardedTasks
from mcpfast.gateway.upstream import Upstream
from mcpfast.jsonrpc.errors import JSONRPCError
from mcpfast.protocol.log_levels import LEVELS
from mcpfast.protocol.meta_keys import TASKS_EXTENSION
from mcpfast.server.pagination import Paginator
from mcpfast.server.publisher import ListChanged, Publisher

__all__ = ["Gateway", "GatewayHost", "gateway_of"]

_LOGGER = logging.getLogger("mcpfast.gateway")
_CAPABILITIES = frozenset({"tools", "resources", "prompts", "completions"})
_KIND_OF_LIST = {"tools": "tools", "prompts": "prompts", "resources": "resources",
                 "resourceTemplates": "resources"}


class GatewayHost(Protocol):
    """What a gateway uses of the server it is mounted on."""

    name: str
    advertise: frozenset[str]
    lifespan: Optional[Callable[[Any], AsyncContextManager[Any]]]
    publisher: Publisher

    tools_catalog: Any  # its page_size is the gateway's too

    @property
    def middleware(self) -> tuple[Any, ...]: ...

    @property
    def tools(self) -> Mapping[str, Any]: ...  # a live view: read once, by every call
    @property
    def prompts(self) -> Mapping[str, Any]: ...

    def add_middleware(self, middleware: Any) -> None: ...
    def broadcast_log(self, level: str, data: Any, logger: Optional[str] = None) -> int: ...
    def notify_resource_updated(self, uri: str) -> int: ...
    def has_resource(self, uri: str) -> bool: ...
    def on_roots_changed(self, fn: Callable[[Any], Any]) -> Callable[[Any], Any]: ...


class Gateway(MountTableCore):
    """The upstreams mounted on one server (module docstring); made by :func:`gateway_of`.
    ``start_wait``: the most seconds serving waits for the upstreams' first starts.
    ``tool(name)`` (the mount table's lookup, compiled: forward_core) is the upstream and
    tool behind a public tool name."""

    start_wait = 10.0

    def __init__(self, host: GatewayHost) -> None:
        self.host = host
        self.upstreams: dict[str, Upstream] = {}
        self.running = False
        self._tools: dict[str, tuple[Upstream, MountedTool]] = {}
        # The server's own tools (a live read-only view), taken once: a forwarded call
        # reads it without the property's view made per call.
        self._own_tools = host.tools
        self._prompts: dict[str, tuple[Upstream, str]] = {}
        # Resource URI -> the downstream connections subscribed through the gateway.
        self._subscriptions: dict[str, set[Any]] = {}
        self.tasks = ForwardedTasks()
        self._paginators: dict[str, Optional[Paginator[dict[str, Any]]]] = {}
        # The most verbose log level a downstream client asked for (None: none asked yet):
        # what the upstreams' shared sessions are asked to send.
        self.upstream_log_level: Optional[str] = None
        host.add_middleware(GatewayMiddleware(self))
        host.advertise = frozenset(host.advertise) | _CAPABILITIES
        host.on_roots_changed(self._roots_changed)
        inner = host.lifespan
        gateway = self

        @contextlib.asynccontextmanager
        async def lifespan(app: Any) -> AsyncIterator[Any]:
            await gateway.start()
            try:
                if inner is None:
                    yield None
                else:
                    async with inner(app) as value:
                        yield value
            finally:
                await gateway.stop()

        host.lifespan = lifespan

    def __repr__(self) -> str:
        return f"<Gateway on {self.host.name!r} upstreams={list(self.upstreams)}>"

    # -- mounting ----------------------------------------------------------------------

    def mount(self, upstream: Any, namespace: Optional[str] = "", *, name: Optional[str] = None,
              separator: str = "_", allow: Iterable[str] = (), deny: Iterable[str] = (),
              allow_tags: Iterable[str] = (), deny_tags: Iterable[str] = (),
              rename: Optional[Mapping[str, Any]] = None, timeout: Optional[float] = 60.0,
              start_timeout: Optional[float] = 30.0, args: Optional[Iterable[str]] = None,
              env: Optional[Mapping[str, str]] = None, cwd: Any = None,
              headers: Optional[Mapping[str, str]] = None, auth: Any = None,
              stderr: Any = None, protocol_version: Optional[str] = None) -> Upstream:
        """Mount ``upstream`` (a command str or list, a URL, a Server) under ``namespace``
        ("" or None: names unchanged). ``name``: the upstream's key in logs, errors and
        /healthz (the namespace, or the target, unless given; unique). Filters, renames
        and timeouts: :class:`~mcpfast.gateway.options.MountOptions`. ``args``, ``env``,
        ``cwd``, ``stderr`` (a command), ``headers``, ``auth`` (a URL: the upstream's own
        credentials, never the downstream's): as for :func:`mcpfast.connect`.
        ``protocol_version``: what the session to it asks for (the newest handshake version
        unless given). Started at once when the server runs already, else with its
        lifespan."""
        options = MountOptions.make(namespace=namespace, separator=separator, allow=allow, deny=deny,
                                    allow_tags=allow_tags, deny_tags=deny_tags, rename=rename,
                                    timeout=timeout, start_timeout=start_timeout)
        if not hasattr(upstream, "connection_factory"):
            # A target that can never work is refused now, not retried for ever.
            parse_target(upstream, None if args is None else list(args))
        key = name or options.namespace or _target_name(upstream)
        if key in self.upstreams:
            raise ValueError(f"an upstream named {key!r} is mounted already; give another name=")
        connect_options: dict[str, Any] = {}
        for label, value in (("args", None if args is None else list(args)),
                             ("env", None if env is None else dict(env)), ("cwd", cwd),
                             ("headers", None if headers is None else dict(headers)),
                             ("auth", auth), ("stderr", stderr)):
            if value is not None:
                connect_options[label] = value
        if protocol_version is not None:
            check_requested_version(protocol_version)
        mounted = Upstream(key, upstream, options, connect_options=connect_options,
                           protocol_version=protocol_version,
                           on_catalogue=self._catalogue_changed, on_ready=self._ready,
                           on_log=self._forward_log,
                           on_resource_updated=self._forward_update, on_task_status=self._forward_task_status,
                           on_task_question=self.tasks.question, on_task_note=self.tasks.task_note)
        self.upstreams[key] = mounted
        if self.running:
            mounted.start()
        return mounted

    async def unmount(self, key: str) -> None:
        """Stop and remove the upstream ``key`` (KeyError when none); its names go."""
        upstream = self.upstreams.pop(key)
        await upstream.stop()
        self._rebuild()
        for kind in ("tools", "prompts", "resources"):
            self.host.publisher.publish(ListChanged(kind))

    def remount(self, key: str, options: MountOptions) -> None:
        """Show the upstream ``key`` under other options (namespace, filters, renames,
        timeouts), keeping its session; downstream clients get list_changed."""
        self.upstreams[key].set_options(options)
        self._rebuild()
        for kind in ("tools", "prompts", "resources"):
            self.host.publisher.publish(ListChanged(kind))

    async def start(self) -> None:
        """Start every upstream's session; wait for each first attempt to end, at most
        :attr:`start_wait` seconds (an upstream still starting then joins later: clients
        get list_changed when its catalogue arrives)."""
        if self.running:
            return
        self.running = True
        for upstream in self.upstreams.values():
            upstream.start()
        waits = [asyncio.ensure_future(upstream.wait_started()) for upstream in self.upstreams.values()]
        if waits:
            _, late = await asyncio.wait(waits, timeout=self.start_wait)
            for wait in late:
                wait.cancel()
            if late:
                _LOGGER.warning("serving while %d upstreams are still starting", len(late))

    async def stop(self) -> None:
        """Close every upstream's session."""
        self.running = False
        await asyncio.gather(*(upstream.stop() for upstream in self.upstreams.values()),
                             return_exceptions=True)

    # -- lookups (GatewayMiddleware) ---------------------------------------------------

    def outermost(self, middleware: Any) -> bool:
        """Whether ``middleware`` is the first of the server's chain: no other middleware
        sees (and so may read) the results it answers with."""
        chain = self.host.middleware
        return bool(chain) and chain[0] is middleware

    def listed(self, kind: str) -> list[dict[str, Any]]:
        """Every upstream's items of ``kind`` as listed downstream, in mount order (less
        the tools and prompts the server has itself under the same name)."""
        if kind == "tools":
            own = self.host.tools
            return [tool.listed for public, (_, tool) in self._tools.items() if public not in own]
        if kind == "prompts":
            own = self.host.prompts
            return [upstream.catalogue.prompts[public][0]
                    for public, (upstream, _) in self._prompts.items() if public not in own]
        items: list[dict[str, Any]] = []
        for upstream in self.upstreams.values():
            items += upstream.catalogue.listed(kind)
        return items

    def paginator(self, kind: str) -> Optional[Paginator[dict[str, Any]]]:
        """The paginator of the upstreams' items of ``kind`` (the server's page size;
        None when the server lists everything in one page)."""
        if kind not in self._paginators:
            size = getattr(self.host.tools_catalog, "page_size", None)
            key = "uriTemplate" if kind == "resourceTemplates" else "uri" if kind == "resources" else "name"

            def identity(item: dict[str, Any]) -> Any:
                return item.get(key)

            self._paginators[kind] = None if size is None else Paginator(
                size, namespace=f"mcpfast-gateway/{kind}", item_key=identity)
        return self._paginators[kind]

    def prompt(self, name: Any) -> Optional[tuple[Upstream, str]]:
        """The upstream and its own name of the public prompt ``name`` (the server's own
        prompt of that name wins)."""
        if not isinstance(name, str) or name in self.host.prompts:
            return None
        return self._prompts.get(name)

    def resource_owner(self, uri: Any, *, template: bool = False) -> Optional[Upstream]:
        """The upstream serving ``uri`` (or, with ``template``, the template ``uri``);
        None when the server serves it itself or no upstream lists it."""
        if not isinstance(uri, str):
            return None
        if not template and self.host.has_resource(uri):
            return None
        for upstream in self.upstreams.values():
            catalogue = upstream.catalogue
            if catalogue.serves_uri(uri) or (template and catalogue.serves_template(uri)):
                return upstream
        return None

    async def subscribe(self, upstream: Upstream, uri: str, connection: Any) -> None:
        """Subscribe upstream to ``uri`` once, however many downstream connections do."""
        subscribers = self._live_subscribers(uri)
        if not subscribers:
            await upstream.request("resources/subscribe", {"uri": uri})
        self._subscriptions.setdefault(uri, set()).add(connection)

    async def unsubscribe(self, upstream: Upstream, uri: str, connection: Any) -> None:
        """Undo :meth:`subscribe` for ``connection``; the last one unsubscribes upstream."""
        subscribers = self._subscriptions.get(uri)
        if subscribers is None:
            return
        subscribers.discard(connection)
        if not self._live_subscribers(uri):
            self._subscriptions.pop(uri, None)
            await upstream.request("resources/unsubscribe", {"uri": uri})

    def _live_subscribers(self, uri: str) -> set[Any]:
        # Connections that closed without unsubscribing are dropped here (no close hook).
        subscribers = self._subscriptions.get(uri)
        if subscribers:
            subscribers -= {connection for connection in subscribers if connection.closed}
        return subscribers or set()

    def health(self) -> dict[str, Any]:
        """``{"status": "ok" | "degraded", "upstreams": {name: state ...}}``: ok when
        every upstream has a session."""
        upstreams = {key: upstream.health() for key, upstream in self.upstreams.items()}
        ready = all(report["state"] == "ready" for report in upstreams.values())
        return {"status": "ok" if ready else "degraded", "upstreams": upstreams}

    # -- upstream events ---------------------------------------------------------------

    def _rebuild(self) -> None:
        tools: dict[str, tuple[Upstream, MountedTool]] = {}
        prompts: dict[str, tuple[Upstream, str]] = {}
        for upstream in self.upstreams.values():
            for public, tool in upstream.catalogue.tools.items():
                if public in tools:
                    _LOGGER.warning("tool %r of upstream %r hides the one of upstream %r", public,
                                    tools[public][0].key, upstream.key)
                    continue
                tools[public] = (upstream, tool)
            for public, (_, own) in upstream.catalogue.prompts.items():
                prompts.setdefault(public, (upstream, own))
        self._tools, self._prompts = tools, prompts

    def _catalogue_changed(self, upstream: Upstream, kind: str) -> None:
        client = upstream.client
        capabilities = (client.server_capabilities or {}) if client is not None else {}
        if "tasks" in capabilities or TASKS_EXTENSION in (capabilities.get("extensions") or {}):
            # An upstream runs tasks: clients connecting from now on are told tasks work.
            self.host.advertise = frozenset(self.host.advertise) | {"tasks"}
        self._rebuild()
        self.host.publisher.publish(ListChanged(kind))

    async def log_level_asked(self, level: Any) -> None:
        """A downstream client asked for ``level`` (logging/setLevel, already accepted by
        the server): the upstreams are asked for it when it is more verbose than what they
        send now. Their sessions are shared, so the level only goes down; each client still
        gets only the messages of its own level (the server filters the broadcast)."""
        current = self.upstream_log_level
        if level not in LEVELS or (current is not None and LEVELS.index(level) >= LEVELS.index(current)):
            return
        self.upstream_log_level = level
        for upstream in list(self.upstreams.values()):
            await upstream.set_log_level(level)

    async def _ready(self, upstream: Upstream) -> None:
        # A new session (a restart): the subscriptions and the log level are asked again;
        # the tasks of the old one are gone.
        self.tasks.upstream_restarted(upstream)
        await self._resubscribe(upstream)
        if self.upstream_log_level is not None:
            await upstream.set_log_level(self.upstream_log_level)

    async def _resubscribe(self, upstream: Upstream) -> None:
        # A new session (a restart) knows none of the subscriptions: they are made again.
        for uri in list(self._subscriptions):
            if upstream.catalogue.serves_uri(uri):
                await upstream.request("resources/subscribe", {"uri": uri})

    def _roots_changed(self, ctx: Any) -> None:
        # A downstream client's roots changed: the upstreams that may ask for them are told.
        for upstream in self.upstreams.values():
            upstream.notify("notifications/roots/list_changed")

    def _forward_log(self, upstream: Upstream, params: Any) -> None:
        if not isinstance(params, dict) or params.get("level") not in LEVELS:
            return
        logger = params.get("logger")
        name = f"{upstream.key}.{logger}" if isinstance(logger, str) and logger else upstream.key
        self.host.broadcast_log(params["level"], params.get("data"), name)

    def _forward_task_status(self, upstream: Upstream, params: Any) -> None:
        note = self.tasks.status_note(upstream, params)
        if note is not None:
            note[0].notify("notifications/tasks/status", note[1])

    def _forward_update(self, upstream: Upstream, params: Any) -> None:
        uri = params.get("uri") if isinstance(params, dict) else None
        if not isinstance(uri, str):
            return
        if uri in self._subscriptions and not self._live_subscribers(uri):
            # Everyone subscribed went away without unsubscribing: the upstream is told now.
            self._subscriptions.pop(uri, None)
            asyncio.get_running_loop().create_task(self._unsubscribe_gone(upstream, uri))
            return
        self.host.notify_resource_updated(uri)

    async def _unsubscribe_gone(self, upstream: Upstream, uri: str) -> None:
        try:
            await upstream.request("resources/unsubscribe", {"uri": uri})
        except JSONRPCError as exc:
            _LOGGER.debug("upstream %r: unsubscribing %s failed: %s", upstream.key, uri, exc)


def _target_name(target: Any) -> str:
    if isinstance(target, str):
        return target
    if isinstance(target, (list, tuple)):
        return " ".join(map(str, target))
    return str(getattr(target, "name", None) or type(target).__name__)


_GATEWAYS: "weakref.WeakKeyDictionary[Any, Gateway]" = weakref.WeakKeyDictionary()


def gateway_of(host: GatewayHost) -> Gateway:
    """The Gateway of ``host``, made (and its middleware installed) on first use."""
    gateway = _GATEWAYS.get(host)
    if gateway is None:
        gateway = _GATEWAYS[host] = Gateway(host)
    return gateway
