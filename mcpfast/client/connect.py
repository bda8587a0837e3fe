"""connect(): open a transport to an MCP server, run the handshake, hand back a Client.

    async with mcpfast.connect(["python", "server.py"]) as client:     # stdio
        result = await client.call_tool("add", {"a": 1, "b": 2})

    async with mcpfast.connect("tcp://127.0.0.1:9000") as client: ...  # newline-framed TCP

    async with mcpfast.connect(app) as client: ...    # a Server object, in this process

A Server object (anything with a ``connection_factory``) is connected in this process, with
no subprocess and no socket (:class:`InProcessStream`): the frames each side sends pass
through the same line framing, codec and session code as over stdio, delivered from the
event loop in order. The server's lifespan (``app.running()``) is entered for the
connection unless it is running already.

    client = await mcpfast.connect("uvx some-server", env={"TOKEN": t})
    try: ...
    finally: await client.aclose()

Targets (:func:`parse_target`):

* a list or tuple: a command and its arguments, started as the server process (stdio);
* a str URL: ``tcp://host:port``; ``http://host:port/path`` and ``https://...``
  (Streamable HTTP; a path ending in ``/sse``: the 2024-11-05 HTTP+SSE transport of older
  servers; ``headers=`` adds headers to every request; ``auth=`` a bearer token
  str or an :class:`~mcpfast.transports.http.client_auth.HTTPAuth`, asked for the
  Authorization header of every request and told of 401/403 refusals);
  ``ws://`` / ``wss://``: MCP over WebSocket (subprotocol ``mcp``,
  :mod:`mcpfast.transports.websocket`);
* any other str: a command line, split like a POSIX shell does (``shlex``) unless ``args``
  is given, in which case the str is the program and ``args`` its arguments (use this, or a
  list, for a program path containing spaces).

Options for a process: ``env`` (variables added to the small safe environment the child
gets, see :func:`mcpfast.transports.default_environment`), ``cwd``, ``stderr`` (where the
server's stderr goes; default: ours). ``initialize_timeout``: seconds to wait for the
server's answer to initialize. Every other keyword goes to :class:`Client` (``sampling``,
``elicitation``, ``roots``, ``on_log``, ``timeout``, ``protocol_version``, ...); or pass a
Client made beforehand as ``client=``. ``observer=`` sees every request
(:mod:`mcpfast.client.observer`); by default, where an OpenTelemetry provider is configured,
it is the telemetry's (:mod:`mcpfast.telemetry`: a CLIENT span per request), else none.

``connect(...)`` returns a :class:`Connector`, used with ``async with`` (the connection is
closed on exit -- for stdio: the server's stdin closed, then SIGTERM/SIGKILL if it lingers)
or awaited (close it with ``await client.aclose()``). If the handshake fails, the connection
is closed before the error propagates.
"""

from __future__ import annotations

import asyncio
import os
import shlex
from typing import Any, NamedTuple, Optional, Sequence, Union
from urllib.parse import urlsplit

from mcpfast._core.framing import DEFAULT_MAX_FRAME_SIZE, FrameTooLarge, LineFramer
from mcpfast.client.client import DEFAULT_INITIALIZE_TIMEOUT, Client
from mcpfast.client.errors import TransportUnavailable

__all__ = ["Connector", "InProcessStream", "Target", "connect", "parse_target"]

# Transports named by URL scheme that this build cannot reach (none at present; kept so
# that a scheme can be declared before its transport exists).
_UNAVAILABLE_SCHEMES: dict[str, str] = {}


class Target(NamedTuple):
    """Where to connect: ``kind`` "stdio" (command, args), "tcp" (host, port) or the name of
    a transport that is not available ("Streamable HTTP", "WebSocket"; url)."""

    kind: str
    command: Optional[str] = None
    args: tuple = ()
    host: Optional[str] = None
    port: Optional[int] = None
    url: Optional[str] = None


def _parse_url(url: str) -> Target:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme == "tcp":
        try:
            port = parts.port
        except ValueError as exc:
            raise ValueError(f"invalid port in {url!r}: {exc}") from None
        if not parts.hostname or port is None:
            raise ValueError(f"a TCP target needs a host and a port: tcp://host:port, got {url!r}")
        if parts.path not in ("", "/") or parts.query or parts.fragment:
            raise ValueError(f"a TCP target is tcp://host:port, without path or query: {url!r}")
        return Target("tcp", host=parts.hostname, port=port, url=url)
    if scheme in ("http", "https"):
        if not parts.hostname:
            raise ValueError(f"a Streamable HTTP target needs a host: http://host:port/path, got {url!r}")
        return Target("http", url=url)
    if scheme in ("ws", "wss"):
        if not parts.hostname:
            raise ValueError(f"a WebSocket target needs a host: ws://host:port/path, got {url!r}")
        return Target("websocket", url=url)
    if scheme in _UNAVAILABLE_SCHEMES:
        return Target(_UNAVAILABLE_SCHEMES[scheme], url=url)
    raise ValueError(
        f"unknown URL scheme {parts.scheme!r} in {url!r}: expected tcp://, http(s):// or ws(s)://"
    )


