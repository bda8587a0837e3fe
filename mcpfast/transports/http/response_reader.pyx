"""HTTP/1.1 responses read for a client connection, sans I/O: ResponseReader.

feed() reads the bytes a connection receives and tells its ``answer`` (an AnswerSink,
mcpfast.transports.http.client_connection) what they hold. A plain response (see "the
strict fast path" below) that is all in the bytes at hand is read in one C pass and handed
over in one call, ``answer.whole(status, headers, content_type, body, keep_alive)``;
everything else -- a response arriving in pieces, chunked, ending with the connection, an
interim 1xx, any odd byte, every error -- is read by httptools' llhttp, which calls
``header``, ``headers_done``, ``body`` and ``complete`` as it goes. Both readings give the
same: header names and values as bytes as sent, the body's bytes, keep-alive. A malformed
response raises httptools.HttpParserError from feed(), as does a head (header names and
values) over ``max_head_size`` bytes; the connection is not to be read further.
"""
cimport cython
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.list cimport PyList_Append
from libc.string cimport memcmp

from mcpfast._core.http_head cimport HeaderSpan, head_line, length_value, mf_visible_run_end

from httptools import HttpParserCallbackError, HttpParserError, HttpResponseParser


cdef extern from "<strings.h>":
    int strncasecmp(const char *a, const char *b, size_t n)


DEFAULT_MAX_HEAD_SIZE = 64 * 1024

# -- the strict fast path ---------------------------------------------------------------
# Most answers are plain: "HTTP/1.1 NNN reason", "Name: value" headers, a Content-Length
# body, the connection kept alive, all of it in the bytes at hand. Only that narrow subset
# of what llhttp accepts is read here, and read as llhttp would; anything else leaves the
# response to llhttp, so that every unusual case and every error stays llhttp's. The fast
# path reads only between messages llhttp has begun (it never sees a message in part).

cdef enum:
    # A response with more headers than this is not plain (llhttp reads it).
    MAX_PLAIN_HEADERS = 64


cdef inline bint named(const char *name, Py_ssize_t size, const char *lower, Py_ssize_t lower_size):
    return size == lower_size and strncasecmp(name, lower, <size_t>size) == 0


