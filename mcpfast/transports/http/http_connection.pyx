"""One HTTP/1.1 connection of mcpfast's own Streamable HTTP server (the contract is in
mcpfast.transports.http.server's docstring, which re-exports HTTPServerProtocol).

An asyncio protocol as a typed class: requests come from the compiled framer of
mcpfast._core.http_framing, are handed to the endpoint, and their answers are written with
that module's response writers, all through C calls; only the endpoint and the transport
are called as Python.
"""
cimport cython

from mcpfast._core.http_framing cimport HTTPRequestFramer, stream_head, whole_response
from mcpfast._core.http_messages cimport HTTPRequest, HTTPResponse

import asyncio
import logging

from mcpfast.transports.http.messages import JSON_CONTENT_TYPE as _JSON_HEADER
from mcpfast.transports.http.messages import json_error_body, json_error_response

_LOGGER = logging.getLogger("mcpfast.transports.http")

MAX_HEAD_SIZE = 64 * 1024
# Seconds a connection accepted just before shutdown gets to send its first request.
FRESH_GRACE = 1.0

cdef object CancelledError = asyncio.CancelledError
cdef str _HEAD = "HEAD"
cdef bytes CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"
cdef object get_running_loop = asyncio.get_running_loop


cdef bytes unwritable():
    # What a client gets for a response that cannot be written (see _write_whole).
    return whole_response(500, [_JSON_HEADER], False,
                          json_error_body(-32603, "Internal error: the response could not be written"))


