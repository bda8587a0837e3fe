# The Streamable HTTP client's plain POSTs in C (client_plain.pyx): PlainPost (one POST
# read in its connection's callbacks), PostSlots (the POSTs in progress against the
# client's limit), PlainStreamCore (the base of HTTPClientStream: a plain POST's way).


cdef class PlainPost:
    cdef public object poster
    cdef public object message
    cdef public object data
    cdef public object connection
    cdef public int status
    cdef public list headers
    cdef public object content_type
    # Whether the body's end is told by its framing (else: by the connection's end).
    cdef public bint framed
    cdef public list parts
    cdef public Py_ssize_t size
    cdef public bint over
    # Settled: answered, failed, or handed to a StreamedAnswer.
    cdef public bint done


cdef class PostSlots:
    cdef public Py_ssize_t limit
    cdef public Py_ssize_t busy
    cdef object _waiters

    # try_take() and give() for a caller in C.
    cdef bint take_now(self) except -1
    cdef int give_back(self) except -1


cdef class PlainStreamCore:
    # Closed (no more sending); the auth (None: none); the order of POSTs (PostOrder).
    cdef public bint _closed
    cdef public object auth
    cdef public object _order
    # The session's id and protocol version, sent with every POST.
    cdef public object session_id
    cdef public object protocol_version
    # The head of a plain POST but its Content-Length, for (session id, version).
    cdef public tuple _plain_head
    cdef public PostSlots _slots
    # Plain POSTs waiting for a slot (a deque), those under way, the idle connections.
    cdef public object _queued
    cdef public set _plain
    cdef public list _idle
    # The client connection answers are fed to, and the largest answer it takes.
    cdef public object conn
    cdef public Py_ssize_t max_frame_size

    cdef int post_plain(self, object message, bytes frame, object headers) except -1
    cdef int start_plain(self, PlainPost post) except -1
    cdef int answered(self, PlainPost post, object body, bint keep_alive) except -1
    cdef int keep(self, object connection, bint keep_alive) except -1
    cdef int plain_ended(self, PlainPost post) except -1
    cdef int slot_back(self) except -1
