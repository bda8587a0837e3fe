# ws_listener: a WebSocket's frames in and out of a connection (see ws_listener.pyx).
from picows.picows cimport WSListener, WSTransport


cdef class MCPListener(WSListener):
    cdef readonly object factory
    cdef readonly object conn
    cdef WSTransport _transport
    cdef list _parts
    # The server's set of open sockets' listeners, or None.
    cdef object _live
    # The connection's feed, and its feed_message / feed_request or None.
    cdef object _feed
    cdef object _feed_message
    cdef object _feed_request

    cdef int _deliver(self, payload) except -1
