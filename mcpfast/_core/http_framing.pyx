"""HTTP/1.1 framing, sans I/O: requests read with httptools (llhttp), responses written.

HTTPRequestFramer owns an httptools.HttpRequestParser whose callbacks are its own methods
and hands out whole requests: method, path and query as str, headers in a dict (lower-case
names, latin-1 values, repeats joined with ", "), the body as bytes, keep-alive. The limits
on the head and the body are enforced while reading. Plain requests (see "the strict fast
path" below) are read in one C pass instead; everything else, errors included, is llhttp's.
whole_response() and stream_head() write response heads from a small cache.
"""
cimport cython
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_GetItem, PyDict_SetItem
from cpython.list cimport PyList_Append
from cpython.object cimport PyObject
from cpython.ref cimport Py_DECREF, Py_INCREF, Py_XDECREF
from cpython.unicode cimport PyUnicode_DecodeLatin1
from libc.stdint cimport uint64_t
from libc.string cimport memchr, memcmp, memcpy

from http import HTTPStatus
from sys import intern

from mcpfast._core.cpython cimport mf_dict_new_presized, mf_internals_enable, mf_member_descriptor
from mcpfast._core.http_head cimport HeaderSpan, head_line, length_value
from mcpfast._core.http_messages cimport HTTPRequest, new_request

from httptools import HttpParserError, HttpParserUpgrade, HttpRequestParser, parse_url


cdef extern from "mcpfast/dict_shapes.h":
    # Header dicts as filled copies of a model of their names (include/mcpfast/
    # dict_shapes.h): clients send the same names in the same order on every request.
    ctypedef struct mf_shape_slot:
        pass
    enum:
        MF_SHAPE_CHECKED_KEYS
    int mf_shapes_ok
    bint mf_shapes_check()
    void mf_shapes_clear(mf_shape_slot *table, Py_ssize_t count)
    uint64_t mf_shape_step(uint64_t h, PyObject *key)
    dict mf_dict_of_shape(mf_shape_slot *slot, PyObject **keys, PyObject **values,
                          Py_ssize_t n, uint64_t h)


cdef extern from "<strings.h>":
    int strncasecmp(const char *a, const char *b, size_t n)


cdef extern from "Python.h":
    # One hash lookup for "insert unless present"; the value now in the dict comes back
    # (borrowed).
    PyObject *PyDict_SetDefault(object d, object key, object default) except NULL
    str PyUnicode_New(Py_ssize_t size, Py_UCS4 maxchar)
    void *PyUnicode_DATA(object text)


DEFAULT_MAX_HEAD_SIZE = 64 * 1024

cdef enum:
    # Header names kept in the name cache at most (names come from the network).
    HEADER_NAME_CACHE = 512
    # parse_url refuses longer URLs (its offsets are 16-bit): they take its path, so that
    # they fail as they always did.
    MAX_FAST_URL = 65535
    # The headers a plain request's dict has room for before it grows.
    PLAIN_HEADERS = 10
    # A request with more headers than this is not plain (llhttp reads it).
    MAX_PLAIN_HEADERS = 64
    # Models of header-name sequences kept (by a hash of the names).
    HEADER_SHAPE_BITS = 4
    HEADER_SHAPE_SLOTS = 16

# Header names as read (bytes, any case) -> lower-case str: clients send the same few, and
# a dict lookup costs less than decoding and lower-casing each time. Shared by every framer.
cdef dict HEADER_NAMES = {}
# Method names as llhttp gives them (bytes) -> str; llhttp knows a fixed set of methods.
cdef dict METHODS = {}
# The interned name the endpoint's lookups use (see name_slot).
cdef str _HOST_NAME = intern("host")


cdef inline int add_header(dict headers, object key, str text) except -1:
    # headers[key] = text, or joined to the value already there with ", " (RFC 9110 list
    # syntax): one hash lookup when the name is new. New is told by the size, not by
    # identity: short strs such as "" or "1" are shared objects.
    cdef Py_ssize_t size = len(headers)
    cdef PyObject *previous = PyDict_SetDefault(headers, key, text)
    if len(headers) == size:
        PyDict_SetItem(headers, key, f"{<str>previous}, {text}")
    return 0


