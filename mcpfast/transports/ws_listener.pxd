# ws_listener: a WebSocket's frames in and out of a connection (see ws_listener.pyx).
from picows.picows cimport WSCloseCode, WSListener, WSTransport


cdef class MCPListener(WSListener):
    cdef readonly object factory
    cdef readonly object conn
    cdef WSTransport _transport
    # The frames of a message in pieces, and their bytes so far.
    cdef list _parts
    cdef Py_ssize_t _parts_size
    cdef readonly Py_ssize_t max_message_size
    # The most bytes queued for a peer that does not read, and whether the transport is
    # over its high-water mark (reading paused).
    cdef readonly Py_ssize_t max_write_buffer
    cdef bint _backed_up
    # The server's set of open sockets' listeners, or None.
    cdef object _live
    # The connection's feed, and its feed_message / feed_request or None.
    cdef object _feed
    cdef object _feed_message
    cdef object _feed_request

    cdef int _refuse(self, WSTransport transport, WSCloseCode code, bytes reason) except -1
    cdef int _deliver(self, payload) except -1
