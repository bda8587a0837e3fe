# cython: freethreading_compatible=False
"""Typed JSON-RPC 2.0 messages with a lazy payload.

``decode`` builds these; ``encode`` writes them.  A decoded message keeps its payload
(params, result or error.data) as the simdjson tape it was validated into -- a view of
the parser's buffers until the next decode, which first copies every view still alive --
and turns it into Python objects only when the payload is first read; the objects are
then cached.  A message built from Python holds its payload as given.
"""

cimport cython
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.dict cimport PyDict_SetItem
from cpython.list cimport PyList_New, PyList_SET_ITEM, PyList_Append
from cpython.long cimport PyLong_FromLongLong, PyLong_FromUnsignedLongLong
from cpython.float cimport PyFloat_FromDouble
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF, Py_XDECREF
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from libc.string cimport memcmp, memcpy


cdef extern from "mcpfast/utf8_str.h":
    object mf_str_from_valid_utf8(const char *data, Py_ssize_t size)

cdef extern from "mcpfast/str_cache.h":
    enum:
        MF_STR_CACHE_SLOTS
    ctypedef struct mf_str_slot:
        pass
    str mf_str_cached(mf_str_slot *cache, const char *data, Py_ssize_t size, bint intern)

from mcpfast._core.cpython cimport (
    PyUnicode_New, mf_call_without_gc, mf_dict_new_presized, mf_member_descriptor,
    unicode_data_of,
)


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
    # simdjson has validated the UTF-8 already: ASCII needs no decoding at all, and the
    # rest none of the checks of CPython's decoder.
    cdef object s
    if _is_ascii(data, size):
        s = PyUnicode_New(size, 127)
        memcpy(unicode_data_of(s), data, size)
        return <str>s
    return <str>mf_str_from_valid_utf8(data, size)


DEF CACHE_MAX_LENGTH = 64
DEF VALUE_CACHE_MAX_LENGTH = 16

# Direct-mapped caches of short strings (include/mcpfast/str_cache.h).  Keys and method
# names are interned: every decoded "tools/call" is the very object sys.intern("tools/call")
# is, so dict lookups by method name succeed on identity.  Keys and method names (interned)
# and short string values (not interned) are kept apart, so that values never evict the
# keys every payload repeats.
cdef mf_str_slot _keys[MF_STR_CACHE_SLOTS]
cdef mf_str_slot _values[MF_STR_CACHE_SLOTS]


cdef inline str _key_str(const char *data, Py_ssize_t size):
    # data must have 8 readable bytes past its end: true of simdjson's string buffer (it
    # keeps padding) and of tape copies (8 spare bytes after the last string).
    if size > CACHE_MAX_LENGTH:
        return make_str(data, size)
    return mf_str_cached(_keys, data, size, True)


cdef str cached_str(const char *data, Py_ssize_t size):
    return _key_str(data, size)


cdef inline str _value_str(const char *data, Py_ssize_t size):
    # Short string values repeat a lot in MCP payloads ("object", "string", "text"...): a
    # cache hit saves creating and later freeing a str.  Longer values are rarely equal.
    if size > VALUE_CACHE_MAX_LENGTH:
        return make_str(data, size)
    return mf_str_cached(_values, data, size, False)


# ---------------------------------------------------------------------------------------
# Tape -> Python objects


cdef inline size_t _scalar_words(char kind) noexcept nogil:
    # Tape words a scalar takes: numbers keep their value in a second word.
    return 2 if kind == b'l' or kind == b'u' or kind == b'd' else 1


cdef inline object _scalar(const mf_tape *t, uint64_t w, char kind, const uint64_t *number):
    # Strings and numbers, the leaves that make up most of a payload, without recursion;
    # number points at the word after w.
    cdef uint32_t n
    cdef const char *s
    cdef double d
    if kind == b'"':
        s = mf_tape_string(t, w, &n)
        return _value_str(s, n)
    if kind == b'l':
        return PyLong_FromLongLong(<int64_t>number[0])
    if kind == b'u':
        return PyLong_FromUnsignedLongLong(number[0])
    if kind == b'd':
        memcpy(&d, number, 8)
        return PyFloat_FromDouble(d)
    if kind == b't':
        return True
    if kind == b'f':
        return False
    return None


