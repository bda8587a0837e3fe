"""The Streamable HTTP endpoint of an MCP server (2025-03-26 .. 2025-11-25).

One URL (default ``/mcp``) takes three methods:

- POST, one JSON-RPC message (or, for 2025-03-26, a batch): notifications and responses
  only -> 202 with no body; requests -> their response as ``application/json``, or an SSE
  stream carrying the messages related to the request and then its response (see
  :class:`~mcpfast.transports.http.post_reply.PostReply` for which).
- GET: the session's stream of server messages (SSE); a second one while it is open ->
  409; with ``Last-Event-ID`` (when the server keeps an event store), the events the
  client missed on that stream, then the stream itself when it is still live.
- DELETE: ends the session -> 200.
Anything else -> 405 with ``Allow``.

Sessions: an ``initialize`` POST without ``Mcp-Session-Id`` gets a new session, whose id
(128 random bits, hex) comes back in the ``Mcp-Session-Id`` header of a successful
answer. Every other request must carry it: missing -> 400, unknown or ended -> 404. Idle
sessions end after ``session_idle_timeout``; beyond ``max_sessions`` a new initialize
gets 503. ``stateless=True``: no session ids at all; every POST gets a connection of its
own, built already initialized for the version in its ``MCP-Protocol-Version`` header,
with no way back to the client (no sampling or elicitation); GET and DELETE -> 405.

Other paths: ``extra_routes`` (path -> ``route(request) -> (status, headers, body)``, or an
awaitable of it) answers GET and HEAD there (405 otherwise) after the Host/Origin check,
without bearer auth -- a generic hook, e.g. for a Prometheus ``/metrics``
(:mod:`~mcpfast.transports.http.extra_routes`).

Checked before anything else, in this order: the path (404), Host and Origin (421 / 403,
see :mod:`~mcpfast.transports.http.security`), with ``auth=`` the bearer token (401 / 403 /
400, see :mod:`~mcpfast.transports.http.auth`; sessions then belong to the token's subject,
and another subject's requests get 404), the method (405). Then, for POST:
``Content-Type`` must be ``application/json`` (415); ``Accept`` must allow
``application/json`` and ``text/event-stream``, or just JSON in JSON-response mode (406);
the body at most ``max_body_size`` bytes (413); a body that is not JSON-RPC -> 400 with the
JSON-RPC error (-32700 / -32600). ``MCP-Protocol-Version`` other than a version spoken
here -> 400; absent -> 2025-03-26, as the specification says.

2026-07-28 (the stateless revision) on the same URL: a POST whose
``MCP-Protocol-Version`` is 2026-07-28 carries one self-contained request (its version and
client capabilities in ``_meta``) and gets a connection of its own, closed with its answer;
``Mcp-Session-Id`` is ignored; ``Mcp-Method`` / ``Mcp-Name`` must match the body (else 400
with -32020, :mod:`~mcpfast.transports.http.routing_headers`); error answers carry their
HTTP status (-32601 -> 404; -32600, -32602, -32020, -32021, -32022 -> 400); a notification
-> 202; GET and DELETE -> 405. An unspoken ``MCP-Protocol-Version`` -> 400 with -32022 and
the supported versions.

Several processes of one deployment share the 2025-era sessions through a
``session_directory`` (:mod:`~mcpfast.transports.http.shared_sessions`): a request for a
session another process made is served here from a copy of it; without one, a session
lives in the process that made it.

Cancellation: a client that goes away before its answer cancels the request, unless the
session keeps an event store (then the client may resume the stream and the request runs
on; it is cancelled with ``notifications/cancelled`` as the specification asks).

``handle(request)`` returns the :class:`HTTPResponse` at once when it is already known
(every error, 202, and requests answered while they were fed: sync tools), else an
awaitable of it, so that servers need no task for the common case.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import secrets
from time import monotonic
from typing import Any, Awaitable, Callable, Mapping, Optional, Protocol, Union

from mcpfast._bounded_memo import remember
from mcpfast._core.decode import DecodeError, decode
from mcpfast._core.encode import encode_error, encode_notification
from mcpfast._core.messages import ErrorResponse, Notification, Request, Response
from mcpfast.auth import AccessToken
from mcpfast.jsonrpc.contract import Connection
from mcpfast.jsonrpc.errors import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    REFUSAL_CODES,
    http_refusal,
)
from mcpfast.jsonrpc.outgoing import CANCELLED_METHOD
from mcpfast.jsonrpc.refused_frames import invalid_params_reply, refusal
from mcpfast.protocol import meta_keys, methods
from mcpfast.protocol.error_codes import (
    HEADER_MISMATCH,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
)
from mcpfast.protocol.versions import SPOKEN_VERSIONS, STATELESS_VERSIONS
from mcpfast.transports.http import headers as h
from mcpfast.transports.http.accept import accepted as _accepted
from mcpfast.transports.http.accept import accepts as _accepts
from mcpfast.transports.http.auth import BearerAuth
from mcpfast.transports.http.event_store import EventStore, Replay
from mcpfast.transports.http.extra_routes import ExtraRoute, checked_routes, extra_answer
from mcpfast.transports.http.messages import (
    JSON_CONTENT_TYPE,
    HTTPRequest,
    HTTPResponse,
    json_error_body,
    json_error_response,
)
from mcpfast.transports.http.post_front import PostFront
from mcpfast.transports.http.post_reply import (
    ErrorStatuses,
    Lease,
    Leg,
    PostReply,
    bind_peer,
    bind_token,
    feed_leased,
    feed_post,
    single_lease,
)
from mcpfast.transports.http.routing_headers import routing_header_problem
from mcpfast.transports.http.security import HostPolicy
from mcpfast.transports.http.session import HTTPSession, request_ids
from mcpfast.transports.http.session_directory import SessionDirectory
from mcpfast.transports.http.session_table import SessionTable
from mcpfast.transports.http.shared_sessions import (
    STATE_METHODS,
    Relay,
    SharedSessions,
    answered_ids,
    holds_response,
)
from mcpfast.transports.http.sse import message_event
from mcpfast.transports.http.sse_stream import DEFAULT_MAX_STREAM_BUFFER, SSEStream, check_stream_buffer

__all__ = [
    "HTTPEndpoint",
    "error_response",
    "DEFAULT_KEEPALIVE_INTERVAL",
    "DEFAULT_MAX_STREAM_BUFFER",
    "DEFAULT_MAX_BODY_SIZE",
    "DEFAULT_MAX_SESSIONS",
    "DEFAULT_SESSION_IDLE_TIMEOUT",
    "StreamableHTTPEndpoint",
]

_LOGGER = logging.getLogger("mcpfast.transports.http")

DEFAULT_MAX_BODY_SIZE = 4 * 1024 * 1024
DEFAULT_MAX_SESSIONS = 10_000
DEFAULT_SESSION_IDLE_TIMEOUT = 1800.0
DEFAULT_KEEPALIVE_INTERVAL = 15.0
# The version a request without MCP-Protocol-Version is taken to speak (the specification).
ASSUMED_VERSION = "2025-03-26"

Factory = Callable[[Callable[[bytes], None]], Connection]
StatelessFactory = Callable[[Callable[[bytes], None], str], Connection]
Outcome = Union[HTTPResponse, Awaitable[HTTPResponse]]

_JSON_HEADERS = [JSON_CONTENT_TYPE]
_SSE_HEADERS = [("content-type", h.EVENT_STREAM), ("cache-control", "no-cache, no-transform"),
                (h.X_ACCEL_BUFFERING, "no")]


def error_response(status: int, message: str, code: int = INVALID_REQUEST,
           extra: Optional[list[tuple[str, str]]] = None) -> HTTPResponse:
    return json_error_response(status, code, message, extra)


# A POST's header verdict (_post_verdict): the refusal (status, message) if any, json_only,
# SSE allowed, the version named (stripped), whether it is spoken, whether 2026-07-28, and
# in stateless mode the leg of that version (else None); by the values of the headers it
# depends on (Host, Origin, Content-Type, Accept, MCP-Protocol-Version).
_PostVerdict = tuple[Optional[tuple[int, str]], bool, bool, Optional[str], bool, bool, Optional[Leg]]
_PostHeaders = tuple[Optional[str], Optional[str], Optional[str], Optional[str], Optional[str]]
# (The front door, PostFront, reads those headers and keeps the verdicts in
# _post_verdicts.) Read on every 2026-07-28 POST, as module globals:
_LISTEN, _VERSION_KEY = methods.SUBSCRIPTIONS_LISTEN, meta_keys.PROTOCOL_VERSION
_INITIALIZE = methods.INITIALIZE
_VERDICTS_KEPT = 256

class HTTPEndpoint(Protocol):
    """What mcpfast's HTTP server and the ASGI app serve: a socket-free endpoint."""

    max_body_size: int

    def handle(self, request: HTTPRequest) -> Outcome: ...

    async def start(self) -> None: ...

    def begin_shutdown(self) -> None: ...

    def close(self) -> None: ...