@cython.auto_pickle(False)
@cython.final
cdef class HTTPServerProtocol:
    """One HTTP/1.1 connection to the endpoint (mcpfast.transports.http.server's docstring).

    An asyncio protocol (connection_made, data_received, eof_received, connection_lost,
    pause_writing, resume_writing) made by serve_http for each connection.
    """

    def __init__(self, endpoint, double keepalive_timeout, connections, max_connections=None):
        self.max_connections = max_connections
        self.endpoint = endpoint
        self.keepalive_timeout = keepalive_timeout
        self.connections = connections
        self.loop = get_running_loop()
        self._time = self.loop.time
        self.transport = None
        self._framer = HTTPRequestFramer(HTTPRequest, endpoint.max_body_size, MAX_HEAD_SIZE, True)
        self._handle = endpoint.handle
        self._queue = None
        self._head = 0
        self._paused = False
        self._busy = False
        self._task = None
        self._deferred = None
        self._deferred_keep_alive = False
        self._response = None
        self._closed = False
        self._writable = None
        self._idle = None
        self._idle_due = False
        self._stopping = False
        self._answering = None
        self._drained = None
        self._served = False
        self._grace = None
        self._head_only = False
        self._blocked = False

    # -- asyncio.Protocol --------------------------------------------------------------

    def connection_made(self, transport):
        self.transport = transport
        self._write = transport.write
        peer = transport.get_extra_info("peername")
        if type(peer) is tuple and len(<tuple>peer) >= 2 and type((<tuple>peer)[0]) is str:
            self._client = ((<tuple>peer)[0], (<tuple>peer)[1])
        limit = self.max_connections
        if limit is not None and len(self.connections) >= limit:
            _LOGGER.warning("HTTP connection refused: %d connections are open", limit)
            self._fail(503, f"Service Unavailable: {limit} connections are open; try again")
            return
        self.connections.add(self)
        self._arm_idle()

    def connection_lost(self, exc):
        self._closed = True
        self.connections.discard(self)
        if self._idle is not None:
            self._idle.cancel()
        if self._grace is not None:
            self._grace.cancel()
            self._grace = None
        if self._task is not None and not self._task.done():
            self._task.cancel()
        cdef DeferredAnswer deferred = self._deferred
        if deferred is not None:
            self._deferred = None
            deferred.cancel()
        cdef HTTPResponse response = self._response
        self._response = None
        if response is not None:
            response.close(True)
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)
        self._set_drained()

    def eof_received(self):
        # asyncio.Protocol's default: the transport closes itself.
        return None

    def pause_writing(self):
        if self._writable is None or self._writable.done():
            self._writable = self.loop.create_future()

    def resume_writing(self):
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)
        if self._blocked and not self._busy and not self._closed:
            # Answers waited for the client to read (see _next): go on with them.
            self._blocked = False
            self._next()

    # Called once per read by the event loop, always positionally: no keyword parsing.
    @cython.always_allow_keywords(False)
    def data_received(self, data):
        cdef object done
        if self._closed:
            return  # closing: what else the client sent is not read
        # The keep-alive deadline stays where it is: a request has until then to arrive
        # whole (a partial one must not hold the connection for ever).
        done = self._framer.feed(data)
        if done is not None:
            self._served = True
            if self._queue is None:
                # The framer's list is new on each feed: it becomes the queue.
                self._queue = <list>done
                self._head = 0
            else:
                self._queue.extend(<list>done)
            if not self._busy:
                self._next()
            if (self._queue is not None and not self._paused and not self._closed
                    and self.transport is not None):
                # Pipelined (answered after the one in progress) or waiting for the client
                # to read its answers: read no further meanwhile.
                self.transport.pause_reading()
                self._paused = True
        elif self._framer.continue_wanted and not self._busy and self._queue is None:
            self._continue()
        if self._framer.failed:
            self._framing_failed()

    cdef int _continue(self) except -1:
        # The interim response a client sending Expect: 100-continue waits for before its
        # body (sent only between answers: it must not land inside one).
        self._framer.continue_wanted = False
        if self.transport is not None and not self._closed:
            self._write(CONTINUE)
        return 0

    cdef int _framing_failed(self) except -1:
        error = self._framer.error
        if error is not None:
            self._fail(400, f"Bad Request: malformed HTTP ({error})")
        elif not self._closed:
            # Refused from its Content-Length: answer now instead of reading the body.
            if self._busy:
                self._stopping = True  # after the answer in progress
            else:
                limit = self.endpoint.max_body_size
                self._fail(413, f"Payload Too Large: the body is over {limit} bytes")
        return 0

    # -- answering ---------------------------------------------------------------------

    def _grace_over(self):
        self._grace = None
        if not self._busy and self.transport is not None:
            self.transport.close()

    cdef int _next(self) except -1:
        cdef tuple entry
        cdef HTTPRequest request
        cdef bint keep_alive
        cdef object outcome
        if self._stopping and self._grace is None:
            if self.transport is not None:
                self.transport.close()
            return 0
        while self._queue is not None and not self._closed:
            if self._writable is not None and not (<object>self._writable).done():
                # The client is not reading its answers: the rest wait (resume_writing
                # goes on), so that what is owed to it stays within the transport's
                # high-water mark.
                self._blocked = True
                if not self._paused and self.transport is not None:
                    self.transport.pause_reading()
                    self._paused = True
                return 0
            entry = <tuple>self._queue[self._head]
            self._head += 1
            if self._head == len(self._queue):
                self._queue = None
            request = <HTTPRequest>entry[0]
            keep_alive = entry[1]
            if self._stopping:
                # The first request of a connection accepted before the listener closed:
                # answered, then the connection closes.
                self._grace.cancel()
                self._grace = None
                keep_alive = False
            if entry[2]:  # too large
                limit = self.endpoint.max_body_size
                self._write_whole(json_error_response(
                    413, -32600, f"Payload Too Large: the body is over {limit} bytes"), False)
                return 0
            self._head_only = request.method is _HEAD or request.method == _HEAD
            request.client = self._client
            try:
                outcome = self._handle(request)
            except Exception:
                _LOGGER.exception("the MCP endpoint failed on %s %s", request.method, request.path)
                self._write_whole(json_error_response(500, -32603, "Internal error"), False)
                return 0
            if type(outcome) is HTTPResponse and (<HTTPResponse>outcome).stream is None:
                self._write_whole(<HTTPResponse>outcome, keep_alive)
                if not keep_alive:
                    return 0
                continue
            self._busy = True
            self._answering = request.method
            if type(outcome) is DeferredAnswer:
                # A POST still being handled: answered when its reply is decided, without a
                # task of its own (see DeferredAnswer).
                self._deferred = <DeferredAnswer>outcome
                self._deferred_keep_alive = keep_alive
                (<DeferredAnswer>outcome).listen(self._deferred_answered, self.loop)
                return 0
            self._task = self.loop.create_task(self._answer(outcome, keep_alive))
            return 0
        if not self._closed and self.transport is not None:
            if self._paused:
                self._paused = False
                self.transport.resume_reading()
            if self._framer.continue_wanted:
                self._continue()
            if self._idle is not None:
                # The timer is armed: moving its deadline is all _arm_idle would do.
                self._idle_deadline = <double>self._time() + self.keepalive_timeout
                self._idle_due = True
            else:
                self._arm_idle()
        return 0

    async def _answer(self, outcome, bint keep_alive):
        cdef HTTPResponse response
        try:
            result = outcome if isinstance(outcome, HTTPResponse) else await outcome
        except CancelledError:
            return
        except Exception:
            _LOGGER.exception("the MCP endpoint failed")
            result = json_error_response(500, -32603, "Internal error")
        if not isinstance(result, HTTPResponse):
            raise TypeError(f"the MCP endpoint answered {result!r}, not an HTTPResponse")
        response = result
        if self._closed:
            response.close(True)
            return
        if response.stream is None:
            self._answered_whole(response, keep_alive)
            return
        await self._write_stream(response, keep_alive)
        self._task = None
        self._answered_whole(None, keep_alive)

    def _deferred_answered(self, response):
        # A DeferredAnswer's listener: its response, on the loop turn after its reply was
        # decided (never after connection_lost, which cancels it).
        cdef bint keep_alive = self._deferred_keep_alive
        self._deferred = None
        if self._closed:
            response.close(True)
            return
        if type(response) is HTTPResponse and (<HTTPResponse>response).stream is None:
            self._answered_whole(<HTTPResponse>response, keep_alive)
            return
        self._task = self.loop.create_task(self._answer(response, keep_alive))

    cdef int _answered_whole(self, HTTPResponse response, bint keep_alive) except -1:
        # The answer in progress is written (``response``: a whole one to write now, else
        # None): the connection is free for the next request.
        if response is not None:
            self._write_whole(response, keep_alive)
        self._busy = False
        self._task = None
        self._answering = None
        self._set_drained()
        if keep_alive and not self._closed:
            self._next()
        return 0

    cdef int _set_drained(self) except -1:
        drained = self._drained
        self._drained = None
        if drained is not None and not drained.done():
            drained.set_result(None)
        return 0

    cdef int _write_whole(self, HTTPResponse response, bint keep_alive) except -1:
        cdef bytes data
        transport = self.transport
        if transport is None or self._closed:
            response.close(True)
            return 0
        try:
            data = whole_response(response.status, response.headers, keep_alive, response.body)
            if self._head_only:
                # RFC 9110 9.3.2: the head a GET would get, no content.
                data = data[:len(data) - len(response.body)]
        except Exception:
            # A response that cannot be written (a header outside latin-1, say): the
            # client gets a 500 instead of a cut connection, then the connection closes.
            _LOGGER.exception("an HTTP response could not be written: %r", response)
            data = unwritable()
            keep_alive = False
        self._write(data)
        response.close(False)
        if not keep_alive:
            transport.close()
            self._closed = True
        return 0

    async def _write_stream(self, HTTPResponse response, bint keep_alive):
        transport = self.transport
        stream = response.stream
        try:
            head = stream_head(response.status, response.headers, keep_alive)
        except Exception:
            _LOGGER.exception("an HTTP response could not be written: %r", response)
            transport.write(unwritable())
            transport.close()
            self._closed = True
            response.close(True)
            await stream.aclose()
            return
        self._response = response
        transport.write(head)
        try:
            if self._head_only:
                transport.write(b"0\r\n\r\n")  # the head alone (see _write_whole)
                self._response = None
                response.close(False)
                if not keep_alive:
                    transport.close()
                    self._closed = True
                return
            async for chunk in stream:
                if self._closed:
                    return
                transport.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                writable = self._writable
                if writable is not None and not writable.done():
                    await self._drained_or_cut(writable)
                    if self._closed:
                        return
            if not self._closed:
                transport.write(b"0\r\n\r\n")
                self._response = None
                response.close(False)
                if not keep_alive:
                    transport.close()
                    self._closed = True
        except CancelledError:
            pass
        except Exception as exc:
            # A stream that fails (one whose client fell too far behind, say) ends as a
            # broken response: the connection closes, so the client cannot take what it got
            # for the whole answer.
            _LOGGER.warning("an HTTP response stream failed (%s); closing the connection", exc)
            if not self._closed:
                transport.close()
                self._closed = True
        finally:
            await stream.aclose()

    async def _drained_or_cut(self, writable):
        # Waits until the client has read below the low-water mark; a client that reads
        # nothing for keepalive_timeout seconds loses the connection (it would hold the
        # answer's bytes, and the connection, for ever).
        if not self.keepalive_timeout:
            await writable
            return
        try:
            await asyncio.wait_for(asyncio.shield(writable), self.keepalive_timeout)
        except asyncio.TimeoutError:
            if not self._closed and self.transport is not None:
                _LOGGER.warning("dropping an HTTP connection: its client read nothing of a "
                                "streamed answer for %g s", self.keepalive_timeout)
                self.transport.abort()  # what it did not read is dropped, not flushed
                self._closed = True

    cdef int _fail(self, int status, str message) except -1:
        transport = self.transport
        if transport is None or self._closed:
            return 0
        if self._busy:
            # An answer is being written (a stream, say): an error now would land inside
            # it. The connection just ends; the answer in progress is cut.
            _LOGGER.debug("closing an HTTP connection: %s", message)
            transport.close()
            self._closed = True
            return 0
        body = json_error_body(-32600, message)
        transport.write(whole_response(status, [_JSON_HEADER], False, body))
        transport.close()
        self._closed = True
        return 0

    cdef int _arm_idle(self) except -1:
        # Why lazily: a keep-alive connection goes idle after every answer; cancelling and
        # making a timer each time cost more than the rest of a small request's bookkeeping.
        # The deadline moves; the one timer, when it fires early, is set again for it.
        if self.keepalive_timeout and not self._closed:
            self._idle_deadline = <double>self._time() + self.keepalive_timeout
            self._idle_due = True
            if self._idle is None:
                self._idle = self.loop.call_later(self.keepalive_timeout, self._close_idle)
        return 0

    def _close_idle(self):
        cdef double remaining
        self._idle = None
        if not self._idle_due or self._closed:
            return  # a request is arriving or being answered: _arm_idle sets it again
        remaining = self._idle_deadline - <double>self._time()
        if remaining > 0:
            self._idle = self.loop.call_later(remaining, self._close_idle)
            return
        if self._busy or self.transport is None:
            return
        if self._blocked:
            # Answers wait for a client that has read nothing since: what it did not read
            # is dropped, not flushed (that would hold the connection for ever).
            _LOGGER.warning("dropping an HTTP connection: its client read none of its "
                            "answers for %g s", self.keepalive_timeout)
            self.transport.abort()
            return
        if self._framer.reading:
            # RFC 9110 15.5.9: the request did not arrive whole in time.
            self._fail(408, f"Request Timeout: the request did not arrive whole within "
                            f"{self.keepalive_timeout:g} s")
            return
        self.transport.close()

    def close_now(self):
        """End the connection at once (the end of a shutdown)."""
        if self.transport is not None and not self._closed:
            self.transport.close()

    def shutdown(self):
        """Stop taking requests: close now when idle, after the current answer otherwise.

        Returns a future done once the request being answered is answered, when that is
        a POST (a GET stream has no end of its own: it ends with its session), else None.
        A connection that has not sent its first request yet was accepted just before the
        listener closed: its request is on its way, so it gets FRESH_GRACE seconds to send
        it, which is answered (then the connection closes) -- closing it at once would fail
        a request the client had every reason to think accepted.
        """
        self._stopping = True
        self._queue = None
        if not self._busy:
            if not self._served and self.transport is not None and not self._closed:
                self._grace = self.loop.call_later(FRESH_GRACE, self._grace_over)
                if self._drained is None:
                    self._drained = self.loop.create_future()
                return self._drained
            if self.transport is not None:
                self.transport.close()
            return None
        if self._answering == "GET" or self._closed:
            return None
        if self._drained is None:
            self._drained = self.loop.create_future()
        return self._drained
