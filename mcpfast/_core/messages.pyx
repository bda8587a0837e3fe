# cython: freethreading_compatible=False
"""Typed JSON-RPC 2.0 messages with a lazy payload.

``decode`` builds these; ``encode`` writes them.  A decoded message keeps its payload
(params, result or error.data) as a copy of the simdjson tape it was validated into, and
turns it into Python objects only when the payload is first read; the objects are then
cached.  A message built from Python holds its payload as given.
"""

cimport cython
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.dict cimport PyDict_SetItem
from cpython.list cimport PyList_New, PyList_SET_ITEM, PyList_Append
from cpython.long cimport PyLong_FromLongLong, PyLong_FromUnsignedLongLong
from cpython.float cimport PyFloat_FromDouble
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF, Py_XDECREF
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.string cimport memcmp, memcpy
from sys import intern


from mcpfast._core.cpython cimport PyUnicode_New, mf_dict_new_presized, unicode_data_of


cdef object _ABSENT = object()

# ---------------------------------------------------------------------------------------
# Strings


cdef inline bint _is_ascii(const char *data, Py_ssize_t size) noexcept nogil:
    # Eight bytes at a time: any byte with its high bit set makes the string non-ASCII.
    cdef Py_ssize_t i = 0
    cdef uint64_t word
    while i + 8 <= size:
        memcpy(&word, data + i, 8)
        if word & 0x8080808080808080ULL:
            return False
        i += 8
    while i < size:
        if <uint8_t>data[i] & 0x80:
            return False
        i += 1
    return True


cdef str make_str(const char *data, Py_ssize_t size):
    # simdjson has validated the UTF-8 already; ASCII needs no decoding at all.
    cdef object s
    if _is_ascii(data, size):
        s = PyUnicode_New(size, 127)
        memcpy(unicode_data_of(s), data, size)
        return <str>s
    return PyUnicode_DecodeUTF8(data, size, NULL)


DEF CACHE_SLOTS = 2048
DEF CACHE_MAX_LENGTH = 64
DEF VALUE_CACHE_MAX_LENGTH = 16

# Direct-mapped caches of short ASCII strings.  A slot keeps the first 16 bytes and the
# length beside an owned reference to a str, so a hit on a string of up to 16 bytes is
# decided by two word compares without touching the str object.  Keys and method names are
# interned: every decoded "tools/call" is the very object sys.intern("tools/call") is, so
# dict lookups by method name succeed on identity.
ctypedef struct _CacheSlot:
    uint64_t head0
    uint64_t head1
    Py_ssize_t size
    PyObject *value

# Keys and method names (interned) and short string values (not interned) are kept apart,
# so that values never evict the keys every payload repeats.
cdef _CacheSlot _keys[CACHE_SLOTS]
cdef _CacheSlot _values[CACHE_SLOTS]


cdef inline uint64_t _load_word(const char *data, Py_ssize_t size) noexcept nogil:
    # Up to eight bytes as one word, zero-extended.
    cdef uint64_t word = 0
    if size >= 8:
        memcpy(&word, data, 8)
    elif size >= 4:
        memcpy(&word, data, 4)
        word |= (<uint64_t>_load_small(data + 4, size - 4)) << 32
    else:
        word = _load_small(data, size)
    return word


cdef inline uint32_t _load_small(const char *data, Py_ssize_t size) noexcept nogil:
    # Zero to four bytes.
    cdef uint32_t word = 0
    cdef Py_ssize_t i
    for i in range(size if size < 4 else 4):
        word |= (<uint32_t><uint8_t>data[i]) << (8 * i)
    return word


cdef inline str _cached(_CacheSlot *cache, const char *data, Py_ssize_t size, bint interned):
    cdef uint64_t head0, head1
    cdef uint64_t h
    cdef _CacheSlot *slot
    cdef object s
    head0 = _load_word(data, size)
    head1 = _load_word(data + 8, size - 8) if size > 8 else 0
    # Independent multiplies (no dependency chain) of the two heads, the tail and the size.
    h = head0 * 0x9E3779B97F4A7C15ULL
    h ^= (head1 + <uint64_t>size) * 0xC2B2AE3D27D4EB4FULL
    if size > 16:
        h ^= _load_word(data + size - 8, 8) * 0x165667B19E3779F9ULL
    slot = &cache[(h >> 40) & (CACHE_SLOTS - 1)]
    if slot.value is not NULL and slot.size == size and slot.head0 == head0 \
            and slot.head1 == head1 and (size <= 16 or memcmp(
                <const char *>unicode_data_of(<object>slot.value) + 16, data + 16, size - 16) == 0):
        return <str>slot.value
    if not _is_ascii(data, size):
        return make_str(data, size)
    s = PyUnicode_New(size, 127)
    memcpy(unicode_data_of(s), data, size)
    if interned:
        s = intern(s)  # only on a cache miss
    Py_INCREF(s)
    Py_XDECREF(slot.value)
    slot.value = <PyObject *>s
    slot.size = size
    slot.head0 = head0
    slot.head1 = head1
    return <str>s


