"""ServerConnection: one client connected to a Server, sans I/O.

``Server.connect(send)`` (the server's connection factory) makes one per client. It wraps a
:class:`~mcpfast.jsonrpc.Session` that dispatches through the server's shared Router and
satisfies the transport contract directly: ``feed`` and ``feed_error`` *are* the session's
methods (no extra layer on the hot path), ``close`` also unregisters the connection from
the server.

Per connection it keeps the :class:`ProtocolState` filled by the handshake, the
capabilities the server advertised in its initialize result (list_changed notifications go
only where the matching ``listChanged`` was advertised), and the resource subscriptions.
It is a subscriber of the server's publisher: ``deliver(event)`` sends list changes,
resource updates and log messages when this client wants them.

Each request's Context gets its protocol state and back channel from the server's state
sources (:mod:`mcpfast.server.request.state_source`), else from this connection's handshake. Before
routing, every request and notification passes an ordered chain of checks
(``add_check``): the initialization gate first, then the server's ``request_checks``. A
check refuses a request by raising JSONRPCError.

Lifecycle rule (the specification: before initialization completes the server answers
only ping and initialize): until the client's ``notifications/initialized`` arrives, every
other request is refused with NOT_INITIALIZED (-32005, from the error catalogue of erlmcp, the seed design; the
specification names no code for this) and the data ``{"method": ...}``. Once initialized
the gate leaves the chain (and with no other check, the session runs none at all). The gate
applies only to requests whose state is the handshake's: while it heads the chain, the
context factory applies it as it gives a request that state, so that a request claimed by
another state (a 2026-07-28 request on a connection that never completes a handshake) runs
nothing for it.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Callable, Optional

from mcpfast.jsonrpc.context import RequestContext
from mcpfast.jsonrpc.errors import NOT_INITIALIZED, JSONRPCError
from mcpfast.jsonrpc.runtime import Runtime
from mcpfast.jsonrpc.session import Session
from mcpfast.protocol import methods
from mcpfast.protocol.features import features_for
from mcpfast.server.connection_core import ConnectionCore
from mcpfast.server.context_factories import EitherEraContexts, HandshakeContexts
from mcpfast.server.logs import level_index
from mcpfast.server.publisher import Event, ListChanged, LogMessage, ResourceUpdated
from mcpfast.server.request.back_channel import SESSION_BACK_CHANNEL, BackChannel, NoBackChannel
from mcpfast.server.request.context import Context
from mcpfast.server.request.requests_to_client import Root, parse_roots, require_capability
from mcpfast.server.request.state import ProtocolState
from mcpfast.server.schema import to_jsonable

if TYPE_CHECKING:
    from mcpfast.server.core import ServerCore

__all__ = ["Check", "ServerConnection"]

# A per-request check: raises JSONRPCError to refuse the request.
Check = Callable[[Context], None]


class ServerConnection(ConnectionCore):
    """One client's connection to a Server (see the module docstring).

    Attributes: ``server``, ``session`` (the JSON-RPC Session), ``state``
    (ProtocolState), ``capabilities`` (what initialize advertised, {} before),
    ``subscriptions`` (set of subscribed resource URIs), ``auth`` (the verified
    :class:`~mcpfast.auth.AccessToken` when the transport authenticates, else None).
    """

    def __init__(self, server: ServerCore, send: Callable[[bytes], None], *,
                 loop: Optional[asyncio.AbstractEventLoop] = None,
                 runtime: Optional[Runtime] = None,
                 preset_version: Optional[str] = None) -> None:
        self.server = server
        self.state = ProtocolState(server.default_log_level)
        self.capabilities: dict[str, Any] = {}
        # Set by a transport that authenticates its requests (HTTP bearer tokens).
        self.auth = None
        # The client's address (no port) and port, set by a transport that knows them
        # (TCP, WebSocket, Streamable HTTP).
        self.peer_address: Optional[str] = None
        self.peer_port: Optional[int] = None
        # The transport's session id (Streamable HTTP's Mcp-Session-Id), set by it.
        self.session_id: Optional[str] = None
        self.subscriptions = set()
        # Recycled and idle (see recycle): not among the server's connections.
        self.parked = False
        # Whether the publisher skips this connection while parked (else it is detached
        # then): see mcpfast.server.publisher.
        self._parks_attached = bool(getattr(server.publisher, "skips_parked", False))
        self._checks: list[Check] = [self._check_initialized, *server.request_checks]
        # The checks the session's hook runs: the chain less the gate while the context
        # factory applies it (_install_checks).
        self._hooked: list[Check] = []
        self._gated = False
        self._back_channel: BackChannel = SESSION_BACK_CHANNEL
        if preset_version is not None:
            # Stateless HTTP: no handshake on this connection; the request's version
            # header stands for it, and nothing can be asked of the client.
            features = features_for(preset_version)
            self.state.negotiate(preset_version, {}, {})
            self.state.initialized = True
            self.capabilities = server.capabilities(features)
            self._checks.remove(self._check_initialized)
            self._back_channel = NoBackChannel(
                "a stateless HTTP request has no channel back to the client")
        self.session = Session(
            send,
            router=server.dispatch_router,
            context_factory=self._context_factory(),
            loop=loop,
            runtime=runtime,
            logger=server.logger,
            request_timeout=server.request_timeout,
            max_in_flight=server.max_in_flight,
            uncancellable=methods.UNCANCELLABLE,
        )
        if preset_version is not None:
            self.session.allow_batches(features_for(preset_version).batches)
        self._install_checks()
        # The transport contract, bound straight to the session.
        self.feed = self.session.feed
        self.feed_message = self.session.feed_message
        self.feed_request = self.session.feed_request
        self.feed_error = self.session.feed_error
        server.attach(self)

    def _context_factory(self) -> Callable[..., Context]:
        connection = self
        state = self.state
        back_channel = self._back_channel
        sources = list(self.server.state_sources)
        era = self.server.stateless_era
        if not sources:
            # The hot factories are compiled (mcpfast.server.context_factories): the
            # session's request path calls them in C.
            if era is None:
                # Every request uses the handshake state: no per-request choice to make.
                return HandshakeContexts(connection, state, back_channel)
            # Both eras. A handshake request costs one test of _meta (most requests carry
            # none); a 2026-07-28 one is claimed with it.
            return EitherEraContexts(connection, state, back_channel, era)

        if era is not None:
            sources.append(era)

        def chosen_context(session: Session, request_id: Any, method: str, params: Any,
                           channel: Any = None) -> Context:
            for source in sources:
                claimed = source.state_for(connection, method, params)
                if claimed is not None:
                    ctx = Context(session, request_id, method, params, channel, connection,
                                  claimed.state, claimed.back_channel)
                    ctx.shape_result = claimed.shape_result
                    break
            else:
                ctx = Context(session, request_id, method, params, channel, connection, state,
                              back_channel)
            if connection._gated:
                # Also for a source that answered with the handshake's state: the gate
                # itself tells which state it applies to.
                connection._check_initialized(ctx)
            return ctx

        return chosen_context

    def __repr__(self) -> str:
        return f"<ServerConnection {self.state!r} closed={self.closed}>"

    @property
    def closed(self) -> bool:
        return self.session.closed

    def hear_broadcasts(self, on: bool) -> None:
        """Whether the server's published events (list changes, resource updates, log
        broadcasts) reach this connection: a session shared by several processes hears
        them in the one holding its GET stream only, so that each is sent once."""
        if self.session.closed:
            return
        if on:
            self.server.publisher.attach(self)
        else:
            self.server.publisher.detach(self)

    def number_requests_from(self, first_id: int) -> None:
        """Requests to the client get ids from ``first_id`` on (the copies of a shared
        session number theirs apart, so that a response finds the copy awaiting it)."""
        self.session.outgoing.number_from(first_id)

    def awaits(self, request_id: Any) -> bool:
        """Whether a request of the server's with that id waits for the client's answer."""
        return request_id in self.session.outgoing

    def close(self, exc: Optional[BaseException] = None) -> None:
        """The transport is gone: stop everything (idempotent)."""
        self.server.detach(self)
        self.session.close(exc)

    # -- per-request checks ------------------------------------------------------------

    @property
    def checks(self) -> tuple[Check, ...]:
        """The checks every incoming request passes, in order."""
        return tuple(self._checks)

    def add_check(self, check: Check) -> None:
        """Append a check to the chain (it runs after the ones already there)."""
        if not callable(check):
            raise TypeError(f"a check must be callable, not {type(check).__name__}")
        self._checks.append(check)
        self._install_checks()

    def remove_check(self, check: Check) -> None:
        """Take a check out of the chain (ValueError when it is not in it)."""
        self._checks.remove(check)
        self._install_checks()

    def _install_checks(self) -> None:
        checks = self._checks
        # The gate heading the chain is applied by the context factory, to the requests it
        # gives the handshake's state (module docstring): first, as in the chain, and never
        # for the others. Elsewhere in the chain (moved there by remove_check / add_check)
        # it runs where it stands.
        self._gated = bool(checks) and checks[0] == self._check_initialized
        hooked = self._hooked = checks[1:] if self._gated else list(checks)
        if len(hooked) == 1:
            # A lone check is the hook itself: one call less per request.
            self.session.before_dispatch = hooked[0]
        else:
            self.session.before_dispatch = self._run_checks if hooked else None

    def _run_checks(self, ctx: RequestContext) -> None:
        for check in self._hooked:
            check(ctx)  # type: ignore[arg-type]  # the session builds our Contexts

    def _check_initialized(self, ctx: Context) -> None:
        if ctx.request_id is None or ctx.state is not self.state:
            return
        if ctx.method in methods.BEFORE_INITIALIZED:
            return
        raise JSONRPCError(
            NOT_INITIALIZED,
            f"Server not initialized: {ctx.method!r} sent before the initialization "
            f"completed (initialize, then notifications/initialized)",
            {"method": ctx.method},
        )

    def mark_initialized(self) -> None:
        """notifications/initialized arrived: the initialization gate leaves the chain."""
        self.state.initialized = True
        if self._check_initialized in self._checks:
            self.remove_check(self._check_initialized)

    # -- messages to the client --------------------------------------------------------

    def notify(self, method: str, params: Any = None) -> bool:
        """Send a notification; False (nothing sent) when the connection is closed."""
        if self.session.closed:
            return False
        self.session.notify(method, params)
        return True

    def deliver(self, event: Event) -> bool:
        """A published event: sent when this client wants it (True when sent)."""
        if isinstance(event, LogMessage):
            return self.send_log(event.level, event.data, event.logger)
        if isinstance(event, ListChanged):
            return self.send_list_changed(event.kind)
        if isinstance(event, ResourceUpdated):
            return self.send_resource_updated(event.uri)
        return False

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
