# The gateway's plain forwarded tools/call in C (forward_core.pyx): UpstreamCore under
# mcpfast.gateway.upstream.Upstream, PlainToolCall the routing's direct route.

cdef class UpstreamCore:
    # The upstream's Client while its session is open (None: not started, restarting).
    cdef object client
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


cdef class PlainToolCall:
    # The GatewayMiddleware (its .outermost), the gateway's mount table (.tool(name)) and
    # the chain's handler taking every call this route does not.
    cdef object middleware
    cdef object gateway
    cdef object fallback