cdef str cached_str(const char *data, Py_ssize_t size):
    if size > CACHE_MAX_LENGTH:
        return make_str(data, size)
    return _cached(_keys, data, size, True)


cdef inline str _value_str(const char *data, Py_ssize_t size):
    # Short string values repeat a lot in MCP payloads ("object", "string", "text"...): a
    # cache hit saves creating and later freeing a str.  Longer values are rarely equal.
    if size > VALUE_CACHE_MAX_LENGTH:
        return make_str(data, size)
    return _cached(_values, data, size, False)


# ---------------------------------------------------------------------------------------
# Tape -> Python objects


cdef inline object _scalar(const mf_tape *t, uint64_t w, char kind, size_t *i):
    # Strings and numbers, the leaves that make up most of a payload, without recursion.
    cdef uint32_t n
    cdef const char *s
    cdef double d
    if kind == b'"':
        i[0] += 1
        s = mf_tape_string(t, w, &n)
        return _value_str(s, n)
    if kind == b'l':
        i[0] += 2
        return PyLong_FromLongLong(<int64_t>t.words[i[0] - 1])
    if kind == b'u':
        i[0] += 2
        return PyLong_FromUnsignedLongLong(t.words[i[0] - 1])
    if kind == b'd':
        i[0] += 2
        memcpy(&d, &t.words[i[0] - 1], 8)
        return PyFloat_FromDouble(d)
    i[0] += 1
    if kind == b't':
        return True
    if kind == b'f':
        return False
    return None


cdef object tape_value(const mf_tape *t, size_t *i):
    cdef uint64_t w = t.words[i[0]]
    cdef char kind = MF_TAPE_TYPE(w)
    cdef uint32_t n, count, k
    cdef size_t end
    cdef const char *s
    cdef object container, key, value
    if kind == b'{':
        end = mf_tape_container_next(t, w) - 1
        container = mf_dict_new_presized(MF_TAPE_COUNT(w))
        i[0] += 1
        while i[0] < end:
            s = mf_tape_string(t, t.words[i[0]], &n)
            i[0] += 1
            key = cached_str(s, n)
            w = t.words[i[0]]
            kind = MF_TAPE_TYPE(w)
            if kind == b'{' or kind == b'[':
                value = tape_value(t, i)
            else:
                value = _scalar(t, w, kind, i)
            PyDict_SetItem(container, key, value)
        i[0] = end + 1
        return container
    if kind == b'[':
        end = mf_tape_container_next(t, w) - 1
        count = MF_TAPE_COUNT(w)
        i[0] += 1
        if count < MF_TAPE_COUNT_SATURATED:
            container = PyList_New(count)
            for k in range(count):
                value = tape_value(t, i)
                Py_INCREF(value)
                PyList_SET_ITEM(container, k, value)
        else:
            container = []
            while i[0] < end:
                PyList_Append(container, tape_value(t, i))
        i[0] = end + 1
        return container
    return _scalar(t, w, kind, i)


cdef int attach_tape(Message m, const uint64_t *tape, size_t start, size_t end,
                     const uint8_t *strings) except -1:
    cdef size_t lo, hi
    cdef size_t size = mf_tape_copy_size(tape, start, end, strings, &lo, &hi)
    cdef mf_tape *copy
    if size == 0:
        raise MemoryError("payload too large to keep")
    # PyMem_Malloc: small payload copies come from pymalloc's pools, not the C heap.
    copy = <mf_tape *>PyMem_Malloc(size)
    if copy is NULL:
        raise MemoryError(f"cannot allocate {size} bytes for a payload")
    mf_tape_fill(copy, tape, start, end, strings, lo, hi)
    if m._tape is not NULL:
        PyMem_Free(m._tape)
    m._tape = copy
    m._has_payload = True
    return 0


