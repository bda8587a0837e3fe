# cython: freethreading_compatible=False
"""Compiled JSON encoding of Python values and JSON-RPC 2.0 messages.

``dumps`` writes compact JSON (no spaces, no trailing newline), byte for byte what
``json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()`` writes for the
values it accepts:

* dict with str keys, list, tuple, str, int, float, bool, None, and the typed messages
  (Request, Notification, Response, ErrorResponse).  Subclasses of dict, list, tuple, str,
  int and float are written as their base type, from their base storage, without calling
  any of their methods (an IntEnum is its int, a str Enum its string; a dict subclass is
  written in its dict insertion order, so an OrderedDict reordered by move_to_end still
  comes out in insertion order).
* Non-ASCII text is written raw as UTF-8; '"', '\\' and U+0000..U+001F are escaped.
* Floats are written as ``repr`` writes them; NaN and infinities are refused.
* Integers must lie in [-2**63, 2**64-1]: that is what JSON peers in other languages can
  represent, and mcpfast's decoder refuses larger integers too, so whatever this encoder
  writes the decoder reads back.
* Nesting is limited to MAX_DEPTH (1024) containers, counting the JSON-RPC envelope (and a
  batch array) like the decoder does; a reference cycle ends there too.

Anything else raises EncodeError (a ValueError) saying what is wrong and where.

The encoder never runs Python code: it reads the objects' C-level storage directly
(PEP 393 text, dict entries, int digits), which is both why it is fast and why the
borrowed references it walks cannot change under it.  Output goes to one module-level C
buffer reused across calls and is copied into the returned bytes once at the end.

An ``Extension(members, otherwise)`` gives a dict the members it lacks without copying
it: called with a dict holding none of ``members``' keys it answers an ``Extended`` value
written as the dict followed by the members, which were encoded once when the extension
was made (the bytes of a copy with the members set in order); anything else goes to
``otherwise``. Why: adding the same few members to every result of a kind (a protocol's
result fields) otherwise costs a dict copy and a Python frame per result.

A decoded message whose payload has not been read yet is written straight from its copy
of the simdjson tape -- a C loop with no Python objects: the zero-copy pass-through a
gateway relies on.  The bytes are the same as after building the payload.  A
``messages.Verbatim`` value -- a message's payload standing alone -- is written the same
way wherever it stands (a gateway's answer: the upstream's result under another id).
"""

from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.object cimport PyObject, PyTypeObject
from libc.math cimport isfinite
from libc.stdint cimport int64_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcmp, memcpy

from mcpfast._core.cpython cimport (
    MF_UNICODE_READY,
    PyBytes_AS_STRING,
    PyBytes_GET_SIZE,
    PyDict_GET_SIZE,
    PyDict_Next,
    PyDict_Type,
    PyFloat_AS_DOUBLE,
    PyFloat_Type,
    PyList_GET_ITEM,
    PyList_GET_SIZE,
    PyList_Type,
    PyLong_AsLongLongAndOverflow,
    PyLong_AsUnsignedLongLong,
    PyLong_Type,
    PyMem_Free,
    PyOS_double_to_string,
    PyTuple_GET_ITEM,
    PyTuple_GET_SIZE,
    PyTuple_Type,
    PyUnicode_DATA,
    PyUnicode_GET_LENGTH,
    PyUnicode_IS_COMPACT_ASCII,
    PyUnicode_KIND,
    PyUnicode_READ,
    PyUnicode_Type,
    Py_DTSF_ADD_DOT_0,
    Py_DecRef,
    Py_IncRef,
    Py_LE,
    is_dict,
    is_float,
    is_int,
    is_list,
    is_str,
    is_tuple,
    mf_dict_direct_check,
    mf_dict_direct_enable,
    mf_dict_entries,
    mf_dict_entries_of,
    mf_internals_enable,
    mf_small_int,
    py_false,
    py_none,
    py_true,
    type_of,
)
from mcpfast._core.messages cimport (
    ErrorResponse, MF_TAPE_NEXT, MF_TAPE_TYPE, Message, Notification, Request, Response,
    Verbatim, mf_tape, mf_tape_string,
)


cdef extern from "mcpfast/json_writer.h" nogil:
    ctypedef struct mf_writer:
        char *data
        size_t len
        size_t cap
    int MF_WRITE_OK
    int MF_WRITE_SURROGATE
    int mf_writer_init(mf_writer *w, size_t cap)
    void mf_writer_free(mf_writer *w)
    int mf_writer_reserve(mf_writer *w, size_t extra)
    int mf_writer_put(mf_writer *w, const char *p, size_t n)
    int mf_writer_putc(mf_writer *w, char c)
    void mf_writer_set_last(mf_writer *w, char c)
    int mf_write_u64(mf_writer *w, uint64_t v)
    int mf_write_i64(mf_writer *w, int64_t v)
    int mf_write_string_utf8(mf_writer *w, const char *s, size_t n)
    int mf_write_member_name_utf8(mf_writer *w, const char *s, size_t n)
    int mf_write_string_units(mf_writer *w, int kind, const void *data, size_t n,
                              size_t *bad)
    void mf_double_init()
    size_t mf_format_double(char *out, double v)


cdef extern from "mcpfast/envelope_text.h":
    const char mf_env_id[]
    const char mf_env_method_first[]
    const char mf_env_method[]
    const char mf_env_params[]
    const char mf_env_result[]
    const char mf_env_error_code[]
    const char mf_env_message[]
    const char mf_env_data[]
    size_t MF_ENV_ID_LEN
    size_t MF_ENV_METHOD_FIRST_LEN
    size_t MF_ENV_METHOD_LEN
    size_t MF_ENV_PARAMS_LEN
    size_t MF_ENV_RESULT_LEN
    size_t MF_ENV_ERROR_CODE_LEN
    size_t MF_ENV_MESSAGE_LEN
    size_t MF_ENV_DATA_LEN


