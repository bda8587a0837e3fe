"""The server core: the state and protocol answers of one server, which the lower
server modules hold instead of the :class:`~mcpfast.server.server.Server` facade.

:class:`ServerCore` is built by ``Server.__init__`` (``app.core``) and holds the router,
the catalogs, capabilities and server info per protocol features, the publisher, state
sources, the stateless era, checks, limits, logger, the middleware chain and the
attach/detach registry of connections. A connection, the method handlers, the listen
streams, the logging bridge, the stateless era, the task methods and the compiled modules
take the core; ``Server`` keeps the decorators, the run/serve entry points, middleware
and lifespan management, and reads and writes the core's fields through
:class:`~mcpfast.server.core_field.CoreField`. ``core.app`` is the facade, which a
request's ``ctx.server`` returns (``ctx.core`` is the core).
:class:`ConnectionHandle` is what a request's context and the per-request plumbing read
of the connection a request came in on (a
:class:`~mcpfast.server.connection.ServerConnection` is one; its ``server`` field holds
the core).

Types: this module sits low in the server package (the modules that use it must not be
imported by it, or the import graph would close a cycle), so a field whose class lives
above it (the task manager, the stateless era, the completer, state sources, the request
state codec) is declared ``Any`` here, documented by name, and set by the facade.

Compiled code reads the core in three places, each field owned by Python (set there,
only read in C): ``connection_core.pyx`` reads ``default_log_level`` and ``publisher``
of the connection's ``server`` field through the core's compiled base
(:class:`~mcpfast.server.core_fields.CoreFields`, declared in ``core_fields.pxd``: the
one place compiled code reads fields of the core itself), the context factories
(``context_factories.pyx``) the stateless era's ``claim`` and ``claims``, and
``tools_call.pyx`` the tools catalog's dict.
"""

from __future__ import annotations

import asyncio
import logging
import types
from typing import Any, Callable, Mapping, Optional, Protocol

from mcpfast.auth import AccessToken
from mcpfast.jsonrpc.router import Router
from mcpfast.protocol.features import VersionFeatures
from mcpfast.protocol.log_levels import level_index
from mcpfast.protocol.meta_keys import TASKS_EXTENSION
from mcpfast.server.core_fields import CoreFields
from mcpfast.server.features.catalog import Catalog
from mcpfast.server.features.resource_errors import ResourceNotFound
from mcpfast.server.middleware.pipeline import PipelineRouter
from mcpfast.server.publisher import Event, ListChanged, LocalPublisher, LogMessage, Publisher, ResourceUpdated
from mcpfast.server.request.state import ProtocolState

__all__ = ["NOT_RUNNING", "ConnectionHandle", "ServerCore"]

# The lifespan's value while it is not running.
NOT_RUNNING: Any = object()


