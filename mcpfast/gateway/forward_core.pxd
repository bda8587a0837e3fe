# The gateway's plain forwarded tools/call in C (forward_core.pyx): UpstreamCore under
# mcpfast.gateway.upstream.Upstream, MountTableCore under mcpfast.gateway.gateway.Gateway,
# PlainToolCall the routing's direct route.
from mcpfast._core.dispatch cimport SessionCore
from mcpfast.jsonrpc.outgoing_core cimport OutgoingBook

cdef class UpstreamCore:
    # The upstream's Client while its session is open (None: not started, restarting),
    # and its session and that session's book of outgoing requests when plain calls can
    # go on it (a handshake-era one), else None.
    cdef object _client
    cdef SessionCore _plain_session
    cdef OutgoingBook _plain_book
    # Its UpstreamOptions (the per-call timeout: .timeout, seconds or None).
    cdef object options
    # Downstream contexts of the forwarded requests waiting, oldest first (a dict).
    cdef object _callers
    # The same by the id of the request sent upstream for them (handshake-era sessions).
    cdef object _sent
    # Results handed downstream as the upstream sent them (an int).
    cdef object passed_through
    # forward_plain's settle, bound once.
    cdef object _settle_plain


cdef class MountTableCore:
    # The mounted tools: public name -> (Upstream, MountedTool) (a dict, replaced whole
    # when a catalogue changes), and the server's own tools (a live mapping), which win.
    cdef object _tools
    cdef object _own_tools

    cdef object tool_of(self, object name)


cdef class PlainToolCall:
    # The GatewayMiddleware (its .outermost), the gateway's mount table (.tool(name); the
    # same as `table` when it is a MountTableCore, else table is None) and the chain's
    # handler taking every call this route does not.
    cdef object middleware
    cdef object gateway
    cdef MountTableCore table
    cdef object fallback
