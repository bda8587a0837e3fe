"""The client side of Streamable HTTP: a connection's frames as HTTP requests.

``await open_http(url, factory)`` wires a connection made by ``factory(send)`` (a
``Client.bind``) to an MCP endpoint. Every frame the connection sends is one POST; the
answer -- 202, one ``application/json`` message, or an SSE stream of messages ending with
the response -- is fed back into the connection. The transport keeps the session id the
server gave with the initialize answer and the negotiated protocol version, and sends
them on every later request (``Mcp-Session-Id``, ``MCP-Protocol-Version``); once the
session exists it opens the GET stream for the server's own messages, reconnecting with
``Last-Event-ID`` when it drops. ``close()`` ends the session with DELETE.

HTTP/1.1 on asyncio (uvloop) with a compiled response reader
(:mod:`~mcpfast.transports.http.response_reader`); connections are kept alive and reused,
one request at a time each (an SSE answer holds its connection until it ends).
A request that may leave at once is written on an idle pooled connection and its plain
JSON answer read in the connection's callbacks, with no task
(:mod:`~mcpfast.transports.http.client_plain`); other messages, answers and the GET stream
are read by tasks.
A POST that fails (connection refused, a status other than 2xx whose body answers none of
its requests by id -- whatever else the body says --, a body over ``max_frame_size``) fails
the requests it carried with a JSON-RPC error fed back to the connection (naming the status
and the server's message), so no caller waits forever. POSTs leave in the official SDKs'
order (:mod:`~mcpfast.transports.http.post_order`): a notification or a response is
answered before anything sent after it leaves; requests go side by side.
The messages of a POST's SSE stream (and of its resumption) are fed with a
:class:`PostStream` channel naming the request the POST carried, so that the connection
knows which of its requests a server's request belongs to.
"""

from __future__ import annotations

import asyncio
import json
import logging
import ssl
from collections import deque
from typing import Any, Callable, Optional

from mcpfast._core.decode import DecodeError, decode
from mcpfast._core.encode import encode_error
from mcpfast._core.framing import DEFAULT_MAX_FRAME_SIZE
from mcpfast._core.messages import ErrorResponse, Notification, Request, Response
from mcpfast.jsonrpc.contract import Connection
from mcpfast.jsonrpc.errors import MESSAGE_TOO_LARGE, TRANSPORT_ERROR
from mcpfast.jsonrpc.outgoing import CANCELLED_METHOD
from mcpfast.protocol import meta_keys, methods
from mcpfast.protocol.header_values import encode_header_value
from mcpfast.protocol.trace_context import TRACEPARENT, trace_headers
from mcpfast.transports.http import headers as h
from mcpfast.transports.http.client_auth import MAX_AUTH_RETRIES, HTTPAuth, Unauthorized
from mcpfast.transports.http.client_connection import ClientConnection, HTTPTarget, StreamedAnswer
from mcpfast.transports.http.client_plain import PlainPost, PlainStreamCore, PostSlots, answers
from mcpfast.transports.http.post_order import PostOrder, request_ids_of, wait_turn
from mcpfast.transports.http.routing_headers import NAME_SOURCES

__all__ = ["HTTPClientStream", "HTTPStatusError", "PostStream", "open_http"]

_LOGGER = logging.getLogger("mcpfast.transports.http")
_RECONNECT_DELAYS = (0.1, 0.5, 1.0, 2.0, 5.0)
# HTTP connections one client keeps for its POSTs at most.
DEFAULT_MAX_CONNECTIONS = 32
# The headers of every POST.
_POST_HEADERS = {"Content-Type": h.JSON, "Accept": f"{h.JSON}, {h.EVENT_STREAM}"}


class HTTPStatusError(ConnectionError):
    """An HTTP answer that is not an MCP answer (``status``, ``body``)."""

    def __init__(self, status: int, body: bytes) -> None:
        super().__init__(f"HTTP {status}: {body[:200].decode('utf-8', 'replace')}")
        self.status = status
        self.body = body