mf_double_init()


cdef bint _dict_walk_matches() except -1:
    # Both entry layouts (str keys, other keys), with a deleted entry in between.
    cdef dict text_keys = {"a": 1, "b": 2, "c": 3}
    cdef dict other_keys = {1: "x", "k": 2, 3: 4}
    del text_keys["b"]
    del other_keys[1]
    return (mf_dict_direct_check(<PyObject *>text_keys)
            and mf_dict_direct_check(<PyObject *>other_keys))


_DICT_WALK_IN_PLACE = _dict_walk_matches()  # True where dicts are walked without PyDict_Next
mf_dict_direct_enable(_DICT_WALK_IN_PLACE)


def _use_cpython_internals(bint on):
    """For tests: the fast paths into CPython internals (include/mcpfast/cpython_compat.h:
    the in-place dict walk where its layout check passed, the one-digit int read) or, with
    False, the public-API fallbacks that other Python versions and builds use."""
    mf_internals_enable(on)
    mf_dict_direct_enable(on and _DICT_WALK_IN_PLACE)

DEF _MAX_DEPTH = 1024
MAX_DEPTH = _MAX_DEPTH

# The shared output buffer starts this large and is given back when a call grew it past
# SHRINK_ABOVE, so that one huge message does not pin its memory for the process lifetime.
DEF INITIAL_CAPACITY = 4096
DEF SHRINK_ABOVE = 1 << 20


class EncodeError(ValueError):
    """A value that cannot be encoded as JSON.

    ``message`` says what is wrong, ``path`` where: a JSONPath-like location of the
    offending value inside what was being encoded ("$" for the value itself,
    "$.params.items[2]", "$[1].result" in a batch).
    """

    def __init__(self, message, path="$"):
        super().__init__(message if path == "$" else f"{message} at {path}")
        self.message = message
        self.path = path

    def __reduce__(self):
        return (type(self), (self.message, self.path))


# ---------------------------------------------------------------------------------------
# Encoding context: the output buffer and the path to the value being written


ctypedef struct enc_ctx:
    mf_writer w
    # keys[d] is the dict key (a str) of the member being written inside the container at
    # depth d, or NULL inside an array, where index[d] holds the element index.  Recorded
    # on every member (one store) so that an error can name its location for free.
    PyObject *keys[_MAX_DEPTH + 1]
    Py_ssize_t index[_MAX_DEPTH + 1]


cdef enc_ctx _shared
_shared.w.data = NULL
_shared.w.len = 0
_shared.w.cap = 0
cdef bint _shared_busy = False


cdef inline enc_ctx *_acquire() except NULL:
    # The encoder runs no Python code, so a call cannot start while another is under way on
    # this thread; the flag keeps the shared buffer safe should that ever change.
    global _shared_busy
    cdef enc_ctx *c
    if not _shared_busy:
        if _shared.w.data is NULL and mf_writer_init(&_shared.w, INITIAL_CAPACITY) != MF_WRITE_OK:
            raise MemoryError("cannot allocate the JSON output buffer")
        _shared.w.len = 0
        _shared_busy = True
        return &_shared
    c = <enc_ctx *>malloc(sizeof(enc_ctx))
    if c is NULL or mf_writer_init(&c.w, 256) != MF_WRITE_OK:
        free(c)
        raise MemoryError("cannot allocate a JSON output buffer")
    return c


cdef inline void _release(enc_ctx *c) noexcept:
    global _shared_busy
    if c is &_shared:
        _shared_busy = False
        if _shared.w.cap > SHRINK_ABOVE:
            mf_writer_free(&_shared.w)
    else:
        mf_writer_free(&c.w)
        free(c)


cdef inline bytes _result(enc_ctx *c):
    return PyBytes_FromStringAndSize(c.w.data, <Py_ssize_t>c.w.len)


cdef int _no_memory() except -1:
    raise MemoryError("cannot grow the JSON output buffer")


cdef str _type_name(object o):
    cdef type t = type(o)
    if t.__module__ == "builtins":
        return t.__qualname__
    return f"{t.__module__}.{t.__qualname__}"


cdef str _path(enc_ctx *c, int depth):
    """The location of the value being written at depth, e.g. $.params.items[2].

    Error paths call this before anything else that allocates: an allocation may run the
    garbage collector and with it finalizers, which could free what the borrowed pointers
    in c.keys point to.  The keys are held first, then the path is built.
    """
    cdef int d
    cdef list parts
    cdef object key
    depth = min(depth, _MAX_DEPTH)
    for d in range(1, depth + 1):
        if c.keys[d] is not NULL:
            Py_IncRef(c.keys[d])
    parts = ["$"]
    try:
        for d in range(1, depth + 1):
            if c.keys[d] is NULL:
                parts.append(f"[{c.index[d]}]")
            else:
                key = <object>c.keys[d]
                if type(key) is str and key.isidentifier() and key.isascii():
                    parts.append("." + key)
                else:
                    parts.append(f"[{str.__repr__(key)}]")
    finally:
        for d in range(1, depth + 1):
            if c.keys[d] is not NULL:
                Py_DecRef(c.keys[d])
    return "".join(parts)


cdef int _fail(enc_ctx *c, int depth, str message) except -1:
    # Only for messages that the caller built without allocating container objects (see
    # _path); the others take the path first.
    raise EncodeError(message, _path(c, depth))


cdef int _fail_unsupported(enc_ctx *c, int depth, PyObject *o) except -1:
    # The path is taken first: naming the type may run Python code (a metaclass).
    cdef str path = _path(c, depth)
    raise EncodeError("cannot encode a value of type %s as JSON" % _type_name(<object>o), path)


