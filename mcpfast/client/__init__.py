"""mcpfast.client: the MCP client, in pure Python over the sans-I/O JSON-RPC session.

The public API: :func:`connect` (async; stdio command or ``tcp://`` URL, handshake done),
:func:`connect_sync` (blocking, for scripts), :class:`Client`, :class:`SyncClient`,
:class:`Subscription` and the client-side errors. Module map:

  client.py         Client: handshake, requests, capability checks, callbacks, roots
  connect.py        connect(): target parsing, transport choice, Connector
  sync.py           connect_sync(), SyncClient: a background loop thread
  capabilities.py   the server's advertised capabilities; the client's own
  handlers.py       sampling / elicitation / roots served to the server
  notifications.py  notification callbacks
  subscriptions.py  resource subscriptions (async iterator or callback)
  versions.py       protocol versions spoken and their negotiation
  errors.py         CapabilityError, UnsupportedProtocolVersion, ...
"""

from mcpfast.client.client import (
    DEFAULT_INITIALIZE_TIMEOUT,
    LOG_LEVELS,
    Client,
    ClientConnection,
)
from mcpfast.client.connect import Connector, Target, connect, parse_target
from mcpfast.client.errors import (
    CapabilityError,
    ClientError,
    InitializeError,
    InvalidResult,
    NotInitialized,
    PaginationError,
    TransportUnavailable,
    UnsupportedProtocolVersion,
)
from mcpfast.client.handlers import ServerRequest, with_request
from mcpfast.client.subscriptions import Subscription
from mcpfast.client.sync import SyncClient, SyncSubscription, connect_sync
from mcpfast.client.versions import LATEST_VERSION, SUPPORTED_VERSIONS

__all__ = [
    "CapabilityError",
    "Client",
    "ClientConnection",
    "ClientError",
    "Connector",
    "DEFAULT_INITIALIZE_TIMEOUT",
    "InitializeError",
    "InvalidResult",
    "LATEST_VERSION",
    "LOG_LEVELS",
    "NotInitialized",
    "PaginationError",
    "SUPPORTED_VERSIONS",
    "ServerRequest",
    "Subscription",
    "SyncClient",
    "SyncSubscription",
    "Target",
    "TransportUnavailable",
    "UnsupportedProtocolVersion",
    "connect",
    "connect_sync",
    "parse_target",
    "with_request",
]
