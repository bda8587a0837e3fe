# CoreFields: the fields of the server core (mcpfast.server.core.ServerCore) that compiled
# code reads -- the one declared place. Each is written by Python only (ServerCore.__init__,
# and a user setting Server.publisher before serving) and read in C.
cdef class CoreFields:
    # The MCP log level (an index of mcpfast.protocol.log_levels.LEVELS) of a connection
    # that never called logging/setLevel: connection_core.pyx's recycle() resets to it.
    cdef object default_log_level
    # The Publisher: connection_core.pyx's recycle()/revive() detach and attach to it.
    cdef object publisher
