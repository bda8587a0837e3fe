# Sans-I/O HTTP/1.1 request framing: HTTPRequestFramer owns an httptools parser whose
# callbacks are its own methods and keeps the request being read in C-level fields.
cimport cython


@cython.final
cdef class HTTPRequestFramer:
    # Called with (method, path, headers, body, query) for each complete request.
    cdef readonly object request_class
    # request_class is mcpfast's HTTPRequest: made in C, without a call.
    cdef bint _plain_requests
    cdef readonly Py_ssize_t max_body_size
    cdef readonly Py_ssize_t max_head_size
    # RFC 9112 3.2 applied: an HTTP/1.1 request without exactly one Host is a parse error.
    cdef readonly bint require_host
    # The parse error (or HttpParserUpgrade) that ended the stream, else None.
    cdef readonly object error
    # error is set, or the request being read is too large: the caller has to act (True
    # or False; an object so that it is a member descriptor: read after every feed).
    cdef readonly object failed
    cdef object _parser
    # The parser's bound methods, looked up once.
    cdef object _feed_data
    cdef object _get_method
    cdef object _should_keep_alive
    # (request, keep_alive, too_large) completed during the current feed(), or None.
    cdef list _done
    # The request being read: its target so far, headers, body (first chunk, and the list
    # of all chunks once there are several), and sizes for the limits.
    cdef bytes _url
    cdef dict _headers
    cdef bytes _body
    cdef list _chunks
    cdef Py_ssize_t _body_size
    cdef Py_ssize_t _head_size
    cdef bint _too_large
    # llhttp has begun a message it has not completed, or read one that ends the
    # connection: what comes next is llhttp's to read, not the fast path's.
    cdef bint _llhttp_only
    # A CONNECT (or a too large upgrade request) was read: nothing more is.
    cdef bint _ended
    # llhttp is inside a request (its head or body partly read).
    cdef readonly bint reading
    # The head read asks for 100 (Continue) and its body has not come (the caller sends
    # the interim response and clears it).
    cdef public bint continue_wanted
    # Host headers of the request being read; why it was refused (a head rule of ours).
    cdef int _hosts
    cdef object _head_problem
    # An upgrade request's body bytes still to read (-1: none), its other parts and the
    # body read so far (see _upgraded).
    cdef Py_ssize_t _upgrade_left
    cdef tuple _upgrade_entry
    cdef list _upgrade_body

    # feed() (see the .pyx), called at C level by the server's connections.
    cpdef feed(self, data)
    cdef Py_ssize_t _fast(self, const char *p, Py_ssize_t size) except -1
    cdef int _begin(self) except -1
    cdef object _upgraded(self, data, Py_ssize_t offset)
    cdef object _feed_upgrade_body(self, data)
    cdef object _done_and_clear(self)
    cdef int _new_parser(self) except -1
    cdef int _emit(self, method, path, dict headers, body, query, bint keep_alive,
                   bint too_large) except -1


# Response writers (see the .pyx), callable at C level.
cpdef bytes whole_response(status, headers, bint keep_alive, body)
cpdef bytes stream_head(status, headers, bint keep_alive)