cdef inline bint is_ascii_digits(str text):
    # str.isdigit() as applied to a Content-Length value: llhttp lets nothing but ASCII
    # digits (and empty values) through, so only those can be seen here.
    cdef Py_ssize_t i
    cdef Py_ssize_t size = len(text)
    cdef Py_UCS4 c
    if size == 0:
        return False
    for i in range(size):
        c = text[i]
        if c < 48 or c > 57:  # '0'..'9'
            return False
    return True


cdef inline bint over_limit(str digits, Py_ssize_t limit):
    # int(digits) > limit for a non-empty run of ASCII digits, without building an int:
    # past the limit the value only grows, so the scan stops there (no overflow).
    cdef Py_ssize_t value = 0
    cdef Py_ssize_t i
    for i in range(len(digits)):
        value = value * 10 + <Py_ssize_t>(digits[i]) - 48  # - '0'
        if value > limit:
            return True
    return False


cdef tuple split_url(bytes url):
    # (path, query) as httptools.parse_url's fields give them (fragment dropped, no query
    # and an empty one both ""): origin-form targets made only of visible ASCII without '#'
    # are split at their first '?' here; anything else (absolute-form, fragments, other
    # bytes, too long) goes to parse_url itself, so its acceptance and errors stay its own.
    cdef const char *p = PyBytes_AS_STRING(url)
    cdef Py_ssize_t size = PyBytes_GET_SIZE(url)
    cdef Py_ssize_t i
    cdef Py_ssize_t question = -1
    cdef unsigned char c
    if 0 < size <= MAX_FAST_URL and p[0] == b'/':
        for i in range(size):
            c = <unsigned char>p[i]
            if c < 0x21 or c > 0x7e or c == b'#':
                break
            if c == b'?' and question < 0:
                question = i
        else:
            if question < 0:
                return PyUnicode_DecodeLatin1(p, size, NULL), ""
            return (PyUnicode_DecodeLatin1(p, question, NULL),
                    PyUnicode_DecodeLatin1(p + question + 1, size - question - 1, NULL))
    parsed = parse_url(url)
    return (parsed.path.decode("latin-1"),
            parsed.query.decode("latin-1") if parsed.query else "")


# -- the strict fast path ---------------------------------------------------------------
# Most requests are plain: HTTP/1.1, an origin-form target, "Name: value" headers, a
# Content-Length body, all of it in the bytes at hand. Such a request is read here in one
# pass, without llhttp and its seven-plus callbacks. Only a narrow subset of what llhttp
# accepts qualifies, read exactly as the httptools path reads it; anything else (another
# version, a special header, an odd byte, more than MAX_PLAIN_HEADERS headers, a partial
# message, a limit reached) leaves the message to llhttp, so that every error and every
# unusual case stays llhttp's. The head is read whole before its objects are made, so a
# request waiting for the rest of its body costs no objects.

cdef enum:
    # The bytes of origin-form targets (unreserved, sub-delims, ':', '@', '/', '?', '%'),
    # in CHARS. (Header lines are read by mcpfast/_core/http_head.pxd.)
    TARGET = 2
    # Header names cached by their raw bytes (names over NAME_SLOT_SIZE bytes are not).
    NAME_SLOTS = 64
    NAME_SLOT_SIZE = 40
    # A cached name also keeps the last value read for it, up to this many bytes.
    VALUE_SLOT_SIZE = 64

cdef unsigned char CHARS[256]


cdef void fill_chars():
    cdef int c
    for c in range(256):
        CHARS[c] = 0
    for c in b"-._~!$&'()*+,;=:@/?%0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz":
        CHARS[c] |= TARGET


fill_chars()


cdef struct NameSlot:
    Py_ssize_t size
    char raw[NAME_SLOT_SIZE]
    PyObject *key   # owned reference to the lower-case str
    # The last value read for this name (owned, NULL: none), and whether values are kept
    # at all (not for credentials: a token must not outlive its request here).
    bint keep_values
    Py_ssize_t value_size
    char value_raw[VALUE_SLOT_SIZE]
    PyObject *value


cdef NameSlot NAME_CACHE[NAME_SLOTS]
# Names whose values are never kept in the cache.
cdef frozenset UNCACHED_VALUES = frozenset({"authorization", "proxy-authorization", "cookie"})


cdef inline str ascii_str(const char *p, Py_ssize_t size):
    # A str of bytes already checked to be ASCII (no scan for the widest character).
    cdef str text = PyUnicode_New(size, 127)
    memcpy(PyUnicode_DATA(text), p, <size_t>size)
    return text


