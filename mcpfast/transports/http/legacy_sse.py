"""The HTTP+SSE transport of MCP 2024-11-05, for clients that predate Streamable HTTP.

Two URLs (``/sse`` and ``/messages`` unless told otherwise):

- GET ``/sse`` opens a session: an SSE stream whose first event is ``endpoint``, with the
  URL to POST to (``/messages?session_id=<128 random bits, hex>``); every message of the
  server for that client follows on the stream as a ``message`` event (responses,
  notifications, its own requests). Closing the stream ends the session and cancels what
  its requests still run.
- POST ``/messages?session_id=...`` delivers one JSON-RPC message (or a 2025-03-26 batch)
  from the client -> 202 with no body; the answer comes on the stream.

Answers, checked in this order: another path -> the Streamable HTTP endpoint when one is
given (one server, both generations of clients), else 404; Host and Origin as the
Streamable endpoint checks them (421 / 403); the bearer token when the endpoint has auth
(401 / 403); a method other than GET on ``/sse`` or POST on ``/messages`` -> 405; POST:
no ``session_id`` -> 400, unknown or ended -> 404, Content-Type other than JSON -> 415,
a body over ``max_body_size`` -> 413, a body that is not JSON-RPC -> 400 with the JSON-RPC
error. Sessions beyond ``max_sessions`` -> 503. Idle streams get keep-alive comments.
With ``capture_trace_headers`` (set by a server that records spans) a POST's
``traceparent`` / ``tracestate`` headers reach its messages' reply channel
(``trace_headers``), whose replies go to the session's stream as they would without it.

Socket-free, like :class:`~mcpfast.transports.http.endpoint.StreamableHTTPEndpoint`: it
serves the same ``handle(request)`` contract, so mcpfast's HTTP server and the ASGI app
serve it unchanged.
"""

from __future__ import annotations

import secrets
from typing import Any, Callable, Optional
from urllib.parse import parse_qs

from mcpfast._core.decode import DecodeError, decode
from mcpfast.auth import AccessToken
from mcpfast.jsonrpc.contract import Connection
from mcpfast.jsonrpc.errors import ConnectionClosed
from mcpfast.jsonrpc.refused_frames import refusal
from mcpfast.transports.http import headers as h
from mcpfast.transports.http.endpoint import (
    DEFAULT_KEEPALIVE_INTERVAL,
    DEFAULT_MAX_BODY_SIZE,
    DEFAULT_MAX_SESSIONS,
    Outcome,
    StreamableHTTPEndpoint,
    error_response,
)
from mcpfast.transports.http.messages import JSON_CONTENT_TYPE, HTTPRequest, HTTPResponse, json_error_body
from mcpfast.transports.http.post_reply import bind_peer, trace_context_of
from mcpfast.transports.http.security import HostPolicy
from mcpfast.transports.http.sse_stream import DEFAULT_MAX_STREAM_BUFFER, SSEStream, check_stream_buffer

__all__ = ["LegacySSEEndpoint"]

_SSE_HEADERS = [("content-type", h.EVENT_STREAM), ("cache-control", "no-cache, no-transform"),
                (h.X_ACCEL_BUFFERING, "no")]


class _LegacySession:
    """One client of the legacy transport: its connection and its stream."""

    __slots__ = ("id", "stream", "connection", "principal")

    def __init__(self, session_id: str, stream: SSEStream, principal: Optional[str]) -> None:
        self.id = session_id
        self.stream = stream
        self.connection: Optional[Connection] = None
        # The subject of the bearer token that opened it (None without auth).
        self.principal = principal


class _TracedPost:
    """The reply channel of one POST whose trace context headers were captured: replies
    and related messages go to the session's stream (where they go without a channel),
    ``trace_headers`` holds the headers."""

    __slots__ = ("_push", "trace_headers")

    def __init__(self, push: Callable[[bytes], None], trace_headers: dict[str, str]) -> None:
        self._push = push
        self.trace_headers = trace_headers

    def respond(self, frame: Optional[bytes]) -> None:
        if frame is not None:  # None: cancelled, or the session closed
            self._push(frame)

    def send(self, frame: bytes) -> None:
        self._push(frame)


