# The HTTP/1.1 response reader of the client's connections (see response_reader.pyx):
# C-level state, so that a plain answer is read with no Python frame of its own.
cimport cython


@cython.final
cdef class ResponseReader:
    # The AnswerSink the answer being read goes to (None: dropped).
    cdef public object answer
    cdef readonly Py_ssize_t max_head_size
    cdef object _parser
    # The parser's bound methods, looked up once.
    cdef object _feed_data
    cdef object _get_status_code
    cdef object _should_keep_alive
    # llhttp has begun a message it has not completed, read one that ends the connection,
    # or failed: what comes next is llhttp's to read, not the fast path's.
    cdef bint _llhttp_busy
    cdef bint _llhttp_only
    # Bytes of header names and values of the message llhttp is reading.
    cdef Py_ssize_t _head_size

    cpdef feed(self, data)
    cdef Py_ssize_t _fast(self, object data, const char *p, Py_ssize_t size) except -1
