"""Client: the MCP client side of one connection, in pure Python over a JSON-RPC Session.

Most code gets a Client from :func:`mcpfast.connect` (transport chosen, ``initialize``
done). Underneath, a Client is sans-I/O like the Session it wraps:

    client = Client(name="my-app", sampling=sample)
    conn = client.bind(send)          # the transport contract: conn.feed / feed_error / close
    ...transport feeds frames to conn.feed...
    await client.initialize()         # version negotiation, capabilities, initialized

``bind`` is a connection factory (``factory(send) -> conn``), so any transport of
:mod:`mcpfast.transports` can drive a Client: ``await open_stdio(cmd, args, client.bind)``.

Requests
========
Every request method is a coroutine returning the result as a dict, exactly as the server
sent it (``call_tool`` -> ``{"content": [...], "isError"?: ..., "structuredContent"?: ...}``),
except the list methods (a list of the items of every page, following ``nextCursor``) and
``ping`` / ``set_logging_level`` (None). Each takes ``timeout`` (seconds; None: the
client's default; ``math.inf``: none) and the ones that can run long take ``progress``, a
callback ``progress(progress, total, message)`` (sync or async); a progressToken is put in
the request only when a callback is given. Cancelling the awaiting task sends the server
``notifications/cancelled``; a timeout raises RequestTimeout and sends it too. Errors the
server answers raise JSONRPCError (MethodNotFound, InvalidParams, ...); a dropped
connection fails every request in flight at once with ConnectionClosed.

Capabilities: a request the server did not advertise (tools, resources,
resources.subscribe, prompts, completions, logging) raises
:class:`~mcpfast.client.errors.CapabilityError` without being sent (unless the client was
made with ``check_capabilities=False``).

Offered to the server (advertised only when given; see :mod:`mcpfast.client.handlers`):
``sampling``, ``elicitation``, ``roots``. Notifications from the server: ``on_log``,
``on_list_changed``, ``on_resource_updated``, ``on_notification`` (any method), and
:meth:`Client.subscribe` for resource updates.

Hot path: ``call_tool`` builds the params dict and awaits ``Session.request`` -- one id
from the PendingTable, one encode, one future; responses resolve that future directly
from the transport's callback (no task per request) and one timer serves every deadline.
"""

from __future__ import annotations

import asyncio
import logging
import math
from asyncio import CancelledError
from typing import Any, Callable, Iterable, Mapping, Optional, Union

from mcpfast._core.pending import DEFAULT_CAPACITY
from mcpfast.client.arguments import dict_arg, str_arg, string_map
from mcpfast.client.capabilities import ServerCapabilities, client_capabilities
from mcpfast.client.errors import (
    CapabilityError,
    ClientError,
    InitializeError,
    InvalidResult,
    NotInitialized,
)
from mcpfast.client.handlers import Roots, WithRequest, elicitation_handler, sampling_handler
from mcpfast.client.listening import Listening, listen_filter
from mcpfast.client.notifications import (
    LIST_CHANGED_METHODS,
    LOG_METHOD,
    RESOURCE_UPDATED_METHOD,
    NotificationCallbacks,
    await_all,
)
from mcpfast.client.observer import RequestObserver, observe_request, observe_send_request, request_through
from mcpfast.client.pagination import every_page, page_of
from mcpfast.client.stateless import (
    InputRounds,
    ResultCache,
    discover_facts,
    follow_task,
    is_task,
    no_handler,
    request_meta,
    with_meta,
)
from mcpfast.client.subscriptions import Subscription
from mcpfast.client.versions import (
    AUTO,
    LATEST_VERSION,
    check_requested_version,
    check_server_version,
)
from mcpfast.jsonrpc.errors import ConnectionClosed, JSONRPCError
from mcpfast.jsonrpc.router import Router
from mcpfast.jsonrpc.session import Session
from mcpfast.protocol import meta_keys, methods
from mcpfast.protocol.header_params import header_params_of, param_headers
from mcpfast.protocol.log_levels import LEVELS
from mcpfast.protocol.meta_keys import TASKS_EXTENSION
from mcpfast.protocol.versions import STATELESS_VERSIONS, SUPPORTED_VERSIONS

__all__ = ["CLIENT_NAME", "Client", "ClientConnection", "DEFAULT_INITIALIZE_TIMEOUT", "LOG_LEVELS"]

CLIENT_NAME = "mcpfast"
#: Seconds ``initialize`` waits for the server's answer by default.
DEFAULT_INITIALIZE_TIMEOUT = 60.0
#: The MCP log levels, least severe first (logging/setLevel).
LOG_LEVELS = LEVELS

_LOGGER = logging.getLogger("mcpfast.client")
# The notifications a listen stream carries (tagged with its subscription id).
LISTEN_NOTIFICATIONS = (*LIST_CHANGED_METHODS, RESOURCE_UPDATED_METHOD,
                        methods.TASKS_NOTIFICATION, methods.SUBSCRIPTIONS_ACKNOWLEDGED)