cdef inline NameSlot *name_slot(const char *name, Py_ssize_t size) except? NULL:
    # The slot holding a header name's lower-case str, from a small table indexed by a
    # cheap hash of the raw bytes (no bytes object, no siphash): clients send the same
    # few names. A name looks in two neighbouring slots, so that two names that hash alike
    # both stay. NULL for names too long to be kept.
    cdef Py_ssize_t slot = ((<unsigned char>name[0] * 7 + <unsigned char>name[size - 1] * 3
                             + <unsigned char>name[size >> 1] + size * 31) & (NAME_SLOTS - 1))
    cdef NameSlot *entry = &NAME_CACHE[slot]
    cdef NameSlot *other = &NAME_CACHE[slot ^ 1]
    cdef object key
    if entry.key != NULL and entry.size == size and memcmp(entry.raw, name, <size_t>size) == 0:
        return entry
    if other.key != NULL and other.size == size and memcmp(other.raw, name, <size_t>size) == 0:
        return other
    if size > NAME_SLOT_SIZE:
        return NULL
    # Interned: the endpoint's header-name constants are too (mcpfast.transports.http.
    # headers), so its lookups find the key by identity, without comparing characters.
    key = intern(ascii_str(name, size).lower())
    if entry.key != NULL and other.key == NULL:
        entry = other
    Py_XDECREF(entry.key)
    Py_XDECREF(entry.value)
    Py_INCREF(key)
    entry.key = <PyObject *>key
    entry.size = size
    memcpy(entry.raw, name, <size_t>size)
    entry.keep_values = key not in UNCACHED_VALUES
    entry.value = NULL
    return entry


cdef inline str header_value(NameSlot *entry, const char *value, Py_ssize_t value_size):
    # The str of a plain request's header value (ASCII) for the name in entry: the one read
    # last time for this name when the bytes are the same. Clients repeat theirs, and a str
    # used again keeps its hash (the endpoint keys caches by header values).
    cdef str text
    if (entry.value != NULL and entry.value_size == value_size
            and memcmp(entry.value_raw, value, <size_t>value_size) == 0):
        return <str>entry.value
    text = ascii_str(value, value_size)
    if entry.keep_values and value_size <= VALUE_SLOT_SIZE:
        Py_XDECREF(entry.value)
        Py_INCREF(text)
        entry.value = <PyObject *>text
        entry.value_size = value_size
        memcpy(entry.value_raw, value, <size_t>value_size)
    return text


cdef inline int add_plain_header(dict headers, const char *name, Py_ssize_t name_size,
                                 const char *value, Py_ssize_t value_size) except -1:
    # One header of a plain request (ASCII name and value).
    cdef NameSlot *entry = name_slot(name, name_size)
    if entry == NULL:
        return add_header(headers, ascii_str(name, name_size).lower(), ascii_str(value, value_size))
    return add_header(headers, <object>entry.key, header_value(entry, value, value_size))


cdef mf_shape_slot HEADER_SHAPES[HEADER_SHAPE_SLOTS]
# Whether header dicts may be filled copies of models (the check of dict_shapes.h).
cdef bint HEADER_SHAPES_WORK = mf_shapes_check()


def _header_shapes(bint on):
    """For tests: build plain requests' header dicts as filled copies of models (only
    where the check at import passed) or, with False, one header at a time."""
    mf_shapes_clear(HEADER_SHAPES, HEADER_SHAPE_SLOTS)
    global mf_shapes_ok
    mf_shapes_ok = on and HEADER_SHAPES_WORK


def _use_cpython_internals(bint on):
    """For tests: the presized dict of include/mcpfast/cpython_compat.h or, with False, the
    PyDict_New fallback that other Python versions and builds use."""
    mf_internals_enable(on)


cdef inline void release(PyObject **keys, PyObject **values, Py_ssize_t count) noexcept:
    cdef Py_ssize_t k
    for k in range(count):
        Py_DECREF(<object>keys[k])
        Py_DECREF(<object>values[k])