def routing_headers_present(params: Any) -> bool:
    """Whether a request carries 2026-07-28 ``_meta`` (and so routing headers)."""
    meta = params.get("_meta") if type(params) is dict else None
    return type(meta) is dict and meta_keys.PROTOCOL_VERSION in meta


def routing_headers(method: str, params: Any) -> dict[str, str]:
    """The headers a 2026-07-28 request mirrors from its body (``MCP-Protocol-Version``,
    ``Mcp-Method``, ``Mcp-Name``); none for a handshake-era request."""
    meta = params.get("_meta") if type(params) is dict else None
    version = meta.get(meta_keys.PROTOCOL_VERSION) if type(meta) is dict else None
    if type(version) is not str:
        return {}
    headers = {"MCP-Protocol-Version": version, "Mcp-Method": method}
    source = NAME_SOURCES.get(method)
    name = params.get(source) if source is not None else None
    if type(name) is str:
        headers["Mcp-Name"] = encode_header_value(name)
    return headers


def _refusal(body: bytes, carried: tuple[Any, ...]) -> tuple[tuple[Any, ...], str]:
    """What an HTTP error body says: (the requests of ``carried`` it answers by id, the
    server's message). Servers of the official SDK 1.x answer a missing or unknown
    session, or an unsupported version, with an error whose id is "server-error": it
    answers none of them, and says why they failed."""
    try:
        message = decode(body)
    except DecodeError:
        return (), body[:300].decode("utf-8", "replace")
    if isinstance(message, (Response, ErrorResponse)) and message.id is not None and message.id in carried:
        return (message.id,), ""
    if isinstance(message, ErrorResponse):
        return (), message.message[:300]
    return (), body[:300].decode("utf-8", "replace")


class PostStream:
    """The reply channel of the messages that arrive on one POST's SSE stream (a
    :class:`~mcpfast.jsonrpc.contract.RelatedChannel`): ``related_request_id`` is the
    request the POST carried, which the server's requests on that stream belong to (the
    specification: they SHOULD relate to it); what the connection answers them goes out
    as any frame does, in a POST of its own."""

    __slots__ = ("related_request_id", "_send")

    def __init__(self, related_request_id: Any, send: Callable[[bytes], None]) -> None:
        self.related_request_id = related_request_id
        self._send = send

    def respond(self, frame: Optional[bytes]) -> None:
        if frame is not None:
            self._send(frame)

    def send(self, frame: bytes) -> None:
        self._send(frame)


class _EventCursor:
    """Where an SSE stream is: the last event id, the server's retry delay, the
    responses still awaited on it (request ids) and, for a POST's stream of one request,
    the channel its messages are fed with (None: the GET stream, a batch)."""

    __slots__ = ("last_event_id", "retry_ms", "waiting", "channel")

    def __init__(self, waiting: tuple[Any, ...], channel: Optional[PostStream] = None) -> None:
        self.last_event_id: Optional[str] = None
        self.retry_ms: Optional[int] = None
        self.waiting = set(waiting)
        self.channel = channel

    def answered(self, payload: bytes) -> None:
        waiting = self.waiting
        if len(waiting) == 1:
            for request_id in waiting:
                if answers(payload, request_id):
                    waiting.clear()  # read in place: no decode
                    return
        try:
            message = decode(payload)
        except DecodeError:
            return
        for item in message if isinstance(message, list) else (message,):
            if isinstance(item, (Response, ErrorResponse)):
                self.waiting.discard(item.id)


