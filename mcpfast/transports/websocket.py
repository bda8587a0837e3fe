"""MCP over WebSocket: one JSON-RPC message per text frame, subprotocol ``mcp``.

WebSocket is not one of MCP's standard transports; this is the binding the ecosystem
uses (the subprotocol ``mcp``, one message per text frame), for clients and servers
that want one long-lived socket through proxies that pass WebSockets.

The library is picows (its frame parser and masking are C/Cython; about three times the
messages per second of ``websockets`` in the echo comparison recorded in the design notes,
section 5), on the running loop (uvloop under ``mcpfast.transports.run``). Its listener,
which moves frames in and out of the connection, is compiled
(:class:`~mcpfast.transports.ws_listener.MCPListener`).

Server (:func:`serve_websocket`): the upgrade is refused with 404 on another path, 421 /
403 when Host / Origin fail the :class:`~mcpfast.transports.http.HostPolicy`, and 400 when
the client offers subprotocols without ``mcp`` (a client offering none is served, without
the header). With ``auth`` (a :class:`~mcpfast.transports.http.BearerAuth`) the upgrade
carries the credentials (``Authorization: Bearer`` or the API-key header) and gets the
same refusals as an HTTP request (401 / 403 / 400 with ``WWW-Authenticate``); the socket's
handlers see the token as ``ctx.auth``. The upgrade is answered without waiting, so a
verdict that needs I/O first (a key set not fetched yet, a token not introspected yet) is
answered 503 with ``Retry-After: 1`` while it completes; the verifier keeps its answer and
the client's retry is served. A binary frame closes the socket with 1003 (unsupported data); a message
over ``max_frame_size`` with 1009 (message too big; a message in several frames counts
whole), frames of a message out of order with 1002; a malformed JSON text is answered
-32700 and the socket goes on. The peer going away closes the connection, which cancels
what its requests still run.

Client (:func:`open_websocket`, used by ``mcpfast.connect("ws://...")``): asks for the
``mcp`` subprotocol; the server's messages feed the connection; ``close()`` sends a
normal closure (1000).
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any, Callable, Optional

from mcpfast._core.framing import DEFAULT_MAX_FRAME_SIZE
from mcpfast.jsonrpc.contract import Connection
from mcpfast.transports.http import headers as h
from mcpfast.transports.http.messages import HTTPResponse
from mcpfast.transports.http.security import HostPolicy
from mcpfast.transports.stream import DEFAULT_MAX_WRITE_BUFFER

__all__ = ["SUBPROTOCOL", "open_websocket", "serve_websocket"]

SUBPROTOCOL = "mcp"


def _picows() -> Any:
    try:
        import picows
    except ImportError as exc:  # pragma: no cover - a dependency of mcpfast
        raise ImportError("the WebSocket transport needs picows (pip install picows)") from exc
    return picows


def _listener_class() -> Any:
    _picows()  # the clear ImportError first
    # Compiled (ws_listener.pyx): picows calls it through its C method table.
    from mcpfast.transports.ws_listener import MCPListener

    return MCPListener


def _offered(headers: Any) -> list[str]:
    value = headers.get("sec-websocket-protocol") if headers is not None else None
    if not value:
        return []
    return [item.strip() for item in str(value).split(",") if item.strip()]


async def serve_websocket(
    factory: Callable[[Callable[[bytes], None]], Connection],
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    path: str = "/mcp",
    max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
    host_policy: Optional[HostPolicy] = None,
    ready: Optional[Callable[[str, int], None]] = None,
    max_write_buffer: int = DEFAULT_MAX_WRITE_BUFFER,
    auth: Any = None,
) -> None:
    """Serve MCP over WebSocket on ``ws://host:port/path`` until cancelled (module
    docstring). ``host_policy``: Host/Origin checks (on for loopback binds unless given).
    ``max_write_buffer``: the most bytes queued for a peer that does not read (past it the
    socket is dropped, with a warning; reading pauses above the high-water mark already).
    Cancelled, it stops listening and closes every open socket with 1001 (going away),
    which cancels what their requests still run."""
    picows = _picows()
    if not isinstance(path, str) or not path.startswith("/"):
        raise ValueError(f"path must start with '/', got {path!r}")
    policy = host_policy if host_policy is not None else HostPolicy.for_bind(host)
    listener_class = _listener_class()
    # The listeners of the open sockets: closed with 1001 when the server stops.
    live: set[Any] = set()

    def upgrade(request: Any) -> Any:
        headers = request.headers
        request_path = request.path.decode("latin-1") if isinstance(request.path, bytes) else request.path
        if request_path.split("?", 1)[0] != path:
            return _refusal(picows, 404, f"Not Found: the MCP WebSocket is {path}")
        refused = policy.check(headers.get("host"), headers.get("origin"))
        if refused is not None:
            return _refusal(picows, refused[0], refused[1])
        made = factory
        if auth is not None:
            verdict = auth.authenticate(headers)
            if inspect.isawaitable(verdict):
                _finish_in_background(verdict)
                return _refusal(picows, 503, "Service Unavailable: the credentials are being "
                                             "verified; try again", {"Retry-After": "1"})
            if isinstance(verdict, HTTPResponse):
                return _refusal(picows, verdict.status, verdict.body.decode("utf-8", "replace"),
                                {name: value for name, value in verdict.headers
                                 if name == h.WWW_AUTHENTICATE})
            made = _bound(factory, verdict)
        offered = _offered(headers)
        extra = {}
        if offered:
            if SUBPROTOCOL not in offered:
                return _refusal(picows, 400, f"Bad Request: the subprotocol must be "
                                             f"{SUBPROTOCOL!r}, offered {offered}")
            extra["Sec-WebSocket-Protocol"] = SUBPROTOCOL
        response = picows.WSUpgradeResponse.create_101_response(extra_headers=extra)
        return picows.WSUpgradeResponseWithListener(response,
                                                    listener_class(made, live, max_frame_size,
                                                                   max_write_buffer))

    server = await picows.ws_create_server(upgrade, host, port, max_frame_size=max_frame_size,
                                           enable_auto_pong=True)
    try:
        bound = server.sockets[0].getsockname()
        if ready is not None:
            ready(bound[0], bound[1])
        await asyncio.Future()
    finally:
        server.close()
        for listener in list(live):
            listener.going_away()
        await server.wait_closed()


def _refusal(picows: Any, status: int, message: str, headers: Optional[dict[str, str]] = None) -> Any:
    response = picows.WSUpgradeResponse.create_error_response(status, message.encode("utf-8"),
                                                              extra_headers=headers)
    return picows.WSUpgradeResponseWithListener(response, None)


def _bound(factory: Callable[[Callable[[bytes], None]], Connection],
           token: Any) -> Callable[[Callable[[bytes], None]], Connection]:
    # The socket's connection carries the caller's verified token (ctx.auth).
    def make(send: Callable[[bytes], None]) -> Connection:
        connection = factory(send)
        connection.auth = token  # type: ignore[attr-defined]
        return connection

    return make


# Verdicts finishing after their upgrade was answered 503, referenced until done.
_VERIFYING: set[asyncio.Task[Any]] = set()


def _finish_in_background(verdict: Any) -> None:
    task = asyncio.ensure_future(verdict)
    _VERIFYING.add(task)
    task.add_done_callback(_VERIFYING.discard)


class WebSocketClientStream:
    """The transport handle ``open_websocket`` returns: ``conn``, ``send``, ``close()``."""

    def __init__(self, transport: Any, listener: Any) -> None:
        self.transport = transport
        self.listener = listener
        self.conn = listener.conn
        self.send = listener.send

    async def close(self) -> None:
        """A normal closure (1000), then wait for the socket to go."""
        picows = _picows()
        transport = self.transport
        if not transport.is_disconnected:
            transport.send_close(picows.WSCloseCode.OK)
            transport.disconnect()
        await transport.wait_disconnected()

    async def __aenter__(self) -> WebSocketClientStream:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.close()


async def open_websocket(url: str, factory: Callable[[Callable[[bytes], None]], Connection], *,
                         headers: Optional[dict[str, str]] = None,
                         max_frame_size: int = DEFAULT_MAX_FRAME_SIZE) -> WebSocketClientStream:
    """Connect to an MCP WebSocket server (``ws://`` or ``wss://``), asking for the
    ``mcp`` subprotocol; the connection is made by ``factory(send)``."""
    picows = _picows()
    listener_class = _listener_class()
    extra = {"Sec-WebSocket-Protocol": SUBPROTOCOL, **(headers or {})}
    try:
        transport, listener = await picows.ws_connect(
            lambda: listener_class(factory, None, max_frame_size), url, extra_headers=extra,
            max_frame_size=max_frame_size)
    except picows.WSError as exc:
        raise ConnectionError(f"cannot open {url}: {exc}") from exc
    return WebSocketClientStream(transport, listener)
