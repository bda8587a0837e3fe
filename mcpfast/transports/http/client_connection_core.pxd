# The client connection's per-answer work in C (client_connection_core.pyx): the base of
# mcpfast.transports.http.client_connection.ClientConnection.

from mcpfast.transports.http.response_reader cimport ResponseReader


cdef class ClientConnectionCore:
    # The transport once made (None before), the reader of its answers, whether it ended.
    cdef public object transport
    cdef public ResponseReader reader
    cdef public bint lost

    # send() for a caller in C.
    cdef int send_data(self, object data, object answer) except -1