cdef object tape_value(const mf_tape *t, size_t *i):
    # The index is kept in a local (j) while walking a container, not behind the pointer.
    cdef const uint64_t *words = t.words
    cdef size_t j = i[0]
    cdef uint64_t w = words[j]
    cdef char kind = MF_TAPE_TYPE(w)
    cdef uint32_t n, count, k
    cdef size_t end
    cdef const char *s
    cdef object container, key, value
    if kind == b'{':
        end = mf_tape_container_next(t, w) - 1
        container = mf_dict_new_presized(MF_TAPE_COUNT(w))
        j += 1
        while j < end:
            s = mf_tape_string(t, words[j], &n)
            key = _key_str(s, n)
            j += 1
            w = words[j]
            kind = MF_TAPE_TYPE(w)
            if kind == b'{' or kind == b'[':
                value = tape_value(t, &j)
            else:
                value = _scalar(t, w, kind, words + j + 1)
                j += _scalar_words(kind)
            PyDict_SetItem(container, key, value)
        i[0] = end + 1
        return container
    if kind == b'[':
        end = mf_tape_container_next(t, w) - 1
        count = MF_TAPE_COUNT(w)
        j += 1
        if count < MF_TAPE_COUNT_SATURATED:
            container = PyList_New(count)
            for k in range(count):
                w = words[j]
                kind = MF_TAPE_TYPE(w)
                if kind == b'{' or kind == b'[':
                    value = tape_value(t, &j)
                else:
                    value = _scalar(t, w, kind, words + j + 1)
                    j += _scalar_words(kind)
                Py_INCREF(value)
                PyList_SET_ITEM(container, k, value)
        else:
            container = []
            while j < end:
                PyList_Append(container, tape_value(t, &j))
        i[0] = end + 1
        return container
    i[0] = j + _scalar_words(kind)
    return _scalar(t, w, kind, words + j + 1)


# The messages whose payload is still a view of the parser's buffers, by slot (borrowed
# references: a message clears its slot when it builds its payload or is freed).  Slots
# past _nborrowers are unused; a cleared slot is NULL.
cdef PyObject **_borrowers = NULL
cdef Py_ssize_t _nborrowers = 0
cdef Py_ssize_t _borrowers_capacity = 0


cdef int _own_tape(Message m) except -1:
    # Replace m's view with an owned copy (m._tape is &m._view here).
    cdef size_t lo, hi
    cdef size_t size = mf_tape_copy_size(&m._view, &lo, &hi)
    cdef void *block
    if size == 0:
        raise MemoryError("payload too large to keep")
    # PyMem_Malloc: small payload copies come from pymalloc's pools, not the C heap.
    block = PyMem_Malloc(size)
    if block is NULL:
        raise MemoryError(f"cannot allocate {size} bytes for a payload")
    m._tape = mf_tape_own(block, &m._view, lo, hi)
    return 0


cdef inline void _unlist(Message m) noexcept:
    # Clear m's slot (m._tape is &m._view); trailing cleared slots are given back.
    global _nborrowers
    cdef Py_ssize_t slot = m._slot
    if slot < _nborrowers and _borrowers[slot] == <PyObject *>m:
        _borrowers[slot] = NULL
        while _nborrowers > 0 and _borrowers[_nborrowers - 1] is NULL:
            _nborrowers -= 1


cdef int release_borrowed() except -1:
    global _nborrowers
    cdef Py_ssize_t k
    cdef PyObject *m
    for k in range(_nborrowers):
        m = _borrowers[k]
        if m is not NULL:
            _own_tape(<Message>m)  # on MemoryError this and later slots stay listed
            _borrowers[k] = NULL
    _nborrowers = 0
    return 0