def _default_observer(target: Target) -> Any:
    """The telemetry's client observer (:mod:`mcpfast.telemetry`) when a tracer or meter
    provider is configured, with the target's transport, host and port; else None (and
    nothing is installed on the request path)."""
    from mcpfast.telemetry import client_telemetry

    host, port = target.host, target.port
    if target.url is not None and target.kind in ("http", "websocket"):
        parts = urlsplit(target.url)
        host = parts.hostname
        try:
            port = parts.port or (443 if parts.scheme in ("https", "wss") else 80)
        except ValueError:
            port = None
    kind = target.kind if target.kind in ("stdio", "tcp", "http", "websocket") else None
    return client_telemetry(transport=kind, host=host, port=port)


def parse_target(target: Any, args: Optional[Sequence[str]] = None) -> Target:
    """The Target for what ``connect`` was given (see the module docstring)."""
    if isinstance(target, (list, tuple)):
        if args is not None:
            raise TypeError("give the arguments either in the target list or as args, not both")
        if not target:
            raise ValueError("the command list is empty")
        command, *rest = target
        return parse_target(command, rest)
    if isinstance(target, os.PathLike):
        target = os.fspath(target)
    if not isinstance(target, str):
        raise TypeError(
            f"the target must be a command (str or list) or a URL, not {type(target).__name__}"
        )
    if args is None and "://" in target and not any(c.isspace() for c in target):
        return _parse_url(target)
    if args is None:
        words = shlex.split(target)
        if not words:
            raise ValueError("the command is empty")
        command, arguments = words[0], words[1:]
    else:
        if isinstance(args, (str, bytes)):
            raise TypeError("args must be a sequence of strings, not a single string")
        command, arguments = target, [os.fspath(a) for a in args]
        for argument in arguments:
            if not isinstance(argument, str):
                raise TypeError(f"arguments must be str, not {type(argument).__name__}")
        if not command:
            raise ValueError("the command is empty")
    return Target("stdio", command=command, args=tuple(arguments))


def is_legacy_sse_url(url: str) -> bool:
    """Whether an http(s) URL names a 2024-11-05 HTTP+SSE endpoint (its path ends in /sse,
    as those servers name it), rather than a Streamable HTTP one."""
    return urlsplit(url).path.rstrip("/").endswith("/sse")


