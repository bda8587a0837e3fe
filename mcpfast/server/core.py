"""The declared server core: what the lower server modules may read of a server.

A connection, the method handlers, the listen streams, the logging bridge's users, the
stateless era and the task methods take a :class:`ServerCore`, never the
:class:`~mcpfast.server.server.Server` facade (which is one): the fields and methods
below are the whole of what they read, and the attach/detach registry is public.
:class:`ConnectionHandle` is what a request's context and the per-request plumbing read
of the connection a request came in on (a
:class:`~mcpfast.server.connection.ServerConnection` is one).

Types: this module sits low in the server package (the modules that use it must not be
imported by it, or the import graph would close a cycle), so a field whose class lives
above it (the task manager, the stateless era, the completer, state sources, the request
state codec) is declared ``Any`` here and documented by name.

Compiled code reads the core in three places, each field owned by Python (set there,
only read in C): ``connection_core.pyx`` reads ``default_log_level`` and ``publisher``
through the connection's ``server`` field (declared in ``connection_core.pxd``), the
context factories (``context_factories.pyx``) the stateless era's ``claim`` and ``claims``,
and ``tools_call.pyx`` the tools catalog's dict.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable, Mapping, Optional, Protocol

from mcpfast.auth import AccessToken
from mcpfast.jsonrpc.router import Router
from mcpfast.protocol.features import VersionFeatures
from mcpfast.server.features.catalog import Catalog
from mcpfast.server.publisher import Publisher
from mcpfast.server.request.state import ProtocolState

__all__ = ["ConnectionHandle", "ServerCore"]


class ServerCore(Protocol):
    """The server as its lower modules see it (module docstring)."""

    # -- identity (serverInfo, instructions) ---------------------------------------------
    name: str
    version: str
    instructions: Optional[str]
    # -- limits, defaults, logging ---------------------------------------------------------
    default_log_level: int
    logging_enabled: bool
    advertise: frozenset[str]
    request_timeout: Optional[float]
    max_in_flight: Optional[int]
    logger: logging.Logger
    loop: Optional[asyncio.AbstractEventLoop]
    # -- routing and checks ----------------------------------------------------------------
    router: Router
    # The per-request checks after the initialization gate (``check(ctx)``).
    request_checks: tuple[Callable[[Any], None], ...]
    # StateSource objects asked, in order, for a request's protocol state.
    state_sources: tuple[Any, ...]
    # -- catalogs and features ---------------------------------------------------------------
    tools_catalog: Catalog[Any]
    resources_catalog: Catalog[Any]
    templates_catalog: Catalog[Any]
    prompts_catalog: Catalog[Any]
    # The Completer, or None.
    completer: Any
    roots_changed_callbacks: list[Callable[[Any], Any]]
    # -- fan-out, streams, tasks, the 2026-07-28 era ---------------------------------------
    publisher: Publisher
    listen_streams: set[Any]
    # The TaskManager (mcpfast.server.tasks.manager).
    tasks: Any
    # The StatelessEra (mcpfast.server.eras.stateless), None when the server speaks no 2026 era.
    stateless_era: Any
    # The CachePolicy of cacheable 2026-07-28 results.
    cache_policy: Any
    # The RequestStateCodec of 2026-07-28 InputRequiredResults.
    request_state_codec: Any

    @property
    def dispatch_router(self) -> Router:
        """The Router connections dispatch through (the pipeline's when there is one)."""

    @property
    def lifespan_state(self) -> Any:
        """What the lifespan yielded."""

    @property
    def tools(self) -> Mapping[str, Any]:
        """Registered tools by name."""

    def capabilities(self, features: VersionFeatures) -> dict[str, Any]:
        """The capabilities declared to a client of these features."""

    def server_info(self, features: VersionFeatures) -> dict[str, Any]:
        """The serverInfo for a client of these features."""

    def has_resource(self, uri: str) -> bool:
        """Whether a resource or template answers ``uri``."""

    def read_resource(self, uri: str, ctx: Any) -> Any:
        """The result of resources/read of ``uri``."""

    def broadcast_log(self, level: str, data: Any, logger: Optional[str] = None) -> int:
        """A log message to every connection that wants its level."""

    def attach(self, connection: Any) -> None:
        """A connection starts serving: among the server's, and the publisher's."""

    def detach(self, connection: Any) -> None:
        """A connection ended."""


class ConnectionHandle(Protocol):
    """A server connection as a request's context sees it (module docstring)."""

    server: ServerCore
    state: ProtocolState
    # The verified access token when the transport authenticates, else None.
    auth: Optional[AccessToken]
    # The client's address (no port; None when the transport knows none, as on stdio).
    peer_address: Optional[str]
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