class LegacySSEEndpoint:
    """The 2024-11-05 HTTP+SSE transport (module docstring). ``factory(send)`` makes a
    server connection; ``streamable``: the endpoint serving every other path."""

    def __init__(
        self,
        factory: Callable[[Callable[[bytes], None]], Connection],
        *,
        sse_path: str = "/sse",
        messages_path: str = "/messages",
        streamable: Optional[StreamableHTTPEndpoint] = None,
        host_policy: Optional[HostPolicy] = None,
        max_body_size: int = DEFAULT_MAX_BODY_SIZE,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        keepalive_interval: float = DEFAULT_KEEPALIVE_INTERVAL,
        max_stream_buffer: Optional[int] = None,
    ) -> None:
        if not callable(factory):
            raise TypeError("factory must be a connection factory: factory(send) -> connection")
        for name, path in (("sse_path", sse_path), ("messages_path", messages_path)):
            if not isinstance(path, str) or not path.startswith("/"):
                raise ValueError(f"{name} must start with '/', got {path!r}")
        if sse_path == messages_path:
            raise ValueError("sse_path and messages_path must differ")
        self.factory = factory
        self.sse_path = sse_path
        self.messages_path = messages_path
        self.streamable = streamable
        if host_policy is None:
            host_policy = streamable.host_policy if streamable is not None else HostPolicy(enabled=False)
        self.host_policy = host_policy
        self.auth = streamable.auth if streamable is not None else None
        self.max_body_size = max(max_body_size, streamable.max_body_size if streamable else 0)
        self._own_body_limit = max_body_size
        self.max_sessions = max_sessions
        self.keepalive_interval = keepalive_interval
        if max_stream_buffer is None:
            max_stream_buffer = (streamable.max_stream_buffer if streamable is not None
                                 else DEFAULT_MAX_STREAM_BUFFER)
        check_stream_buffer(max_stream_buffer)
        # The most bytes of events a stream holds for a client that does not read: past
        # it the stream, and so its session, ends (sse_stream).
        self.max_stream_buffer = max_stream_buffer
        self.sessions: dict[str, _LegacySession] = {}
        # Hand each POST's trace context headers on (module docstring; the server sets it).
        self.capture_trace_headers = False

    # -- entry point -------------------------------------------------------------------

    def handle(self, request: HTTPRequest) -> Outcome:
        """The response to one request, or an awaitable of it."""
        path = request.path
        if path != self.sse_path and path != self.messages_path:
            if self.streamable is not None:
                return self.streamable.handle(request)
            return error_response(404, f"Not Found: the MCP endpoints are {self.sse_path} "
                                       f"and {self.messages_path}")
        headers = request.headers
        refused = self.host_policy.check(headers.get(h.HOST), headers.get(h.ORIGIN))
        if refused is not None:
            return error_response(refused[0], refused[1])
        if self.auth is None:
            return self._route(request, None)
        verdict = self.auth.authenticate(headers)
        if isinstance(verdict, HTTPResponse):
            return verdict
        if isinstance(verdict, AccessToken):
            return self._route(request, verdict)
        return self._after_auth(request, verdict)

    async def _after_auth(self, request: HTTPRequest, verdict: Any) -> HTTPResponse:
        token = await verdict
        if isinstance(token, HTTPResponse):
            return token
        return self._route(request, token)

    def _route(self, request: HTTPRequest, token: Optional[AccessToken]) -> HTTPResponse:
        if request.path == self.sse_path:
            if request.method != "GET":
                return error_response(405, f"Method Not Allowed: {request.method} on "
                                           f"{self.sse_path} (allowed: GET)",
                                      extra=[(h.ALLOW, "GET")])
            return self._open(token, request.client)
        if request.method != "POST":
            return error_response(405, f"Method Not Allowed: {request.method} on "
                                       f"{self.messages_path} (allowed: POST)",
                                  extra=[(h.ALLOW, "POST")])
        return self._message(request, token)

    # -- GET: a session and its stream -------------------------------------------------

    def _open(self, token: Optional[AccessToken], client: Optional[tuple[str, int]] = None) -> HTTPResponse:
        if len(self.sessions) >= self.max_sessions:
            return error_response(503, f"Service Unavailable: {self.max_sessions} sessions are "
                                       f"open; try again later", extra=[("retry-after", "5")])
        session_id = secrets.token_hex(16)
        stream = SSEStream(session_id, None, self.keepalive_interval,
                           max_buffer=self.max_stream_buffer)
        session = _LegacySession(session_id, stream, token.subject if token is not None else None)
        stream.attach()
        session.connection = connection = self.factory(stream.push)
        if token is not None:
            connection.auth = token  # type: ignore[attr-defined]  # ctx.auth
        if client is not None:
            # The session keeps the address of the client whose GET opened it.
            bind_peer(connection, client)
        self.sessions[session_id] = session
        endpoint = f"{self.messages_path}?session_id={session_id}"

        def closed(disconnected: bool) -> None:
            # The stream is the session: when it ends, so does the session.
            self._end(session)

        first = b"event: endpoint\ndata: " + endpoint.encode("ascii") + b"\n\n"
        return HTTPResponse(200, list(_SSE_HEADERS), stream=stream.events((first,)),
                            on_close=closed)

    def _end(self, session: _LegacySession) -> None:
        if self.sessions.pop(session.id, None) is None:
            return
        session.stream.finish()
        if session.connection is not None:
            session.connection.close()

    # -- POST: a message of the client -------------------------------------------------

    def _message(self, request: HTTPRequest, token: Optional[AccessToken]) -> HTTPResponse:
        ids = parse_qs(request.query).get("session_id")
        if not ids:
            return error_response(400, "Bad Request: session_id is required (GET "
                                       f"{self.sse_path} gives the URL to post to)")
        session = self.sessions.get(ids[0])
        subject = token.subject if token is not None else None
        if session is None or session.connection is None or session.principal != subject:
            # Another subject's session does not exist for this one (no probing of ids).
            return error_response(404, "Not Found: unknown or ended session")
        content_type = request.headers.get(h.CONTENT_TYPE, "")
        if content_type.split(";")[0].strip().lower() != h.JSON:
            return error_response(415, f"Unsupported Media Type: Content-Type must be {h.JSON}, "
                                       f"got {content_type or 'none'!r}")
        body = request.body
        if len(body) > self._own_body_limit:
            return error_response(413, f"Payload Too Large: the body is {len(body)} bytes; the "
                                       f"limit is {self._own_body_limit}")
        try:
            decode(body)
        except DecodeError as exc:
            if refusal(body, exc) is None:
                return HTTPResponse(400, [JSON_CONTENT_TYPE],
                                    json_error_body(exc.code, exc.message, exc.id))
            # Valid JSON the decoder refuses: the session answers it on the stream, by
            # the rule of every transport (refused_frames), as its request's own error.
        # Replies go to the session's stream (the connection's send).
        trace = trace_context_of(request.headers) if self.capture_trace_headers else None
        try:
            if trace is None:
                session.connection.feed(body)
            else:
                session.connection.feed(body, _TracedPost(session.stream.push, trace))
        except ConnectionClosed:
            return error_response(404, "Not Found: the session has ended")
        return HTTPResponse(202)

    async def start(self) -> None:
        """Connect what the Streamable endpoint shares with other processes."""
        if self.streamable is not None:
            await self.streamable.start()

    def begin_shutdown(self) -> None:
        """The server stops taking requests (passed on to the Streamable endpoint)."""
        if self.streamable is not None:
            self.streamable.begin_shutdown()

    def close(self) -> None:
        """End every session (the server is shutting down). Idempotent."""
        for session in list(self.sessions.values()):
            self._end(session)
        if self.streamable is not None:
            self.streamable.close()

    def __repr__(self) -> str:
        return f"<LegacySSEEndpoint {self.sse_path} {self.messages_path} sessions={len(self.sessions)}>"