class InProcessStream:
    """A client and a server connection joined in this process (module docstring): each
    side's frames go, newline-terminated, through a LineFramer of ``max_frame_size`` to
    the other side's ``feed`` (``feed_error`` for a frame over the limit), one loop
    callback per frame so that neither side runs inside the other's send."""

    def __init__(self, connection_factory: Any, bind: Any, max_frame_size: int) -> None:
        self._loop = asyncio.get_running_loop()
        self._closed = False
        self._to_server = LineFramer(max_frame_size)
        self._to_client = LineFramer(max_frame_size)
        self.server_conn = connection_factory(self._server_sends)
        self.conn = bind(self._client_sends)
        self._scope: Any = None

    def _client_sends(self, frame: bytes) -> None:
        self._loop.call_soon(self._deliver, self._to_server, self.server_conn, bytes(frame))

    def _server_sends(self, frame: bytes) -> None:
        self._loop.call_soon(self._deliver, self._to_client, self.conn, bytes(frame))

    def _deliver(self, framer: LineFramer, conn: Any, frame: bytes) -> None:
        if self._closed:
            return
        for item in framer.feed(frame + b"\n"):
            if isinstance(item, FrameTooLarge):
                conn.feed_error(item)
            else:
                conn.feed(item)

    async def enter(self, app: Any) -> None:
        """Enter ``app.running()`` (its lifespan) for as long as this stream is open."""
        running = getattr(app, "running", None)
        if running is not None:
            scope = running()
            await scope.__aenter__()
            self._scope = scope

    async def close(self) -> None:
        """Close both sides, then leave the server's lifespan scope (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self.server_conn.close()
        self.conn.close()
        scope, self._scope = self._scope, None
        if scope is not None:
            await scope.__aexit__(None, None, None)


class Connector:
    """What ``connect`` returns: ``async with`` it, or ``await`` it (module docstring)."""

    __slots__ = ("target", "_client", "_stdio", "_max_frame_size", "_initialize_timeout", "_opened",
                 "_http", "_app")

    def __init__(self, target: Target, client: Client, *, stdio: dict, max_frame_size: int,
                 initialize_timeout: Optional[float],
                 http: Optional[dict[str, Any]] = None, app: Any = None) -> None:
        self.target = target
        self._app = app
        self._http = http or {}
        self._client = client
        self._stdio = stdio
        self._max_frame_size = max_frame_size
        self._initialize_timeout = initialize_timeout
        self._opened = False

    async def _open(self) -> Client:
        if self._opened:
            raise RuntimeError("this connect() was already used; call connect() again")
        self._opened = True
        target, client = self.target, self._client
        stream: Any
        if target.kind == "in-process":
            stream = InProcessStream(self._app.connection_factory, client.bind, self._max_frame_size)
            try:
                await stream.enter(self._app)
            except BaseException:
                await stream.close()
                raise
        elif target.kind == "stdio" and target.command is not None:
            from mcpfast.transports import open_stdio

            stream = await open_stdio(
                target.command, list(target.args), client.bind,
                max_frame_size=self._max_frame_size, **self._stdio,
            )
        elif target.kind == "tcp" and target.host is not None and target.port is not None:
            from mcpfast.transports import open_tcp

            stream = await open_tcp(
                target.host, target.port, client.bind, max_frame_size=self._max_frame_size,
            )
        elif target.kind == "websocket" and target.url is not None:
            from mcpfast.transports.websocket import open_websocket

            if "auth" in self._http:
                raise TypeError("auth= is not available over WebSocket: pass headers= instead")
            stream = await open_websocket(target.url, client.bind, max_frame_size=self._max_frame_size,
                                          **self._http)
        elif target.kind == "http" and target.url is not None and is_legacy_sse_url(target.url):
            from mcpfast.transports.http.legacy_sse_client import open_sse

            if "auth" in self._http:
                raise TypeError("auth= is not available over HTTP+SSE: pass headers= instead")
            stream = await open_sse(target.url, client.bind, max_frame_size=self._max_frame_size,
                                    **self._http)
        elif target.kind == "http" and target.url is not None:
            from mcpfast.transports.http.client import open_http

            stream = await open_http(target.url, client.bind, max_frame_size=self._max_frame_size,
                                     **self._http)
        else:
            raise TransportUnavailable(target.kind, target.url or "")
        client.own_stream(stream)
        try:
            await client.start(timeout=self._initialize_timeout)
        except BaseException:
            await stream.close()
            raise
        return client

    def __await__(self) -> Any:
        return self._open().__await__()

    async def __aenter__(self) -> Client:
        return await self._open()

    async def __aexit__(self, *exc_info: Any) -> None:
        await self._client.aclose()

    def __repr__(self) -> str:
        return f"<Connector {self.target!r}>"


def connect(
    target: Union[str, Sequence[str], "os.PathLike[str]"],
    args: Optional[Sequence[str]] = None,
    *,
    env: Optional[dict] = None,
    cwd: Union[str, "os.PathLike[str]", None] = None,
    stderr: Any = None,
    max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
    initialize_timeout: Optional[float] = DEFAULT_INITIALIZE_TIMEOUT,
    client: Optional[Client] = None,
    headers: Optional[dict[str, str]] = None,
    auth: Any = None,
    **client_options: Any,
) -> Connector:
    """Connect to an MCP server and initialize (see the module docstring).

    Raises at once: TypeError / ValueError for a target that is not one,
    TransportUnavailable for ws(s):// URLs. When awaited: OSError when the
    process cannot start or the TCP connection cannot be made, UnsupportedProtocolVersion,
    InitializeError, RequestTimeout (initialize unanswered), ConnectionClosed (the server
    went away during the handshake), JSONRPCError (initialize refused).
    """
    app = None
    if hasattr(target, "connection_factory") and not isinstance(target, (str, list, tuple)):
        if args is not None:
            raise TypeError("args apply to a command target, not to a server object")
        app, parsed = target, Target("in-process")
    else:
        parsed = parse_target(target, args)
    if parsed.kind not in ("stdio", "tcp", "http", "websocket", "in-process"):
        raise TransportUnavailable(parsed.kind, parsed.url or str(target))
    if (headers is not None or auth is not None) and parsed.kind not in ("http", "websocket"):
        raise TypeError("headers and auth apply to an http(s):// or ws(s):// target only")
    http: dict[str, Any] = {}
    if headers is not None:
        http["headers"] = headers
    if auth is not None:
        from mcpfast.transports.http.client_auth import BearerToken

        http["auth"] = BearerToken(auth) if isinstance(auth, str) else auth
    if parsed.kind != "stdio" and (env is not None or cwd is not None or stderr is not None):
        raise TypeError("env, cwd and stderr apply to a server process (a command target) only")
    if client is None:
        if "observer" not in client_options:
            client_options["observer"] = _default_observer(parsed)
        client = Client(**client_options)
    elif client_options:
        raise TypeError(
            f"pass options either to the Client or to connect(), not both: "
            f"{', '.join(sorted(client_options))}"
        )
    elif not isinstance(client, Client):
        raise TypeError(f"client must be a Client, not {type(client).__name__}")
    stdio: dict[str, Any] = {}
    if parsed.kind == "stdio":
        stdio = {"env": env, "cwd": cwd, "stderr": stderr}
    return Connector(parsed, client, stdio=stdio, max_frame_size=max_frame_size,
                     initialize_timeout=initialize_timeout, http=http, app=app)
