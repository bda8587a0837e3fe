"""mcpfast.transports: asyncio/uvloop adapters that move frames between bytes and a conn.

A transport knows a *connection factory* ``factory(send) -> conn`` and nothing above it:
``conn.feed(frame)`` for each received frame, ``conn.feed_error(exc)`` for a frame that
could not be delivered (too large), ``conn.close(exc=None)`` when the connection ends;
``send(frame)`` writes one frame. A jsonrpc Session satisfies it, as do the MCP server's
and client's connections.

* stdio: :func:`serve_stdio` (this process's stdin/stdout), :func:`open_stdio` (spawn a
  server process).
* TCP, newline framed: :func:`serve_tcp`, :func:`open_tcp`.
* Streamable HTTP (server side): :func:`serve_http` and the ASGI app, in
  :mod:`mcpfast.transports.http`.
* Limits (connections, idle timeout, buffered bytes; README "Limits"): the keywords of
  serve_tcp / serve_stdio, and the exceptions a conn or a sender sees when one is hit:
  :class:`WriteBufferFull`, :class:`PeerNotReading`, :class:`ConnectionIdle`,
  :class:`InputBudgetExceeded`.
* :func:`run`: asyncio.run on uvloop when it is installed.
"""

from mcpfast.transports.budget import InputBudget
from mcpfast.transports.http import serve_http
from mcpfast.transports.loop import loop_factory, new_event_loop, run, uvloop_available
from mcpfast.transports.stdio import (
    INHERITED_ENV_VARS,
    ServerProcess,
    default_environment,
    open_stdio,
    serve_stdio,
)
from mcpfast.transports.stream import (
    ConnectionIdle,
    ConnFactory,
    FrameProtocol,
    InputBudgetExceeded,
    PeerNotReading,
    StreamConnection,
    StreamState,
    TransportClosed,
    WriteBufferFull,
)
from mcpfast.transports.tcp import open_tcp, serve_tcp
from mcpfast.transports.websocket import open_websocket, serve_websocket

__all__ = [
    "ConnFactory",
    "ConnectionIdle",
    "FrameProtocol",
    "INHERITED_ENV_VARS",
    "InputBudget",
    "InputBudgetExceeded",
    "PeerNotReading",
    "ServerProcess",
    "StreamConnection",
    "StreamState",
    "TransportClosed",
    "WriteBufferFull",
    "default_environment",
    "loop_factory",
    "new_event_loop",
    "open_stdio",
    "open_tcp",
    "open_websocket",
    "run",
    "serve_http",
    "serve_stdio",
    "serve_tcp",
    "serve_websocket",
    "uvloop_available",
]
