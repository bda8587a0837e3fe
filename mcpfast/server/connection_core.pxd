# ConnectionCore: the fields of a server connection that the request path and the
# stateless HTTP pool read, set by the Python ServerConnection (mcpfast.server.connection)
# through member descriptors (connection_core.pyx).
cdef class ConnectionCore:
    # The connection's JSON-RPC session (a mcpfast._core.dispatch.SessionCore).
    cdef object session
    # The server core (mcpfast.server.core.ServerCore; its compiled fields in core_fields.pxd).
    cdef object server
    # The handshake's ProtocolState.
    cdef object state
    # The verified AccessToken when the transport authenticates, else None.
    cdef object auth
    # The set of subscribed resource URIs.
    cdef object subscriptions
    # Recycled and idle (recycle()): not among the server's connections.
    cdef object parked
    # Whether the server's publisher skips this connection while parked.
    cdef object _parks_attached
    # Whether the context factory checks the initialization gate.
    cdef object _gated