cdef int _fail_key(enc_ctx *c, int depth, PyObject *key) except -1:
    cdef str path = _path(c, depth)
    cdef object k = <object>key
    if type(k) in (int, float, bool, type(None)):
        raise EncodeError("dict keys must be str, not %s (key %r)" % (type(k).__name__, k),
                          path)
    raise EncodeError("dict keys must be str, not %s" % _type_name(k), path)


# ---------------------------------------------------------------------------------------
# Scalars


cdef int _write_str(enc_ctx *c, PyObject *s, int depth) except -1:
    cdef size_t bad = 0
    cdef int status
    if PyUnicode_IS_COMPACT_ASCII(s):
        # Compact ASCII strings store exactly their UTF-8 bytes.
        status = mf_write_string_utf8(&c.w, <const char *>PyUnicode_DATA(s),
                                      <size_t>PyUnicode_GET_LENGTH(s))
    else:
        MF_UNICODE_READY(s)
        status = mf_write_string_units(&c.w, PyUnicode_KIND(s), PyUnicode_DATA(s),
                                       <size_t>PyUnicode_GET_LENGTH(s), &bad)
    if status == MF_WRITE_OK:
        return 0
    if status == MF_WRITE_SURROGATE:
        return _fail_surrogate(c, depth, s, bad, "str")
    return _no_memory()


cdef inline int _write_member_name(enc_ctx *c, PyObject *key, int depth) except -1:
    """A dict key (any str) and the ':' after it; depth is the dict's."""
    if PyUnicode_IS_COMPACT_ASCII(key):
        if mf_write_member_name_utf8(&c.w, <const char *>PyUnicode_DATA(key),
                                     <size_t>PyUnicode_GET_LENGTH(key)) != MF_WRITE_OK:
            return _no_memory()
        return 0
    return _write_member_name_units(c, key, depth)


cdef int _write_member_name_units(enc_ctx *c, PyObject *key, int depth) except -1:
    cdef size_t bad = 0
    cdef int status
    MF_UNICODE_READY(key)
    status = mf_write_string_units(&c.w, PyUnicode_KIND(key), PyUnicode_DATA(key),
                                   <size_t>PyUnicode_GET_LENGTH(key), &bad)
    if status == MF_WRITE_OK:
        status = mf_writer_putc(&c.w, b':')
    if status == MF_WRITE_OK:
        return 0
    if status == MF_WRITE_SURROGATE:
        return _fail_surrogate(c, depth - 1, key, bad, "dict key")
    return _no_memory()


cdef int _fail_surrogate(enc_ctx *c, int depth, PyObject *s, size_t bad, str what) except -1:
    cdef str path = _path(c, depth)
    cdef unsigned int unit = <unsigned int>PyUnicode_READ(PyUnicode_KIND(s), PyUnicode_DATA(s),
                                                           <Py_ssize_t>bad)
    cdef str text = <str>s
    cdef str shown = str.__repr__(text) if len(text) <= 40 else str.__repr__(text[:40]) + "..."
    raise EncodeError("%s %s holds a lone surrogate U+%04X at index %d, which has no UTF-8 "
                      "encoding" % (what, shown, unit, bad), path)


cdef int _write_int(enc_ctx *c, PyObject *o, int depth) except -1:
    cdef long long value
    cdef unsigned long long big
    cdef int overflow = 0
    if mf_small_int(o, &value):
        if mf_write_i64(&c.w, value) != MF_WRITE_OK:
            return _no_memory()
        return 0
    value = PyLong_AsLongLongAndOverflow(o, &overflow)
    if overflow == 0:
        if mf_write_i64(&c.w, value) != MF_WRITE_OK:
            return _no_memory()
        return 0
    # Compared with int's own comparison (no subclass method, no OverflowError raised: an
    # exception object could set off the garbage collector, see _path).
    if overflow > 0 and PyLong_Type.tp_richcompare(<object>o, _UINT64_MAX, Py_LE) is True:
        if mf_write_u64(&c.w, PyLong_AsUnsignedLongLong(o)) != MF_WRITE_OK:
            return _no_memory()
        return 0
    return _fail_int_range(c, depth, o)


cdef object _UINT64_MAX = 2**64 - 1


cdef int _fail_int_range(enc_ctx *c, int depth, PyObject *o) except -1:
    cdef str path = _path(c, depth)
    raise EncodeError("int %s is out of range: JSON integers must lie in [-2**63, 2**64-1] "
                      "(64 bits), as the decoder requires too" % int.__repr__(<object>o), path)


cdef int _fail_float(enc_ctx *c, int depth, double value) except -1:
    cdef str path = _path(c, depth)
    raise EncodeError("float %r is not valid JSON (NaN and infinities have no JSON form)"
                      % value, path)


cdef int _write_double(enc_ctx *c, double value, int depth) except -1:
    # The shortest repr that round-trips, exactly what repr(float) and json.dumps write.
    cdef char *text
    cdef size_t n
    cdef int status
    if not isfinite(value):
        return _fail_float(c, depth, value)
    if mf_writer_reserve(&c.w, 32) != MF_WRITE_OK:
        return _no_memory()
    n = mf_format_double(c.w.data + c.w.len, value)
    if n != 0:
        c.w.len += n
        return 0
    # Subnormal doubles (below 2.2e-308) take CPython's own, slower formatter.
    text = PyOS_double_to_string(value, b'r', 0, Py_DTSF_ADD_DOT_0, NULL)
    n = 0
    while text[n] != 0:
        n += 1
    status = mf_writer_put(&c.w, text, n)
    PyMem_Free(text)
    if status != MF_WRITE_OK:
        return _no_memory()
    return 0


# ---------------------------------------------------------------------------------------
# Containers