class StreamableHTTPEndpoint:
    """The MCP endpoint (module docstring). ``factory(send)`` makes a server connection;
    ``stateless_factory(send, protocol_version)`` an initialized one (stateless mode)."""

    # The response to one request, or an awaitable of it (module docstring): the compiled
    # front door's method (PostFront.handle), which passes all but the common POSTs to
    # _handle.
    handle: Callable[[HTTPRequest], Outcome]

    def __init__(
        self,
        factory: Factory,
        *,
        path: str = "/mcp",
        json_response: bool = False,
        stateless: bool = False,
        stateless_factory: Optional[StatelessFactory] = None,
        max_body_size: int = DEFAULT_MAX_BODY_SIZE,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        session_idle_timeout: Optional[float] = DEFAULT_SESSION_IDLE_TIMEOUT,
        host_policy: Optional[HostPolicy] = None,
        event_store: Optional[EventStore] = None,
        keepalive_interval: float = DEFAULT_KEEPALIVE_INTERVAL,
        retry_ms: Optional[int] = None,
        auth: Optional[BearerAuth] = None,
        on_shutdown: Optional[Callable[[], Any]] = None,
        session_directory: Optional[SessionDirectory] = None,
        max_stream_buffer: int = DEFAULT_MAX_STREAM_BUFFER,
        extra_routes: Optional[Mapping[str, ExtraRoute]] = None,
    ) -> None:
        if not callable(factory):
            raise TypeError("factory must be a connection factory: factory(send) -> connection")
        if stateless and stateless_factory is None:
            raise TypeError("stateless mode needs stateless_factory(send, protocol_version)")
        if not isinstance(path, str) or not path.startswith("/"):
            raise ValueError(f"path must start with '/', got {path!r}")
        if isinstance(max_sessions, bool) or not isinstance(max_sessions, int) or max_sessions < 1:
            raise ValueError(f"max_sessions must be an int >= 1, got {max_sessions!r}")
        if session_idle_timeout is not None and not session_idle_timeout > 0:
            raise ValueError(f"session_idle_timeout must be > 0 or None, got {session_idle_timeout!r}")
        if not keepalive_interval > 0:
            raise ValueError(f"keepalive_interval must be > 0, got {keepalive_interval!r}")
        check_stream_buffer(max_stream_buffer)
        self.extra_routes = checked_routes(extra_routes, path)
        # The most bytes of events an SSE stream holds for a client that does not read.
        self.max_stream_buffer = max_stream_buffer
        self.factory = factory
        self.stateless_factory = stateless_factory
        # The connections of the stateless legs, reused from POST to POST (Leg): the
        # 2026-07-28 leg's, and stateless mode's per protocol version.
        # (The factories are read when a connection is made: they may be replaced.)
        self._leg_2026 = Leg(lambda: self.factory(_drop_outside), self._lone_stream)
        self._legs: dict[str, Leg] = {}
        self._post_verdicts: dict[_PostHeaders, _PostVerdict] = {}
        # Holds path, auth and max_body_size (the properties below).
        # The HTTP statuses of error answers: the 2026-07-28 leg's table, and for every era
        # the HTTP refusals the pipeline carries in a JSON-RPC error (429, 403).
        self._statuses_2026 = ErrorStatuses(_STATUSES_2026, self._pipeline_refusal, REFUSAL_CODES)
        self._statuses = ErrorStatuses({}, self._pipeline_refusal, REFUSAL_CODES)
        self._front = PostFront(self, path, None, DEFAULT_MAX_BODY_SIZE, self._statuses_2026,
                                self._statuses)
        self.handle = self._front.handle
        self.max_body_size = max_body_size
        self.json_response = bool(json_response)
        self.stateless = bool(stateless)
        self.max_sessions = max_sessions
        self.session_idle_timeout = session_idle_timeout
        self.host_policy = host_policy if host_policy is not None else HostPolicy(enabled=False)
        self.event_store = event_store
        self.keepalive_interval = keepalive_interval
        self.retry_ms = retry_ms
        self.auth = auth
        # Called when the server starts shutting down (the MCP server ends its listen
        # streams, so that the requests in progress can finish).
        self.on_shutdown = on_shutdown
        self.session_table = SessionTable(self._new_session, self._schedule_reaper,
                                          idle_timeout=self.session_idle_timeout,
                                          keepalive_interval=self.keepalive_interval)
        # The live sessions by id (the table's).
        self.sessions: dict[str, HTTPSession] = self.session_table.sessions
        # Sessions shared with the other processes of a deployment (none in stateless
        # mode: there are no sessions).
        self.shared = (SharedSessions(session_directory, self.session_table)
                       if session_directory is not None and not self.stateless else None)
        # Bound once: every stateless POST's reply channel gets it.
        self._new_lone_stream = self._lone_stream
        self._reaper: Optional[asyncio.TimerHandle] = None
        self._closed = False

    @property
    def path(self) -> str:
        """The endpoint's path (default ``/mcp``)."""
        return self._front.path

    @property
    def auth(self) -> Optional[BearerAuth]:
        """The bearer-token verifier, or None (no authentication)."""
        auth: Optional[BearerAuth] = self._front.auth
        return auth

    @auth.setter
    def auth(self, auth: Optional[BearerAuth]) -> None:
        if auth is not None and not isinstance(auth, BearerAuth):
            raise TypeError(f"auth must be a BearerAuth, not {type(auth).__name__}")
        self._front.auth = auth

    @property
    def capture_trace_headers(self) -> bool:
        """Whether each POST's ``traceparent`` / ``tracestate`` headers reach its reply
        channel (``trace_headers``, what the server's spans take as their parent when the
        message's ``_meta`` has none). Off unless the server records spans: it sets this."""
        return self._front.capture_trace_headers

    @capture_trace_headers.setter
    def capture_trace_headers(self, capture: bool) -> None:
        self._front.capture_trace_headers = bool(capture)

    @property
    def max_body_size(self) -> int:
        """The largest POST body taken, in bytes (larger: 413)."""
        return self._front.max_body_size

    @max_body_size.setter
    def max_body_size(self, size: int) -> None:
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"max_body_size must be an int >= 1, got {size!r}")
        self._front.max_body_size = size

    async def start(self) -> None:
        """Connect what is shared with other processes (the session directory, an event
        store with a ``start``) before serving; ConnectionError when out of reach."""
        if self.shared is not None:
            await self.shared.start()
        start = getattr(self.event_store, "start", None)
        if start is not None:
            await start()

    # -- entry point -------------------------------------------------------------------

    def _handle(self, request: HTTPRequest) -> Outcome:
        # What ``handle`` does with a request other than a POST to the path without a
        # verifier (those the front door takes itself).
        auth = self.auth
        if request.path != self.path:
            route = self.extra_routes.get(request.path)
            if route is not None:
                return extra_answer(route, request, self.host_policy)
            if auth is not None and request.path in auth.metadata_paths:
                return self._checked_host(request) or auth.metadata_response(request.method)
            return error_response(404, f"Not Found: the MCP endpoint is {self.path}")
        if auth is None and request.method == "POST":
            # Host and Origin are checked with the POST's other headers (_post_verdict).
            return self._front.post(request, None)
        headers = request.headers
        refused = self.host_policy.check(headers.get(h.HOST), headers.get(h.ORIGIN))
        if refused is not None:
            return error_response(refused[0], refused[1])
        if auth is None:
            return self._route(request, None)
        verdict = auth.authenticate(request.headers)
        if type(verdict) is AccessToken:
            return self._route(request, verdict)
        if isinstance(verdict, HTTPResponse):
            return verdict
        return self._route_after(request, verdict)  # type: ignore[arg-type]

    def _checked_host(self, request: HTTPRequest) -> Optional[HTTPResponse]:
        headers = request.headers
        refused = self.host_policy.check(headers.get(h.HOST), headers.get(h.ORIGIN))
        return error_response(refused[0], refused[1]) if refused is not None else None

    async def _route_after(self, request: HTTPRequest,
                           verdict: Awaitable[Union[AccessToken, HTTPResponse]]) -> HTTPResponse:
        # An async verifier: the request waits for it, then goes on as a sync one would.
        token = await verdict
        if isinstance(token, HTTPResponse):
            return token
        outcome = self._route(request, token)
        return outcome if isinstance(outcome, HTTPResponse) else await outcome

    def _route(self, request: HTTPRequest, token: Optional[AccessToken]) -> Outcome:
        method = request.method
        if method == "POST":
            return self._front.post(request, token)
        if request.headers.get(h.MCP_PROTOCOL_VERSION, "").strip() in STATELESS_VERSIONS:
            # 2026-07-28 has no GET stream and no session to delete.
            return error_response(405, f"Method Not Allowed: {method} (allowed under "
                               f"2026-07-28: POST)", extra=[(h.ALLOW, "POST")])
        if method == "GET":
            return self._get(request, token)
        if method == "DELETE":
            return self._delete(request, token)
        return self._not_allowed(method)

    def _not_allowed(self, method: str) -> HTTPResponse:
        allow = "POST" if self.stateless else "GET, POST, DELETE"
        return error_response(405, f"Method Not Allowed: {method} (allowed: {allow})",
                      extra=[(h.ALLOW, allow)])

    # -- POST --------------------------------------------------------------------------

    # A POST begins in the compiled front door (PostFront.post): its header verdict, body
    # size and decoding; these are the endpoint's parts of it.

    def _post_refused(self, verdict: _PostVerdict, body: bytes) -> HTTPResponse:
        # A POST refused by its header verdict, else for the size of its body.
        refusal = verdict[0]
        if refusal is not None:
            return error_response(*refusal)
        return error_response(413, f"Payload Too Large: the body is {len(body)} bytes; the limit "
                                   f"is {self.max_body_size}")

    @staticmethod
    def _post_undecodable(exc: DecodeError, body: bytes) -> HTTPResponse:
        # Valid JSON the decoder refuses (a number out of range, a lone surrogate): the
        # rule every transport applies (refused_frames), before any session sees it.
        found = refusal(body, exc)
        if found is not None:
            envelope, reason = found
            if envelope.kind == "request":
                return HTTPResponse(400, list(_JSON_HEADERS), invalid_params_reply(envelope, reason))
            if envelope.kind == "notification":
                _LOGGER.debug("notification %r dropped: %s", envelope.method, reason)
                return HTTPResponse(202)
        return HTTPResponse(400, list(_JSON_HEADERS), json_error_body(exc.code, exc.message, exc.id))

    def _post_decoded(self, headers: dict[str, str], body: bytes, message: Any,
                      verdict: _PostVerdict, token: Optional[AccessToken],
                      client: Optional[tuple[str, int]] = None,
                      trace: Optional[dict[str, str]] = None) -> Outcome:
        """A POST past the front door's checks, its body decoded to ``message`` (``trace``:
        its trace context headers, when captured); the front door routes the common
        requests itself (stateless mode, 2026-07-28), with the same outcome as here."""
        _, json_only, sse_ok, version, version_spoken, leg_2026, leg = verdict
        if type(message) is list and not message:
            return error_response(400, "Invalid Request: an empty batch")
        if not version_spoken:
            return HTTPResponse(400, list(_JSON_HEADERS), encode_error(
                message.id if type(message) is Request else None,
                UNSUPPORTED_PROTOCOL_VERSION,
                f"Bad Request: unsupported MCP-Protocol-Version {version!r} "
                f"(supported: {', '.join(SPOKEN_VERSIONS)})",
                {"supported": list(SPOKEN_VERSIONS), "requested": version}))
        if leg_2026:
            return self._post_2026(headers, body, message, json_only, sse_ok, token, client)
        initialize = type(message) is Request and message.method == _INITIALIZE
        if leg is not None:
            # Stateless mode: a connection per POST. An initialize gets a new one, closed
            # once answered; the others reuse an idle one of their version (Leg).
            lease = single_lease(self.factory(_drop_outside)) if initialize else leg.lease()
            # Read once the connection is made: the server decides on its first one.
            return feed_leased(self, lease, message, body, json_only, self._statuses, token, None,
                               client, self._front.trace_of(headers))
        session_id = headers.get(h.MCP_SESSION_ID)
        if session_id is None:
            if not initialize:
                return error_response(400, "Bad Request: Mcp-Session-Id header is required "
                                   "(send initialize first to get one)")
            return self._post_initialize(headers, body, message, json_only, token, client)
        session = self._known_session(session_id, token)
        if session is None:
            if self.shared is not None:
                return self._post_adopted(session_id, token, body, message, json_only, trace)
            return _unknown_session()
        return self._post_session(session, body, message, json_only, trace)

    def _post_verdict(self, key: _PostHeaders) -> _PostVerdict:
        """What a POST's Host, Origin, Content-Type, Accept and MCP-Protocol-Version headers
        decide (cached by their values: clients send the same few on every request)."""
        host, origin, content_type, accept, version = key
        json_ok, sse_ok = _accepted(accept or "")
        refusal = self.host_policy.check(host, origin)  # first, as for any other method
        if refusal is None:
            if (content_type or "").split(";")[0].strip().lower() != h.JSON:
                refusal = (415, f"Unsupported Media Type: Content-Type must be {h.JSON}, "
                                f"got {content_type or 'none'!r}")
            elif not json_ok or not (sse_ok or self.json_response):
                wanted = h.JSON if self.json_response else f"{h.JSON} and {h.EVENT_STREAM}"
                refusal = (406, f"Not Acceptable: Accept must allow {wanted}, got {accept or ''!r}")
        if version is not None:
            version = version.strip()
        spoken = version is None or version in SPOKEN_VERSIONS
        leg_2026 = version in STATELESS_VERSIONS
        verdict = (refusal, self.json_response or not sse_ok, sse_ok, version, spoken, leg_2026,
                   self._stateless_leg_of(version) if self.stateless and spoken and not leg_2026
                   else None)
        return remember(self._post_verdicts, key, verdict, _VERDICTS_KEPT)

    def _post_session(self, session: HTTPSession, body: bytes, message: Any,
                      json_only: bool, trace: Optional[dict[str, str]] = None) -> Outcome:
        shared = self.shared
        if shared is not None:
            shared.touch(session)
            kind = type(message)
            if kind is Request:
                if message.method in STATE_METHODS:
                    return self._post_state(session, body, message, json_only, trace)
            elif kind is not Notification:
                ids = answered_ids(message)
                if ids is not None and shared.pass_answers(session, ids, body):
                    return HTTPResponse(202)
        return feed_post(self, session, session.connection, message, body, json_only, self._statuses,
                         None, None, trace)

    async def _post_state(self, session: HTTPSession, body: bytes, message: Any,
                          json_only: bool, trace: Optional[dict[str, str]]) -> HTTPResponse:
        # Every copy learns of the change before the client does.
        assert self.shared is not None
        try:
            await self.shared.state_changed(session, message, body)
        except ConnectionError as exc:
            return _directory_unreachable(exc)
        outcome = feed_post(self, session, session.connection, message, body, json_only, self._statuses,
                            None, None, trace)
        return outcome if isinstance(outcome, HTTPResponse) else await outcome

    async def _post_adopted(self, session_id: str, token: Optional[AccessToken], body: bytes,
                            message: Any, json_only: bool,
                            trace: Optional[dict[str, str]]) -> HTTPResponse:
        # A session this process has not seen: made by another one of the deployment?
        found = await self._adopt(session_id, token)
        if isinstance(found, HTTPResponse):
            return found
        outcome = self._post_session(found, body, message, json_only, trace)
        return outcome if isinstance(outcome, HTTPResponse) else await outcome

    async def _adopt(self, session_id: str,
                     token: Optional[AccessToken]) -> Union[HTTPSession, HTTPResponse]:
        shared = self.shared
        assert shared is not None
        if len(self.sessions) >= self.max_sessions:
            return self._too_many_sessions()
        try:
            session = await shared.adopt(session_id, token)
        except ConnectionError as exc:
            return _directory_unreachable(exc)
        if session is None:
            return _unknown_session()
        return session

    def _post_2026(self, headers: dict[str, str], body: bytes, message: Any, json_only: bool,
                   sse_ok: bool, token: Optional[AccessToken],
                   client: Optional[tuple[str, int]] = None) -> Outcome:
        """The stateless leg (2026-07-28): one request per POST on a connection of its own,
        its routing headers checked against the body; Mcp-Session-Id is ignored."""
        kind = type(message)
        if kind is not Request:
            if kind is Notification:
                # No client-to-server notification exists on this leg (cancelling is
                # closing the response stream): accepted and dropped.
                return HTTPResponse(202)
            return error_response(400, "Invalid Request: a 2026-07-28 POST carries one JSON-RPC request")
        method = message.method
        if method == _LISTEN:
            json_only = not sse_ok  # a listen answer is a stream, even in JSON mode
        params = message.params
        meta = params.get("_meta") if type(params) is dict else None
        if type(meta) is not dict or _VERSION_KEY not in meta:
            # Without it the request belongs to no era: refused like any other bad _meta.
            return HTTPResponse(400, list(_JSON_HEADERS), encode_error(
                message.id, INVALID_PARAMS,
                f"Invalid params: a 2026-07-28 request carries params._meta with "
                f"{meta_keys.PROTOCOL_VERSION!r} and {meta_keys.CLIENT_CAPABILITIES!r}",
                {"param": f"_meta.{meta_keys.PROTOCOL_VERSION}"}))
        problem = routing_header_problem(headers, method, params, meta)
        if problem is not None:
            return HTTPResponse(400, list(_JSON_HEADERS),
                                encode_error(message.id, HEADER_MISMATCH, problem))
        lease = self._leg_2026.lease()
        return feed_leased(self, lease, message, body, json_only, self._statuses_2026, token, headers,
                           client, self._front.trace_of(headers))

    def _known_session(self, session_id: str, token: Optional[AccessToken]) -> Optional[HTTPSession]:
        """The live session with this id, when the request may use it (touched)."""
        session = self.sessions.get(session_id)
        if session is None:
            return None
        if token is not None or session.principal is not None:
            # A session belongs to the subject that created it; to anyone else it does not
            # exist (the same 404, so that ids cannot be probed).
            if token is None or token.subject != session.principal:
                return None
            bind_token(session.connection, token)  # the newest token, for ctx.auth
        session.touch()
        return session

    def _pipeline_refusal(self, response: HTTPResponse, frame: bytes) -> HTTPResponse:
        """The answer to a POST whose only request the pipeline refused with an error that
        means an HTTP refusal (:func:`~mcpfast.jsonrpc.errors.http_refusal`): its status and
        headers, the JSON-RPC error as the body."""
        answer = decode(frame)
        if not isinstance(answer, ErrorResponse):
            return response
        refusal = http_refusal(answer.code, answer.data)
        if refusal is None:
            return response
        response.status = refusal.status
        if refusal.retry_after is not None:
            response.headers.append(("retry-after", str(refusal.retry_after)))
        if refusal.scopes:
            auth = self.auth
            scope = " ".join(refusal.scopes)
            challenge = (auth.challenge_header("insufficient_scope", answer.message, scope)
                         if auth is not None else
                         f'Bearer error="insufficient_scope", scope="{scope}"')
            response.headers.append((h.WWW_AUTHENTICATE, challenge))
        return response

    def _too_many_sessions(self) -> HTTPResponse:
        return error_response(503, f"Service Unavailable: {self.max_sessions} sessions are open; "
                                   f"try again later", extra=[("retry-after", "5")])

    def _new_session(self, session_id: str) -> HTTPSession:
        session = HTTPSession(session_id, self.factory, self.event_store,
                              self.keepalive_interval, self.retry_ms)
        session.max_stream_buffer = self.max_stream_buffer
        return session

    def _post_initialize(self, headers: dict[str, str], body: bytes, message: Any, json_only: bool,
                         token: Optional[AccessToken],
                         client: Optional[tuple[str, int]] = None) -> Outcome:
        if len(self.sessions) >= self.max_sessions:
            return self._too_many_sessions()
        session = self._new_session(secrets.token_hex(16))
        if self.shared is not None:
            self.shared.prepare(session)
        requested = message.params.get("protocolVersion") if type(message.params) is dict else None
        session.prime = type(requested) is str and requested >= "2025-11-25"
        if token is not None:
            session.principal = token.subject
            bind_token(session.connection, token)
        if client is not None:
            # The session's connection keeps the address of the client that opened it.
            bind_peer(session.connection, client)

        def admit(response: HTTPResponse, frame: Optional[bytes]) -> HTTPResponse:
            if frame is not None and type(decode(frame)) is Response:
                self.session_table.admit(session)
                response.headers.append((h.MCP_SESSION_ID, session.id))
            else:
                session.close()
            return response

        # The trace headers are read once the connection is made (as in _post_decoded).
        outcome = feed_post(self, session, session.connection, message, body, json_only, admit,
                            None, None, self._front.trace_of(headers))
        if self.shared is None:
            return outcome
        return self._recorded(outcome, session, body)

    async def _recorded(self, outcome: Outcome, session: HTTPSession, body: bytes) -> HTTPResponse:
        # The other processes must know the session before the client learns its id.
        response = outcome if isinstance(outcome, HTTPResponse) else await outcome
        if self.sessions.get(session.id) is session:
            assert self.shared is not None
            try:
                await self.shared.record(session, body)
            except ConnectionError as exc:
                self.session_table.end(session)
                return _directory_unreachable(exc)
        return response

    def _stateless_leg_of(self, version: Optional[str]) -> Leg:
        """Stateless mode's leg of ``version`` (None: the version assumed when the header
        is absent), made on first use."""
        spoken = version or ASSUMED_VERSION
        leg = self._legs.get(spoken)
        if leg is None:
            def make() -> Connection:
                assert self.stateless_factory is not None
                return self.stateless_factory(_drop_outside, spoken)

            leg = self._legs[spoken] = Leg(make, self._lone_stream)
        return leg

    def _answer(self, session: Optional[HTTPSession], connection: Connection, reply: PostReply,
                message: Any, admit: Any, close_after: Optional[Lease]) -> HTTPResponse:
        kind, frame = reply.outcome  # type: ignore[misc]
        if kind == "json":
            if close_after is not None:
                close_after.release()
            if frame is None:
                # Cancelled or the session closed: nothing left to answer with.
                response = HTTPResponse(204)
            else:
                response = HTTPResponse(200, list(_JSON_HEADERS), frame)
            return admit(response, frame) if admit is not None else response
        stream = reply.stream
        assert stream is not None
        store = self.event_store

        def closed(disconnected: bool) -> None:
            if disconnected and not stream.finished:
                if store is None or close_after is not None:
                    self._cancel(connection, message, "the HTTP client disconnected")
                    stream.finish()
                else:
                    stream.detach()  # the client may resume it with Last-Event-ID
                    return
            if session is not None:
                session.stream_done(stream)
            if close_after is not None:
                close_after.release()

        response = HTTPResponse(200, list(_SSE_HEADERS), stream=stream.events(), on_close=closed)
        return admit(response, None) if admit is not None else response

    def _lone_stream(self) -> SSEStream:
        """The SSE stream of a POST outside any session (stateless legs)."""
        return SSEStream("stateless", None, self.keepalive_interval,
                         max_buffer=self.max_stream_buffer)

    def _cancel(self, connection: Connection, message: Any, reason: str) -> None:
        for request_id in request_ids(message):
            try:
                connection.feed(encode_notification(CANCELLED_METHOD,
                                                    {"requestId": request_id, "reason": reason}))
            except Exception:  # the connection is closed already
                return

    # -- GET ---------------------------------------------------------------------------

    def _session_for(self, request: HTTPRequest, token: Optional[AccessToken],
                     then: Callable[[HTTPSession, HTTPRequest], Outcome]) -> Outcome:
        """``then(session, request)`` for the request's session (copied from the session
        directory when another process made it), or the error answer."""
        if self.stateless:
            return self._not_allowed(request.method)
        session_id = request.headers.get(h.MCP_SESSION_ID)
        if session_id is None:
            return error_response(400, "Bad Request: Mcp-Session-Id header is required")
        session = self._known_session(session_id, token)
        if session is not None:
            if self.shared is not None:
                self.shared.touch(session)
            return then(session, request)
        if self.shared is not None:
            return self._adopted_then(session_id, token, then, request)
        return _unknown_session()

    async def _adopted_then(self, session_id: str, token: Optional[AccessToken],
                            then: Callable[[HTTPSession, HTTPRequest], Outcome],
                            request: HTTPRequest) -> HTTPResponse:
        found = await self._adopt(session_id, token)
        if isinstance(found, HTTPResponse):
            return found
        outcome = then(found, request)
        return outcome if isinstance(outcome, HTTPResponse) else await outcome

    def _get(self, request: HTTPRequest, token: Optional[AccessToken]) -> Outcome:
        if self.stateless:
            return self._not_allowed("GET")
        if not _accepts(request.headers.get(h.ACCEPT, ""), h.EVENT_STREAM):
            return error_response(406, f"Not Acceptable: a GET stream needs Accept: {h.EVENT_STREAM}")
        return self._session_for(request, token, self._get_session)

    def _get_session(self, session: HTTPSession, request: HTTPRequest) -> Outcome:
        last_event_id = request.headers.get(h.LAST_EVENT_ID)
        store = self.event_store
        if last_event_id is None or store is None:
            return self._open_get(session, None, None)
        relay = self.shared.open_relay(session, last_event_id) if self.shared is not None else None
        try:
            found = store.replay_after(last_event_id)
        except ConnectionError as exc:
            if relay is not None:
                self.shared.close_relay(relay)  # type: ignore[union-attr]
            return _store_unreachable(exc)
        if relay is not None:
            return self._get_relayed(session, relay, found)
        if inspect.isawaitable(found):
            return self._get_replayed(session, last_event_id, found)
        return self._open_get(session, last_event_id, found)

    async def _get_relayed(self, session: HTTPSession, relay: Relay,
                           found: Union[Replay, Awaitable[Replay]]) -> HTTPResponse:
        # A POST stream of another process: what it stored, then (while that process
        # runs and the stream has not ended) its live events, relayed.
        shared = self.shared
        assert shared is not None
        try:
            events = await found if inspect.isawaitable(found) else found
            alive = await shared.directory.alive(relay.origin)
        except ConnectionError as exc:
            shared.close_relay(relay)
            return _store_unreachable(exc)
        if events is None or events[0] != relay.stream_id:
            shared.close_relay(relay)
            return self._open_get(session, None, None)
        replayed = events[1]
        chunks = tuple(message_event(frame, event_id) for event_id, frame in replayed)
        if not alive or holds_response(replayed):
            # Complete, or its process is gone: the stored events, then the end.
            shared.close_relay(relay)
            return HTTPResponse(200, list(_SSE_HEADERS), stream=_chunks(chunks))
        relay.start(replayed)

        def closed(disconnected: bool) -> None:
            shared.close_relay(relay)

        return HTTPResponse(200, list(_SSE_HEADERS), stream=relay.stream.events(chunks),
                            on_close=closed)

    async def _get_replayed(self, session: HTTPSession, last_event_id: str,
                            found: Awaitable[Replay]) -> HTTPResponse:
        # A store shared with other processes answers asynchronously.
        try:
            events = await found
        except ConnectionError as exc:
            return _store_unreachable(exc)
        return self._open_get(session, last_event_id, events)

    def _open_get(self, session: HTTPSession, last_event_id: Optional[str],
                  found_events: Replay) -> HTTPResponse:
        replay: tuple[bytes, ...] = ()
        stream: Optional[SSEStream] = None
        # Only this session's streams: an id from another session replays nothing.
        if found_events is not None and found_events[0].startswith(session.id + "."):
            stream_id, events = found_events
            replay = tuple(message_event(frame, event_id) for event_id, frame in events)
            stream = session.streams.get(stream_id)
            if stream is not None and (stream.finished or stream.attached):
                stream = None
            if stream is None and self.shared is not None and stream_id == session.id + ".get":
                # The GET stream another process held (restarted, killed): it moves here.
                stream = session.open_get_stream()
                if stream.attached:
                    stream = None
        if stream is None and not replay:
            stream = session.open_get_stream()
            if stream.attached:
                return error_response(409, "Conflict: this session already has an open GET stream")
        if stream is None:
            # Replay of a finished stream: the missed events, then the end.
            return HTTPResponse(200, list(_SSE_HEADERS), stream=_chunks(replay))
        stream.attach(resumed=last_event_id is not None)
        if stream is session.get_stream and self.shared is not None:
            self.shared.took_get_stream(session)
        live = stream

        def closed(disconnected: bool) -> None:
            live.detach()
            if live.finished:
                session.stream_done(live)

        return HTTPResponse(200, list(_SSE_HEADERS),
                            stream=live.events(replay),
                            on_close=closed)

    # -- DELETE ------------------------------------------------------------------------

    def _delete(self, request: HTTPRequest, token: Optional[AccessToken]) -> Outcome:
        return self._session_for(request, token, self._delete_session)

    def _delete_session(self, session: HTTPSession, request: HTTPRequest) -> HTTPResponse:
        self.session_table.end(session)
        if self.shared is not None:
            self.shared.ended(session.id)
        return HTTPResponse(200)

    # -- session lifetime --------------------------------------------------------------

    def _schedule_reaper(self) -> None:
        timeout = self.session_idle_timeout
        if timeout is None or self._reaper is not None or self._closed:
            return
        loop = asyncio.get_running_loop()
        self._reaper = loop.call_later(min(timeout, 60.0), self._reap)

    def _reap(self) -> None:
        self._reaper = None
        timeout = self.session_idle_timeout
        if timeout is None:
            return
        now = monotonic()
        for session in [s for s in self.sessions.values()
                        if now - s.last_active > timeout and (s.get_stream is None or not s.get_stream.attached)]:
            _LOGGER.debug("session %s ended after %.0f s idle", session.id, timeout)
            self.sessions.pop(session.id, None)
            session.close()
        if self.sessions:
            self._schedule_reaper()

    def begin_shutdown(self) -> None:
        """The server stops taking requests: end what would never end by itself."""
        if self.on_shutdown is not None:
            try:
                self.on_shutdown()
            except Exception:
                _LOGGER.exception("on_shutdown failed")

    def close(self) -> None:
        """End every session (the server is shutting down). Idempotent."""
        if not self._closed:
            self._close_shared()
        self._closed = True
        if self._reaper is not None:
            self._reaper.cancel()
            self._reaper = None
        self.session_table.end_all()
        idle = [connection for leg in (self._leg_2026, *self._legs.values())
                for connection in leg.take_idle()]
        for connection in idle:
            connection.close()

    def _close_shared(self) -> None:
        # The shared parts close their connections in the background (the loop may be
        # ending: then the process's exit closes them).
        closers = [self.shared.close()] if self.shared is not None else []
        close_store = getattr(self.event_store, "close", None)
        if close_store is not None:
            closing = close_store()
            if inspect.iscoroutine(closing):
                closers.append(closing)
        if not closers:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            for closer in closers:
                closer.close()
            return
        for closer in closers:
            task = loop.create_task(closer)
            _CLOSING.add(task)
            task.add_done_callback(_CLOSING.discard)

    def __repr__(self) -> str:
        mode = "stateless" if self.stateless else f"sessions={len(self.sessions)}"
        return f"<StreamableHTTPEndpoint {self.path} {mode}>"


# 2026-07-28: the HTTP status of a JSON-RPC error answer (the rest are 200).
_STATUSES_2026 = dict({METHOD_NOT_FOUND: 404, INVALID_REQUEST: 400, INVALID_PARAMS: 400,
                              HEADER_MISMATCH: 400, MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
                              UNSUPPORTED_PROTOCOL_VERSION: 400})


# Closing shared parts, referenced until done (asyncio keeps only weak references).
_CLOSING: set[asyncio.Task[None]] = set()


def _unknown_session() -> HTTPResponse:
    return error_response(404, "Not Found: unknown or ended session")


def _directory_unreachable(exc: BaseException) -> HTTPResponse:
    return error_response(503, f"Service Unavailable: the session directory is out of reach "
                               f"({exc}); try again later", extra=[("retry-after", "5")])


def _store_unreachable(exc: BaseException) -> HTTPResponse:
    return error_response(503, f"Service Unavailable: the event store is out of reach ({exc}); "
                               f"try again later", extra=[("retry-after", "5")])


def _drop_outside(frame: bytes) -> None:
    _LOGGER.debug("stateless POST: a server message outside the request was dropped")


async def _chunks(chunks: tuple[bytes, ...]) -> Any:
    for chunk in chunks:
        yield chunk