cdef int attach_tape(Message m, const uint64_t *tape, size_t start, size_t end,
                     const uint8_t *strings) except -1:
    global _borrowers, _borrowers_capacity, _nborrowers
    cdef PyObject **grown
    cdef Py_ssize_t capacity
    if end - start > <size_t>0xFFFFFFFFU:
        raise MemoryError("payload too large to keep")
    if _nborrowers == _borrowers_capacity:
        capacity = 64 if _borrowers_capacity == 0 else 2 * _borrowers_capacity
        grown = <PyObject **>PyMem_Realloc(_borrowers, capacity * sizeof(PyObject *))
        if grown is NULL:
            raise MemoryError("cannot allocate the list of payload views")
        _borrowers = grown
        _borrowers_capacity = capacity
    if m._tape is not NULL:
        _drop_tape(m)
    mf_tape_view(&m._view, tape, start, end, strings)
    m._tape = &m._view
    m._slot = _nborrowers
    _borrowers[_nborrowers] = <PyObject *>m
    _nborrowers += 1
    m._has_payload = True
    return 0


cdef inline void _drop_tape(Message m) noexcept:
    # Forget m's unbuilt payload: unlist a view, free a copy.
    if m._tape == &m._view:
        _unlist(m)
    else:
        PyMem_Free(m._tape)
    m._tape = NULL


cdef object _tape_value_of(void *m):
    cdef size_t i = 0
    return tape_value((<Message>m)._tape, &i)


cdef object _build(Message m):
    # The payload's Python objects.  A view is read in place: no collection may run while
    # it is (a finalizer could decode and so overwrite the parser's buffers under it).
    cdef object value
    if m._tape == &m._view:
        value = mf_call_without_gc(_tape_value_of, <void *>m)
    else:
        value = _tape_value_of(<void *>m)
    _drop_tape(m)
    return value


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
            _drop_tape(self)

    cdef object payload(self):
        if self._tape is not NULL:
            self._payload = _build(self)
        return self._payload

    @property
    def payload_built(self):
        """False while a decoded payload is still only its tape (nobody read it yet)."""
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


# ---------------------------------------------------------------------------------------
# Envelope attributes as member descriptors

# The envelope fields are read on every message (m.id, m.method): as member descriptors
# the interpreter reads them straight from the object (see mf_member_descriptor), where
# Cython's read-only properties cost a call each.  The offsets are those of the fields of
# the structs Cython generates for these classes.
cdef extern from *:
    """
    #include <stddef.h>
    #define MF_FIELD(cls, field) \\
        ((Py_ssize_t)offsetof(struct __pyx_obj_7mcpfast_5_core_8messages_##cls, field))
    #define MF_REQUEST_ID MF_FIELD(Request, id)
    #define MF_REQUEST_METHOD MF_FIELD(Request, method)
    #define MF_NOTIFICATION_METHOD MF_FIELD(Notification, method)
    #define MF_RESPONSE_ID MF_FIELD(Response, id)
    #define MF_ERROR_ID MF_FIELD(ErrorResponse, id)
    #define MF_ERROR_MESSAGE MF_FIELD(ErrorResponse, message)
    """
    Py_ssize_t MF_REQUEST_ID
    Py_ssize_t MF_REQUEST_METHOD
    Py_ssize_t MF_NOTIFICATION_METHOD
    Py_ssize_t MF_RESPONSE_ID
    Py_ssize_t MF_ERROR_ID
    Py_ssize_t MF_ERROR_MESSAGE

mf_member_descriptor(Request, "id", MF_REQUEST_ID)
mf_member_descriptor(Request, "method", MF_REQUEST_METHOD)
mf_member_descriptor(Notification, "method", MF_NOTIFICATION_METHOD)
mf_member_descriptor(Response, "id", MF_RESPONSE_ID)
mf_member_descriptor(ErrorResponse, "id", MF_ERROR_ID)
mf_member_descriptor(ErrorResponse, "message", MF_ERROR_MESSAGE)