cdef int _write_dict(enc_ctx *c, PyObject *d, int depth) except -1:
    cdef Py_ssize_t pos = 0
    cdef Py_ssize_t i
    cdef PyObject *key
    cdef PyObject *value
    cdef mf_dict_entries entries
    depth += 1
    if depth > _MAX_DEPTH:
        return _too_deep(c, depth)
    if PyDict_GET_SIZE(d) == 0:
        if mf_writer_put(&c.w, "{}", 2) != MF_WRITE_OK:
            return _no_memory()
        return 0
    if mf_writer_putc(&c.w, b'{') != MF_WRITE_OK:
        return _no_memory()
    if mf_dict_entries_of(d, &entries):
        for i in range(entries.count):
            key = entries.slot[0]
            value = entries.slot[1]
            entries.slot += entries.stride
            if value is not NULL:  # NULL: a deleted entry
                _write_member(c, key, value, depth)
    else:
        while PyDict_Next(d, &pos, &key, &value):
            _write_member(c, key, value, depth)
    mf_writer_set_last(&c.w, b'}')
    return 0


cdef inline int _write_member(enc_ctx *c, PyObject *key, PyObject *value, int depth) except -1:
    """"key":value, for a dict at depth."""
    c.keys[depth] = key
    if type_of(key) is &PyUnicode_Type and PyUnicode_IS_COMPACT_ASCII(key):
        if mf_write_member_name_utf8(&c.w, <const char *>PyUnicode_DATA(key),
                                     <size_t>PyUnicode_GET_LENGTH(key)) != MF_WRITE_OK:
            return _no_memory()
    elif is_str(key):
        _write_member_name(c, key, depth)
    else:
        return _fail_key(c, depth - 1, key)
    _write_value(c, value, depth)
    if mf_writer_putc(&c.w, b',') != MF_WRITE_OK:
        return _no_memory()
    return 0


cdef int _write_array(enc_ctx *c, PyObject *seq, bint is_a_list, int depth) except -1:
    # Sizes are re-read on every step: cheap, and correct even for a list that changed.
    cdef Py_ssize_t i = 0
    depth += 1
    if depth > _MAX_DEPTH:
        return _too_deep(c, depth)
    c.keys[depth] = NULL
    if mf_writer_putc(&c.w, b'[') != MF_WRITE_OK:
        return _no_memory()
    if is_a_list:
        while i < PyList_GET_SIZE(seq):
            c.index[depth] = i
            _write_value(c, PyList_GET_ITEM(seq, i), depth)
            if mf_writer_putc(&c.w, b',') != MF_WRITE_OK:
                return _no_memory()
            i += 1
    else:
        while i < PyTuple_GET_SIZE(seq):
            c.index[depth] = i
            _write_value(c, PyTuple_GET_ITEM(seq, i), depth)
            if mf_writer_putc(&c.w, b',') != MF_WRITE_OK:
                return _no_memory()
            i += 1
    if i == 0:
        if mf_writer_putc(&c.w, b']') != MF_WRITE_OK:
            return _no_memory()
    else:
        mf_writer_set_last(&c.w, b']')
    return 0


cdef int _too_deep(enc_ctx *c, int depth) except -1:
    cdef str path = _path(c, depth - 1)
    raise EncodeError("nesting deeper than %d levels (or a reference cycle)" % _MAX_DEPTH, path)


cdef inline int _write_value(enc_ctx *c, PyObject *o, int depth) except -1:
    # The commonest values -- ASCII text, dicts, lists, small ints, literals -- are
    # dispatched right here; everything else by _write_any.
    cdef PyTypeObject *t = type_of(o)
    cdef long long small
    cdef int status
    if t is &PyUnicode_Type and PyUnicode_IS_COMPACT_ASCII(o):
        status = mf_write_string_utf8(&c.w, <const char *>PyUnicode_DATA(o),
                                      <size_t>PyUnicode_GET_LENGTH(o))
    elif t is &PyDict_Type:
        return _write_dict(c, o, depth)
    elif t is &PyList_Type:
        return _write_array(c, o, True, depth)
    elif t is &PyLong_Type and mf_small_int(o, &small):
        status = mf_write_i64(&c.w, small)
    elif o is py_true:
        status = mf_writer_put(&c.w, "true", 4)
    elif o is py_false:
        status = mf_writer_put(&c.w, "false", 5)
    elif o is py_none:
        status = mf_writer_put(&c.w, "null", 4)
    else:
        return _write_any(c, o, depth)
    if status != MF_WRITE_OK:
        return _no_memory()
    return 0


cdef int _write_any(enc_ctx *c, PyObject *o, int depth) except -1:
    # What _write_value leaves: floats, non-ASCII text, big ints, tuples, then subclasses
    # (written from their base storage: no method of theirs is called) and messages.
    if is_float(o):
        return _write_double(c, PyFloat_AS_DOUBLE(o), depth)
    if is_str(o):
        return _write_str(c, o, depth)
    if is_int(o):
        return _write_int(c, o, depth)
    if is_tuple(o):
        return _write_array(c, o, False, depth)
    if is_dict(o):
        return _write_dict(c, o, depth)
    if is_list(o):
        return _write_array(c, o, True, depth)
    if type_of(o) is <PyTypeObject *>Verbatim:
        return _write_body(c, (<Verbatim><object>o).message, None, depth)
    if type_of(o) is <PyTypeObject *>Extended:
        return _write_extended(c, <Extended><object>o, depth)
    if isinstance(<object>o, Message):
        return _write_message(c, <Message><object>o, depth)
    return _fail_unsupported(c, depth, o)


# ---------------------------------------------------------------------------------------
# Extensions: members appended to a dict as they were encoded once


