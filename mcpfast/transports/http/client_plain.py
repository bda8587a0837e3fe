"""The Streamable HTTP client's common POST, with no task: :class:`PlainPost`.

A request POSTed over a pooled keep-alive connection is written at once, and its answer
read in the connection's protocol callbacks (``data_received`` -> the response reader ->
the :class:`~mcpfast.transports.http.client_connection.AnswerSink` callbacks here): a
``200 application/json`` answer -- the common case -- is handed over whole (``whole``, when
it came in one read) or gathered, and fed to the client's connection, which completes the
waiting call. An answer of any other kind
(an SSE stream, an error status, a 202) is handed after its head to a
:class:`~mcpfast.transports.http.client_connection.StreamedAnswer` and a task, which read
it as every POST's answer used to be read. :class:`PostSlots` counts the POSTs in progress
(each holds a connection) against the client's limit: taken at once when one is free,
else waited for -- by a queue of plain POSTs the stream serves when a slot frees, or by a
task.

:func:`answers` tells whether an answer is the response to a request id by reading its
first bytes in place (as encode_response / encode_error lay a response out), so that the
answer is decoded once, by the connection it is fed to.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any, Optional, Protocol

from mcpfast.transports.http.client_connection import ClientConnection, StreamedAnswer

__all__ = ["PlainPost", "PlainPoster", "PostSlots", "answers", "is_json"]

_JSON = b"application/json"


def is_json(content_type: Optional[bytes]) -> bool:
    """Whether a Content-Type value is application/json (parameters aside)."""
    if content_type is None:
        return False
    return content_type == _JSON or content_type.split(b";", 1)[0].strip().lower() == _JSON


def answers(payload: bytes, request_id: Any) -> bool:
    """Whether ``payload`` is laid out as the response (result or error) to the request
    ``request_id`` (an int) as encode_response / encode_error write it; False says only
    that it cannot be told in place (decode it to know)."""
    if type(request_id) is not int:
        return False
    prefix = b'{"jsonrpc":"2.0","id":%d,"' % request_id
    if not payload.startswith(prefix) or not payload.endswith(b"}"):
        return False
    start = len(prefix)
    return payload.startswith(b'result":', start) or payload.startswith(b'error":', start)


class PlainPoster(Protocol):
    """What a PlainPost tells the stream that made it."""

    max_frame_size: int

    def plain_answered(self, post: PlainPost, body: Optional[bytes], keep_alive: bool) -> None: ...
    def plain_lost(self, post: PlainPost, reason: str) -> None: ...
    def plain_streams(self, post: PlainPost, answer: StreamedAnswer) -> None: ...


class PlainPost:
    """One request's POST read in its connection's callbacks (module docstring):
    ``message`` (the decoded Request), ``data`` (head and body, as written),
    ``connection`` once it is written; then ``status``, ``parts`` of the body and
    ``over`` (past the frame limit: not kept) as an answer arrives in steps."""

    __slots__ = ("poster", "message", "data", "connection", "status", "headers", "content_type",
                 "framed", "parts", "size", "over", "done")

    def __init__(self, poster: PlainPoster, message: Any, data: bytes) -> None:
        self.poster = poster
        self.message = message
        self.data = data
        self.connection: Optional[ClientConnection] = None
        self.status = 0
        self.headers: list[tuple[bytes, bytes]] = []
        self.content_type: Optional[bytes] = None
        # Whether the body's end is told by its framing (else: by the connection's end).
        self.framed = False
        self.parts: list[bytes] = []
        self.size = 0
        self.over = False
        # Settled: answered, failed, or handed to a StreamedAnswer.
        self.done = False

    def write(self, connection: ClientConnection) -> None:
        """Send the request on ``connection`` (idle, alive)."""
        self.connection = connection
        connection.send(self.data, self)

    # -- AnswerSink --------------------------------------------------------------------

    def whole(self, status: int, headers: list[tuple[bytes, bytes]], content_type: Optional[bytes],
              body: bytes, keep_alive: bool) -> None:
        if self.done:
            return
        self.status = status
        if status == 200 and (content_type == _JSON or is_json(content_type)):
            self.done = True
            self.poster.plain_answered(self, body if len(body) <= self.poster.max_frame_size else None,
                                       keep_alive)
            return
        answer = self._hand_over(status, headers)
        if body:
            answer.body(body)
        answer.complete(keep_alive)

    def header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name, value))
        if len(name) == 12 and name.lower() == b"content-type":
            self.content_type = value
        elif name.lower() in (b"content-length", b"transfer-encoding"):
            self.framed = True

    def headers_done(self, status: int) -> None:
        self.status = status
        if status != 200 or not is_json(self.content_type):
            self._hand_over(status, self.headers)

    def _hand_over(self, status: int, headers: list[tuple[bytes, bytes]]) -> StreamedAnswer:
        # Not the common answer: read by a task, as any POST's (its head already in).
        answer = StreamedAnswer()
        for name, value in headers:
            answer.header(name, value)
        answer.headers_done(status)
        self.done = True
        assert self.connection is not None
        self.connection.reader.answer = answer
        self.poster.plain_streams(self, answer)
        return answer

    def body(self, chunk: bytes) -> None:
        if self.over:
            return
        self.size += len(chunk)
        if self.size > self.poster.max_frame_size:
            self.over = True
            self.parts.clear()
        else:
            self.parts.append(chunk)

    def complete(self, keep_alive: bool) -> None:
        if not self.done:
            self.done = True
            parts = self.parts
            body = None if self.over else parts[0] if len(parts) == 1 else b"".join(parts)
            self.poster.plain_answered(self, body, keep_alive)

    def lost(self) -> None:
        if self.done:
            return
        if self.status and not self.framed:
            self.complete(False)  # a body that ends with its connection (HTTP/1.1 allows it)
            return
        self.done = True
        self.poster.plain_lost(self, "the HTTP connection was lost")

    def broken(self, reason: str) -> None:
        if not self.done:
            self.done = True
            self.poster.plain_lost(self, reason)


class PostSlots:
    """How many POSTs are in progress, at most ``limit`` (module docstring)."""

    __slots__ = ("limit", "busy", "_waiters")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.busy = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    def try_take(self) -> bool:
        """Take a slot if one is free now (and no task waits for one)."""
        if self.busy < self.limit and not self._waiters:
            self.busy += 1
            return True
        return False

    async def take(self) -> None:
        """Take a slot, waiting for one (in turn) when none is free."""
        if self.try_take():
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except BaseException:
            if waiter.done() and not waiter.cancelled():
                self.give()  # handed a slot as it was cancelled: passed on
            else:
                try:
                    self._waiters.remove(waiter)
                except ValueError:
                    pass
            raise

    @property
    def waiting(self) -> bool:
        """Whether a task waits for a slot."""
        return bool(self._waiters)

    def give(self) -> None:
        """Give a slot back: to the first task waiting for one, else free."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)  # the slot passes on
                return
        self.busy -= 1
