# HTTP requests and responses as the Streamable HTTP endpoint sees them: C-level fields, so
# that the servers make and read one per request without a Python __init__ frame.
cimport cython


cdef class HTTPRequest:
    # Member descriptors, read by the interpreter straight from the object; set through
    # __setattr__ (never deleted).
    cdef readonly str method
    cdef readonly str path
    cdef readonly str query
    cdef readonly object headers
    cdef readonly object body
    # The client's (host, port) as the server's socket saw it, else None (set by the
    # servers after making the request; the endpoint gives it to the connection it feeds).
    cdef readonly object client


cdef class HTTPResponse:
    # As HTTPRequest's fields (status an int).
    cdef readonly object status
    cdef readonly object headers
    cdef readonly object body
    cdef readonly object stream
    cdef readonly bint closed
    cdef object _on_close

    # close() (see the .pyx), called at C level by the servers.
    cpdef close(self, bint disconnected=*)


# A request made without argument parsing (the framer's plain requests).
cdef HTTPRequest new_request(str method, str path, object headers, object body, str query)
# A whole response (``status`` an int) made without argument parsing.
cdef HTTPResponse new_response(object status, object headers, object body)