cdef int _nesting(object value, int depth) except -1:
    """How many containers deep ``value`` goes (0 for a scalar); EncodeError past
    MAX_DEPTH (a reference cycle too), as writing it would raise."""
    cdef int deepest = 0
    if depth > _MAX_DEPTH:
        raise EncodeError("nesting deeper than %d levels (or a reference cycle)" % _MAX_DEPTH)
    if isinstance(value, dict):
        for item in (<dict>value).values():
            deepest = max(deepest, _nesting(item, depth + 1))
        return deepest + 1
    if isinstance(value, (list, tuple)):
        for item in value:
            deepest = max(deepest, _nesting(item, depth + 1))
        return deepest + 1
    return 0


cdef class Extension:
    """``Extension(members, otherwise)``: a callable giving a dict the members it lacks
    (see :func:`dumps` and the stub for the full contract). ``members`` (a dict with str
    keys) is encoded once, here; calling the extension with a dict (exactly a dict) that
    has none of its keys answers an :class:`Extended` value the encoder writes as the dict
    with the members added at its end -- the same bytes as writing a copy of the dict with
    those members set in order, without the copy -- and calling it with anything else
    answers ``otherwise(value)``."""

    def __init__(self, dict members not None, otherwise):
        cdef bytes encoded
        if not members:
            raise ValueError("an Extension needs at least one member")
        for key in members:
            if type(key) is not str:
                raise TypeError("Extension members must have str keys, not %s" % _type_name(key))
        encoded = dumps(members)
        self.text = encoded[1:len(encoded) - 1]
        self.keys = tuple(members)
        self.nesting = _nesting(members, 0) - 1
        if not callable(otherwise):
            raise TypeError("otherwise must be callable")
        self.otherwise = otherwise

    def __call__(self, value):
        cdef Extended extended
        if type(value) is dict:
            if self.overlaps(<dict>value):
                return self.otherwise(value)
            extended = Extended.__new__(Extended)
            extended.value = value
            extended.extension = self
            return extended
        return self.otherwise(value)

    cdef bint overlaps(self, dict value) except -1:
        # Whether ``value`` holds one of the members' keys already.
        for key in self.keys:
            if key in value:
                return True
        return False

    def __repr__(self):
        return "<Extension %s>" % (self.text.decode(),)


cdef class Extended:
    """A dict and the members its :class:`Extension` appends when it is encoded (made by
    calling an Extension only): ``value`` is the dict, unchanged."""

    def __init__(self, *args, **kwargs):
        raise TypeError("Extended values are made by calling an Extension")

    def to_dict(self):
        """A new dict: a copy of ``value`` with the members added (what is encoded)."""
        import json
        shaped = dict(self.value)
        shaped.update(json.loads(b"{" + self.extension.text + b"}"))
        return shaped

    def __repr__(self):
        return "<Extended %r + %s>" % (self.value, self.extension.text.decode())


cdef int _write_extended(enc_ctx *c, Extended extended, int depth) except -1:
    return _write_with_members(c, <PyObject *>extended.value, extended.extension, depth)


cdef int _write_with_members(enc_ctx *c, PyObject *d, Extension extension,
                             int depth) except -1:
    # The dict d with the extension's members written at its end.
    cdef bytes text = extension.text
    if depth + 1 > _MAX_DEPTH:
        return _too_deep(c, depth + 1)
    if depth + 1 + extension.nesting > _MAX_DEPTH:
        # The members would be too deep (the path names the first of them).
        c.keys[depth + 1] = <PyObject *>extension.keys[0]
        return _too_deep(c, depth + 2)
    if PyDict_GET_SIZE(d) == 0:
        _put(c, mf_writer_putc(&c.w, b'{'))
    else:
        _write_dict(c, d, depth)
        mf_writer_set_last(&c.w, b',')
    _put(c, mf_writer_put(&c.w, PyBytes_AS_STRING(<PyObject *>text),
                          <size_t>PyBytes_GET_SIZE(<PyObject *>text)))
    return _put(c, mf_writer_putc(&c.w, b'}'))


# ---------------------------------------------------------------------------------------
# Tapes: payloads of decoded messages that were never built into Python objects


cdef int _fail_tape_depth(enc_ctx *c, int depth) except -1:
    cdef str path = _path(c, depth)
    raise EncodeError("nesting deeper than %d levels inside this payload" % _MAX_DEPTH, path)


cdef int _fail_tape_corrupt(enc_ctx *c, int depth) except -1:
    # Decoded tapes never get here; a tape built some other way might.
    cdef str path = _path(c, depth)
    raise EncodeError("the payload's tape copy is malformed", path)


