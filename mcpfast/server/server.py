"""Server: the decorator API of an MCP server, its registries and how it is served.

    from mcpfast import Server, Context

    app = Server("demo", version="1.0.0", instructions="Tools for demos")

    @app.tool(annotations=ToolAnnotations(read_only=True))
    def add(a: int, b: int) -> int:
        '''Add two numbers.'''
        return a + b

    @app.resource("config://app", mime_type="application/json")
    def config() -> dict:
        return {"debug": False}

    @app.resource("users://{user_id}/profile")
    async def profile(user_id: int) -> dict: ...

    @app.prompt()
    def review(code: str, language: str = "python") -> str:
        return f"Review this {language} code:\\n{code}"

    @app.completion()
    def complete(ref, argument, context):
        return ["python", "rust"] if argument.name == "language" else []

    if __name__ == "__main__":
        app.run()            # stdio; app.run("tcp", port=...) for newline-framed TCP

What is registered decides the capabilities a client sees at initialize (tools, resources
with subscribe and listChanged, prompts, completions, logging; ``advertise=`` declares some
while still empty). Registering or removing tools, resources or prompts while clients are
connected sends the matching ``notifications/*/list_changed`` to every initialized client
that was given that capability (sending it to others would break the protocol). Registration
and the notify methods must be called on the event loop's thread (the logging handler is the
exception: it may be used from any thread).

Serving: ``connect(send)`` (also ``connection_factory``) makes one
:class:`~mcpfast.server.connection.ServerConnection` per client for any transport that
speaks the connection contract (feed / feed_error / close, frames out through ``send``).
``run()`` picks a transport from :mod:`mcpfast.transports` and runs it on a fresh event
loop (uvloop when installed).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import threading
import types
import weakref
from typing import Any, AsyncContextManager, AsyncIterator, Callable, Coroutine, Iterable, Mapping, Optional

from mcpfast.jsonrpc.router import Router
from mcpfast.jsonrpc.runtime import Runtime
from mcpfast.jsonrpc.session import DEFAULT_MAX_IN_FLIGHT, check_max_in_flight
from mcpfast.protocol.features import VersionFeatures
from mcpfast.protocol.versions import SUPPORTED_VERSIONS
from mcpfast.server.connection import ServerConnection
from mcpfast.server.core import NOT_RUNNING, ServerCore
from mcpfast.server.core_field import CoreField
from mcpfast.server.eras.stateless import CachePolicy, StatelessEra
from mcpfast.server.features.catalog import Catalog
from mcpfast.server.features.completion import Completer
from mcpfast.server.features.definitions import check_icons
from mcpfast.server.features.prompts import Prompt
from mcpfast.server.features.resources import Resource, ResourceTemplate
from mcpfast.server.features.tools import Tool
from mcpfast.server.handlers import install_handlers
from mcpfast.server.logs import MCPLogHandler, level_index
from mcpfast.server.middleware.pipeline import check_middleware
from mcpfast.server.middleware.scopes import ScopeCheck
from mcpfast.server.publisher import Publisher
from mcpfast.server.request.context import Context
from mcpfast.server.request.input_required import DEFAULT_REQUEST_STATE_TTL, RequestStateCodec
from mcpfast.server.request.state_source import StateSource
from mcpfast.server.tasks.manager import DEFAULT_POLL_INTERVAL_MS, DEFAULT_TASK_TTL_MS, TaskManager
from mcpfast.server.tasks.store import TaskStore
from mcpfast.server.uri_template import UriTemplate, is_template

__all__ = ["DEFAULT_CLIENT_REQUEST_TIMEOUT", "Server"]

# Seconds a request to the client (sampling, elicitation, roots, ping) may wait for its
# answer unless the server or the call says otherwise.
DEFAULT_CLIENT_REQUEST_TIMEOUT = 300.0

# The constructor's ``logging`` flag shadows the module inside __init__.
logging_module = logging

_ADVERTISABLE = frozenset({"tools", "resources", "prompts", "completions", "tasks"})
_HTTP_TRANSPORTS = ("http", "streamable-http", "streamable_http")
_UNAVAILABLE_TRANSPORTS = ("sse",)
_WEBSOCKET_TRANSPORTS = ("websocket", "ws")
# "Not given": the transport's own default applies (None means something there).
_UNSET: Any = object()


class Server:
    """An MCP server (see the module docstring).

    name, version: the serverInfo; title (2025-06-18+), description, website_url and icons
    (2025-11-25+) complete it; instructions: a hint for the client's model.
    page_size: items per page of the list methods (None: one page, no cursors).
    log_level: the MCP log level sent to clients that never call logging/setLevel.
    logging: advertise the logging capability and accept logging/setLevel.
    request_timeout: default timeout in seconds of requests to the client (sampling,
    elicitation, roots, ping): DEFAULT_CLIENT_REQUEST_TIMEOUT (300 s, long enough for a
    person to answer an elicitation) unless given; None waits as long as the client needs.
    max_in_flight: requests one connection may have running at once (DEFAULT_MAX_IN_FLIGHT;
    None: no limit); beyond it a request is answered with RATE_LIMITED (-32010).
    publisher: delivers list changes, resource updates and log broadcasts to the
    connections (:mod:`mcpfast.server.publisher`; a LocalPublisher unless given).
    state_sources: sources asked, in order, for a request's protocol state before the
    connection's handshake state (:mod:`mcpfast.server.request.state_source`).
    request_checks: checks every request passes after the initialization gate, in order
    (``check(ctx)`` raises JSONRPCError to refuse the request).
    stateless: also answer 2026-07-28 requests (state from each request's ``_meta``, on
    the same connections and endpoints as the handshake versions;
    :mod:`mcpfast.server.eras.stateless`); True unless told otherwise.
    cache: the caching hints (ttlMs, cacheScope) of cacheable 2026-07-28 results
    (:class:`~mcpfast.server.eras.stateless.CachePolicy`: 0 ms, "private" unless given).
    request_state_secret, request_state_ttl: the HMAC key (random per Server unless given:
    give every process of one service the same) and lifetime in seconds (600) of the
    requestState of 2026-07-28 InputRequiredResults (:mod:`mcpfast.server.request.input_required`).
    task_store, task_ttl_ms, task_poll_interval_ms: where the records of tasks live (a
    :class:`~mcpfast.server.tasks.store.MemoryTaskStore` unless given), how long they are
    kept (1 h) and the polling interval suggested to clients (500 ms)
    (:mod:`mcpfast.server.tasks.manager`; tools opt in with ``task_support=``).
    advertise: capabilities to declare even while nothing of the kind is registered
    ("tools", "resources", "prompts", "completions", "tasks") -- for servers that register at run
    time (proxies, gateways): a client is only told about list changes for capabilities it
    was given at initialize.
    logger: where protocol problems and handler failures are logged.
    middleware: the request pipeline, outermost first (:mod:`mcpfast.server.middleware`;
    more with :meth:`add_middleware` before serving).
    lifespan: ``lifespan(app)`` -> an async context manager, entered before the server
    serves and exited when it stops (every ``serve_*``, the ASGI app's lifespan events,
    ``mcpfast.connect(app)``); what it yields is ``ctx.lifespan`` in every request.
    telemetry: add OpenTelemetry spans and metrics (:mod:`mcpfast.telemetry`) when a tracer
    or meter provider is configured at the first connection (False: never).

    ``core``: the :class:`~mcpfast.server.core.ServerCore` this facade builds and delegates
    to (what connections, handlers and the compiled modules hold); the attributes below
    read and write its fields.
    """

    # Fields of the core (mcpfast.server.core), read and written through the facade.
    name: CoreField[str] = CoreField()
    version: CoreField[str] = CoreField()
    title: CoreField[Optional[str]] = CoreField()
    description: CoreField[Optional[str]] = CoreField()
    website_url: CoreField[Optional[str]] = CoreField()
    icons: CoreField[Any] = CoreField()
    instructions: CoreField[Optional[str]] = CoreField()
    default_log_level: CoreField[int] = CoreField()
    logging_enabled: CoreField[bool] = CoreField()
    advertise: CoreField[frozenset[str]] = CoreField()
    request_timeout: CoreField[Optional[float]] = CoreField()
    max_in_flight: CoreField[Optional[int]] = CoreField()
    logger: CoreField[logging_module.Logger] = CoreField()
    loop: CoreField[Optional[asyncio.AbstractEventLoop]] = CoreField()
    router: CoreField[Router] = CoreField()
    request_checks: CoreField[tuple[Callable[[Context], None], ...]] = CoreField()
    state_sources: CoreField[tuple[StateSource, ...]] = CoreField()
    tools_catalog: CoreField[Catalog[Tool]] = CoreField()
    resources_catalog: CoreField[Catalog[Resource]] = CoreField()
    templates_catalog: CoreField[Catalog[ResourceTemplate]] = CoreField()
    prompts_catalog: CoreField[Catalog[Prompt]] = CoreField()
    completer: CoreField[Optional[Completer]] = CoreField()
    roots_changed_callbacks: CoreField[list[Callable[[Context], Any]]] = CoreField()
    publisher: CoreField[Publisher] = CoreField()
    listen_streams: CoreField[set[Any]] = CoreField()
    tasks: CoreField[TaskManager] = CoreField()
    stateless_era: CoreField[Optional[StatelessEra]] = CoreField()
    cache_policy: CoreField[CachePolicy] = CoreField()
    request_state_codec: CoreField[RequestStateCodec] = CoreField()
    lifespan: CoreField[Optional[Callable[[Server], AsyncContextManager[Any]]]] = CoreField()

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        *,
        title: Optional[str] = None,
        description: Optional[str] = None,
        website_url: Optional[str] = None,
        icons: Any = None,
        instructions: Optional[str] = None,
        page_size: Optional[int] = None,
        log_level: str = "info",
        logging: bool = True,
        request_timeout: Optional[float] = DEFAULT_CLIENT_REQUEST_TIMEOUT,
        max_in_flight: Optional[int] = DEFAULT_MAX_IN_FLIGHT,
        advertise: Iterable[str] = (),
        logger: Optional[logging_module.Logger] = None,
        publisher: Optional[Publisher] = None,
        state_sources: Iterable[StateSource] = (),
        request_checks: Iterable[Callable[[Context], None]] = (),
        stateless: bool = True,
        cache: Optional[CachePolicy] = None,
        request_state_secret: Optional[bytes] = None,
        request_state_ttl: float = DEFAULT_REQUEST_STATE_TTL,
        task_store: Optional[TaskStore] = None,
        task_ttl_ms: Optional[int] = DEFAULT_TASK_TTL_MS,
        task_poll_interval_ms: Optional[int] = DEFAULT_POLL_INTERVAL_MS,
        middleware: Iterable[Any] = (),
        lifespan: Optional[Callable[[Server], AsyncContextManager[Any]]] = None,
        telemetry: bool = True,
    ) -> None:
        for label, value in (("name", name), ("version", version)):
            if not isinstance(value, str) or not value:
                raise ValueError(f"the server {label} must be a non-empty str, got {value!r}")
        for label, text in (("title", title), ("description", description),
                            ("website_url", website_url), ("instructions", instructions)):
            if text is not None and not isinstance(text, str):
                raise TypeError(f"{label} must be a str, not {type(text).__name__}")
        advertise = frozenset((advertise,) if isinstance(advertise, str) else advertise)
        unknown = advertise - _ADVERTISABLE
        if unknown:
            raise ValueError(
                f"advertise takes {', '.join(sorted(_ADVERTISABLE))}; got {', '.join(sorted(unknown))}"
            )
        if page_size is not None and (
            isinstance(page_size, bool) or not isinstance(page_size, int) or page_size < 1
        ):
            raise ValueError(f"page_size must be an int >= 1 or None, got {page_size!r}")
        if cache is not None and not isinstance(cache, CachePolicy):
            raise TypeError(f"cache must be a CachePolicy, not {type(cache).__name__}")
        request_checks = tuple(request_checks)
        for check in request_checks:
            if not callable(check):
                raise TypeError(f"a request check must be callable, not {type(check).__name__}")
        if lifespan is not None and not callable(lifespan):
            raise TypeError(f"lifespan must be callable as lifespan(app), not {type(lifespan).__name__}")
        # The state and protocol answers live in the core (mcpfast.server.core), which the
        # connections, handlers and compiled modules hold; this object is the facade.
        self.core = core = ServerCore(
            app=self, name=name, version=version, title=title, description=description,
            website_url=website_url, icons=check_icons(icons), instructions=instructions,
            page_size=page_size, default_log_level=level_index(log_level),
            logging_enabled=bool(logging), advertise=advertise, request_timeout=request_timeout,
            max_in_flight=check_max_in_flight(max_in_flight), publisher=publisher,
            state_sources=tuple(state_sources), request_checks=request_checks,
            cache_policy=cache if cache is not None else CachePolicy(),
            request_state_codec=RequestStateCodec(request_state_secret, request_state_ttl),
            logger=logger if logger is not None else logging_module.getLogger("mcpfast.server"),
            middleware=[check_middleware(mw) for mw in middleware], lifespan=lifespan)
        core.tasks = TaskManager(task_store, ttl_ms=task_ttl_ms, poll_interval_ms=task_poll_interval_ms,
                                 offered=core.offers_tasks, publish=core.publish)
        # The 2026-07-28 era, asked after the user's sources (for requests with its _meta).
        core.stateless_era = StatelessEra(core) if stateless else None
        # The scopes of components (scopes=), once one names some.
        self.scope_check: Optional[ScopeCheck] = None
        # OpenTelemetry (mcpfast.telemetry): added when the first connection is made, if a
        # provider is configured then; the transport served and the metrics sinks asked for.
        self.telemetry = bool(telemetry)
        core.before_first_dispatch = self._add_telemetry
        self._transport_served: tuple[Optional[str], Optional[str], Optional[int]] = (None, None, None)
        self._metrics_sinks: list[Any] = []
        # The HTTP endpoints made here, told to hand on the trace headers once the telemetry
        # is decided with spans (None: not decided yet).
        self._http_endpoints: weakref.WeakSet[Any] = weakref.WeakSet()
        self._traces: Optional[bool] = None
        # Scopes inside the running lifespan (connect(app) in a served app nests).
        self._lifespan_depth = 0
        self._lifespan_exit: Optional[contextlib.AsyncExitStack] = None
        self._loop_thread: Optional[int] = None
        self._disabled_tools: dict[str, Tool] = {}
        install_handlers(core)

    def __repr__(self) -> str:
        return (
            f"<Server {self.name!r} {self.version} tools={len(self.tools_catalog)} "
            f"resources={len(self.resources_catalog)}+{len(self.templates_catalog)} "
            f"prompts={len(self.prompts_catalog)} connections={len(self.connections)}>"
        )

    # -- introspection -----------------------------------------------------------------

    @property
    def tools(self) -> Mapping[str, Tool]:
        """Registered tools by name (read-only view)."""
        return types.MappingProxyType(self.tools_catalog.items)

    @property
    def resources(self) -> Mapping[str, Resource]:
        """Registered fixed-URI resources by URI (read-only view)."""
        return types.MappingProxyType(self.resources_catalog.items)

    @property
    def resource_templates(self) -> Mapping[str, ResourceTemplate]:
        """Registered resource templates by template string (read-only view)."""
        return types.MappingProxyType(self.templates_catalog.items)

    @property
    def prompts(self) -> Mapping[str, Prompt]:
        """Registered prompts by name (read-only view)."""
        return types.MappingProxyType(self.prompts_catalog.items)

    @property
    def connections(self) -> tuple[ServerConnection, ...]:
        """The connections currently open (a recycled stateless one only while it serves)."""
        return self.core.connections

    # -- tools -------------------------------------------------------------------------

    def tool(
        self,
        fn: Any = None,
        /,
        *,
        name: Optional[str] = None,
        title: Optional[str] = None,
        description: Optional[str] = None,
        annotations: Any = None,
        icons: Any = None,
        meta: Optional[Mapping[str, Any]] = None,
        input_schema: Optional[Mapping[str, Any]] = None,
        structured_output: Optional[bool] = None,
        task_support: str = "forbidden",
        task_start: str = "call",
        tags: Iterable[str] = (),
        scopes: Iterable[str] = (),
    ) -> Any:
        """Register a function as a tool: ``@app.tool``, ``@app.tool()``, ``@app.tool("name")``
        or ``@app.tool(name=..., title=..., annotations=...)``. Returns the function.
        ``task_support`` ("forbidden", "optional", "required") and ``task_start`` ("call",
        "handler"): whether and when a call runs as a task (:mod:`mcpfast.server.tasks.manager`).
        ``tags``: groups to enable or disable it with (:meth:`disable_tools`). ``scopes``:
        what the caller's token must grant to see and call it
        (:mod:`mcpfast.server.middleware.scopes`)."""
        if isinstance(fn, str):
            name, fn = fn, None

        def register(function: Callable[..., Any]) -> Callable[..., Any]:
            self.add_tool(
                function, name=name, title=title, description=description,
                annotations=annotations, icons=icons, meta=meta, input_schema=input_schema,
                structured_output=structured_output, task_support=task_support,
                task_start=task_start, tags=tags, scopes=scopes,
            )
            return function

        return register(fn) if fn is not None else register

    def add_tool(self, fn: Callable[..., Any], **options: Any) -> Tool:
        """Register (or replace, by name) a tool; options as for ``tool()``. Connected
        clients get notifications/tools/list_changed."""
        scopes = options.pop("scopes", ())
        tool = Tool(fn, context_type=Context, **options)
        self._require_scopes("tool", tool.name, scopes)
        self._disabled_tools.pop(tool.name, None)
        self.tools_catalog.add(tool.name, tool)
        return tool

    def remove_tool(self, name: str) -> Tool:
        """Unregister a tool, enabled or disabled (KeyError when unknown); clients get
        list_changed when it was enabled."""
        disabled = self._disabled_tools.pop(name, None)
        return disabled if disabled is not None else self.tools_catalog.remove(name)

    @property
    def disabled_tools(self) -> Mapping[str, Tool]:
        """Tools registered but disabled, by name (read-only view)."""
        return types.MappingProxyType(self._disabled_tools)

    def disable_tools(self, *names: str, tags: Iterable[str] = ()) -> list[str]:
        """Take tools out of sight while keeping them registered: the ones named and the
        ones carrying any of ``tags``. A disabled tool is not listed and a call of it is an
        unknown tool (-32602); clients get list_changed once. Returns the names disabled
        (KeyError for a name that is not a registered tool)."""
        chosen = self._chosen_tools(names, tags, self.tools_catalog.items)
        for name in chosen:
            self._disabled_tools[name] = self.tools_catalog.items[name]
        self.tools_catalog.remove_many(chosen)
        return chosen

    def enable_tools(self, *names: str, tags: Iterable[str] = ()) -> list[str]:
        """Bring disabled tools back (by name and by tag, as :meth:`disable_tools`);
        clients get list_changed once. Returns the names enabled."""
        chosen = self._chosen_tools(names, tags, self._disabled_tools)
        self.tools_catalog.add_many([(name, self._disabled_tools.pop(name)) for name in chosen])
        return chosen

    def _chosen_tools(self, names: tuple[str, ...], tags: Iterable[str],
                      among: Mapping[str, Tool]) -> list[str]:
        tags = frozenset((tags,) if isinstance(tags, str) else tags)
        for name in names:
            if name not in among and name not in self.tools_catalog.items and name not in self._disabled_tools:
                raise KeyError(f"no tool named {name!r}")
        return [name for name, tool in among.items() if name in names or tool.tags & tags]

    # -- resources ---------------------------------------------------------------------

    def resource(
        self,
        uri: str,
        *,
        name: Optional[str] = None,
        title: Optional[str] = None,
        description: Optional[str] = None,
        mime_type: Optional[str] = None,
        size: Optional[int] = None,
        annotations: Any = None,
        icons: Any = None,
        meta: Optional[Mapping[str, Any]] = None,
        scopes: Iterable[str] = (),
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register a function as the resource ``uri``; a URI with ``{variables}`` registers
        a resource template whose variables are the function's arguments."""
        if not isinstance(uri, str):
            raise TypeError("@app.resource needs the resource URI (or URI template) first")

        def register(function: Callable[..., Any]) -> Callable[..., Any]:
            self.add_resource(
                uri, function, name=name, title=title, description=description,
                mime_type=mime_type, size=size, annotations=annotations, icons=icons, meta=meta,
                scopes=scopes,
            )
            return function

        return register

    def add_resource(self, uri: str, source: Any, **options: Any) -> Resource | ResourceTemplate:
        """Register (or replace) a resource: ``source`` is a function or a static value (str,
        bytes, JSON-able data); a templated ``uri`` registers a template (a function
        then). Connected clients get notifications/resources/list_changed."""
        if isinstance(uri, str) and ("{" in uri or "}" in uri) and not is_template(uri):
            UriTemplate(uri)  # raises ValueError saying what is wrong with the template
        scopes = options.pop("scopes", ())
        if isinstance(uri, str):
            self._require_scopes("template" if is_template(uri) else "resource", uri, scopes)
        if is_template(uri):
            if options.pop("size", None) is not None:
                raise TypeError("a resource template has no size")
            template = ResourceTemplate(uri, source, context_type=Context, **options)
            self.templates_catalog.add(uri, template)
            return template
        resource = Resource(uri, source, context_type=Context, **options)
        self.resources_catalog.add(uri, resource)
        return resource

    def remove_resource(self, uri: str) -> Resource | ResourceTemplate:
        """Unregister a resource or template by its URI / template string (KeyError when
        unknown); clients get list_changed. Subscriptions to it are dropped."""
        if uri in self.resources_catalog:
            removed: Resource | ResourceTemplate = self.resources_catalog.remove(uri)
        else:
            removed = self.templates_catalog.remove(uri)
        for connection in self.core.attached():
            if isinstance(removed, Resource):
                connection.subscriptions.discard(uri)
            else:
                for subscribed in tuple(connection.subscriptions):
                    if not self.has_resource(subscribed):
                        connection.subscriptions.discard(subscribed)
        return removed

    def has_resource(self, uri: str) -> bool:
        """True when ``uri`` is a registered resource or matches a template."""
        return self.core.has_resource(uri)

    def read_resource(self, uri: str, ctx: Context) -> Any:
        """The ReadResourceResult for ``uri`` (or a coroutine producing it); raises
        ResourceNotFound (-32002) when nothing serves it."""
        return self.core.read_resource(uri, ctx)

    def end_subscriptions(self) -> int:
        """End every open subscriptions/listen stream gracefully (each request gets its
        completion result): before shutting down. Returns how many were ended."""
        streams = list(self.listen_streams)
        for stream in streams:
            stream.end()
        return len(streams)

    def notify_resource_updated(self, uri: str) -> int:
        """Send notifications/resources/updated to the connections subscribed to ``uri``;
        returns how many were notified."""
        return self.core.notify_resource_updated(uri)

    # -- prompts -----------------------------------------------------------------------

    def prompt(
        self,
        fn: Any = None,
        /,
        *,
        name: Optional[str] = None,
        title: Optional[str] = None,
        description: Optional[str] = None,
        argument_titles: Optional[Mapping[str, str]] = None,
        icons: Any = None,
        meta: Optional[Mapping[str, Any]] = None,
        scopes: Iterable[str] = (),
    ) -> Any:
        """Register a function as a prompt: ``@app.prompt``, ``@app.prompt()``,
        ``@app.prompt("name")`` or with keyword options. Returns the function."""
        if isinstance(fn, str):
            name, fn = fn, None

        def register(function: Callable[..., Any]) -> Callable[..., Any]:
            self.add_prompt(
                function, name=name, title=title, description=description,
                argument_titles=argument_titles, icons=icons, meta=meta, scopes=scopes,
            )
            return function

        return register(fn) if fn is not None else register

    def add_prompt(self, fn: Callable[..., Any], **options: Any) -> Prompt:
        """Register (or replace, by name) a prompt; clients get list_changed."""
        scopes = options.pop("scopes", ())
        prompt = Prompt(fn, context_type=Context, **options)
        self._require_scopes("prompt", prompt.name, scopes)
        self.prompts_catalog.add(prompt.name, prompt)
        return prompt

    def remove_prompt(self, name: str) -> Prompt:
        """Unregister a prompt (KeyError when unknown); clients get list_changed."""
        return self.prompts_catalog.remove(name)

    # -- completion, roots -------------------------------------------------------------

    def completion(self, fn: Any = None, /) -> Any:
        """Register the completion handler (``@app.completion`` or ``@app.completion()``);
        see :mod:`mcpfast.server.features.completion` for its signature."""

        def register(function: Callable[..., Any]) -> Callable[..., Any]:
            self.completer = Completer(function, context_type=Context)
            return function

        return register(fn) if fn is not None else register

    def on_roots_changed(self, fn: Callable[[Context], Any]) -> Callable[[Context], Any]:
        """Decorator: call ``fn(ctx)`` (sync or async) when a client sends
        notifications/roots/list_changed (``await ctx.list_roots()`` reads the new roots)."""
        if not callable(fn):
            raise TypeError("on_roots_changed needs a callable")
        self.roots_changed_callbacks.append(fn)
        return fn

    # -- logging -----------------------------------------------------------------------

    def logging_handler(self, level: int = logging_module.NOTSET, *,
                        include_tracebacks: bool = False) -> MCPLogHandler:
        """A logging.Handler forwarding Python log records to clients as
        notifications/message: a record about a request to that request's client, others
        to every connection; tracebacks only with ``include_tracebacks=True`` (see
        :mod:`mcpfast.server.logs`). Attach it yourself:
        ``logging.getLogger("myapp").addHandler(app.logging_handler())``."""
        return MCPLogHandler(self.core, level, include_tracebacks=include_tracebacks)

    def broadcast_log(self, level: str, data: Any, logger: Optional[str] = None) -> int:
        """Send a log message to every connection whose level lets it through; returns how
        many got it."""
        return self.core.broadcast_log(level, data, logger)

    # -- protocol answers --------------------------------------------------------------

    def capabilities(self, features: VersionFeatures) -> dict[str, Any]:
        """The ServerCapabilities for a connection that negotiated ``features``."""
        return self.core.capabilities(features)

    def offers_tasks(self) -> bool:
        """True while a tool that may run as a task is registered."""
        return self.core.offers_tasks()

    def server_info(self, features: VersionFeatures) -> dict[str, Any]:
        """The serverInfo Implementation for a version."""
        return self.core.server_info(features)

    # -- request pipeline and lifespan ----------------------------------------------------

    @property
    def middleware(self) -> tuple[Any, ...]:
        """The middleware every request passes, outermost first."""
        return tuple(self.core.middleware)

    def add_middleware(self, middleware: Any) -> None:
        """Add a middleware inside those already there (:mod:`mcpfast.server.middleware`).
        RuntimeError once the server has made a connection: connections keep the chain
        they were made with."""
        middleware = check_middleware(middleware)
        if self.core.served:
            raise RuntimeError("add middleware before the server serves: connections already "
                               "made keep the chain they were made with")
        self.core.middleware.append(middleware)
        self.core.middleware_changed()

    def mount(self, upstream: Any, namespace: Optional[str] = "", **options: Any) -> Any:
        """Serve another MCP server's tools, prompts and resources from this one, under
        ``namespace`` (``fs_read_file``); ``upstream`` is a command, a URL or a Server.
        Options and behaviour: :meth:`mcpfast.gateway.Gateway.mount`. Returns the
        :class:`~mcpfast.gateway.Upstream`."""
        from mcpfast.gateway import gateway_of

        return gateway_of(self).mount(upstream, namespace, **options)

    def _require_scopes(self, kind: str, key: str, scopes: Iterable[str]) -> None:
        # The scopes of a component: kept by the ScopeCheck middleware, installed outermost
        # when the first component names scopes (mcpfast.server.middleware.scopes).
        if isinstance(scopes, str):
            raise TypeError("scopes must be a list of scope strings, not one str")
        check = self.scope_check
        if check is None:
            scopes = tuple(scopes)
            if not scopes:
                return
            if self.core.served:
                raise RuntimeError("the first component with scopes= must be registered before "
                                   "the server serves (the scope check is middleware)")
            check = self.scope_check = ScopeCheck()
            self.core.middleware.insert(0, check)
            self.core.middleware_changed()
        check.require(kind, key, scopes)

    @property
    def dispatch_router(self) -> Router:
        """The Router connections dispatch through (:attr:`ServerCore.dispatch_router
        <mcpfast.server.core.ServerCore.dispatch_router>`)."""
        return self.core.dispatch_router

    def _serving_on(self, kind: str, ready: Optional[Callable[[str, int], None]]) -> Callable[[str, int], None]:
        # The address and port bound (port 0 picks one), for the telemetry's server.port.
        def bound(host: str, port: int) -> None:
            self._transport_served = (kind, host, port)
            if ready is not None:
                ready(host, port)

        return bound

    def _add_telemetry(self) -> None:
        # Once, before the first connection: the telemetry middleware, outermost, when a
        # provider is configured (or metrics are served) and no telemetry middleware is
        # installed already; nothing at all otherwise.
        chain = self.core.middleware
        given = [mw for mw in chain if type(mw).__name__ == "ServerTelemetry"]
        if given and self._metrics_sinks:
            # A telemetry middleware of the user's: the metrics served go to it as well.
            given[0].metrics = (*given[0].metrics, *self._metrics_sinks)
        if self.telemetry and not given:
            from mcpfast.telemetry import server_telemetry

            kind, host, port = self._transport_served
            middleware = server_telemetry(metrics=self._metrics_sinks, transport=kind, host=host, port=port)
            if middleware is not None:
                chain.insert(0, middleware)
                self.core.middleware_changed()
        self._traces = any(type(mw).__name__ == "ServerTelemetry" and mw.traces for mw in chain)
        if self._traces:
            for endpoint in self._http_endpoints:
                endpoint.capture_trace_headers = True

    def _traced_endpoint(self, endpoint: Any) -> Any:
        # The HTTP trace headers are captured for spans only (turned on now if decided
        # already; never turned off: the user may have set it).
        self._http_endpoints.add(endpoint)
        if self._traces:
            endpoint.capture_trace_headers = True
        return endpoint

    @property
    def lifespan_state(self) -> Any:
        """What the lifespan yielded (None without a lifespan); RuntimeError while the
        lifespan is not running."""
        return self.core.lifespan_state

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Server]:
        """Enter what the server needs to serve: what it shares with other processes
        (publisher, task store), then its lifespan; exited in reverse order. Nested
        scopes (an in-process client of a served server) share one lifespan."""
        await self.start_lifespan()
        try:
            yield self
        finally:
            await self.stop_lifespan()

    async def start_lifespan(self) -> None:
        """The first half of :meth:`running` (for a host with separate start and stop
        events, such as ASGI's lifespan)."""
        if self._lifespan_depth:
            self._lifespan_depth += 1
            return
        await self._start_shared()
        if self.lifespan is not None:
            stack = contextlib.AsyncExitStack()
            self.core.lifespan_value = await stack.enter_async_context(self.lifespan(self))
            self._lifespan_exit = stack
        self._lifespan_depth = 1

    async def stop_lifespan(self) -> None:
        """The second half of :meth:`running`."""
        if self._lifespan_depth == 0:
            return
        self._lifespan_depth -= 1
        if self._lifespan_depth:
            return
        stack, self._lifespan_exit = self._lifespan_exit, None
        self.core.lifespan_value = NOT_RUNNING
        if stack is not None:
            await stack.aclose()

    # -- connections -------------------------------------------------------------------

    def connect(self, send: Callable[[bytes], None], *,
                loop: Optional[asyncio.AbstractEventLoop] = None,
                runtime: Optional[Runtime] = None) -> ServerConnection:
        """A new connection whose outgoing frames go to ``send`` (the connection factory).

        ``runtime``: the futures, tasks and clock of its session (the running loop's
        unless given; a test passes one with a fake clock)."""
        if runtime is not None:
            return ServerConnection(self.core, send, runtime=runtime)
        if loop is not None:
            self.loop = loop
            self._loop_thread = threading.get_ident()
        else:
            loop = self._running_loop()
        return ServerConnection(self.core, send, loop=loop)

    def connect_stateless(self, send: Callable[[bytes], None],
                          protocol_version: str) -> ServerConnection:
        """A connection already initialized for ``protocol_version``, for one stateless
        HTTP request: no handshake, empty client capabilities, no requests to the client
        (they fail at once). ValueError for a version not spoken here."""
        if protocol_version not in SUPPORTED_VERSIONS:
            raise ValueError(f"unsupported MCP protocol version {protocol_version!r}")
        return ServerConnection(self.core, send, loop=self._running_loop(), preset_version=protocol_version)

    def _running_loop(self) -> Optional[asyncio.AbstractEventLoop]:
        """The running event loop (None outside one), remembered in ``self.loop``.

        Python 3.11's ``asyncio.get_running_loop()`` makes a ``getpid`` system call each
        time; a stateless HTTP server makes connections per request, so the loop found last
        is reused while it runs in this thread (measured: two lookups were a fifth of the
        server's CPU under 32 keep-alive connections)."""
        loop = self.loop
        if loop is not None and self._loop_thread == threading.get_ident() and loop.is_running():
            return loop
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return None
        self.loop = loop
        self._loop_thread = threading.get_ident()
        return loop

    @property
    def connection_factory(self) -> Callable[[Callable[[bytes], None]], ServerConnection]:
        """``factory(send) -> connection`` for the transports."""
        return self.connect

    def attach(self, connection: ServerConnection) -> None:
        """A connection starts serving: among :attr:`connections` and the publisher's
        subscribers (called by the connection; middleware is fixed from then on)."""
        self.core.attach(connection)

    def detach(self, connection: ServerConnection) -> None:
        """A connection ended (called by the connection when it closes)."""
        self.core.detach(connection)

    # -- running -----------------------------------------------------------------------

    def run(self, transport: str = "stdio", *, host: str = "127.0.0.1", port: int = 8000,
            **options: Any) -> None:
        """Serve until the transport ends: ``"stdio"`` (this process's stdin/stdout),
        ``"tcp"`` (newline-framed, on host:port) or ``"http"`` (Streamable HTTP). Other
        options go to the transport (``max_frame_size``, the HTTP endpoint's options).

        ``run`` owns the process: before serving it collects garbage once and freezes
        what exists (``gc.freeze()``: modules, registered functions, schemas), so that
        the collector's full passes, frequent under many requests in flight, stop
        re-scanning objects that live as long as the process (measured: 9% more round
        trips at 256 in flight over stdio). The ``serve_*`` coroutines, for programs that
        embed a server in their own loop, leave the collector alone."""
        runner = self._runner(transport, host, port, options)
        from mcpfast.transports import run as run_main
        from mcpfast.transports.loop import until_signalled

        # What exists now (modules, the registered tools, schemas) lives as long as the
        # process: moved out of the collector's sight, full collections stop re-scanning
        # it while requests churn through short-lived objects.
        gc.collect()
        gc.freeze()
        if transport.lower() == "stdio":
            run_main(runner())
        else:
            # Network servers stop gracefully on SIGTERM too (process managers, containers).
            run_main(until_signalled(runner()))

    async def _start_shared(self) -> None:
        # What is shared with other processes (a RedisPublisher, a RedisTaskStore)
        # connects before the server serves: a deployment whose Redis is down fails at start.
        start = getattr(self.publisher, "start", None)
        if start is not None:
            await start()
        await self.tasks.start()

    def _runner(self, transport: str, host: str, port: int,
                options: dict[str, Any]) -> Callable[[], Coroutine[Any, Any, None]]:
        if not isinstance(transport, str):
            raise TypeError(f"transport must be a str, not {type(transport).__name__}")
        kind = transport.lower()
        if kind == "stdio":
            return lambda: self.serve_stdio(**options)
        if kind == "tcp":
            return lambda: self.serve_tcp(host, port, **options)
        if kind in _HTTP_TRANSPORTS:
            return lambda: self.serve_http(host, port, **options)
        if kind in _WEBSOCKET_TRANSPORTS:
            return lambda: self.serve_websocket(host, port, **options)
        if kind in _UNAVAILABLE_TRANSPORTS:
            raise ValueError(f"the {transport} transport is not available yet")
        raise ValueError(f"unknown transport {transport!r}: expected 'stdio', 'tcp' or 'http'")

    async def serve_stdio(self, **options: Any) -> None:
        """Serve one client on this process's stdin/stdout until EOF."""
        from mcpfast.transports import serve_stdio

        self.loop = asyncio.get_running_loop()
        self._transport_served = ("stdio", None, None)
        async with self.running():
            await serve_stdio(self.connect, **options)

    async def serve_tcp(self, host: str = "127.0.0.1", port: int = 8000, *,
                        ready: Optional[Callable[[str, int], None]] = None, **options: Any) -> None:
        """Serve newline-framed TCP clients on host:port until cancelled."""
        from mcpfast.transports import serve_tcp

        self.loop = asyncio.get_running_loop()
        self._transport_served = ("tcp", host, port)
        ready = self._serving_on("tcp", ready)
        async with self.running():
            await serve_tcp(self.connect, host, port, ready=ready, **options)

    async def serve_websocket(self, host: str = "127.0.0.1", port: int = 8000, *,
                              ready: Optional[Callable[[str, int], None]] = None,
                              allowed_hosts: Iterable[str] = (), allowed_origins: Iterable[str] = (),
                              **options: Any) -> None:
        """Serve MCP over WebSocket on ``ws://host:port/mcp`` (``path=``) until cancelled
        (:func:`~mcpfast.transports.websocket.serve_websocket`; Host/Origin checks as for
        HTTP, ``max_frame_size``)."""
        from mcpfast.transports.http import HostPolicy
        from mcpfast.transports.websocket import serve_websocket

        self.loop = asyncio.get_running_loop()
        self._transport_served = ("websocket", host, port)
        ready = self._serving_on("websocket", ready)
        policy = HostPolicy.for_bind(host, extra_hosts=allowed_hosts, extra_origins=allowed_origins)
        async with self.running():
            await serve_websocket(self.connect, host, port, host_policy=policy, ready=ready, **options)

    def http_endpoint(self, *, host: str = "127.0.0.1", allowed_hosts: Iterable[str] = (),
                      allowed_origins: Iterable[str] = (),
                      dns_rebinding_protection: Optional[bool] = None,
                      legacy_sse: bool = False, metrics_path: Optional[str] = None,
                      **options: Any) -> Any:
        """The Streamable HTTP endpoint of this server
        (:class:`~mcpfast.transports.http.StreamableHTTPEndpoint`; ``options`` are its
        keywords: path, json_response, stateless, max_body_size, max_sessions,
        session_idle_timeout, event_store, keepalive_interval, retry_ms, and
        session_directory: sessions shared with the other processes of a deployment, see
        :mod:`~mcpfast.transports.http.shared_sessions`).

        Host/Origin checks: on for a loopback ``host`` (loopback names allowed, plus
        ``allowed_hosts`` / ``allowed_origins``), else only when allow-lists are given;
        ``dns_rebinding_protection`` forces them on (with exactly the lists) or off.
        ``legacy_sse``: also serve clients of the 2024-11-05 HTTP+SSE transport (GET
        ``/sse``, POST ``/messages``; :class:`~mcpfast.transports.http.LegacySSEEndpoint`).
        ``metrics_path``: serve the telemetry's metrics there, as Prometheus text
        (:mod:`mcpfast.telemetry.prometheus`)."""
        from mcpfast.transports.http import HostPolicy, StreamableHTTPEndpoint

        if metrics_path is not None:
            from mcpfast.telemetry import PrometheusMetrics, metrics_route

            prometheus = PrometheusMetrics()
            self._metrics_sinks.append(prometheus)
            options["extra_routes"] = {**options.get("extra_routes", {}), metrics_path: metrics_route(prometheus)}

        if dns_rebinding_protection is None:
            policy = HostPolicy.for_bind(host, extra_hosts=allowed_hosts,
                                         extra_origins=allowed_origins)
        else:
            policy = HostPolicy(allowed_hosts, allowed_origins, enabled=dns_rebinding_protection)
        endpoint = StreamableHTTPEndpoint(self.connect, stateless_factory=self.connect_stateless,
                                          host_policy=policy, on_shutdown=self.end_subscriptions,
                                          **options)
        self._traced_endpoint(endpoint)
        if not legacy_sse:
            return endpoint
        from mcpfast.transports.http import LegacySSEEndpoint

        # Old clients (2024-11-05 HTTP+SSE) on /sse and /messages, the rest on the endpoint.
        return self._traced_endpoint(LegacySSEEndpoint(self.connect, streamable=endpoint,
                                                       max_body_size=endpoint.max_body_size))

    def asgi_app(self, **options: Any) -> Any:
        """An ASGI application serving this server's Streamable HTTP endpoint (mount it in
        Starlette or FastAPI, or run it under uvicorn or granian). ``options``: as for
        :meth:`http_endpoint`; ``host`` there is the name clients use (loopback unless
        given, which turns the Host/Origin checks on)."""
        from mcpfast.transports.http import ASGIApp

        endpoint = self.http_endpoint(**options)

        async def startup() -> None:
            await self.start_lifespan()
            await endpoint.start()

        return ASGIApp(endpoint, on_startup=startup, on_shutdown=self.stop_lifespan)

    async def serve_http(self, host: str = "127.0.0.1", port: int = 8000, *,
                         ready: Optional[Callable[[str, int], None]] = None,
                         keepalive_timeout: Optional[float] = None,
                         max_connections: Optional[int] = None,
                         shutdown_timeout: Any = _UNSET,
                         reuse_port: bool = False,
                         sock: Any = None,
                         **options: Any) -> None:
        """Serve Streamable HTTP on host:port (endpoint ``/mcp`` unless ``path=``) until
        cancelled, then shut down gracefully; ``keepalive_timeout``, ``max_connections``,
        ``shutdown_timeout``, ``reuse_port`` and ``sock`` as for :func:`~mcpfast.transports.http.serve_http` (75 s,
        1024, 30 s), other ``options`` as for :meth:`http_endpoint`."""
        from mcpfast.transports.http import serve_http

        self.loop = asyncio.get_running_loop()
        self._transport_served = ("http", host, port)
        ready = self._serving_on("http", ready)
        endpoint = self.http_endpoint(host=host, **options)
        limits: dict[str, Any] = {}
        if keepalive_timeout is not None:
            limits["keepalive_timeout"] = keepalive_timeout
        if max_connections is not None:
            limits["max_connections"] = max_connections
        if shutdown_timeout is not _UNSET:
            limits["shutdown_timeout"] = shutdown_timeout
        async with self.running():
            await endpoint.start()
            await serve_http(endpoint, host, port, ready=ready, reuse_port=reuse_port, sock=sock, **limits)