@cython.auto_pickle(False)
@cython.final
cdef class ResponseReader:
    """Reads the responses of one HTTP/1.1 client connection (see the module docstring)
    and hands them to ``answer``."""

    def __init__(self, Py_ssize_t max_head_size=DEFAULT_MAX_HEAD_SIZE):
        if max_head_size < 0:
            raise ValueError(f"max_head_size must be >= 0, got {max_head_size}")
        self.answer = None
        self.max_head_size = max_head_size
        self._parser = HttpResponseParser(self)
        self._feed_data = self._parser.feed_data
        self._get_status_code = self._parser.get_status_code
        self._should_keep_alive = self._parser.should_keep_alive
        self._llhttp_busy = False
        self._llhttp_only = False
        self._head_size = 0

    cpdef feed(self, data):
        """Read ``data``, the next bytes of the connection (module docstring)."""
        cdef Py_ssize_t offset = 0
        cdef Py_ssize_t size
        cdef Py_ssize_t taken
        cdef const char *p
        if not self._llhttp_busy and not self._llhttp_only and type(data) is bytes:
            p = PyBytes_AS_STRING(data)
            size = PyBytes_GET_SIZE(data)
            while offset < size:
                taken = self._fast(data, p + offset, size - offset)
                if taken == 0:
                    break
                offset += taken
            if offset == size:
                return
            if offset:
                data = data[offset:]
        try:
            self._feed_data(data)
        except HttpParserCallbackError as exc:
            self._llhttp_only = True
            problem = exc.__context__
            if type(problem) is HttpParserError:
                raise problem from None  # a limit of ours, named
            raise
        except HttpParserError:
            self._llhttp_only = True
            raise

    cdef Py_ssize_t _fast(self, object data, const char *p, Py_ssize_t size) except -1:
        # Reads one whole plain response at p and returns the bytes it took; 0 when the
        # response is not plain or not all there.
        cdef const char *end = p + size
        cdef const char *q = p
        cdef Py_ssize_t head_size = 0
        cdef Py_ssize_t length = -1
        cdef Py_ssize_t kind = -1
        cdef Py_ssize_t i
        cdef int status
        cdef HeaderSpan spans[MAX_PLAIN_HEADERS]
        cdef HeaderSpan line
        cdef int found
        cdef Py_ssize_t count = 0
        # Status line: "HTTP/1.1" SP 3DIGIT [SP reason] CRLF.
        if size < 14 or memcmp(q, b"HTTP/1.1 ", 9) != 0:
            return 0
        q += 9
        for i in range(3):
            if q[i] < b'0' or q[i] > b'9':
                return 0
        status = (q[0] - 48) * 100 + (q[1] - 48) * 10 + (q[2] - 48)
        # Interim answers and those that never have a body are llhttp's.
        if status < 200 or status == 204 or status == 304:
            return 0
        q += 3
        if q[0] == b' ':
            q = mf_visible_run_end(q + 1, end)
        if end - q < 2 or q[0] != b'\r' or q[1] != b'\n':
            return 0
        q += 2
        # Headers (the lines head_line reads), up to the blank line.
        while True:
            found = head_line(&q, end, &line)
            if found < 0:
                return 0
            if found == 0:
                break
            head_size += line.name_size + line.value_size
            if head_size > self.max_head_size or count == MAX_PLAIN_HEADERS:
                return 0
            if named(line.name, line.name_size, b"content-length", 14):
                if length >= 0:
                    return 0
                length = length_value(line.value, line.value_size)
                if length < 0:
                    return 0
            elif named(line.name, line.name_size, b"content-type", 12):
                kind = count
            elif (named(line.name, line.name_size, b"connection", 10)
                    or named(line.name, line.name_size, b"proxy-connection", 16)):
                # Only the default of HTTP/1.1 is read here; "close" and the rest change
                # how llhttp treats what follows.
                if not named(line.value, line.value_size, b"keep-alive", 10):
                    return 0
            elif (named(line.name, line.name_size, b"transfer-encoding", 17)
                    or named(line.name, line.name_size, b"upgrade", 7)):
                return 0
            spans[count] = line
            count += 1
        # Without Content-Length the body ends with the connection: llhttp's.
        if length < 0 or end - q < length:
            return 0
        answer = self.answer
        if answer is not None:
            headers = []
            content_type = None
            for i in range(count):
                text = PyBytes_FromStringAndSize(spans[i].value, spans[i].value_size)
                PyList_Append(headers, (PyBytes_FromStringAndSize(spans[i].name, spans[i].name_size), text))
                if i == kind:
                    content_type = text
            body = PyBytes_FromStringAndSize(q, length) if length else b""
            answer.whole(status, headers, content_type, body, True)
        return q + length - p

    # -- httptools callbacks: called by the parser, during feed() --------------------------

    def on_message_begin(self):
        self._llhttp_busy = True
        self._head_size = 0

    def on_header(self, name, value):
        self._head_size += len(name) + len(value)
        if self._head_size > self.max_head_size:
            raise HttpParserError(f"the answer's head is over {self.max_head_size} bytes")
        answer = self.answer
        if answer is not None:
            answer.header(name, value)

    def on_headers_complete(self):
        answer = self.answer
        if answer is not None:
            answer.headers_done(self._get_status_code())

    def on_body(self, body):
        answer = self.answer
        if answer is not None:
            answer.body(body)

    def on_message_complete(self):
        keep_alive = self._should_keep_alive()
        self._llhttp_busy = False
        if not keep_alive:
            self._llhttp_only = True
        answer = self.answer
        if answer is not None:
            answer.complete(keep_alive)