cdef dict plain_headers(const HeaderSpan *spans, Py_ssize_t count):
    # The headers dict of a plain request: lower-case names (the name cache's interned
    # strs), values as read, in order, a repeated name's values joined. A sequence of
    # names seen before is a copy of its model with the values written in (no hashing,
    # no probing); anything else is built one header at a time.
    cdef PyObject *keys[MF_SHAPE_CHECKED_KEYS]
    cdef PyObject *values[MF_SHAPE_CHECKED_KEYS]
    cdef Py_ssize_t k = 0
    cdef uint64_t h = 0
    cdef NameSlot *entry
    cdef str text
    cdef dict headers
    if mf_shapes_ok and 2 <= count <= MF_SHAPE_CHECKED_KEYS:
        try:
            while k < count:
                entry = name_slot(spans[k].name, spans[k].name_size)
                if entry == NULL:
                    break  # a name too long for the cache: no shape
                text = header_value(entry, spans[k].value, spans[k].value_size)
                Py_INCREF(<object>entry.key)
                keys[k] = entry.key
                Py_INCREF(text)
                values[k] = <PyObject *>text
                h = mf_shape_step(h, entry.key)
                k += 1
        except BaseException:
            release(keys, values, k)
            raise
        if k == count:
            # Takes the references made above, whatever it answers.
            headers = mf_dict_of_shape(&HEADER_SHAPES[h >> (64 - HEADER_SHAPE_BITS)],
                                       keys, values, count, h)
            if len(headers) == count:
                return headers
            # A name given twice: its values are joined, below.
        else:
            release(keys, values, k)
    headers = mf_dict_new_presized(PLAIN_HEADERS)
    for k in range(count):
        add_plain_header(headers, spans[k].name, spans[k].name_size, spans[k].value,
                         spans[k].value_size)
    return headers


# The methods a fast request may use (CONNECT and the rest are llhttp's to read): their
# bytes on the wire, and the str handed out for each.
cdef enum:
    FAST_METHOD_COUNT = 7
cdef const char *FAST_METHOD_BYTES[FAST_METHOD_COUNT]
cdef size_t FAST_METHOD_SIZES[FAST_METHOD_COUNT]
FAST_METHOD_BYTES[:] = [b"POST", b"GET", b"DELETE", b"PUT", b"HEAD", b"OPTIONS", b"PATCH"]
FAST_METHOD_SIZES[:] = [4, 3, 6, 3, 4, 7, 5]
cdef tuple FAST_METHOD_NAMES = ("POST", "GET", "DELETE", "PUT", "HEAD", "OPTIONS", "PATCH")


cdef inline object fast_method(const char *p, Py_ssize_t size):
    cdef int i
    for i in range(FAST_METHOD_COUNT):
        if FAST_METHOD_SIZES[i] == <size_t>size and memcmp(FAST_METHOD_BYTES[i], p, <size_t>size) == 0:
            return FAST_METHOD_NAMES[i]
    return None