class HTTPClientStream(PlainStreamCore):
    """The transport handle ``open_http`` returns: ``conn``, ``send``, ``close()``. The
    plain POSTs' way (``send``'s common case, ``_post_plain``, ``_start_plain``,
    ``plain_answered``, ``_keep``, ``_plain_ended``, ``_slot_back``) is the compiled
    base's (:class:`~mcpfast.transports.http.client_plain.PlainStreamCore`)."""

    def __init__(self, url: str, factory: Callable[[Callable[[bytes], None]], Connection], *,
                 headers: Optional[dict[str, str]] = None,
                 max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
                 ssl_context: Optional[ssl.SSLContext] = None,
                 max_connections: int = DEFAULT_MAX_CONNECTIONS,
                 auth: Optional[HTTPAuth] = None) -> None:
        if auth is not None and not isinstance(auth, HTTPAuth):
            raise TypeError(f"auth must provide authorization() and unauthorized() (HTTPAuth), "
                            f"not {type(auth).__name__}")
        if isinstance(max_connections, bool) or not isinstance(max_connections, int) \
                or max_connections < 1:
            raise ValueError(f"max_connections must be an int >= 1, got {max_connections!r}")
        target = HTTPTarget(url, ssl_context)
        self.url = url
        self.host = target.host
        self.port = target.port
        self.path = target.path
        self.ssl: Any = target.ssl
        host_header = target.host_header
        # Sent with every request (plain POSTs keep their head per session state: set at start).
        self.extra_headers = dict(headers or {})
        self.auth = auth
        self.host_header = host_header
        self.max_frame_size = max_frame_size
        self.session_id: Optional[str] = None
        self.protocol_version: Optional[str] = None
        self.loop = asyncio.get_running_loop()
        self._idle: list[ClientConnection] = []
        # POSTs in progress at once (each holds a connection); the GET stream is apart.
        self._slots = PostSlots(max_connections)
        # Plain POSTs (client_plain) waiting for a slot, and those under way.
        self._queued: deque[PlainPost] = deque()
        self._plain: set[PlainPost] = set()
        # The head of a plain POST but its Content-Length, for (session id, version).
        self._plain_head: tuple[Any, Any, bytes] = (None, None, b"")
        self._tasks: set[asyncio.Task[Any]] = set()
        self._order = PostOrder()
        # POSTs of 2026-07-28 requests in progress, by request id (cancelled by closing them).
        self._stateless_posts: dict[Any, asyncio.Task[Any]] = {}
        self._get_task: Optional[asyncio.Task[None]] = None
        self._closed = False
        self.closed: asyncio.Future[None] = self.loop.create_future()
        self.conn = factory(self.send)

    # -- HTTP plumbing -----------------------------------------------------------------

    async def _connection(self) -> ClientConnection:
        while self._idle:
            connection = self._idle.pop()
            if not connection.lost:
                return connection
        return await self._new_connection()

    async def _new_connection(self) -> ClientConnection:
        _, connection = await self.loop.create_connection(
            ClientConnection, self.host, self.port, ssl=self.ssl,
            server_hostname=self.host if self.ssl else None)
        return connection

    def _release(self, connection: ClientConnection, response: StreamedAnswer) -> None:
        self._keep(connection, response.keep_alive)

    def _head(self, method: str, extra: dict[str, str], length: int) -> bytes:
        lines = [f"{method} {self.path} HTTP/1.1", f"Host: {self.host_header}"]
        if self.session_id is not None:
            lines.append(f"Mcp-Session-Id: {self.session_id}")
        if self.protocol_version is not None:
            lines.append(f"MCP-Protocol-Version: {self.protocol_version}")
        for name, value in {**self.extra_headers, **extra}.items():
            lines.append(f"{name}: {value}")
        lines.append(f"Content-Length: {length}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    async def _request(self, method: str, extra: dict[str, str],
                       body: bytes = b"") -> tuple[ClientConnection, StreamedAnswer]:
        connection = await self._connection()
        response = connection.start(self._head(method, extra, len(body)), body)
        try:
            await response.head
        except BaseException:
            # Refused, broken, or cancelled while waiting: this connection is done.
            connection.close()
            raise
        return connection, response

    async def _authorized(self, method: str, extra: dict[str, str],
                          body: bytes = b"") -> tuple[ClientConnection, StreamedAnswer]:
        """``_request`` with ``auth``: its header on the request, and after a refusal new
        credentials and another attempt (module client_auth). A refusal that stands is
        returned as it came, for the caller to report."""
        auth = self.auth
        if auth is None:
            return await self._request(method, extra, body)
        retries = 0
        while True:
            value = await auth.authorization()
            headers = dict(extra)
            if value is not None:
                headers["Authorization"] = value
            connection, response = await self._request(method, headers, body)
            status = response.status
            challenge = response.headers.get(h.WWW_AUTHENTICATE)
            if status != 401 and not (status == 403 and challenge is not None):
                return connection, response
            refused_body = await response.read_body(self.max_frame_size)
            try:
                renewed = retries < MAX_AUTH_RETRIES and not self._closed \
                    and await auth.unauthorized(Unauthorized(status, challenge, self.url))
            except BaseException:
                self._release(connection, response)
                raise
            if renewed:
                retries += 1
                self._release(connection, response)
                continue
            # The refusal stands: hand its body back for the caller to read.
            response.chunks.put_nowait(refused_body)
            response.chunks.put_nowait(None)
            return connection, response

    # -- sending -----------------------------------------------------------------------

    # (send's common case is the compiled base's; what it leaves comes here.)
    _routing_headers_present = staticmethod(routing_headers_present)

    def _send_other(self, frame: bytes, message: Any) -> None:
        # A frame that is not a plain POST's: a task posts it, in its turn.
        if type(message) is Notification and message.method == CANCELLED_METHOD:
            # 2026-07-28 cancels a request by closing its response stream.
            request_id = message.params.get("requestId") if type(message.params) is dict else None
            stream_task = self._stateless_posts.pop(request_id, None)
            if stream_task is not None:
                stream_task.cancel()
                return
        task = self.loop.create_task(self._post(frame, message, self._order.turn()))
        self._order.posted(message, task)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        if type(message) is Request and routing_headers_present(message.params):
            request_key = message.id
            self._stateless_posts[request_key] = task
            task.add_done_callback(lambda done: self._stateless_posts.pop(request_key, None)
                                   if self._stateless_posts.get(request_key) is done else None)

    def _post_headers(self, message: Any) -> dict[str, str]:
        # A POST's own headers: the body's type, the answers taken, and what a request
        # mirrors (2026-07-28 routing headers, its trace context).
        headers = dict(_POST_HEADERS)
        if type(message) is Request:
            mirrored = routing_headers(message.method, message.params)
            if mirrored:
                headers.update(mirrored)
                # Arguments the tool mirrors into headers (x-mcp-header), known to the client.
                param_headers = getattr(self.conn, "param_headers", None)
                if param_headers is not None:
                    headers.update(param_headers(message.method, message.params))
            meta = message.params.get("_meta") if type(message.params) is dict else None
            if type(meta) is dict and TRACEPARENT in meta:
                # The request's trace context, for HTTP-level tracing on the way.
                headers.update(trace_headers(meta))
        return headers

    # -- plain POSTs (client_plain: answered in the connection's callbacks) --------------

    def _plain_prefix(self) -> bytes:
        # The head of a plain POST but its Content-Length, for this session state (kept).
        head = self._head("POST", _POST_HEADERS, 0)
        prefix = head[:head.rindex(b"Content-Length: ")]
        self._plain_head = (self.session_id, self.protocol_version, prefix)
        return prefix

    def _connect_later(self, post: PlainPost) -> None:
        # No idle connection for post (holding a slot): written on a new one, by a task.
        task = self.loop.create_task(self._connect_plain(post))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _connect_plain(self, post: PlainPost) -> None:
        try:
            connection = await self._new_connection()
        except OSError as exc:
            self._plain_ended(post)
            self._fail(post.message, f"cannot reach {self.url}: {exc}")
            return
        except BaseException:
            self._plain_ended(post)
            raise
        if self._closed:
            connection.close()
            self._plain_ended(post)
            return
        post.write(connection)

    def _answered_otherwise(self, message: Any, body: bytes) -> None:
        # A plain POST's 200 JSON answer that is not laid out as its response: delivered
        # as it is, its request failed unless the answer held its response.
        cursor = _EventCursor((message.id,))
        if body:
            cursor.answered(body)
            self._deliver(body, False)
        if cursor.waiting:
            self._fail_waiting(cursor, f"HTTP 200 from {self.url} with no answer to it")

    def plain_lost(self, post: PlainPost, reason: str) -> None:
        """A plain POST's connection ended (or broke) before its answer: its request
        fails (PlainPost's callback)."""
        connection = post.connection
        if connection is not None:
            connection.reader.answer = None
            connection.close()
        self._plain_ended(post)
        self._fail(post.message, f"cannot reach {self.url}: {reason}")

    def plain_streams(self, post: PlainPost, answer: StreamedAnswer) -> None:
        """A plain POST's answer is not plain JSON: read by a task from here on, as any
        POST's (PlainPost's callback)."""
        self._plain.discard(post)
        task = self.loop.create_task(self._answer(post.connection, answer, post.message, False))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- POSTs read by a task ----------------------------------------------------------

    async def _post(self, frame: bytes, message: Any, before: Optional[asyncio.Task[Any]]) -> None:
        await wait_turn(before)
        initialize = type(message) is Request and message.method == methods.INITIALIZE
        headers = self._post_headers(message)
        await self._slots.take()
        try:
            connection, response = await self._authorized("POST", headers, frame)
        except OSError as exc:
            self._slot_back()
            self._fail(message, f"cannot reach {self.url}: {exc}")
            return
        except Exception as exc:  # the auth could not get credentials: say why, wait no more
            self._slot_back()
            self._fail(message, f"authorization for {self.url} failed: {exc}")
            return
        except BaseException:
            self._slot_back()
            raise
        await self._answer(connection, response, message, initialize)

    async def _answer(self, connection: Any, response: StreamedAnswer, message: Any,
                      initialize: bool) -> None:
        # Read a POST's answer; then its connection and slot are given back.
        try:
            await self._read_answer(response, message, initialize)
        except (ConnectionError, ValueError) as exc:
            self._fail(message, str(exc))
        except Exception as exc:  # a defect here must not leave the callers waiting
            _LOGGER.exception("reading the answer of a POST to %s failed", self.url)
            response.keep_alive = False
            self._fail(message, f"reading the answer from {self.url} failed: {exc!r}")
        except BaseException:
            response.keep_alive = False  # cancelled mid-answer: not reusable
            raise
        finally:
            self._release(connection, response)
            self._slot_back()

    async def _read_answer(self, response: StreamedAnswer, message: Any, initialize: bool) -> None:
        status = response.status
        content_type = response.headers.get(h.CONTENT_TYPE, "").split(";")[0].strip().lower()
        if status == 202:
            await response.read_body(self.max_frame_size)
            return
        if initialize and status == 200:
            session_id = response.headers.get(h.MCP_SESSION_ID)
            if session_id is not None:
                self.session_id = session_id
        if content_type == h.EVENT_STREAM and status == 200:
            carried = request_ids_of(message)
            # The server's requests on the stream of a POST of one request belong to it.
            cursor = _EventCursor(carried, PostStream(carried[0], self.send) if len(carried) == 1 else None)
            try:
                await self._read_events(response, initialize, cursor)
            except (ConnectionError, ValueError):
                pass  # a broken stream: resumed below like one that ended
            if cursor.waiting:
                await self._resume(cursor, message, initialize)
            return
        try:
            body = await response.read_body(self.max_frame_size)
        except ValueError:
            self._fail(message, f"the answer is over the frame limit of {self.max_frame_size} "
                                f"bytes", MESSAGE_TOO_LARGE)
            return
        if not 200 <= status < 300:
            # A failed POST fails the requests it carried, whatever its body says -- unless
            # the body is the server's answer to one of them (by its id).
            answered, said = _refusal(body, request_ids_of(message)) if body else ((), "")
            if answered and content_type == h.JSON:
                self._deliver(body, initialize)
            else:
                answered = ()
            reason = f"HTTP {status} from {self.url}"
            if said:
                reason += f": {said}"
            challenge = response.headers.get(h.WWW_AUTHENTICATE)
            if challenge is not None:
                reason += f" (WWW-Authenticate: {challenge[:300]})"
            self._fail(message, reason, skip=answered)
            return
        # A 2xx answer: what it does not answer of the requests carried fails (not JSON --
        # a proxy's page, say --, or JSON answering another id), instead of waiting for ever.
        cursor = _EventCursor(request_ids_of(message))
        if content_type == h.JSON and body:
            cursor.answered(body)
            self._deliver(body, initialize)
        if cursor.waiting:
            what = "no answer to it" if content_type == h.JSON else f"Content-Type {content_type or 'none'!r}"
            self._fail_waiting(cursor, f"HTTP {status} from {self.url} with {what}")

    async def _read_events(self, response: StreamedAnswer, initialize: bool,
                           cursor: _EventCursor) -> None:
        """Feed the messages of an SSE answer to the connection until it ends, keeping
        the last event id and retry delay, and which awaited responses came."""
        async for event in response.events(self.max_frame_size):
            if event.id is not None:
                cursor.last_event_id = event.id
            if event.retry is not None:
                cursor.retry_ms = event.retry
            payload = event.data
            if payload.strip():
                if cursor.waiting:
                    cursor.answered(payload)
                self._deliver(payload, initialize, cursor.channel)

    async def _resume(self, cursor: _EventCursor, message: Any, initialize: bool) -> None:
        """A POST's stream ended before its responses: resume it with GET and
        ``Last-Event-ID`` after the server's ``retry`` delay (2025-11-25), for as long as
        each attempt brings something; else fail the requests still waiting."""
        failures = 0
        while cursor.waiting and not self._closed:
            if cursor.last_event_id is None:
                reason = "the server's event stream ended before the response (not resumable)"
                break
            if failures >= len(_RECONNECT_DELAYS):
                reason = "the server's event stream ended before the response; resuming failed"
                break
            delay = cursor.retry_ms / 1000 if cursor.retry_ms is not None \
                else _RECONNECT_DELAYS[failures]
            await asyncio.sleep(delay)
            seen = cursor.last_event_id
            try:
                connection, response = await self._authorized(
                    "GET", {"Accept": h.EVENT_STREAM, "Last-Event-ID": seen})
            except OSError:
                failures += 1
                continue
            try:
                if response.status != 200 or h.EVENT_STREAM not in response.headers.get(h.CONTENT_TYPE, ""):
                    await response.read_body(self.max_frame_size)
                    reason = f"resuming the server's event stream failed: HTTP {response.status}"
                    break
                try:
                    await self._read_events(response, initialize, cursor)
                except (ConnectionError, ValueError):
                    pass
            finally:
                connection.close()
            failures = 0 if cursor.last_event_id != seen else failures + 1
        else:
            return
        self._fail_waiting(cursor, reason)

    def _fail_waiting(self, cursor: _EventCursor, reason: str) -> None:
        """Fail the requests still awaited on ``cursor``."""
        for request_id in list(cursor.waiting):
            if not self._closed:
                self.conn.feed(encode_error(request_id, TRANSPORT_ERROR, reason))

    def _deliver(self, frame: bytes, initialize: bool, channel: Optional[PostStream] = None) -> None:
        if initialize and self.protocol_version is None:
            try:
                answer = json.loads(frame)
                version = answer["result"]["protocolVersion"]
            except (ValueError, KeyError, TypeError):
                version = None
            if isinstance(version, str):
                self.protocol_version = version
                if self.session_id is not None and self._get_task is None:
                    self._get_task = self.loop.create_task(self._listen())
        if self._closed:
            return
        if channel is None:
            self.conn.feed(frame)
        else:
            self.conn.feed(frame, channel)

    def _fail(self, message: Any, reason: str, code: int = TRANSPORT_ERROR, skip: tuple[Any, ...] = ()) -> None:
        """Fail the requests of a POST that got no MCP answer (but those of ``skip``)."""
        items = message if isinstance(message, list) else [message]
        for item in items:
            if type(item) is Request and not self._closed and item.id not in skip:
                self.conn.feed(encode_error(item.id, code, reason))

    # -- the GET stream ----------------------------------------------------------------

    async def _listen(self) -> None:
        cursor = _EventCursor(())
        attempt = 0
        while not self._closed:
            extra = {"Accept": h.EVENT_STREAM}
            if cursor.last_event_id is not None:
                extra["Last-Event-ID"] = cursor.last_event_id
            try:
                connection, response = await self._authorized("GET", extra)
            except OSError:
                pass
            else:
                if response.status != 200:
                    # 405: the server offers no GET stream; others: no session for it.
                    await response.read_body(self.max_frame_size)
                    self._release(connection, response)
                    return
                attempt = 0
                try:
                    await self._read_events(response, False, cursor)
                except (ConnectionError, ValueError):
                    pass
                finally:
                    connection.close()
            if self._closed:
                return
            if cursor.retry_ms is not None and attempt == 0:
                await asyncio.sleep(cursor.retry_ms / 1000)  # the server's own delay
            else:
                await asyncio.sleep(_RECONNECT_DELAYS[min(attempt, len(_RECONNECT_DELAYS) - 1)])
            attempt += 1

    # -- closing -----------------------------------------------------------------------

    async def close(self) -> None:
        """End the session (DELETE), stop the GET stream, close every connection."""
        if self._closed:
            await self.closed
            return
        if self._get_task is not None:
            self._get_task.cancel()
            await asyncio.gather(self._get_task, return_exceptions=True)
        self._queued.clear()
        for post in list(self._plain):
            # Under way: its connection closed (the connection's close fails its call).
            post.done = True
            if post.connection is not None:
                post.connection.reader.answer = None
                post.connection.close()
        self._plain.clear()
        if self._tasks:
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self.session_id is not None:
            try:
                connection, response = await asyncio.wait_for(self._authorized("DELETE", {}), 5)
                await response.read_body(self.max_frame_size)
                self._release(connection, response)
            except (OSError, asyncio.TimeoutError):
                pass
        self._closed = True
        for connection in self._idle:
            connection.close()
        self._idle.clear()
        self.conn.close(None)
        if not self.closed.done():
            self.closed.set_result(None)

    async def __aenter__(self) -> HTTPClientStream:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"<HTTPClientStream {self.url} session={'yes' if self.session_id else 'no'}>"


async def open_http(url: str, factory: Callable[[Callable[[bytes], None]], Connection], *,
                    headers: Optional[dict[str, str]] = None,
                    max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
                    ssl_context: Optional[ssl.SSLContext] = None,
                    max_connections: int = DEFAULT_MAX_CONNECTIONS,
                    auth: Optional[HTTPAuth] = None) -> HTTPClientStream:
    """Wire a connection made by ``factory(send)`` to the Streamable HTTP endpoint ``url``
    (module docstring). ``headers``: sent with every request; ``auth``: an
    :class:`~mcpfast.transports.http.client_auth.HTTPAuth` (a bearer token, an OAuth
    flow) asked for the Authorization header and told of refusals;
    ``max_connections``: keep-alive connections used for POSTs at once (32)."""
    return HTTPClientStream(url, factory, headers=headers, max_frame_size=max_frame_size,
                            ssl_context=ssl_context, max_connections=max_connections, auth=auth)