def _package_version() -> str:
    from mcpfast import __version__

    return __version__


def _pong(params: Any, ctx: Any) -> dict:
    """``ping`` from the server: an empty result."""
    return {}


class ClientConnection:
    """What a transport drives: ``feed`` / ``feed_error`` (the session's own) and ``close``."""

    __slots__ = ("feed", "feed_error", "_client")

    def __init__(self, client: Client, session: Session) -> None:
        self._client = client
        self.feed = session.feed
        self.feed_error = session.feed_error

    def close(self, exc: Optional[BaseException] = None) -> None:
        """The transport is gone: fail everything waiting (idempotent)."""
        self._client._connection_lost(exc)

    def param_headers(self, method: str, params: Any) -> dict[str, str]:
        """For HTTP transports: the ``Mcp-Param-*`` headers of a request."""
        return self._client.param_headers(method, params)


class _Attempts:
    """What ``call_tool`` awaits under 2026-07-28: the task running a request's input
    rounds (``future``), cancelled as a whole."""

    __slots__ = ("future",)

    def __init__(self, task: asyncio.Task) -> None:
        self.future = task

    def cancel(self, reason: Optional[str] = None) -> None:
        self.future.cancel(reason)


class Client:
    """An MCP client (see the module docstring).

    name, version, title: the clientInfo sent in initialize (title only to servers of
    2025-06-18 and later).
    sampling, elicitation: functions serving ``sampling/createMessage`` and
    ``elicitation/create``; roots: a list of roots or a function returning one (each
    advertised only when given; :mod:`mcpfast.client.handlers`; ``with_request(fn)``: a
    function also told which request it serves and which of the client's own requests
    that one belongs to).
    on_log, on_list_changed, on_resource_updated: notification callbacks (same as the
    methods of those names).
    capabilities: extra ClientCapabilities entries (``experimental``, sub-capabilities
    such as ``{"sampling": {"tools": {}}}`` or ``{"elicitation": {"url": {}}}``).
    tasks: declare the 2026-07-28 tasks extension (``io.modelcontextprotocol/tasks``): a
    server may then answer a tools/call with a task, which the client follows
    (:func:`mcpfast.client.stateless.follow_task`) to return the call's own result.
    protocol_version: the version asked for: a handshake version (initialize; default: the
    newest), "2026-07-28" (server/discover and self-contained requests,
    :mod:`mcpfast.client.stateless`), or "auto" (2026-07-28 when the server offers it, the
    newest handshake version otherwise).
    timeout: default timeout in seconds of every request (None: wait as long as it takes).
    check_capabilities: refuse requests the server did not advertise (CapabilityError).
    max_pending: most requests in flight at once.
    """

    def __init__(
        self,
        *,
        name: str = CLIENT_NAME,
        version: Optional[str] = None,
        title: Optional[str] = None,
        sampling: Union[Callable[[Any], Any], WithRequest, None] = None,
        elicitation: Union[Callable[[Any], Any], WithRequest, None] = None,
        roots: Any = None,
        on_log: Optional[Callable[[dict], Any]] = None,
        on_list_changed: Optional[Callable[[str], Any]] = None,
        on_resource_updated: Optional[Callable[[dict], Any]] = None,
        capabilities: Optional[Mapping[str, Any]] = None,
        tasks: bool = False,
        protocol_version: str = LATEST_VERSION,
        timeout: Optional[float] = None,
        check_capabilities: bool = True,
        max_pending: int = DEFAULT_CAPACITY,
        logger: Optional[logging.Logger] = None,
        observer: Optional[RequestObserver] = None,
    ) -> None:
        str_arg("name", name)
        version = _package_version() if version is None else str_arg("version", version)
        self._requested_version = check_requested_version(protocol_version)
        info: dict[str, Any] = {"name": name, "version": version}
        if title is not None:
            str_arg("title", title)
            if self._requested_version >= "2025-06-18":
                info["title"] = title
        self._client_info = info
        self._logger = logger if logger is not None else _LOGGER
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0
        ):
            raise ValueError(f"timeout must be a positive number of seconds or None, got {timeout!r}")
        self._default_timeout = timeout
        self._max_pending = max_pending
        self._check_capabilities = bool(check_capabilities)
        # Sees every request sent (mcpfast.client.observer): telemetry, for one.
        self._observer = observer

        router = self._router = Router()
        router.add_request_handler("ping", _pong)
        if sampling is not None:
            router.add_request_handler("sampling/createMessage", sampling_handler(sampling))
        if elicitation is not None:
            router.add_request_handler("elicitation/create", elicitation_handler(elicitation))
        self._roots: Optional[Roots] = None
        if roots is not None:
            self._roots = Roots(roots)
            router.add_request_handler("roots/list", self._roots.handle)
        if tasks:
            extra = dict(capabilities or {})
            extensions = dict(extra.get("extensions") or {})
            extensions.setdefault(TASKS_EXTENSION, {})
            extra["extensions"] = extensions
            capabilities = extra
        self._capabilities = client_capabilities(
            sampling=sampling is not None,
            elicitation=elicitation is not None,
            roots=roots is not None,
            extra=capabilities,
        )

        self._notifications = NotificationCallbacks(router, self._logger)
        self._notifications.add_hook(RESOURCE_UPDATED_METHOD, self._deliver_update)
        if on_log is not None:
            self.on_log(on_log)
        if on_list_changed is not None:
            self.on_list_changed(on_list_changed)
        if on_resource_updated is not None:
            self.on_resource_updated(on_resource_updated)

        # 2026-07-28: the _meta of every request, and the log level asked for in it.
        self._meta: dict[str, Any] = {}
        self._log_level: Optional[str] = None
        self.discover_result: Optional[dict] = None
        # The caching hints of 2026-07-28 results, honoured.
        self._cache = ResultCache()
        # x-mcp-header arguments of the tools, by tool name (learnt from tools/list).
        self._header_params: dict[str, Any] = {}
        # Open subscriptions/listen streams by subscription id (= their request id).
        self._listens: dict[Any, Listening] = {}
        self._listen_hooks: set[str] = set()
        self._subscriptions: dict[str, list[Subscription]] = {}
        self._session: Optional[Session] = None
        self._request: Callable[..., Any] = self._unbound_request
        self._send_request: Optional[Callable[..., Any]] = None
        self._stream: Any = None
        self._closed_event = asyncio.Event()
        self._close_error: Optional[BaseException] = None
        # Filled by initialize().
        self.initialize_result: Optional[dict] = None
        self.protocol_version: Optional[str] = None
        self.server_info: dict = {}
        self.server_capabilities: dict = {}
        self.instructions: Optional[str] = None
        self.features: Optional[ServerCapabilities] = None
        # One bool per server capability, read by every request (False until initialized).
        self._tools = self._resources = self._subscribe = False
        self._prompts = self._completions = self._logging = False

    def __repr__(self) -> str:
        if self._session is None:
            state = "unbound"
        elif self._session.closed:
            state = "closed"
        elif self.protocol_version is None:
            state = "connected"
        else:
            state = f"initialized {self.protocol_version}"
        name = self.server_info.get("name") if self.server_info else None
        return f"<Client {state} server={name!r}>"

    # -- connection ----------------------------------------------------------------------

    def bind(self, send: Callable[[bytes], None]) -> ClientConnection:
        """Create the session writing to ``send``; returns the conn a transport drives.

        A connection factory: ``open_stdio(cmd, args, client.bind)``. A Client binds once.
        """
        if self._session is not None:
            raise RuntimeError("this Client is already bound to a connection")
        session = Session(
            send,
            router=self._router,
            logger=self._logger,
            request_timeout=self._default_timeout,
            max_pending=self._max_pending,
            uncancellable=methods.UNCANCELLABLE,
        )
        self._session = session
        self._request = session.request
        self._send_request = session.send_request
        self._observe()
        return ClientConnection(self, session)

    def _observe(self) -> None:
        observer = self._observer
        if observer is None:
            return
        send_request = self._send_request
        assert send_request is not None  # bound: bind() or discover() set it
        self._send_request = observe_send_request(send_request, observer)
        if self._request == self._request_2026:
            self._request = observe_request(self._request, observer)
        else:
            # One JSON-RPC request each: observed where it is sent, with its id.
            self._request = request_through(self._send_request)

    @property
    def session(self) -> Optional[Session]:
        """The JSON-RPC Session (None before ``bind``)."""
        return self._session

    @property
    def capabilities(self) -> dict:
        """The ClientCapabilities this client sends (a copy)."""
        return dict(self._capabilities)

    def _handshake_request(self, session: Any) -> Callable[..., Any]:
        # initialize and server/discover go out before _observe() runs: observed here.
        if self._observer is None:
            return session.request
        return observe_request(session.request, self._observer)

    @property
    def initialized(self) -> bool:
        """True once initialize completed and the connection is open."""
        return self.protocol_version is not None and not self.closed

    @property
    def closed(self) -> bool:
        """True once the connection is gone (or closed here)."""
        return self._session is not None and self._session.closed

    @property
    def close_error(self) -> Optional[BaseException]:
        """What ended the connection (None while open, or when it was closed here)."""
        return self._close_error

    async def wait_closed(self) -> None:
        """Return when the connection is gone."""
        await self._closed_event.wait()

    def _connection_lost(self, exc: Optional[BaseException]) -> None:
        session = self._session
        if session is None or session.closed:
            return
        self._close_error = exc
        session.close(exc)
        for subscriptions in self._subscriptions.values():
            for subscription in subscriptions:
                subscription.end(exc)
        self._subscriptions.clear()
        self._tools = self._resources = self._subscribe = False
        self._prompts = self._completions = self._logging = False
        self._closed_event.set()
        if self._observer is not None:
            self._observer.session_ended(self)

    def own_stream(self, stream: Any) -> None:
        """Take ownership of the transport stream this client was bound to: ``aclose()``
        closes it (``connect()`` calls this; a caller wiring a transport itself may too)."""
        if self._stream is not None and self._stream is not stream:
            raise RuntimeError("this Client already owns a transport stream")
        self._stream = stream

    async def aclose(self) -> None:
        """Close the connection (and stop the server process of a stdio connection)."""
        stream = self._stream
        if stream is not None:
            await stream.close()
        self._connection_lost(None)

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.aclose()

    # -- handshake -----------------------------------------------------------------------

    async def initialize(self, *, timeout: Optional[float] = DEFAULT_INITIALIZE_TIMEOUT) -> dict:
        """Run the handshake: initialize, check the version, then notifications/initialized.

        Returns the InitializeResult. Raises UnsupportedProtocolVersion when the server
        answers with a version this client does not speak, InitializeError for a
        malformed answer (the connection stays open: close it), and whatever the request
        raises (RequestTimeout after ``timeout`` seconds, ConnectionClosed, JSONRPCError).
        """
        session = self._session
        if session is None:
            raise RuntimeError("bind the Client to a connection before initialize()")
        if self.protocol_version is not None:
            raise RuntimeError("initialize() was already done on this connection")
        requested = self._requested_version
        params = {
            "protocolVersion": requested if requested in SUPPORTED_VERSIONS else LATEST_VERSION,
            "capabilities": self._capabilities,
            "clientInfo": self._client_info,
        }
        result = await self._handshake_request(session)("initialize", params, timeout=timeout)
        if type(result) is not dict:
            raise InitializeError(f"expected an object, got {result!r}")
        version = check_server_version(result.get("protocolVersion"))
        capabilities = result.get("capabilities", {})
        if type(capabilities) is not dict:
            raise InitializeError(f"capabilities must be an object, got {capabilities!r}")
        server_info = result.get("serverInfo", {})
        if type(server_info) is not dict:
            raise InitializeError(f"serverInfo must be an object, got {server_info!r}")
        instructions = result.get("instructions")
        if instructions is not None and type(instructions) is not str:
            raise InitializeError(f"instructions must be a string, got {instructions!r}")
        # JSON-RPC batches exist only in 2025-03-26.
        session.allow_batches(version == "2025-03-26")
        session.notify("notifications/initialized")
        self.initialize_result = result
        self._adopt(version, capabilities, server_info, instructions)
        if self._observer is not None:
            self._observer.session_started(self)
        return result

    def _adopt(self, version: str, capabilities: dict, server_info: dict,
               instructions: Optional[str]) -> None:
        """Take the server's answer to initialize or server/discover as the connection's."""
        features = ServerCapabilities(capabilities, version, self._check_capabilities)
        self.server_capabilities = capabilities
        self.server_info = server_info
        self.instructions = instructions
        self.features = features
        self._tools = features.tools
        self._resources = features.resources
        self._subscribe = features.subscribe
        self._prompts = features.prompts
        self._completions = features.completions
        self._logging = features.logging
        self.protocol_version = version

    async def start(self, *, timeout: Optional[float] = DEFAULT_INITIALIZE_TIMEOUT) -> dict:
        """Begin the conversation the way ``protocol_version`` asks: :meth:`initialize`
        for a handshake version, :meth:`discover` for 2026-07-28, and for "auto" discover
        with a fallback to initialize when the server does not offer 2026-07-28 (an error
        answer, or a version list without it). Returns the InitializeResult or the
        DiscoverResult."""
        requested = self._requested_version
        if requested == AUTO or requested in STATELESS_VERSIONS:
            version = STATELESS_VERSIONS[0] if requested == AUTO else requested
            try:
                return await self.discover(version, timeout=timeout)
            except (InvalidResult, JSONRPCError) as exc:
                if requested != AUTO or isinstance(exc, ConnectionClosed):
                    raise
                self._logger.debug("server/discover failed (%s): falling back to initialize", exc)
        return await self.initialize(timeout=timeout)

    async def discover(self, version: str = "2026-07-28", *,
                       timeout: Optional[float] = DEFAULT_INITIALIZE_TIMEOUT) -> dict:
        """Start a 2026-07-28 conversation: ``server/discover``, then every request
        self-contained (:mod:`mcpfast.client.stateless`). Returns the DiscoverResult;
        InvalidResult when the server does not offer ``version``."""
        session = self._session
        if session is None:
            raise RuntimeError("bind the Client to a connection before discover()")
        if self.protocol_version is not None:
            raise RuntimeError("this connection has already begun")
        if version not in STATELESS_VERSIONS:
            raise ValueError(f"discover() speaks {', '.join(STATELESS_VERSIONS)}, not {version!r}")
        meta = request_meta(version, self._capabilities, self._client_info, self._log_level)
        result = await self._handshake_request(session)(methods.DISCOVER, {"_meta": meta}, timeout=timeout)
        capabilities, server_info, instructions = discover_facts(result, version)
        self._meta = meta
        self.discover_result = result
        self._adopt(version, capabilities, server_info, instructions)
        self._request = self._request_2026
        self._send_request = self._send_request_2026
        self._observe()
        if self._observer is not None:
            self._observer.session_started(self)
        return result

    async def _request_2026(self, method: str, params: Any = None, *,
                            timeout: Optional[float] = None,
                            progress: Optional[Callable[..., Any]] = None) -> Any:
        session = self._session
        assert session is not None

        cache = self._cache
        cached = cache.get(method, params)
        if cached is not None:
            return cached

        async def send(name: str, attempt: Any) -> Any:
            return await session.request(name, with_meta(attempt, self._meta), timeout=timeout,
                                         progress=progress)

        rounds = InputRounds(send, self._answer_input)
        result = await rounds.run(method, params)
        if is_task(result):
            # The server made a task of it (the client declared the tasks extension): the
            # caller still gets the request's own result.
            result = await follow_task(rounds, method, result)
        cache.put(method, params, result)
        return result

    def _send_request_2026(self, method: str, params: Any = None, *,
                           timeout: Optional[float] = None,
                           progress: Optional[Callable[..., Any]] = None) -> _Attempts:
        # call_tool's path: its input rounds run as one task, cancelled as a whole.
        coroutine = self._request_2026(method, params, timeout=timeout, progress=progress)
        return _Attempts(asyncio.get_running_loop().create_task(coroutine))

    def _answer_input(self, method: str, params: Any) -> Any:
        """The client's answer to one input request, from its own handlers."""
        route = self._router.requests.get(method)
        if route is None:
            raise no_handler(method)
        return route.handler(params, None)

    def _refuse(self, capability: str, method: str) -> None:
        """Raise the right error for a request whose capability flag is False."""
        if self.protocol_version is None:
            raise NotInitialized(method)
        if self.closed:
            raise ConnectionClosed("the connection is closed")
        raise CapabilityError(capability, method)

    async def _unbound_request(self, method: str, *args: Any, **kwargs: Any) -> Any:
        raise NotInitialized(method)

    # -- generic -------------------------------------------------------------------------

    async def request(self, method: str, params: Any = None, *, timeout: Optional[float] = None,
                      progress: Optional[Callable[..., Any]] = None) -> Any:
        """Send any request and return its result as received (no capability check)."""
        return await self._request(method, params, timeout=timeout, progress=progress)

    def notify(self, method: str, params: Any = None) -> None:
        """Send any notification."""
        if self._session is None:
            raise NotInitialized(method)
        self._session.notify(method, params)

    async def ping(self, *, timeout: Optional[float] = None) -> None:
        """Ping the server (allowed at any time); raises if it does not answer. 2026-07-28
        has no ``ping``: there a ``server/discover`` sent to the server (never answered from
        the cache) stands for it."""
        if self.discover_result is not None:
            session = self._session
            assert session is not None
            await session.request(methods.DISCOVER, {"_meta": self._meta}, timeout=timeout)
            return
        await self._request(methods.PING, None, timeout=timeout)

    # -- tools ---------------------------------------------------------------------------

    async def call_tool(
        self,
        name: str,
        arguments: Optional[Mapping[str, Any]] = None,
        *,
        timeout: Optional[float] = None,
        progress: Optional[Callable[..., Any]] = None,
        meta: Optional[Mapping[str, Any]] = None,
    ) -> dict:
        """Call a tool; returns the CallToolResult dict.

        A tool that failed while running is a result with ``isError: true`` (not an
        exception); an unknown tool or bad arguments raise InvalidParams.
        """
        if not self._tools:
            self._refuse("tools", "tools/call")
        if type(name) is not str:
            raise TypeError(f"the tool name must be a str, not {type(name).__name__}")
        if arguments is None:
            params: dict[str, Any] = {"name": name}
        else:
            if type(arguments) is not dict:
                arguments = dict_arg("arguments", arguments)
            params = {"name": name, "arguments": arguments}
        if meta is not None:
            params["_meta"] = dict_arg("meta", meta)
        # Session.request inlined (one coroutine less on the hot path); _tools being True
        # means the session is bound and initialized.
        out = self._send_request("tools/call", params, timeout=timeout, progress=progress)  # type: ignore[misc]
        try:
            return await out.future
        except CancelledError as exc:
            # The awaiting task was cancelled: drop the request and tell the server.
            out.cancel(exc.args[0] if exc.args and isinstance(exc.args[0], str) else None)
            raise

    async def list_tools(self, *, timeout: Optional[float] = None) -> list:
        """Every tool (all pages). Under 2026-07-28, a tool whose ``x-mcp-header``
        annotations are malformed is left out (logged), as the revision asks."""
        if not self._tools:
            self._refuse("tools", "tools/list")
        tools = await every_page(self._request, "tools/list", "tools", timeout)
        if self.discover_result is None:
            return tools
        return self._learn_header_params(tools)

    def _learn_header_params(self, tools: list) -> list:
        kept = []
        for tool in tools:
            name = tool.get("name") if type(tool) is dict else None
            schema = tool.get("inputSchema") if type(tool) is dict else None
            try:
                params = header_params_of(schema) if isinstance(schema, dict) else ()
            except ValueError as exc:
                self._logger.warning("tool %r left out: its x-mcp-header is invalid (%s)", name, exc)
                continue
            if type(name) is str:
                if params:
                    self._header_params[name] = params
                else:
                    self._header_params.pop(name, None)
            kept.append(tool)
        return kept

    def param_headers(self, method: str, params: Any) -> dict[str, str]:
        """The ``Mcp-Param-*`` headers of a request (tools/call of a tool with
        ``x-mcp-header`` arguments, as learnt from tools/list); {} for others."""
        if method != methods.TOOLS_CALL or type(params) is not dict:
            return {}
        mirrored = self._header_params.get(params.get("name"))  # type: ignore[arg-type]
        if not mirrored:
            return {}
        return param_headers(mirrored, params.get("arguments"))

    async def list_tools_page(self, cursor: Optional[str] = None, *,
                              timeout: Optional[float] = None) -> dict:
        """One page of tools/list: ``{"tools": [...], "nextCursor"?: ...}``."""
        if not self._tools:
            self._refuse("tools", "tools/list")
        return await page_of(self._request, "tools/list", "tools", cursor, timeout)

    # -- resources -----------------------------------------------------------------------

    async def list_resources(self, *, timeout: Optional[float] = None) -> list:
        """Every resource (all pages)."""
        if not self._resources:
            self._refuse("resources", "resources/list")
        return await every_page(self._request, "resources/list", "resources", timeout)

    async def list_resources_page(self, cursor: Optional[str] = None, *,
                                  timeout: Optional[float] = None) -> dict:
        """One page of resources/list."""
        if not self._resources:
            self._refuse("resources", "resources/list")
        return await page_of(self._request, "resources/list", "resources", cursor, timeout)

    async def list_resource_templates(self, *, timeout: Optional[float] = None) -> list:
        """Every resource template (all pages)."""
        if not self._resources:
            self._refuse("resources", "resources/templates/list")
        return await every_page(self._request, "resources/templates/list", "resourceTemplates", timeout)

    async def list_resource_templates_page(self, cursor: Optional[str] = None, *,
                                           timeout: Optional[float] = None) -> dict:
        """One page of resources/templates/list."""
        if not self._resources:
            self._refuse("resources", "resources/templates/list")
        return await page_of(self._request, "resources/templates/list", "resourceTemplates", cursor, timeout)

    async def read_resource(self, uri: str, *, timeout: Optional[float] = None,
                            progress: Optional[Callable[..., Any]] = None) -> dict:
        """Read a resource; returns ``{"contents": [...]}``. Unknown URI: JSONRPCError -32002."""
        if not self._resources:
            self._refuse("resources", "resources/read")
        str_arg("uri", uri)
        return await self._request("resources/read", {"uri": uri}, timeout=timeout,
                                   progress=progress)

    async def subscribe(self, uri: str, callback: Optional[Callable[[dict], Any]] = None, *,
                        timeout: Optional[float] = None) -> Subscription:
        """Subscribe to a resource's updates (see :mod:`mcpfast.client.subscriptions`).

        With ``callback``, each update's params go to ``callback(params)`` (sync or async);
        without, iterate the returned Subscription: ``async for params in sub``.
        """
        if not self._subscribe:
            self._refuse("resources.subscribe", "resources/subscribe")
        str_arg("uri", uri)
        subscription = Subscription(self._release_subscription, uri, callback)
        # Registered before the request: an update may follow the response at once.
        self._subscriptions.setdefault(uri, []).append(subscription)
        try:
            await self._request("resources/subscribe", {"uri": uri}, timeout=timeout)
        except BaseException:
            self._forget(subscription)
            raise
        return subscription

    def listen(self, *, tools: bool = False, prompts: bool = False, resources: bool = False,
               uris: Iterable[str] = (), task_ids: Iterable[str] = (),
               timeout: Optional[float] = None) -> Listening:
        """A 2026-07-28 ``subscriptions/listen`` stream of list changes (``tools``,
        ``prompts``, ``resources``), updates of the resources ``uris`` and the status of
        the tasks ``task_ids`` (``notifications/tasks``, each with the whole task; needs
        ``Client(tasks=True)``): ``async with client.listen(...) as stream: async for note
        in stream`` (see :mod:`mcpfast.client.listening`). ``timeout``: for the
        acknowledgement. ClientError over a handshake version (use ``subscribe`` and
        ``on_list_changed``)."""
        if self.discover_result is None:
            raise ClientError("subscriptions/listen belongs to 2026-07-28; over a handshake "
                              "version use subscribe() and on_list_changed()")
        notifications = listen_filter(tools, prompts, resources, uris, task_ids)
        extensions = self._capabilities.get("extensions")
        if "taskIds" in notifications and (type(extensions) is not dict
                                           or TASKS_EXTENSION not in extensions):
            raise ClientError("listening to tasks needs the tasks extension: Client(..., tasks=True)")
        return Listening(self._open_listen, self._forget_listen, notifications, timeout)

    def _open_listen(self, listening: Listening) -> Any:
        session = self._session
        assert session is not None
        for method in LISTEN_NOTIFICATIONS:
            if method not in self._listen_hooks:
                self._listen_hooks.add(method)
                if method != RESOURCE_UPDATED_METHOD:
                    self._notifications.add_hook(method, self._route_listen(method))
        params = with_meta({"notifications": listening.requested}, self._meta)
        out = session.send_request(methods.SUBSCRIPTIONS_LISTEN, params, timeout=math.inf)
        self._listens[out.id] = listening
        return out

    def _forget_listen(self, listening: Listening) -> None:
        if self._listens.get(listening.id) is listening:
            del self._listens[listening.id]

    def _route_listen(self, method: str) -> Callable[[Any], None]:
        kind = LIST_CHANGED_METHODS.get(method)

        def route(params: Any) -> None:
            if kind is not None:
                self._cache.changed(kind)  # cached lists of that kind are stale now
            self._to_listen(method, params)
        return route

    def _to_listen(self, method: str, params: Any) -> bool:
        """Give a notification tagged with a subscription id to its stream."""
        meta = params.get("_meta") if type(params) is dict else None
        if type(meta) is not dict or meta_keys.SUBSCRIPTION_ID not in meta:
            return False
        listening = self._listens.get(meta[meta_keys.SUBSCRIPTION_ID])
        if listening is None:
            return False
        listening.push(method, params)
        return True

    async def unsubscribe(self, uri: str, *, timeout: Optional[float] = None) -> None:
        """End every subscription to uri here and send resources/unsubscribe."""
        if not self._subscribe:
            self._refuse("resources.subscribe", "resources/unsubscribe")
        str_arg("uri", uri)
        for subscription in self._subscriptions.pop(uri, ()):
            subscription.end(None)
        await self._request("resources/unsubscribe", {"uri": uri}, timeout=timeout)

    def _forget(self, subscription: Subscription) -> bool:
        """Drop a subscription here; True when it was the last one of its URI."""
        subscription.end(None)
        subscriptions = self._subscriptions.get(subscription.uri)
        if subscriptions is None or subscription not in subscriptions:
            return False
        subscriptions.remove(subscription)
        if subscriptions:
            return False
        del self._subscriptions[subscription.uri]
        return True

    async def _release_subscription(self, subscription: Subscription,
                                    timeout: Optional[float] = None) -> None:
        if self._forget(subscription) and not self.closed:
            await self._request("resources/unsubscribe", {"uri": subscription.uri},
                                timeout=timeout)

    def _deliver_update(self, params: Any) -> Any:
        """The notifications/resources/updated hook: feed the URI's subscriptions (or the
        listen stream it is tagged for)."""
        if self._listens and self._to_listen(RESOURCE_UPDATED_METHOD, params):
            return None
        uri = params.get("uri") if type(params) is dict else None
        subscriptions = self._subscriptions.get(uri) if type(uri) is str else None
        if not subscriptions:
            return None
        awaitables = None
        for subscription in tuple(subscriptions):
            result = subscription.push(params)
            if result is not None:
                if awaitables is None:
                    awaitables = [result]
                else:
                    awaitables.append(result)
        if awaitables is None:
            return None
        return await_all(RESOURCE_UPDATED_METHOD, awaitables)

    # -- prompts -------------------------------------------------------------------------

    async def list_prompts(self, *, timeout: Optional[float] = None) -> list:
        """Every prompt (all pages)."""
        if not self._prompts:
            self._refuse("prompts", "prompts/list")
        return await every_page(self._request, "prompts/list", "prompts", timeout)

    async def list_prompts_page(self, cursor: Optional[str] = None, *,
                                timeout: Optional[float] = None) -> dict:
        """One page of prompts/list."""
        if not self._prompts:
            self._refuse("prompts", "prompts/list")
        return await page_of(self._request, "prompts/list", "prompts", cursor, timeout)

    async def get_prompt(self, name: str, arguments: Optional[Mapping[str, str]] = None, *,
                         timeout: Optional[float] = None,
                         progress: Optional[Callable[..., Any]] = None) -> dict:
        """Get a prompt; arguments map names to strings. Returns the GetPromptResult dict."""
        if not self._prompts:
            self._refuse("prompts", "prompts/get")
        params: dict[str, Any] = {"name": str_arg("name", name)}
        if arguments is not None:
            params["arguments"] = string_map("arguments", arguments)
        return await self._request("prompts/get", params, timeout=timeout, progress=progress)

    # -- completion, logging -------------------------------------------------------------

    async def complete(
        self,
        argument: str,
        value: str,
        *,
        prompt: Optional[str] = None,
        resource: Optional[str] = None,
        context: Optional[Mapping[str, str]] = None,
        timeout: Optional[float] = None,
    ) -> dict:
        """Ask for completions of one argument of a prompt or a resource template.

        Exactly one of ``prompt`` (a prompt name) or ``resource`` (a URI template) names
        what the argument belongs to; ``context`` maps arguments already filled in to
        their values (2025-06-18 and later). Returns ``{"completion": {"values": [...],
        "total"?: n, "hasMore"?: bool}}``.
        """
        if not self._completions:
            self._refuse("completions", "completion/complete")
        if (prompt is None) == (resource is None):
            raise TypeError("complete() needs exactly one of prompt=... or resource=...")
        if prompt is not None:
            ref = {"type": "ref/prompt", "name": str_arg("prompt", prompt)}
        else:
            ref = {"type": "ref/resource", "uri": str_arg("resource", resource)}
        params: dict[str, Any] = {
            "ref": ref,
            "argument": {"name": str_arg("argument", argument), "value": str_arg("value", value)},
        }
        if context is not None:
            if self.protocol_version is not None and self.protocol_version < "2025-06-18":
                raise ClientError(
                    f"completion context needs MCP 2025-06-18 or later; this connection "
                    f"negotiated {self.protocol_version}"
                )
            params["context"] = {"arguments": string_map("context", context)}
        return await self._request("completion/complete", params, timeout=timeout)

    async def set_logging_level(self, level: str, *, timeout: Optional[float] = None) -> None:
        """Ask the server to send log messages at ``level`` and above (LOG_LEVELS)."""
        if not self._logging:
            self._refuse("logging", "logging/setLevel")
        if level not in LOG_LEVELS:
            raise ValueError(f"level must be one of {', '.join(LOG_LEVELS)}, got {level!r}")
        if self.discover_result is not None:
            # 2026-07-28: the level travels in each request's _meta.
            self._log_level = level
            self._meta = request_meta(self.protocol_version or STATELESS_VERSIONS[0],
                                      self._capabilities, self._client_info, level)
            return
        await self._request("logging/setLevel", {"level": level}, timeout=timeout)

    # -- roots ---------------------------------------------------------------------------

    def set_roots(self, roots: Any) -> None:
        """Replace the roots offered (a list, or a function returning one) and tell the
        server (notifications/roots/list_changed) when connected."""
        if self._roots is None:
            raise ClientError(
                "this client does not offer roots: pass roots=[...] when connecting to "
                "advertise the roots capability"
            )
        self._roots.set(roots)
        self.notify_roots_changed()

    def notify_roots_changed(self) -> bool:
        """Send notifications/roots/list_changed (when initialized); True when sent."""
        if self._roots is None:
            raise ClientError("this client does not offer roots")
        if not self.initialized:
            return False
        self._session.notify("notifications/roots/list_changed")  # type: ignore[union-attr]
        return True

    # -- notification callbacks ----------------------------------------------------------

    def on_notification(self, method: str, callback: Optional[Callable[[dict], Any]] = None) -> Any:
        """Call ``callback(params)`` for each notification named method (decorator too)."""
        if callback is None:
            return lambda fn: self._notifications.add(method, fn)
        return self._notifications.add(method, callback)

    def remove_notification_handler(self, method: str, callback: Callable[[dict], Any]) -> None:
        """Undo ``on_notification(method, callback)`` (ValueError when not registered)."""
        self._notifications.remove(method, callback)

    def on_log(self, callback: Callable[[dict], Any]) -> Callable[[dict], Any]:
        """Call ``callback(params)`` for each notifications/message (``level``, ``data``,
        ``logger``?); usable as a decorator."""
        return self._notifications.add(LOG_METHOD, callback)

    def on_list_changed(self, callback: Callable[[str], Any]) -> Callable[[str], Any]:
        """Call ``callback(kind)`` with "tools", "resources" or "prompts" when the server
        says that list changed; usable as a decorator."""
        if not callable(callback):
            raise TypeError(f"callback must be callable, not {type(callback).__name__}")
        def for_kind(kind: str) -> Callable[[Any], Any]:
            return lambda params: callback(kind)

        for method, kind in LIST_CHANGED_METHODS.items():
            self._notifications.add(method, for_kind(kind))
        return callback

    def on_resource_updated(self, callback: Callable[[dict], Any]) -> Callable[[dict], Any]:
        """Call ``callback(params)`` for every notifications/resources/updated (whatever
        the URI; see also :meth:`subscribe`); usable as a decorator."""
        return self._notifications.add(RESOURCE_UPDATED_METHOD, callback)