@cython.final
cdef class HTTPRequestFramer:
    """Splits the bytes of one HTTP/1.1 connection into requests (see the module docstring).

    feed() returns the requests the bytes complete as (request, keep_alive, too_large)
    tuples, request being ``request_class(method, path, headers, body, query)``; a parse
    error ends the stream and is kept in ``error`` (an Upgrade header is ignored: see _upgraded).
    """

    def __cinit__(self, request_class, Py_ssize_t max_body_size,
                  Py_ssize_t max_head_size=DEFAULT_MAX_HEAD_SIZE, bint require_host=False):
        if max_body_size < 0:
            raise ValueError(f"max_body_size must be >= 0, got {max_body_size}")
        if max_head_size < 0:
            raise ValueError(f"max_head_size must be >= 0, got {max_head_size}")
        self.request_class = request_class
        self.require_host = require_host
        self._plain_requests = request_class is HTTPRequest
        self.max_body_size = max_body_size
        self.max_head_size = max_head_size
        self.error = None
        self.failed = False
        self._done = None
        self._llhttp_only = False
        self._ended = False
        self.reading = False
        self.continue_wanted = False
        self._upgrade_entry = None
        self._upgrade_body = None
        self._begin()
        self._new_parser()

    @property
    def refusing(self):
        """True while the request being read is over max_body_size (its body is dropped)."""
        return self._too_large

    def __repr__(self):
        return (f"<HTTPRequestFramer max_body_size={self.max_body_size}"
                f"{' failed' if self.failed else ''}>")

    cpdef feed(self, data):
        """Add bytes; return the requests they complete, in order, or None when none.

        After a parse error (``error`` set) the stream is over: later calls return None.
        """
        cdef object done
        cdef Py_ssize_t size
        cdef Py_ssize_t at = 0
        cdef Py_ssize_t used
        if self.error is not None or self._ended:
            return None
        if self._upgrade_entry is not None:
            return self._feed_upgrade_body(data)
        if not self._llhttp_only and type(data) is bytes:
            # Between messages: read what the fast path can, leave the rest to llhttp.
            size = PyBytes_GET_SIZE(data)
            while at < size:
                used = self._fast(PyBytes_AS_STRING(data) + at, size - at)
                if used == 0:
                    break
                at += used
            if at == size:
                done = self._done
                self._done = None
                self.failed = False
                return done
            if at:
                data = memoryview(data)[at:]
        try:
            self._feed_data(data)
        except HttpParserUpgrade as exc:
            # Its argument is where llhttp stopped in what it was given.
            return self._upgraded(data, exc.args[0])
        except HttpParserError as exc:
            self.error = HttpParserError(self._head_problem) if self._head_problem else exc
        done = self._done
        self._done = None
        self.failed = True if self.error is not None or self._too_large else False
        return done

    cdef object _upgraded(self, data, Py_ssize_t offset):
        # llhttp stopped after a request asking for another protocol. The Upgrade header
        # is ignored (RFC 9110 7.8: a server may): the request is served as HTTP/1.1 and
        # the connection goes on with a new parser. httptools skips an upgrade request's
        # body (it tells llhttp there is none), so the body is read here. A CONNECT (or a
        # request refused as too large) ends the connection once answered.
        cdef tuple last
        if self._upgrade_entry is None:
            if self._done:
                last = <tuple>self._done[len(self._done) - 1]
                self._done[len(self._done) - 1] = (last[0], False, last[2])
            self._ended = True
            done = self._done
            self._done = None
            self.failed = True if self._too_large else False
            return done
        self._new_parser()
        return self._feed_upgrade_body(memoryview(data)[offset:])

    cdef object _feed_upgrade_body(self, data):
        # The body of an upgrade request (see _upgraded), then what follows it.
        cdef Py_ssize_t size = len(data)
        cdef Py_ssize_t take = min(size, self._upgrade_left)
        cdef tuple entry
        if take:
            self._upgrade_body.append(bytes(memoryview(data)[:take]))
            self._upgrade_left -= take
        if self._upgrade_left:
            self.failed = False
            return self._done_and_clear()
        entry = self._upgrade_entry
        self._upgrade_entry = None
        self.reading = False
        self._emit(entry[0], entry[1], entry[2], b"".join(self._upgrade_body), entry[3],
                   entry[4], False)
        self._upgrade_body = None
        if take == size:
            self.failed = False
            return self._done_and_clear()
        done = self._done_and_clear()
        more = self.feed(bytes(memoryview(data)[take:]))
        if done is None:
            return more
        if more is not None:
            done.extend(more)
        return done

    cdef object _done_and_clear(self):
        done = self._done
        self._done = None
        return done

    cdef int _new_parser(self) except -1:
        # httptools looks its callbacks up once, here: the methods below.
        self._parser = HttpRequestParser(self)
        self._feed_data = self._parser.feed_data
        self._get_method = self._parser.get_method
        self._should_keep_alive = self._parser.should_keep_alive
        return 0

    cdef int _emit(self, method, path, dict headers, body, query, bint keep_alive,
                   bint too_large) except -1:
        # One request read: made (in C when it is mcpfast's HTTPRequest) and kept in order.
        if self._plain_requests:
            request = new_request(method, path, headers, body, query)
        else:
            request = self.request_class(method, path, headers, body, query)
        entry = (request, keep_alive, too_large)
        if self._done is None:
            self._done = [entry]
        else:
            PyList_Append(self._done, entry)
        return 0

    cdef Py_ssize_t _fast(self, const char *p, Py_ssize_t size) except -1:
        # Reads one whole plain request (see "the strict fast path" above) at p and returns
        # the bytes it took; 0 when the request is not plain or not all there.
        cdef const char *end = p + size
        cdef const char *q = p
        cdef const char *start
        cdef const char *name
        cdef const char *value
        cdef const char *question
        cdef Py_ssize_t name_size
        cdef Py_ssize_t value_size
        cdef Py_ssize_t head_size = 0
        cdef Py_ssize_t length = -1
        cdef Py_ssize_t i
        cdef HeaderSpan spans[MAX_PLAIN_HEADERS]
        cdef HeaderSpan line
        cdef int found
        cdef Py_ssize_t count = 0
        cdef int hosts = 0
        cdef dict headers
        cdef object method
        cdef object path
        cdef object query
        # Request line: METHOD SP origin-form SP "HTTP/1.1" CRLF.
        start = q
        while q < end and q - start < 8 and q[0] != b' ':
            q += 1
        if q >= end:
            return 0
        method = fast_method(start, q - start)
        if method is None:
            return 0
        q += 1
        start = q
        if q >= end or q[0] != b'/':
            return 0
        while q < end and CHARS[<unsigned char>q[0]] & TARGET:
            q += 1
        head_size = q - start
        if q >= end or q[0] != b' ' or head_size > MAX_FAST_URL or head_size > self.max_head_size:
            return 0
        question = <const char *>memchr(start, b'?', <size_t>(q - start))
        if question == NULL:
            path = ascii_str(start, q - start)
            query = ""
        else:
            path = ascii_str(start, question - start)
            query = ascii_str(question + 1, q - question - 1)
        q += 1
        if end - q < 10 or memcmp(q, b"HTTP/1.1\r\n", 10) != 0:
            return 0
        q += 10
        # Headers (the lines head_line reads), up to the blank line.
        while True:
            found = head_line(&q, end, &line)
            if found < 0:
                return 0
            if found == 0:
                break
            name = line.name
            name_size = line.name_size
            value = line.value
            value_size = line.value_size
            head_size += name_size + value_size
            if head_size > self.max_head_size:
                return 0
            if name_size == 14 and strncasecmp(name, b"content-length", 14) == 0:
                if length >= 0:
                    return 0
                length = length_value(value, value_size)
                if length < 0:
                    return 0
            elif ((name_size == 10 and strncasecmp(name, b"connection", 10) == 0)
                    or (name_size == 16 and strncasecmp(name, b"proxy-connection", 16) == 0)):
                # Only the default of HTTP/1.1 is read here; "close" and the rest change
                # how llhttp treats what follows.
                if value_size != 10 or strncasecmp(value, b"keep-alive", 10) != 0:
                    return 0
            elif ((name_size == 17 and strncasecmp(name, b"transfer-encoding", 17) == 0)
                    or (name_size == 7 and strncasecmp(name, b"upgrade", 7) == 0)
                    or (name_size == 6 and strncasecmp(name, b"expect", 6) == 0)):
                return 0
            elif name_size == 4 and strncasecmp(name, b"host", 4) == 0:
                hosts += 1
            if count == MAX_PLAIN_HEADERS:
                return 0
            spans[count] = line
            count += 1
        if length < 0:
            length = 0
        if (hosts != 1 and self.require_host) or length > self.max_body_size or end - q < length:
            return 0  # (a Host missing or repeated is llhttp's path's to refuse)
        headers = plain_headers(spans, count)
        body = PyBytes_FromStringAndSize(q, length) if length else b""
        self._emit(method, path, headers, body, query, True, False)
        return q + length - p

    # -- httptools callbacks: called by the parser, during feed() --------------------------

    cdef int _begin(self) except -1:
        # The state of a request about to be read.
        self._url = b""
        self._headers = {}
        self._body = None
        self._chunks = None
        self._body_size = 0
        self._head_size = 0
        self._too_large = False
        self._hosts = 0
        self._head_problem = None
        self._upgrade_left = -1
        return 0

    def on_message_begin(self):
        self._llhttp_only = True
        self.reading = True
        self._begin()

    def on_url(self, bytes url):
        # Almost always in one piece: kept as is, not copied onto b"".
        self._url = url if PyBytes_GET_SIZE(self._url) == 0 else self._url + url
        self._head_size += PyBytes_GET_SIZE(url)
        if self._head_size > self.max_head_size:
            raise HttpParserError("request head too large")

    def on_header(self, bytes name, bytes value):
        cdef PyObject *cached
        cdef object key
        cdef str text
        self._head_size += PyBytes_GET_SIZE(name) + PyBytes_GET_SIZE(value)
        if self._head_size > self.max_head_size:
            raise HttpParserError("request head too large")
        cached = PyDict_GetItem(HEADER_NAMES, name)
        if cached == NULL:
            key = intern(PyUnicode_DecodeLatin1(PyBytes_AS_STRING(name), PyBytes_GET_SIZE(name),
                                                NULL).lower())  # as in name_slot
            if len(HEADER_NAMES) < HEADER_NAME_CACHE:
                HEADER_NAMES[name] = key
        else:
            key = <object>cached
        text = PyUnicode_DecodeLatin1(PyBytes_AS_STRING(value), PyBytes_GET_SIZE(value), NULL)
        if key is _HOST_NAME:
            self._hosts += 1
        add_header(self._headers, key, text)

    def on_headers_complete(self):
        cdef PyObject *length = PyDict_GetItem(self._headers, "content-length")
        cdef bint http11 = self._parser.get_http_version() == "1.1"
        if self._hosts != 1 and http11 and self.require_host:
            # RFC 9112 3.2: exactly one Host in an HTTP/1.1 request, else 400.
            self._head_problem = ("no Host header" if self._hosts == 0
                                  else "more than one Host header")
            raise HttpParserError(self._head_problem)
        if (length != NULL and is_ascii_digits(<str>length)
                and over_limit(<str>length, self.max_body_size)):
            self._too_large = True
        if self._parser.should_upgrade() and self._get_method() != b"CONNECT" and not self._too_large:
            if "transfer-encoding" in self._headers:
                self._head_problem = "an Upgrade request with a chunked body"
                raise HttpParserError(self._head_problem)
            self._upgrade_left = int(<str>length) if length != NULL and is_ascii_digits(<str>length) else 0
        expect = self._headers.get("expect")
        if expect is not None and http11 and not self._too_large:
            # RFC 9110 10.1.1: the client waits for 100 (Continue) before its body.
            self.continue_wanted = expect.strip().lower() == "100-continue"

    def on_body(self, bytes body):
        if self._too_large:
            return
        self._body_size += PyBytes_GET_SIZE(body)
        if self._body_size > self.max_body_size:
            self._too_large = True
            self._body = None
            self._chunks = None
            return
        if self._body is None:
            self._body = body
        elif self._chunks is None:
            self._chunks = [self._body, body]
        else:
            self._chunks.append(body)

    def on_message_complete(self):
        cdef object method_name = self._get_method()
        cdef PyObject *cached = PyDict_GetItem(METHODS, method_name)
        cdef object method
        cdef object body
        if cached == NULL:
            method = method_name.decode("latin-1")
            METHODS[method_name] = method
        else:
            method = <object>cached
        path, query = split_url(self._url)
        if self._chunks is not None:
            body = b"".join(self._chunks)
        elif self._body is not None:
            body = self._body
        else:
            body = b""
        keep_alive = self._should_keep_alive()
        self.reading = False
        self.continue_wanted = False
        # What follows a request that ends the connection is llhttp's to refuse.
        self._llhttp_only = not keep_alive
        if self._upgrade_left >= 0:
            # Its body follows, unread by llhttp (see _upgraded).
            self._upgrade_entry = (method, path, self._headers, query, keep_alive)
            self._upgrade_body = []
            self.reading = self._upgrade_left > 0
            return
        self._emit(method, path, self._headers, body, query, keep_alive, self._too_large)
        # Answered in turn by the caller: the next request starts with a clean slate.
        self._too_large = False


