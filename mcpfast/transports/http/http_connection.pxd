# One HTTP/1.1 connection of mcpfast's own server (see http_connection.pyx): C-level fields
# and C methods, so that reading a request and writing its answer make no Python frame of
# their own.
cimport cython

from mcpfast._core.http_framing cimport HTTPRequestFramer
from mcpfast._core.http_messages cimport HTTPResponse
from mcpfast.transports.http.post_reply cimport DeferredAnswer


@cython.final
cdef class HTTPServerProtocol:
    cdef readonly object endpoint
    cdef readonly double keepalive_timeout
    # The set of open connections shared by a server's protocols; None: no limit.
    cdef readonly object connections
    cdef readonly object max_connections
    cdef readonly object loop
    cdef readonly object transport
    # The client's (host, port) from the socket, else None: each request's ``client``.
    cdef object _client
    cdef HTTPRequestFramer _framer
    # Bound methods looked up once: endpoint.handle, transport.write, loop.time.
    cdef object _handle
    cdef object _write
    cdef object _time
    # Requests read and not answered yet, (request, keep_alive, too_large) tuples: the
    # framer's list from _head on; None when there are none.
    cdef list _queue
    cdef Py_ssize_t _head
    # Reading was paused for pipelined requests (resumed once they are answered).
    cdef bint _paused
    # An answer is in progress in a task (readonly: the benchmark harnesses wait on them).
    cdef readonly bint _busy
    cdef readonly object _task
    # The answer of a POST still being handled, listened to (see _next), and whether the
    # connection stays open after it.
    cdef DeferredAnswer _deferred
    cdef bint _deferred_keep_alive
    # The streamed response being written, if any.
    cdef HTTPResponse _response
    cdef bint _closed
    # Not done while the transport is over its high-water mark.
    cdef object _writable
    # The keep-alive timeout: one timer, moved lazily (see _arm_idle), and its deadline
    # (loop time) when _idle_due, else the connection is not idle.
    cdef object _idle
    cdef double _idle_deadline
    cdef bint _idle_due
    cdef bint _stopping
    # The method of the request whose answer is in progress (a task), if any.
    cdef object _answering
    # Set by shutdown() while a POST is being answered: done once it is.
    cdef object _drained
    # A request was received; the grace timer of a fresh connection at shutdown.
    cdef bint _served
    cdef object _grace
    # The request being answered is a HEAD (its answer goes without content).
    cdef bint _head_only
    # Answers wait for the client to read the ones written (see _next).
    cdef bint _blocked

    cdef int _framing_failed(self) except -1
    cdef int _continue(self) except -1
    cdef int _next(self) except -1
    cdef int _set_drained(self) except -1
    cdef int _write_whole(self, HTTPResponse response, bint keep_alive) except -1
    cdef int _answered_whole(self, HTTPResponse response, bint keep_alive) except -1
    cdef int _fail(self, int status, str message) except -1
    cdef int _arm_idle(self) except -1