cdef int _write_tape(enc_ctx *c, const mf_tape *t, int depth) except -1:
    """Write the JSON value held by a payload's tape (a view or a copy): one pass over its
    words, in C.

    depth is that of the payload's place; errors name that place (the keys inside a tape
    have no Python objects to point at).
    """
    cdef size_t i = 0
    cdef size_t n = t.ntape
    cdef uint64_t word
    cdef uint64_t number
    cdef double d
    cdef char kind
    cdef const char *s
    cdef unsigned int length
    cdef int level = 0
    cdef int status
    # in_object[level]: the container open at that level is an object (keys alternate with
    # values there); key_next: the next string is a member name.
    cdef char in_object[_MAX_DEPTH + 2]
    cdef bint key_next = False
    in_object[0] = 0
    if n == 0:
        return _fail_tape_corrupt(c, depth)
    while i < n:
        word = t.words[i]
        kind = MF_TAPE_TYPE(word)
        if kind == b'"':
            s = mf_tape_string(t, word, &length)
            status = mf_write_string_utf8(&c.w, s, length)
            if status == MF_WRITE_OK:
                status = mf_writer_putc(&c.w, b':' if key_next else b',')
            key_next = not key_next and in_object[level]
            i += 1
        elif kind == b'{' or kind == b'[':
            if depth + level + 1 > _MAX_DEPTH:
                return _fail_tape_depth(c, depth)
            level += 1
            in_object[level] = kind == b'{'
            key_next = in_object[level]
            status = mf_writer_putc(&c.w, kind)
            i += 1
        elif kind == b'}' or kind == b']':
            # A ',' follows every member: the last one becomes the closing bracket.
            if c.w.data[c.w.len - 1] == b',':
                mf_writer_set_last(&c.w, kind)
            else:
                status = mf_writer_putc(&c.w, kind)
                if status != MF_WRITE_OK:
                    return _no_memory()
            status = mf_writer_putc(&c.w, b',')
            level -= 1
            key_next = in_object[level]
            i += 1
        else:
            if kind == b'l':
                status = mf_write_i64(&c.w, <int64_t>t.words[i + 1])
                i += 2
            elif kind == b'u':
                status = mf_write_u64(&c.w, t.words[i + 1])
                i += 2
            elif kind == b'd':
                number = t.words[i + 1]
                memcpy(&d, &number, 8)
                _write_double(c, d, depth)
                status = MF_WRITE_OK
                i += 2
            elif kind == b't':
                status = mf_writer_put(&c.w, "true", 4)
                i += 1
            elif kind == b'f':
                status = mf_writer_put(&c.w, "false", 5)
                i += 1
            elif kind == b'n':
                status = mf_writer_put(&c.w, "null", 4)
                i += 1
            else:
                return _fail_tape_corrupt(c, depth)
            if status == MF_WRITE_OK:
                status = mf_writer_putc(&c.w, b',')
            key_next = in_object[level]
        if status != MF_WRITE_OK:
            return _no_memory()
    c.w.len -= 1  # the ',' after the value itself
    return 0


# ---------------------------------------------------------------------------------------
# JSON-RPC envelopes


cdef str _KEY_ID = "id"
cdef str _KEY_METHOD = "method"
cdef str _KEY_PARAMS = "params"
cdef str _KEY_RESULT = "result"
cdef str _KEY_ERROR = "error"
cdef str _KEY_MESSAGE = "message"
cdef str _KEY_DATA = "data"

cdef object _ABSENT = object()


cdef int _write_id(enc_ctx *c, object id, bint allow_null, int depth) except -1:
    cdef PyObject *o = <PyObject *>id
    c.keys[depth] = <PyObject *>_KEY_ID
    if type(id) is int:
        return _write_int(c, o, depth)
    if type(id) is str:
        return _write_str(c, o, depth)
    if id is None and allow_null:
        if mf_writer_put(&c.w, "null", 4) != MF_WRITE_OK:
            return _no_memory()
        return 0
    if not isinstance(id, bool):
        if isinstance(id, int):
            return _write_int(c, o, depth)
        if isinstance(id, str):
            return _write_str(c, o, depth)
    raise TypeError("a JSON-RPC id must be a str or an int%s, not %s"
                    % (" (or None)" if allow_null else "", _type_name(id)))


cdef int _write_method(enc_ctx *c, object method, int depth) except -1:
    if not isinstance(method, str):
        raise TypeError("a JSON-RPC method must be a str, not %s" % _type_name(method))
    c.keys[depth] = <PyObject *>_KEY_METHOD
    return _write_str(c, <PyObject *>method, depth)


cdef int _check_params(object params) except -1:
    # JSON-RPC params are structured (an object or an array) or absent.
    if type(params) is dict or type(params) is list or params is None:
        return 0
    if isinstance(params, (dict, list, tuple)):
        return 0
    raise TypeError("JSON-RPC params must be a dict, a list, a tuple or None, not %s"
                    % _type_name(params))


cdef inline int _put(enc_ctx *c, int status) except -1:
    if status != MF_WRITE_OK:
        return _no_memory()
    return 0


# The envelope writers below serve both the encode_* functions (payload: a Python value,
# source None) and encode_message (payload: the Message source, written from its tape
# copy when it has one).  depth is the depth outside the envelope.


cdef inline int _write_body(enc_ctx *c, Message source, object value, int depth) except -1:
    if source is None:
        return _write_value(c, <PyObject *>value, depth)
    if source._tape is not NULL:
        return _write_tape(c, source._tape, depth)
    return _write_value(c, <PyObject *>source._payload, depth)


cdef inline int _write_request(enc_ctx *c, object id, object method, Message source,
                               object params, bint has_params, int depth) except -1:
    depth += 1  # the envelope object
    if depth > _MAX_DEPTH:
        return _too_deep(c, depth)
    _put(c, mf_writer_put(&c.w, mf_env_id, MF_ENV_ID_LEN))
    _write_id(c, id, False, depth)
    _put(c, mf_writer_put(&c.w, mf_env_method, MF_ENV_METHOD_LEN))
    _write_method(c, method, depth)
    if has_params:
        _put(c, mf_writer_put(&c.w, mf_env_params, MF_ENV_PARAMS_LEN))
        c.keys[depth] = <PyObject *>_KEY_PARAMS
        _write_body(c, source, params, depth)
    return _put(c, mf_writer_putc(&c.w, b'}'))


cdef inline int _write_notification(enc_ctx *c, object method, Message source,
                                    object params, bint has_params, int depth) except -1:
    depth += 1
    if depth > _MAX_DEPTH:
        return _too_deep(c, depth)
    _put(c, mf_writer_put(&c.w, mf_env_method_first, MF_ENV_METHOD_FIRST_LEN))
    _write_method(c, method, depth)
    if has_params:
        _put(c, mf_writer_put(&c.w, mf_env_params, MF_ENV_PARAMS_LEN))
        c.keys[depth] = <PyObject *>_KEY_PARAMS
        _write_body(c, source, params, depth)
    return _put(c, mf_writer_putc(&c.w, b'}'))