# -- responses ----------------------------------------------------------------------------

# The reason phrases of RFC 9110, which Python's HTTPStatus has from 3.13 on; earlier
# versions still name these four as RFC 7231 did.  One wire format on every version.
cdef dict RFC_9110_PHRASES = {413: "Content Too Large", 414: "URI Too Long", 416: "Range Not Satisfiable",
                                   422: "Unprocessable Content"}
cdef dict STATUS_LINES = {
    status.value: f"HTTP/1.1 {status.value} {RFC_9110_PHRASES.get(status.value, status.phrase)}\r\n"
    .encode("latin-1")
    for status in HTTPStatus
}
# Response heads without their framing header, by (status, headers, keep-alive): most
# responses share a handful of them. Bounded (a handler's own headers could vary without end).
cdef dict HEADS = {}

cdef enum:
    HEAD_CACHE = 256


# The last head built or found, with what it was built from: consecutive responses of a
# connection (and of a server) are mostly alike, and comparing a few pointers costs less
# than building and hashing a key.
cdef object LAST_STATUS = None
cdef tuple LAST_HEADERS = ()
cdef bint LAST_KEEP_ALIVE = False
cdef bytes LAST_PREFIX = None


cdef inline bint same_headers(list headers, tuple last):
    # headers == list(last), as tuple equality compares (identity first, then ==).
    cdef Py_ssize_t i
    cdef Py_ssize_t size = len(headers)
    if size != len(last):
        return False
    for i in range(size):
        if headers[i] is not last[i] and headers[i] != last[i]:
            return False
    return True


