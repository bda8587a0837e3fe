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

Why compiled: a plain POST's way (made, a slot taken, written, answered whole, told
apart as the response) was five Python frames per request, as many as the rest of the
client's path.
"""
cimport cython
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.stdio cimport snprintf
from libc.string cimport memcmp, memcpy

from mcpfast.transports.http.client_connection_core cimport ClientConnectionCore

import asyncio
from collections import deque
from typing import Protocol

from mcpfast._core.decode import DecodeError as _DecodeError
from mcpfast._core.decode import decode as _decode
from mcpfast._core.messages import Request as _Request
from mcpfast.jsonrpc.errors import MESSAGE_TOO_LARGE as _MESSAGE_TOO_LARGE
from mcpfast.protocol.methods import INITIALIZE as _INITIALIZE
from mcpfast.transports.http.client_connection import StreamedAnswer

__all__ = ["PlainPost", "PlainPoster", "PlainStreamCore", "PostSlots", "answers", "is_json"]

cdef bytes _JSON = b"application/json"


def is_json(content_type):
    """Whether a Content-Type value is application/json (parameters aside)."""
    return _is_json(content_type)


cdef bint _is_json(object content_type) except -1:
    if content_type is None:
        return False
    return content_type == _JSON or content_type.split(b";", 1)[0].strip().lower() == _JSON


def answers(payload, request_id):
    """Whether ``payload`` is laid out as the response (result or error) to the request
    ``request_id`` (an int) as encode_response / encode_error write it; False says only
    that it cannot be told in place (decode it to know)."""
    if type(payload) is not bytes:
        payload = bytes(payload)
    return _answers(payload, request_id)


cdef bint _answers(bytes payload, object request_id) except -1:
    if type(request_id) is not int:
        return False
    cdef long long number
    try:
        number = request_id
    except OverflowError:
        return False
    # {"jsonrpc":"2.0","id":<id>," then result": or error":, and the closing brace.
    cdef char prefix[64]
    cdef int length = snprintf(prefix, sizeof(prefix), b'{"jsonrpc":"2.0","id":%lld,"', number)
    cdef const char *data = PyBytes_AS_STRING(payload)
    cdef Py_ssize_t size = PyBytes_GET_SIZE(payload)
    if size <= length or memcmp(data, prefix, length) != 0 or data[size - 1] != b"}":
        return False
    cdef Py_ssize_t rest = size - length
    return ((rest >= 8 and memcmp(data + length, b'result":', 8) == 0)
            or (rest >= 7 and memcmp(data + length, b'error":', 7) == 0))


class PlainPoster(Protocol):
    """What a PlainPost tells the stream that made it (``max_frame_size``, an int, and
    these; typed in the stub)."""

    def plain_answered(self, post, body, keep_alive): ...
    def plain_lost(self, post, reason): ...
    def plain_streams(self, post, answer): ...


@cython.final
@cython.auto_pickle(False)
cdef class PlainPost:
    """One request's POST read in its connection's callbacks (module docstring):
    ``message`` (the decoded Request), ``data`` (head and body, as written),
    ``connection`` once it is written; then ``status``, ``parts`` of the body and
    ``over`` (past the frame limit: not kept) as an answer arrives in steps."""

    def __init__(self, poster, message, data):
        self.poster = poster
        self.message = message
        self.data = data
        self.connection = None
        self.status = 0
        self.headers = []
        self.content_type = None
        self.framed = False
        self.parts = []
        self.size = 0
        self.over = False
        self.done = False

    def write(self, connection):
        """Send the request on ``connection`` (idle, alive)."""
        self.connection = connection
        (<ClientConnectionCore?>connection).send_data(self.data, self)

    # -- AnswerSink --------------------------------------------------------------------

    def whole(self, int status, headers, content_type, body, keep_alive):
        if self.done:
            return
        self.status = status
        if status == 200 and (content_type == _JSON or _is_json(content_type)):
            self.done = True
            poster = self.poster
            if isinstance(poster, PlainStreamCore):
                (<PlainStreamCore>poster).answered(
                    self, body if len(body) <= (<PlainStreamCore>poster).max_frame_size else None, keep_alive)
            else:
                poster.plain_answered(self, body if len(body) <= poster.max_frame_size else None, keep_alive)
            return
        answer = self._hand_over(status, headers)
        if body:
            answer.body(body)
        answer.complete(keep_alive)

    def header(self, name, value):
        self.headers.append((name, value))
        if len(name) == 12 and name.lower() == b"content-type":
            self.content_type = value
        elif name.lower() in (b"content-length", b"transfer-encoding"):
            self.framed = True

    def headers_done(self, int status):
        self.status = status
        if status != 200 or not _is_json(self.content_type):
            self._hand_over(status, self.headers)

    def _hand_over(self, int status, headers):
        # Not the common answer: read by a task, as any POST's (its head already in).
        answer = StreamedAnswer()
        for name, value in headers:
            answer.header(name, value)
        answer.headers_done(status)
        self.done = True
        self.connection.reader.answer = answer
        self.poster.plain_streams(self, answer)
        return answer

    def body(self, chunk):
        if self.over:
            return
        self.size += len(chunk)
        if self.size > self.poster.max_frame_size:
            self.over = True
            self.parts.clear()
        else:
            self.parts.append(chunk)

    def complete(self, keep_alive):
        if not self.done:
            self.done = True
            parts = self.parts
            body = None if self.over else parts[0] if len(parts) == 1 else b"".join(parts)
            if isinstance(self.poster, PlainStreamCore):
                (<PlainStreamCore>self.poster).answered(self, body, keep_alive)
            else:
                self.poster.plain_answered(self, body, keep_alive)

    def lost(self):
        if self.done:
            return
        if self.status and not self.framed:
            self.complete(False)  # a body that ends with its connection (HTTP/1.1 allows it)
            return
        self.done = True
        self.poster.plain_lost(self, "the HTTP connection was lost")

    def broken(self, reason):
        if not self.done:
            self.done = True
            self.poster.plain_lost(self, reason)


@cython.final
@cython.auto_pickle(False)
cdef class PostSlots:
    """How many POSTs are in progress, at most ``limit`` (module docstring)."""

    def __init__(self, Py_ssize_t limit):
        self.limit = limit
        self.busy = 0
        self._waiters = deque()

    def try_take(self):
        """Take a slot if one is free now (and no task waits for one)."""
        return self.take_now()

    cdef bint take_now(self) except -1:
        if self.busy < self.limit and not self._waiters:
            self.busy += 1
            return True
        return False

    async def take(self):
        """Take a slot, waiting for one (in turn) when none is free."""
        if self.try_take():
            return
        waiter = asyncio.get_running_loop().create_future()
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
    def waiting(self):
        """Whether a task waits for a slot."""
        return bool(self._waiters)

    def give(self):
        """Give a slot back: to the first task waiting for one, else free."""
        self.give_back()

    cdef int give_back(self) except -1:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)  # the slot passes on
                return 0
        self.busy -= 1
        return 0


cdef bytes _META = b'"_meta"'


@cython.auto_pickle(False)
cdef class PlainStreamCore:
    """The compiled base of the Streamable HTTP client's stream
    (:class:`~mcpfast.transports.http.client.HTTPClientStream`): a sent request's way when
    it may leave at once as a plain POST -- the POST made (its head kept per session
    state), a slot taken, written on an idle pooled connection -- and its answer's: fed to
    the connection, the connection kept or closed, the slot passed to the next queued POST.
    The rest (POSTs read by tasks, failures, the GET stream, closing) is the subclass's,
    called through its methods: ``_send_other``, ``_plain_prefix``, ``_head``,
    ``_post_headers``, ``_connect_later``, ``_answered_otherwise``, ``_fail``."""

    def send(self, frame):
        """The connection's writer: one POST per frame (answers arrive asynchronously)."""
        if self._closed:
            raise ConnectionError("the HTTP transport is closed")
        if type(frame) is not bytes:
            frame = bytes(frame)
        try:
            message = _decode(frame)
        except _DecodeError:
            message = None
        if type(message) is _Request:
            if self.auth is None and message.method != _INITIALIZE and self._order.turn() is None:
                if _META not in <bytes>frame:
                    # The common request: no task, its params never built.
                    self.post_plain(message, <bytes>frame, None)
                    return
                if not self._routing_headers_present(message.params):
                    self.post_plain(message, <bytes>frame, self._post_headers(message))
                    return
        self._send_other(frame, message)

    def _post_plain(self, message, bytes frame not None, headers):
        """``message`` (a Request, ``frame`` encoded) POSTed with no task; ``headers``:
        the POST's own (None: only the two every POST has)."""
        self.post_plain(message, frame, headers)

    cdef int post_plain(self, object message, bytes frame, object headers) except -1:
        cdef bytes data
        cdef bytes prefix
        cdef tuple kept
        cdef char length[48]
        cdef int written
        cdef Py_ssize_t size = PyBytes_GET_SIZE(frame), start
        if headers is None or len(headers) == 2:
            # The head of every such POST, but its length: made once per session state.
            kept = self._plain_head
            if kept[0] != self.session_id or kept[1] != self.protocol_version or not kept[2]:
                prefix = self._plain_prefix()
            else:
                prefix = <bytes?>kept[2]
            written = snprintf(length, sizeof(length), b"Content-Length: %zd\r\n\r\n", size)
            start = PyBytes_GET_SIZE(prefix)
            data = PyBytes_FromStringAndSize(NULL, start + written + size)
            memcpy(PyBytes_AS_STRING(data), PyBytes_AS_STRING(prefix), start)
            memcpy(PyBytes_AS_STRING(data) + start, length, written)
            memcpy(PyBytes_AS_STRING(data) + start + written, PyBytes_AS_STRING(frame), size)
        else:
            data = <bytes?>self._head("POST", headers, size) + frame
        cdef PlainPost post = PlainPost.__new__(PlainPost)
        post.poster = self
        post.message = message
        post.data = data
        post.headers = []
        post.parts = []
        if self._slots.take_now():
            self.start_plain(post)
        else:
            self._queued.append(post)
        return 0

    def _start_plain(self, PlainPost post not None):
        """``post`` (holding a slot) written on an idle connection, else on a new one."""
        self.start_plain(post)

    cdef int start_plain(self, PlainPost post) except -1:
        self._plain.add(post)
        idle = self._idle
        cdef ClientConnectionCore connection
        while idle:
            # (The pool holds the stream's ClientConnections only.)
            connection = <ClientConnectionCore?>idle.pop()
            if not connection.lost:
                post.connection = connection
                connection.send_data(post.data, post)
                return 0
        self._connect_later(post)
        return 0

    def plain_answered(self, PlainPost post not None, body, keep_alive):
        """A plain POST's answer (200, JSON) has all come (``body``; None: over the frame
        limit): fed to the connection, its request failed when it does not answer it
        (PlainPost's callback)."""
        self.answered(post, body, keep_alive)

    cdef int answered(self, PlainPost post, object body, bint keep_alive) except -1:
        connection = post.connection
        if connection is None:
            raise AssertionError("a plain POST answered before it was written")
        self.keep(connection, keep_alive)
        self.plain_ended(post)
        message = post.message
        if body is None:
            self._fail(message, f"the answer is over the frame limit of {self.max_frame_size} bytes",
                       _MESSAGE_TOO_LARGE)
            return 0
        if type(body) is not bytes:
            body = bytes(body)
        if body and _answers(<bytes>body, message.id):
            if not self._closed:
                self.conn.feed(body)
            return 0
        self._answered_otherwise(message, body)
        return 0

    def _keep(self, connection, keep_alive):
        """A connection whose answer has been read: back to the pool, or closed."""
        self.keep(connection, keep_alive)

    cdef int keep(self, object connection, bint keep_alive) except -1:
        cdef ClientConnectionCore known = <ClientConnectionCore?>connection
        if keep_alive and not known.lost and not self._closed:
            known.reader.answer = None
            self._idle.append(known)
        else:
            known.close()
        return 0

    def _plain_ended(self, PlainPost post not None):
        """A plain POST ended: no longer under way, its slot given on."""
        self.plain_ended(post)

    cdef int plain_ended(self, PlainPost post) except -1:
        self._plain.discard(post)
        self.slot_back()
        return 0

    def _slot_back(self):
        """A POST ended: its slot to the next queued plain POST, else back to the slots."""
        self.slot_back()

    cdef int slot_back(self) except -1:
        queued = self._queued
        if queued and not self._closed:
            self.start_plain(<PlainPost?>queued.popleft())
        else:
            self._slots.give_back()
        return 0