cdef inline int _write_response(enc_ctx *c, object id, Message source, object result,
                                int depth) except -1:
    depth += 1
    if depth > _MAX_DEPTH:
        return _too_deep(c, depth)
    _put(c, mf_writer_put(&c.w, mf_env_id, MF_ENV_ID_LEN))
    _write_id(c, id, False, depth)
    _put(c, mf_writer_put(&c.w, mf_env_result, MF_ENV_RESULT_LEN))
    c.keys[depth] = <PyObject *>_KEY_RESULT
    _write_body(c, source, result, depth)
    return _put(c, mf_writer_putc(&c.w, b'}'))


cdef inline int _write_error(enc_ctx *c, object id, long long code, object message,
                             Message source, object data, bint has_data, int depth) except -1:
    depth += 1
    if depth > _MAX_DEPTH:
        return _too_deep(c, depth)
    if depth + 1 > _MAX_DEPTH:  # the error object
        c.keys[depth] = <PyObject *>_KEY_ERROR
        return _too_deep(c, depth + 1)
    if not isinstance(message, str):
        raise TypeError("a JSON-RPC error message must be a str, not %s"
                        % _type_name(message))
    _put(c, mf_writer_put(&c.w, mf_env_id, MF_ENV_ID_LEN))
    _write_id(c, id, True, depth)
    _put(c, mf_writer_put(&c.w, mf_env_error_code, MF_ENV_ERROR_CODE_LEN))
    _put(c, mf_write_i64(&c.w, code))
    _put(c, mf_writer_put(&c.w, mf_env_message, MF_ENV_MESSAGE_LEN))
    c.keys[depth] = <PyObject *>_KEY_ERROR
    c.keys[depth + 1] = <PyObject *>_KEY_MESSAGE
    _write_str(c, <PyObject *>message, depth + 1)
    if has_data:
        _put(c, mf_writer_put(&c.w, mf_env_data, MF_ENV_DATA_LEN))
        c.keys[depth + 1] = <PyObject *>_KEY_DATA
        _write_body(c, source, data, depth + 1)
    return _put(c, mf_writer_put(&c.w, "}}", 2))


cdef long long _error_code(object code) except? -1:
    cdef int overflow = 0
    cdef long long value
    if isinstance(code, bool) or not isinstance(code, int):
        raise TypeError("a JSON-RPC error code must be an int, not %s" % _type_name(code))
    value = PyLong_AsLongLongAndOverflow(<PyObject *>code, &overflow)
    if overflow:
        raise EncodeError("error code %d is out of range: it must fit in 64 bits" % code,
                          "$.error.code")
    return value


cdef int _write_message(enc_ctx *c, Message m, int depth) except -1:
    cdef Request request
    cdef Notification notification
    cdef ErrorResponse error
    if isinstance(m, Response):
        return _write_response(c, (<Response>m).id, m, None, depth)
    if isinstance(m, Request):
        request = <Request>m
        return _write_request(c, request.id, request.method, m, None, _payload_present(m),
                              depth)
    if isinstance(m, Notification):
        notification = <Notification>m
        return _write_notification(c, notification.method, m, None, _payload_present(m),
                                   depth)
    if isinstance(m, ErrorResponse):
        error = <ErrorResponse>m
        return _write_error(c, error.id, error.code, error.message, m, None,
                            m._tape is not NULL or m._has_payload, depth)
    raise TypeError("cannot encode a message of type %s" % _type_name(m))


cdef inline bint _payload_present(Message m) noexcept:
    # params: null is not valid JSON-RPC, so a None payload is left out like an absent one.
    return m._tape is not NULL or (m._has_payload and m._payload is not None)


# ---------------------------------------------------------------------------------------
# Public API


cpdef bytes dumps(object value):
    """Compact JSON of value as UTF-8 bytes (see the module docstring for what is accepted).

    Raises EncodeError for a value that has no JSON form here: unsupported types, non-str
    dict keys, lone surrogates, NaN/infinities, integers outside [-2**63, 2**64-1] (the
    decoder refuses those too), nesting deeper than MAX_DEPTH or a reference cycle.
    """
    cdef enc_ctx *c = _acquire()
    try:
        _write_value(c, <PyObject *>value, 0)
        return _result(c)
    finally:
        _release(c)


cpdef bytes encode_request(object id, object method, object params=None):
    """``{"jsonrpc":"2.0","id":id,"method":method,"params":params}``; params left out when None.

    id must be an int or a str (TypeError otherwise, bool included), method a str, params a
    dict, list, tuple or None.
    """
    cdef enc_ctx *c
    _check_params(params)
    c = _acquire()
    try:
        _write_request(c, id, method, None, params, params is not None, 0)
        return _result(c)
    finally:
        _release(c)


cpdef bytes encode_notification(object method, object params=None):
    """``{"jsonrpc":"2.0","method":method,"params":params}``; params left out when None."""
    cdef enc_ctx *c
    _check_params(params)
    c = _acquire()
    try:
        _write_notification(c, method, None, params, params is not None, 0)
        return _result(c)
    finally:
        _release(c)


cpdef bytes encode_response(object id, object result):
    """``{"jsonrpc":"2.0","id":id,"result":result}``; id must be an int or a str."""
    cdef enc_ctx *c = _acquire()
    try:
        _write_response(c, id, None, result, 0)
        return _result(c)
    finally:
        _release(c)


cdef bytes encode_extended_response(object id, object result, Extension extension):
    """``encode_response(id, extension(result))``, without the Extended value in between
    when ``extension`` applies to ``result`` (a dict holding none of its members)."""
    cdef enc_ctx *c
    cdef int depth = 1
    if type(result) is not dict or extension.overlaps(<dict>result):
        return encode_response(id, extension(result))
    c = _acquire()
    try:
        _put(c, mf_writer_put(&c.w, mf_env_id, MF_ENV_ID_LEN))
        _write_id(c, id, False, depth)
        _put(c, mf_writer_put(&c.w, mf_env_result, MF_ENV_RESULT_LEN))
        c.keys[depth] = <PyObject *>_KEY_RESULT
        _write_with_members(c, <PyObject *>result, extension, depth)
        _put(c, mf_writer_putc(&c.w, b'}'))
        return _result(c)
    finally:
        _release(c)