cdef bytes head_prefix(object status, list headers, bint keep_alive):
    # The status line, the headers and "connection: close" unless kept alive.
    global LAST_STATUS, LAST_HEADERS, LAST_KEEP_ALIVE, LAST_PREFIX
    cdef object key
    cdef PyObject *cached
    cdef bytes prefix
    if (LAST_PREFIX is not None and keep_alive == LAST_KEEP_ALIVE
            and (status is LAST_STATUS or status == LAST_STATUS)
            and same_headers(headers, LAST_HEADERS)):
        return LAST_PREFIX
    key = (status, tuple(headers), keep_alive)
    cached = PyDict_GetItem(HEADS, key)
    if cached != NULL:
        prefix = <bytes>cached
    else:
        parts = [STATUS_LINES.get(status) or f"HTTP/1.1 {status} Status\r\n".encode("latin-1")]
        for name, value in headers:
            parts.append(f"{name}: {value}\r\n".encode("latin-1"))
        if not keep_alive:
            parts.append(b"connection: close\r\n")
        prefix = b"".join(parts)
        if len(HEADS) >= HEAD_CACHE:
            HEADS.clear()
        HEADS[key] = prefix
    LAST_STATUS, LAST_HEADERS, LAST_KEEP_ALIVE, LAST_PREFIX = key[0], key[1], keep_alive, prefix
    return prefix


