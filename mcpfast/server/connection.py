"""ServerConnection: one client connected to a Server, sans I/O.

``Server.connect(send)`` (the server's connection factory) makes one per client. It wraps a
:class:`~mcpfast.jsonrpc.Session` that dispatches through the server's shared Router and
satisfies the transport contract directly: ``feed`` and ``feed_error`` *are* the session's
methods (no extra layer on the hot path), ``close`` also unregisters the connection from
the server.

Per connection it keeps the :class:`ProtocolState` filled by the handshake, the
capabilities the server advertised in its initialize result (list_changed notifications go
only where the matching ``listChanged`` was advertised), and the resource subscriptions.

Lifecycle rule (the specification: before initialization completes the server answers
only ping and initialize): until the client's ``notifications/initialized`` arrives, every
other request is refused with NOT_INITIALIZED (-32005, from the error catalogue of erlmcp, the seed design; the
specification names no code for this) and the data ``{"method": ...}``. Once initialized
the check is removed from the session altogether, so it costs nothing afterwards.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Callable, Optional

from mcpfast.jsonrpc.errors import NOT_INITIALIZED, JSONRPCError
from mcpfast.jsonrpc.session import Session
from mcpfast.protocol import methods
from mcpfast.server.client_requests import Root, parse_roots, require_capability
from mcpfast.server.context import Context
from mcpfast.server.logs import level_index
from mcpfast.server.schema import to_jsonable
from mcpfast.server.state import ProtocolState

if TYPE_CHECKING:
    from mcpfast.server.server import Server

__all__ = ["ServerConnection"]



class ServerConnection:
    """One client's connection to a Server (see the module docstring).

    Attributes: ``server``, ``session`` (the JSON-RPC Session), ``state``
    (ProtocolState), ``capabilities`` (what initialize advertised, {} before),
    ``subscriptions`` (set of subscribed resource URIs).
    """

    def __init__(self, server: Server, send: Callable[[bytes], None], *,
                 loop: Optional[asyncio.AbstractEventLoop] = None) -> None:
        self.server = server
        self.state = ProtocolState(server.default_log_level)
        self.capabilities: dict[str, Any] = {}
        self.subscriptions: set[str] = set()
        state = self.state
        connection = self

        def make_context(session: Session, request_id: Any, method: str, params: Any,
                         channel: Any = None) -> Context:
            return Context(session, request_id, method, params, channel, connection, state)

        self.session = Session(
            send,
            router=server.router,
            before_dispatch=self._before_initialized,
            context_factory=make_context,
            loop=loop,
            logger=server.logger,
            request_timeout=server.request_timeout,
            uncancellable=methods.UNCANCELLABLE,
        )
        # The transport contract, bound straight to the session.
        self.feed = self.session.feed
        self.feed_error = self.session.feed_error
        server._attach(self)

    def __repr__(self) -> str:
        return f"<ServerConnection {self.state!r} closed={self.closed}>"

    @property
    def closed(self) -> bool:
        return self.session.closed

    def close(self, exc: Optional[BaseException] = None) -> None:
        """The transport is gone: stop everything (idempotent)."""
        self.server._detach(self)
        self.session.close(exc)

    # -- lifecycle ---------------------------------------------------------------------

    def _before_initialized(self, ctx: Context) -> None:
        if ctx.request_id is None or ctx.method in methods.BEFORE_INITIALIZED:
            return
        raise JSONRPCError(
            NOT_INITIALIZED,
            f"Server not initialized: {ctx.method!r} sent before the initialization "
            f"completed (initialize, then notifications/initialized)",
            {"method": ctx.method},
        )

    def mark_initialized(self) -> None:
        """notifications/initialized arrived: lift the pre-initialization check."""
        self.state.initialized = True
        self.session.before_dispatch = None

    # -- messages to the client --------------------------------------------------------

    def notify(self, method: str, params: Any = None) -> bool:
        """Send a notification; False (nothing sent) when the connection is closed."""
        if self.session.closed:
            return False
        self.session.notify(method, params)
        return True

    def send_log(self, level: str, data: Any, logger: Optional[str] = None) -> bool:
        """notifications/message when the handshake is done and the level passes the
        client's filter; True when sent."""
        if self.state.features is None or level_index(level) < self.state.log_level:
            return False
        params: dict[str, Any] = {"level": level, "data": data if type(data) is str else to_jsonable(data)}
        if logger is not None:
            params["logger"] = logger
        return self.notify(methods.LOG_MESSAGE, params)

    def send_list_changed(self, kind: str) -> bool:
        """notifications/<kind>/list_changed if this client was told listChanged for kind."""
        if not self.state.initialized:
            return False
        advertised = self.capabilities.get(kind)
        if not isinstance(advertised, dict) or not advertised.get("listChanged"):
            return False
        return self.notify(methods.LIST_CHANGED[kind])

    def send_resource_updated(self, uri: str) -> bool:
        """notifications/resources/updated when this client subscribed to uri."""
        if uri not in self.subscriptions:
            return False
        return self.notify(methods.RESOURCE_UPDATED, {"uri": uri})

    async def request(self, method: str, params: Any = None, *,
                      timeout: Optional[float] = None) -> Any:
        """Send a request to the client and return its result (Session.request)."""
        return await self.session.request(method, params, timeout=timeout)

    async def ping(self, *, timeout: Optional[float] = None) -> None:
        """Ping the client."""
        await self.session.request("ping", None, timeout=timeout)

    async def list_roots(self, *, timeout: Optional[float] = None) -> list[Root]:
        """The client's roots; ClientCapabilityError unless it declared ``roots``."""
        if self.state.features is None:
            raise RuntimeError("the connection has not completed initialize yet")
        require_capability(self.state.client_capabilities, self.state.features, "roots")
        return parse_roots(await self.session.request("roots/list", None, timeout=timeout))