class ServerCore(CoreFields):
    """The state and the protocol answers of one server (module docstring).

    Built by the :class:`~mcpfast.server.server.Server` facade, which validates the
    arguments and then fills what lives above this module (``tasks``, ``stateless_era``,
    ``completer``) and registers the methods on ``router``. ``app`` is what a request's
    ``ctx.server`` is (the facade); nothing here calls it.
    """

    def __init__(self, *, app: Any, name: str, version: str, title: Optional[str],
                 description: Optional[str], website_url: Optional[str], icons: Any,
                 instructions: Optional[str], page_size: Optional[int], default_log_level: int,
                 logging_enabled: bool, advertise: frozenset[str], request_timeout: Optional[float],
                 max_in_flight: Optional[int], publisher: Optional[Publisher],
                 state_sources: tuple[Any, ...], request_checks: tuple[Callable[[Any], None], ...],
                 cache_policy: Any, request_state_codec: Any, logger: logging.Logger,
                 middleware: list[Any], lifespan: Any) -> None:
        self.app = app
        # -- identity (serverInfo, instructions) -----------------------------------------
        self.name = name
        self.version = version
        self.title = title
        self.description = description
        self.website_url = website_url
        self.icons = icons
        self.instructions = instructions
        # -- limits, defaults, logging -----------------------------------------------------
        self.default_log_level = default_log_level
        self.logging_enabled = logging_enabled
        self.advertise = advertise
        self.request_timeout = request_timeout
        self.max_in_flight = max_in_flight
        self.logger = logger
        self.loop: Optional[asyncio.AbstractEventLoop] = None
        # -- routing, the pipeline, checks -------------------------------------------------
        self.router = Router()
        # The middleware chain, outermost first (fixed once a connection is made).
        self.middleware = middleware
        self.served = False
        # Called once, before the first connection takes its router (the facade adds the
        # telemetry middleware there).
        self.before_first_dispatch: Optional[Callable[[], None]] = None
        self._pipeline: Optional[PipelineRouter] = None
        # Middleware told of each connection made and closed (connection_opened/closed).
        self._connection_watchers: tuple[Any, ...] = ()
        self.request_checks = request_checks
        self.state_sources = state_sources
        # -- catalogs and features -----------------------------------------------------------
        self.tools_catalog: Catalog[Any] = Catalog(
            "tools/list", "tools", "name", page_size, self._tools_changed)
        self.resources_catalog: Catalog[Any] = Catalog(
            "resources/list", "resources", "uri", page_size, lambda: self.list_changed("resources"))
        self.templates_catalog: Catalog[Any] = Catalog(
            "resources/templates/list", "resourceTemplates", "uriTemplate", page_size,
            lambda: self.list_changed("resources"))
        self.prompts_catalog: Catalog[Any] = Catalog(
            "prompts/list", "prompts", "name", page_size, lambda: self.list_changed("prompts"))
        # The Completer (mcpfast.server.features.completion), or None.
        self.completer: Any = None
        self.roots_changed_callbacks: list[Callable[[Any], Any]] = []
        # Whether a task tool is registered (None: to be counted again after a change).
        self._offers_tasks: Optional[bool] = None
        # -- fan-out, streams, tasks, the 2026-07-28 era -------------------------------------
        self.publisher: Publisher = publisher if publisher is not None else LocalPublisher()
        # Open subscriptions/listen streams (mcpfast.server.listen).
        self.listen_streams: set[Any] = set()
        # The TaskManager (mcpfast.server.tasks.manager), set by the facade.
        self.tasks: Any = None
        # The StatelessEra (mcpfast.server.eras.stateless), None when the server speaks no
        # 2026 era; set by the facade.
        self.stateless_era: Any = None
        # The CachePolicy of cacheable 2026-07-28 results.
        self.cache_policy = cache_policy
        # The RequestStateCodec of 2026-07-28 InputRequiredResults.
        self.request_state_codec = request_state_codec
        # -- lifespan ------------------------------------------------------------------------
        self.lifespan = lifespan
        # What the running lifespan yielded (NOT_RUNNING outside it; the facade sets it).
        self.lifespan_value: Any = NOT_RUNNING
        # -- the registry of connections -----------------------------------------------------
        self._connections: dict[Any, None] = {}

    # -- the registry of connections -------------------------------------------------------

    @property
    def connections(self) -> tuple[Any, ...]:
        """The connections currently open (a recycled stateless one only while it serves)."""
        return tuple(connection for connection in self._connections if not connection.parked)

    def attached(self) -> tuple[Any, ...]:
        """Every attached connection, parked ones included."""
        return tuple(self._connections)

    def attach(self, connection: Any) -> None:
        """A connection starts serving: among :attr:`connections` and the publisher's
        subscribers (called by the connection; middleware is fixed from then on)."""
        self.served = True
        self._connections[connection] = None
        self.publisher.attach(connection)
        for watcher in self._connection_watchers:
            watcher.connection_opened(connection)

    def detach(self, connection: Any) -> None:
        """A connection ended (called by the connection when it closes)."""
        if connection in self._connections:
            del self._connections[connection]
            for watcher in self._connection_watchers:
                watcher.connection_closed(connection)
        self.publisher.detach(connection)

    # -- routing -----------------------------------------------------------------------------

    @property
    def dispatch_router(self) -> Router:
        """The Router connections dispatch through: :attr:`router` when no middleware is
        installed (the compiled request path, untouched), else the same routes inside the
        middleware chain. The one place that choice is made."""
        prepare = self.before_first_dispatch
        if prepare is not None:
            self.before_first_dispatch = None
            prepare()
            self._connection_watchers = tuple(
                mw for mw in self.middleware if callable(getattr(mw, "connection_opened", None)))
        if not self.middleware:
            return self.router
        if self._pipeline is None:
            self._pipeline = PipelineRouter(self.router, self.middleware)
        return self._pipeline

    def middleware_changed(self) -> None:
        """The middleware list changed (before serving): the chain is built again."""
        self._pipeline = None

    # -- catalogs and publishing --------------------------------------------------------------

    @property
    def tools(self) -> Mapping[str, Any]:
        """Registered tools by name (read-only view)."""
        return types.MappingProxyType(self.tools_catalog.items)

    def has_resource(self, uri: str) -> bool:
        """True when ``uri`` is a registered resource or matches a template."""
        if uri in self.resources_catalog.items:
            return True
        return any(t.match(uri) is not None for t in self.templates_catalog.items.values())

    def read_resource(self, uri: str, ctx: Any) -> Any:
        """The ReadResourceResult for ``uri`` (or a coroutine producing it); raises
        ResourceNotFound (-32002) when nothing serves it."""
        resource = self.resources_catalog.items.get(uri)
        if resource is not None:
            return resource.read(ctx)
        for template in self.templates_catalog.items.values():
            arguments = template.match(uri)
            if arguments is not None:
                return template.read(uri, arguments, ctx)
        raise ResourceNotFound(uri)

    def publish(self, event: Event) -> int:
        """Deliver ``event`` through the publisher (the attribute: one set after
        construction, as ``--redis`` does, is used)."""
        return self.publisher.publish(event)

    def notify_resource_updated(self, uri: str) -> int:
        """Send notifications/resources/updated to the connections subscribed to ``uri``;
        returns how many were notified."""
        return self.publisher.publish(ResourceUpdated(uri))

    def list_changed(self, kind: str) -> None:
        """Publish notifications/<kind>/list_changed."""
        self.publisher.publish(ListChanged(kind))

    def broadcast_log(self, level: str, data: Any, logger: Optional[str] = None) -> int:
        """Send a log message to every connection whose level lets it through; returns how
        many got it."""
        if not self.logging_enabled:
            return 0
        level_index(level)
        return self.publisher.publish(LogMessage(level, data, logger))

    def _tools_changed(self) -> None:
        self._offers_tasks = None
        self.list_changed("tools")

    # -- protocol answers ---------------------------------------------------------------------

    def capabilities(self, features: VersionFeatures) -> dict[str, Any]:
        """The ServerCapabilities for a connection that negotiated ``features``."""
        advertise = self.advertise
        caps: dict[str, Any] = {}
        if (self.completer is not None or "completions" in advertise) and features.completions:
            caps["completions"] = {}
        if self.logging_enabled:
            caps["logging"] = {}
        if self.prompts_catalog.items or "prompts" in advertise:
            caps["prompts"] = {"listChanged": True}
        if self.resources_catalog.items or self.templates_catalog.items or "resources" in advertise:
            caps["resources"] = {"subscribe": True, "listChanged": True}
        if self.tools_catalog.items or "tools" in advertise:
            caps["tools"] = {"listChanged": True}
        if (features.experimental_tasks or features.stateless) and self.offers_tasks():
            if features.stateless:
                caps["extensions"] = {TASKS_EXTENSION: {}}
            else:
                caps["tasks"] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
        return caps

    def offers_tasks(self) -> bool:
        """True while a tool that may run as a task is registered (counted once per change
        of the tools: asked for every stateless connection's capabilities)."""
        offers = self._offers_tasks
        if "tasks" in self.advertise:
            return True  # tasks run elsewhere (a gateway's upstreams)
        if offers is None:
            offers = self._offers_tasks = any(tool.task_support is not None
                                              for tool in self.tools_catalog.items.values())
        return offers

    def server_info(self, features: VersionFeatures) -> dict[str, Any]:
        """The serverInfo Implementation for a version."""
        info: dict[str, Any] = {"name": self.name, "version": self.version}
        if self.title is not None and features.titles:
            info["title"] = self.title
        if features.icons:
            if self.description is not None:
                info["description"] = self.description
            if self.website_url is not None:
                info["websiteUrl"] = self.website_url
            if self.icons is not None:
                info["icons"] = self.icons
        return info

    @property
    def lifespan_state(self) -> Any:
        """What the lifespan yielded (None without a lifespan); RuntimeError while the
        lifespan is not running."""
        if self.lifespan is None:
            return None
        value = self.lifespan_value
        if value is NOT_RUNNING:
            raise RuntimeError(f"the lifespan of server {self.name!r} is not running: serve the "
                               f"server (run, serve_*, the ASGI app) or use mcpfast.connect(app)")
        return value


class ConnectionHandle(Protocol):
    """A server connection as a request's context sees it (module docstring)."""

    server: ServerCore
    state: ProtocolState
    # The verified access token when the transport authenticates, else None.
    auth: Optional[AccessToken]
    # The client's address (no port; None when the transport knows none, as on stdio).
    peer_address: Optional[str]
    # The client's port (None when the transport knows none).
    peer_port: Optional[int]
    # The transport's session id (Streamable HTTP's Mcp-Session-Id), else None.
    session_id: Optional[str]
    # What initialize advertised ({} before).
    capabilities: dict[str, Any]
    subscriptions: set[str]
    parked: bool
    # The connection's JSON-RPC session.
    session: Any

    def notify(self, method: str, params: Any = None) -> bool:
        """Send a notification to the client (False when the connection is closed)."""

    def mark_initialized(self) -> None:
        """notifications/initialized arrived: the initialization gate leaves the chain."""
