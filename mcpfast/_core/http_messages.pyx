"""HTTP requests and responses as the Streamable HTTP endpoint sees them.

The socket-facing servers (mcpfast's own HTTP/1.1 server, the ASGI application) turn what
they read into an HTTPRequest and write out the HTTPResponse they get back; the endpoint
never touches a socket. Typed classes with C-level fields: one of each is made per request.
"""
cimport cython

from cpython.number cimport PyNumber_Index

from mcpfast._core.cpython cimport mf_member_descriptor


cdef class HTTPRequest:
    """One HTTP request with its whole body.

    ``headers``: lower-case names; a header sent several times has its values joined
    with ", " (RFC 9110 list syntax), which is how every header read here is defined.
    """

    def __init__(self, str method, str path, headers, body=b"", str query="", client=None):
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.client = client

    # Attributes stay settable (middleware and tests rewrite requests) but not deletable:
    # the fields are never NULL, which the member descriptors below rely on.
    def __setattr__(self, str name, value):
        if name == "method":
            self.method = value
        elif name == "path":
            self.path = value
        elif name == "query":
            self.query = value
        elif name == "headers":
            self.headers = value
        elif name == "body":
            self.body = value
        elif name == "client":
            self.client = value
        else:
            raise AttributeError(f"'HTTPRequest' object has no attribute {name!r}")

    def __delattr__(self, str name):
        raise AttributeError(f"HTTPRequest attributes cannot be deleted ({name!r})")

    def __repr__(self):
        return f"<HTTPRequest {self.method} {self.path} {len(self.body)} bytes>"


cdef HTTPRequest new_request(str method, str path, object headers, object body, str query):
    cdef HTTPRequest request = HTTPRequest.__new__(HTTPRequest)
    request.method = method
    request.path = path
    request.query = query
    request.headers = headers
    request.body = body
    request.client = None
    return request


cdef object _status(object value):
    # An HTTP status is an int (an IntEnum such as HTTPStatus.OK is kept as its int).
    if type(value) is int:
        return value
    return PyNumber_Index(value).__int__()


cdef class HTTPResponse:
    """A response: a whole ``body``, or a ``stream`` of chunks (an SSE stream).

    ``close()`` must be called by the server once the response is over: after the last
    chunk was written, or when the client went away before that (then ``disconnected``
    is True, and the endpoint cancels what the stream was waiting for).
    """

    def __init__(self, status, headers=None, body=b"", stream=None, on_close=None):
        self.status = _status(status)
        self.headers = headers if headers is not None else []
        self.body = body
        self.stream = stream
        self._on_close = on_close
        self.closed = False

    def header(self, str name):
        """The value of a response header (case-insensitive), None when absent."""
        name = name.lower()
        for key, value in self.headers:
            if key.lower() == name:
                return value
        return None

    cpdef close(self, bint disconnected=False):
        """The response is over (see the class docstring). Idempotent."""
        if self.closed:
            return
        self.closed = True
        on_close = self._on_close
        self._on_close = None
        if on_close is not None:
            on_close(disconnected)

    # As HTTPRequest's: settable, never deleted.
    def __setattr__(self, str name, value):
        if name == "status":
            self.status = _status(value)
        elif name == "headers":
            self.headers = value
        elif name == "body":
            self.body = value
        elif name == "stream":
            self.stream = value
        elif name == "closed":
            self.closed = value
        else:
            raise AttributeError(f"'HTTPResponse' object has no attribute {name!r}")

    def __delattr__(self, str name):
        raise AttributeError(f"HTTPResponse attributes cannot be deleted ({name!r})")

    def __repr__(self):
        kind = "stream" if self.stream is not None else f"{len(self.body)} bytes"
        return f"<HTTPResponse {self.status} {kind}>"


# The fields read on every request and response: member descriptors instead of Cython's
# properties (see mf_member_descriptor: the interpreter then reads them at a cached
# offset, where a property costs a call each). Offsets of the structs Cython generates.
cdef extern from *:
    """
    #include <stddef.h>
    #define MF_HTTP_FIELD(cls, field) \\
        ((Py_ssize_t)offsetof(struct __pyx_obj_7mcpfast_5_core_13http_messages_##cls, field))
    #define MF_REQUEST_METHOD MF_HTTP_FIELD(HTTPRequest, method)
    #define MF_REQUEST_PATH MF_HTTP_FIELD(HTTPRequest, path)
    #define MF_REQUEST_QUERY MF_HTTP_FIELD(HTTPRequest, query)
    #define MF_REQUEST_HEADERS MF_HTTP_FIELD(HTTPRequest, headers)
    #define MF_REQUEST_BODY MF_HTTP_FIELD(HTTPRequest, body)
    #define MF_RESPONSE_STATUS MF_HTTP_FIELD(HTTPResponse, status)
    #define MF_RESPONSE_HEADERS MF_HTTP_FIELD(HTTPResponse, headers)
    #define MF_RESPONSE_BODY MF_HTTP_FIELD(HTTPResponse, body)
    #define MF_RESPONSE_STREAM MF_HTTP_FIELD(HTTPResponse, stream)
    """
    Py_ssize_t MF_REQUEST_METHOD
    Py_ssize_t MF_REQUEST_PATH
    Py_ssize_t MF_REQUEST_QUERY
    Py_ssize_t MF_REQUEST_HEADERS
    Py_ssize_t MF_REQUEST_BODY
    Py_ssize_t MF_RESPONSE_STATUS
    Py_ssize_t MF_RESPONSE_HEADERS
    Py_ssize_t MF_RESPONSE_BODY
    Py_ssize_t MF_RESPONSE_STREAM

mf_member_descriptor(HTTPRequest, "method", MF_REQUEST_METHOD)
mf_member_descriptor(HTTPRequest, "path", MF_REQUEST_PATH)
mf_member_descriptor(HTTPRequest, "query", MF_REQUEST_QUERY)
mf_member_descriptor(HTTPRequest, "headers", MF_REQUEST_HEADERS)
mf_member_descriptor(HTTPRequest, "body", MF_REQUEST_BODY)
mf_member_descriptor(HTTPResponse, "status", MF_RESPONSE_STATUS)
mf_member_descriptor(HTTPResponse, "headers", MF_RESPONSE_HEADERS)
mf_member_descriptor(HTTPResponse, "body", MF_RESPONSE_BODY)
mf_member_descriptor(HTTPResponse, "stream", MF_RESPONSE_STREAM)


cdef HTTPResponse new_response(object status, object headers, object body):
    # A whole response of an int status, made without argument parsing (every JSON answer
    # of a POST).
    cdef HTTPResponse response = HTTPResponse.__new__(HTTPResponse)
    response.status = status
    response.headers = headers
    response.body = body
    response.stream = None
    response._on_close = None
    response.closed = False
    return response
