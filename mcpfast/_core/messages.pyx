# cython: freethreading_compatible=False
"""Typed JSON-RPC 2.0 messages with a lazy payload.

``decode`` builds these; ``encode`` writes them.  A decoded message keeps its payload
(params, result or error.data) as the simdjson tape it was validated into -- a view of
the parser's buffers until the next decode, which first copies every view still alive --
and turns it into Python objects only when the payload is first read; the objects are
then cached.  A message built from Python holds its payload as given.
"""

cimport cython
from cpython.object cimport PyObject
from libc.stdint cimport uint8_t, uint64_t
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc

from mcpfast._core.cpython cimport mf_call_without_gc, mf_member_descriptor


cdef extern from "mcpfast/tape_build.h":
    # Python objects for the value at index i of a tape (i advanced past it).
    object mf_build_value(const mf_tape *t, size_t *i)
    # The str of a key or method name (cached, interned) / of any string (new).
    str mf_key_str(const char *data, Py_ssize_t size)
    str mf_str_new(const char *data, Py_ssize_t size)
    # Small objects built as filled copies of model dicts: on where the check passes.
    bint mf_shapes_enable(bint on)
    # Set by that check: the filled copies are clones of the model's keys (CPython 3.11).
    bint mf_dict_clone_ok
    # Objects of this many members (and no others) are made from models.
    enum: MF_SHAPE_MIN_KEYS
    enum: MF_SHAPE_MAX_KEYS
    uint64_t mf_object_shape_hits()


cdef object _ABSENT = object()

# ---------------------------------------------------------------------------------------
# Strings and tape -> Python objects (include/mcpfast/tape_build.h)

# Keys and method names come from a direct-mapped cache of interned strs: every decoded
# "tools/call" is the very object sys.intern("tools/call") is, so dict lookups by method
# name succeed on identity.  Short string values have a cache of their own, so that values
# never evict the keys every payload repeats.


cdef str make_str(const char *data, Py_ssize_t size):
    # simdjson has validated the UTF-8 already: no decoder checks.
    return mf_str_new(data, size)


cdef str cached_str(const char *data, Py_ssize_t size):
    return mf_key_str(data, size)


cdef object tape_value(const mf_tape *t, size_t *i):
    return mf_build_value(t, i)


_SHAPES = mf_shapes_enable(True)  # False where dicts are built only with PyDict_SetItem
_CLONES = bool(mf_dict_clone_ok)  # True where the copies are clones (mf_dict_clone_filled)


def _build_dicts_from_shapes(bint on, bint clones=True):
    """For tests: build small dicts as filled copies of models (only where the check at
    import passed) or, with False, only with PyDict_SetItem as other Python versions do;
    with clones=False the copies are made by PyDict_Copy, as on Python 3.12 and later."""
    global mf_dict_clone_ok
    mf_shapes_enable(on and _SHAPES)
    if not clones:
        mf_dict_clone_ok = False


_SHAPE_KEYS = range(MF_SHAPE_MIN_KEYS, MF_SHAPE_MAX_KEYS + 1)  # member counts that get models


def _shape_hits():
    """For tests: how many objects were made from models (filled copies) since shapes were
    last turned on or off.  Reads a counter per model slot (its one add per filled object
    is on a cache line the lookup has just read)."""
    return mf_object_shape_hits()


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
    return mf_build_value((<Message>m)._tape, &i)


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


cdef inline object _payload_of(Message m):
    # What the payload properties return: built on first access, then cached.
    if m._tape is not NULL:
        m._payload = _build(m)
    return m._payload


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

    # No __dealloc__: an unbuilt payload is released by _release_payload, which the types'
    # tp_dealloc calls first (see the end of this module).

    cdef object payload(self):
        return _payload_of(self)

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
        return _payload_of(self)

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
        return _payload_of(self)

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
        return _payload_of(self)

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
        return _payload_of(self)

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


@cython.no_gc
cdef class Verbatim:
    """``Verbatim(message)``: the payload of a message (a Request's or Notification's
    params, a Response's result, an ErrorResponse's data; null when it has none) as a
    value of its own. The encoder writes it where it stands from the message's tape, as
    it came (validated by the decode already), while nobody has read it -- no Python
    objects built, no re-encoding -- else from the built payload, with the same bytes.
    What a gateway answers with an upstream's result under the downstream request's id:
    ``encode_response(id, Verbatim(upstream_response))``."""

    # no_gc: it refers to one message, which refers to nothing that could refer back.

    def __init__(self, Message message not None):
        self.message = message

    @property
    def value(self):
        """The payload as Python objects (built on first access, as the message's own
        property builds it)."""
        return _payload_of(self.message)

    def __repr__(self):
        return f"Verbatim({self.message!r})"


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


# ---------------------------------------------------------------------------------------
# Allocation and release (include/mcpfast/message_types.h).  decode makes (and the caller
# frees) one message per frame: their memory is reused from free lists rather than given
# back to pymalloc each time, and an unbuilt payload is released by a hook of tp_dealloc
# (what a __dealloc__ would do, without the exception saving Cython wraps around one).
cdef extern from "mcpfast/message_types.h":
    ctypedef void (*mf_release_func)(PyObject *o) noexcept
    int mf_freelist_install(type cls) except -1
    int mf_release_hook_install(type cls, mf_release_func release) except -1


cdef void _release_payload(PyObject *o) noexcept:
    # o is being freed (its reference count is 0): only borrowed, untyped access here.
    if (<Message>o)._tape is not NULL:
        _drop_tape(<Message>o)


for _cls in (Message, Request, Notification, Response, ErrorResponse):
    mf_release_hook_install(_cls, _release_payload)
    if _cls is not Message:
        mf_freelist_install(_cls)
del _cls
