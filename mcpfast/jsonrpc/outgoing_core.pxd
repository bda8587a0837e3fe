# OutgoingBook: the fields of a session's book of outgoing requests
# (mcpfast.jsonrpc.outgoing.OutgoingRequests, its Python subclass, documents them) and
# its start() in C: every request a session sends goes through it.
cdef class OutgoingBook:
    # The session's writer (frames not tied to an incoming request's reply channel).
    cdef object _send
    # The Runtime: futures, timers, the clock.
    cdef object _runtime
    # The PendingTable of the requests waiting (ids, waiters, deadlines).
    cdef object _table
    # Requests that asked for progress, by progress token (= request id): a dict.
    cdef object _progress
    # When the one timeout timer fires (runtime clock), None when none is armed.
    cdef object _timer_when
    # True once closed: start() refuses.
    cdef object _closed
    # Seconds (a positive float, math.inf) or None: a request's timeout when it gives none.
    cdef object default_timeout
    # The runtime's create_future and time, bound on first use (runtime.bound).
    cdef object _create_future
    cdef object _time
    # The class of the request handles start() makes (an OutgoingCore subclass).
    cdef object _request_type

    # start() without its Python call (compiled callers: the gateway's forwarding).
    cdef object begin(self, object method, object params, object timeout, object progress,
                      object origin, bint raw, object future)