# ---------------------------------------------------------------------------------------
# Messages


cdef inline _check_id(object id, bint allow_null):
    if type(id) is int or type(id) is str:
        return
    if id is None and allow_null:
        return
    if isinstance(id, bool) or not isinstance(id, (int, str)):
        raise TypeError(f"a JSON-RPC id must be a str or an int, not {type(id).__name__}")


cdef inline _check_params(object params):
    if params is not None and not isinstance(params, (dict, list, tuple)):
        raise TypeError(f"params must be a dict, a list or None, not {type(params).__name__}")


@cython.no_gc
cdef class Message:
    """Base of the four JSON-RPC message kinds; holds the lazy payload."""

    # no_gc: a message only refers to its id, method and a payload built from JSON (or given
    # by the caller as plain data), none of which can refer back to it; keeping messages out
    # of the cyclic GC saves its bookkeeping on every decode.

    # No __cinit__: the allocator already gives _payload = None, _tape = NULL and
    # _has_payload = False, and decode creates these objects by the million.

    def __dealloc__(self):
        if self._tape is not NULL:
            PyMem_Free(self._tape)
            self._tape = NULL

    cdef object payload(self):
        cdef size_t i = 0
        cdef mf_tape *tape = self._tape
        if tape is not NULL:
            self._payload = tape_value(tape, &i)
            self._tape = NULL
            PyMem_Free(tape)
        return self._payload

    @property
    def payload_built(self):
        """False while a decoded payload is still only its tape copy (nobody read it yet)."""
        return self._tape is NULL

    cdef void set_payload(self, object value, bint present):
        self._payload = value
        self._has_payload = present

    cdef tuple fields(self):
        return ()

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        return self.fields() == (<Message>other).fields()

    __hash__ = None

    def __repr__(self):
        return f"{type(self).__name__}({', '.join([f'{k}={v!r}' for k, v in self.fields()])})"


@cython.no_gc
cdef class Request(Message):
    """A JSON-RPC request: ``id`` (int or str), ``method``, ``params`` (dict, list or None)."""

    def __init__(self, id, str method not None, params=None):
        _check_id(id, False)
        _check_params(params)
        self.id = id
        self.method = method
        self.set_payload(params, params is not None)

    @property
    def params(self):
        """The params as Python objects (built on first access), or None when absent."""
        return self.payload()

    cdef tuple fields(self):
        return (("id", self.id), ("method", self.method), ("params", self.payload()))



@cython.no_gc
cdef class Notification(Message):
    """A JSON-RPC notification: ``method`` and ``params`` (dict, list or None); no id."""

    def __init__(self, str method not None, params=None):
        _check_params(params)
        self.method = method
        self.set_payload(params, params is not None)

    @property
    def params(self):
        """The params as Python objects (built on first access), or None when absent."""
        return self.payload()

    cdef tuple fields(self):
        return (("method", self.method), ("params", self.payload()))



@cython.no_gc
cdef class Response(Message):
    """A successful JSON-RPC response: ``id`` and ``result`` (any JSON value)."""

    def __init__(self, id, result):
        _check_id(id, False)
        self.id = id
        self.set_payload(result, True)

    @property
    def result(self):
        """The result as Python objects (built on first access)."""
        return self.payload()

    cdef tuple fields(self):
        return (("id", self.id), ("result", self.payload()))



@cython.no_gc
cdef class ErrorResponse(Message):
    """A JSON-RPC error response: ``id`` (None when null), ``code``, ``message``, ``data``."""

    def __init__(self, id, long long code, str message not None, data=_ABSENT):
        _check_id(id, True)
        self.id = id
        self.code = code
        self.message = message
        if data is _ABSENT:
            self.set_payload(None, False)
        else:
            self.set_payload(data, True)

    @property
    def data(self):
        """error.data as Python objects (built on first access), or None when absent."""
        return self.payload()

    @property
    def has_data(self):
        """True when the error carries a data member (even a null one)."""
        return self._has_payload

    cdef tuple fields(self):
        # an absent data member and "data": null are different messages
        if self._has_payload:
            return (("id", self.id), ("code", self.code), ("message", self.message),
                    ("data", self.payload()))
        return (("id", self.id), ("code", self.code), ("message", self.message))