cpdef bytes whole_response(status, headers, bint keep_alive, body):
    """A response with a Content-Length, head and body, as one bytes object.

    ``headers``: (name, value) pairs written as given (latin-1); ``connection: close`` is
    added unless ``keep_alive``. ``body``: any bytes-like object.
    """
    cdef bytes prefix = head_prefix(status, headers if type(headers) is list else list(headers),
                                    keep_alive)
    cdef Py_ssize_t size
    cdef Py_ssize_t prefix_size = PyBytes_GET_SIZE(prefix)
    cdef char digits[24]
    cdef Py_ssize_t ndigits = 0
    cdef Py_ssize_t n
    cdef Py_ssize_t i
    cdef bytes out
    cdef char *p
    if type(body) is not bytes:
        body = bytes(memoryview(body))  # any buffer; anything else is a TypeError
    size = PyBytes_GET_SIZE(body)
    n = size
    # The length's decimal digits, last first.
    while True:
        digits[ndigits] = <char>(48 + n % 10)  # '0' + digit
        ndigits += 1
        n //= 10
        if n == 0:
            break
    out = PyBytes_FromStringAndSize(NULL, prefix_size + 16 + ndigits + 4 + size)
    p = PyBytes_AS_STRING(out)
    memcpy(p, PyBytes_AS_STRING(prefix), prefix_size)
    p += prefix_size
    memcpy(p, b"content-length: ", 16)
    p += 16
    for i in range(ndigits):
        p[i] = digits[ndigits - 1 - i]
    p += ndigits
    memcpy(p, b"\r\n\r\n", 4)
    memcpy(p + 4, PyBytes_AS_STRING(body), size)
    return out


cpdef bytes stream_head(status, headers, bint keep_alive):
    """The head of a response whose body follows with chunked transfer encoding."""
    return (head_prefix(status, headers if type(headers) is list else list(headers), keep_alive)
            + b"transfer-encoding: chunked\r\n\r\n")


# ``failed`` is read after every feed(): a member descriptor (see mf_member_descriptor),
# not Cython's property.
cdef extern from *:
    """
    #include <stddef.h>
    #define MF_FRAMER_FAILED \\
        ((Py_ssize_t)offsetof(struct __pyx_obj_7mcpfast_5_core_12http_framing_HTTPRequestFramer, failed))
    """
    Py_ssize_t MF_FRAMER_FAILED

mf_member_descriptor(HTTPRequestFramer, "failed", MF_FRAMER_FAILED)