cpdef bytes encode_error(object id, object code, object message, object data=_ABSENT):
    """``{"jsonrpc":"2.0","id":id,"error":{"code":code,"message":message,"data":data}}``.

    id may be None (written as null: the id of a request that could not be read); code must
    be an int, message a str; data is left out unless given (data=None writes null).
    """
    cdef long long value = _error_code(code)
    cdef enc_ctx *c = _acquire()
    try:
        _write_error(c, id, value, message, None, data, data is not _ABSENT, 0)
        return _result(c)
    finally:
        _release(c)


cpdef bytes encode_message(object message):
    """The JSON of a Request, Notification, Response or ErrorResponse.

    A decoded message whose payload was never read is written from its tape, without
    building Python objects; the bytes are the same either way.
    """
    cdef enc_ctx *c
    if not isinstance(message, Message):
        raise TypeError("encode_message takes a Request, Notification, Response or "
                        "ErrorResponse, not %s" % _type_name(message))
    c = _acquire()
    try:
        _write_message(c, <Message>message, 0)
        return _result(c)
    finally:
        _release(c)


cpdef bytes encode_batch(object items):
    """A JSON-RPC batch: a JSON array of the given messages.

    items is a list or tuple of typed messages and/or already encoded messages (bytes,
    bytearray or a contiguous memoryview), which are inserted verbatim.  An empty batch is
    not valid JSON-RPC and raises EncodeError.
    """
    cdef enc_ctx *c
    cdef Py_ssize_t i, n
    cdef object item
    cdef Py_buffer view
    cdef int status
    if not isinstance(items, (list, tuple)):
        raise TypeError("encode_batch takes a list or tuple of messages, not %s"
                        % _type_name(items))
    n = len(items)
    if n == 0:
        raise EncodeError("an empty batch is not valid JSON-RPC")
    c = _acquire()
    try:
        c.keys[1] = NULL
        _put(c, mf_writer_putc(&c.w, b'['))
        for i in range(n):
            if i >= len(items):
                break
            item = items[i]
            c.index[1] = i
            if isinstance(item, Message):
                _write_message(c, <Message>item, 1)
            elif type(item) is bytes:
                if PyBytes_GET_SIZE(<PyObject *>item) == 0:
                    _fail(c, 1, "an encoded batch item is empty")
                _put(c, mf_writer_put(&c.w, PyBytes_AS_STRING(<PyObject *>item),
                                      <size_t>PyBytes_GET_SIZE(<PyObject *>item)))
            elif isinstance(item, (bytes, bytearray, memoryview)):
                try:
                    PyObject_GetBuffer(item, &view, PyBUF_SIMPLE)
                except BufferError as exc:
                    _fail(c, 1, "an encoded batch item is not a contiguous buffer (%s)" % exc)
                try:
                    if view.len == 0:
                        _fail(c, 1, "an encoded batch item is empty")
                    status = mf_writer_put(&c.w, <const char *>view.buf, <size_t>view.len)
                finally:
                    PyBuffer_Release(&view)
                _put(c, status)
            else:
                _fail(c, 1, "a batch item must be a message or encoded bytes, not %s"
                      % _type_name(item))
            _put(c, mf_writer_putc(&c.w, b','))
        mf_writer_set_last(&c.w, b']')
        return _result(c)
    finally:
        _release(c)


# What encode_response / encode_error write before the id, and after it.
cdef const char *_FRAME_PREFIX = b'{"jsonrpc":"2.0","id":'
cdef const char *_AFTER_ID_RESULT = b',"result":'
cdef const char *_AFTER_ID_ERROR = b',"error":{"code":'


cpdef object error_code_of(object frame):
    """The ``code`` of the error response ``frame``, or None when it is not one.

    A frame laid out as encode_response and encode_error write them is read in place (the
    id skipped, the key after it looked at); any other frame is decoded to find out. For
    callers that map error codes to something else (an HTTP status) without decoding
    every answer."""
    cdef const char *p
    cdef Py_ssize_t n
    cdef Py_ssize_t i = 22
    cdef int64_t code = 0
    cdef bint negative = False
    cdef Py_ssize_t digits = 0
    if type(frame) is not bytes:
        return _decoded_error_code(frame)
    p = PyBytes_AS_STRING(<PyObject *>frame)
    n = PyBytes_GET_SIZE(<PyObject *>frame)
    if n < 24 or memcmp(p, _FRAME_PREFIX, 22) != 0:
        return _decoded_error_code(frame)
    if p[i] == b'"':
        # A string id: up to its closing quote (escapes skipped).
        i += 1
        while i < n and p[i] != b'"':
            i += 2 if p[i] == b'\\' else 1
        i += 1
    else:
        while i < n and p[i] != b',':
            i += 1
    if n - i > 10 and memcmp(p + i, _AFTER_ID_RESULT, 10) == 0:
        return None
    if n - i > 17 and memcmp(p + i, _AFTER_ID_ERROR, 17) == 0:
        i += 17
        if p[i] == b'-':
            negative = True
            i += 1
        while i < n and b'0' <= p[i] <= b'9' and digits < 18:
            code = code * 10 + (p[i] - 48)  # - '0'
            digits += 1
            i += 1
        if digits and i < n and (p[i] == b',' or p[i] == b'}'):
            return -code if negative else code
    return _decoded_error_code(frame)


cdef object _decoded_error_code(object frame):
    from mcpfast._core.decode import DecodeError, decode

    try:
        message = decode(frame)
    except DecodeError:
        return None
    return message.code if type(message) is ErrorResponse else None
