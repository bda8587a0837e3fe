"""decode(frame): validate one JSON-RPC 2.0 frame with simdjson and return typed messages.

The whole frame is validated as JSON when it is decoded (invalid JSON anywhere, also inside
params or result, is a parse error then); the envelope is checked against every JSON-RPC
2.0 rule; only building the payload's Python objects is deferred until it is read.

Consistent limits, shared with the encoder: integers must fit in 64 bits (int64, or uint64
for non-negative values) -- a larger one is a parse error, as JSON peers in other languages
cannot represent it either; nesting deeper than MAX_DEPTH is a parse error; for duplicate
keys inside a payload the last one wins (as with json.loads), while a duplicate envelope
member ("id" twice, ...) makes the message invalid (-32600), since its meaning is ambiguous.
"""

cimport cython
from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.list cimport PyList_Append, PyList_New, PyList_SET_ITEM
from cpython.ref cimport Py_INCREF
from cpython.long cimport PyLong_FromLongLong, PyLong_FromUnsignedLongLong
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport realloc
from libc.string cimport memcpy, memset

from mcpfast._core.framing cimport has_frame_padding
from mcpfast._core.messages cimport (
    ErrorResponse, MF_TAPE_COUNT, MF_TAPE_COUNT_SATURATED, MF_TAPE_NEXT, MF_TAPE_TYPE, Message,
    Notification, Request,
    Response, attach_tape, cached_str, make_str, mf_tape_skip, release_borrowed,
)


from mcpfast._core.cpython cimport PyUnicode_AsUTF8AndSize, mf_call_without_gc


cdef extern from "mcpfast/dom_parse.h" nogil:
    ctypedef struct mf_parser:
        pass
    size_t MF_PADDING
    enum:
        MF_PARSE_OK
        MF_PARSE_INVALID_JSON
        MF_PARSE_BAD_UTF8
        MF_PARSE_TOO_DEEP
        MF_PARSE_NUMBER
        MF_PARSE_BIGINT
        MF_PARSE_TOO_LARGE
        MF_PARSE_NO_MEMORY
    mf_parser *mf_parser_new(size_t max_depth)
    int mf_parse(mf_parser *p, const uint8_t *buf, size_t length, const char **message)
    const uint64_t *mf_parser_tape(const mf_parser *p)
    const uint8_t *mf_parser_strings(const mf_parser *p)


cdef extern from "mcpfast/envelope.h" nogil:
    enum:
        MF_KIND_INVALID
        MF_KIND_REQUEST
        MF_KIND_NOTIFICATION
        MF_KIND_RESPONSE
        MF_KIND_ERROR
    enum:
        MF_ID_ABSENT
        MF_ID_NULL
        MF_ID_INT
        MF_ID_UINT
        MF_ID_STR
        MF_ID_BAD
    ctypedef struct mf_envelope:
        int kind
        const char *problem
        int id_kind
        int64_t id_int
        uint64_t id_uint
        const char *id_str
        uint32_t id_len
        const char *method
        uint32_t method_len
        size_t payload_start
        size_t payload_end
        int64_t code
        const char *message
        uint32_t message_len
    int mf_classify(const uint64_t *tape, const uint8_t *strings, size_t i, mf_envelope *e)


PARSE_ERROR = -32700
INVALID_REQUEST = -32600
MAX_DEPTH = 1024


class DecodeError(ValueError):
    """A frame that is not valid JSON-RPC 2.0.

    ``code`` is the JSON-RPC error code to answer with (-32700 parse error, -32600 invalid
    request), ``message`` says what is wrong, ``id`` is the request id when it could be read
    (None otherwise: answer with id null).
    """

    def __init__(self, code, message, id=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.id = id

    def __reduce__(self):
        return (type(self), (self.code, self.message, self.id))

    def __repr__(self):
        return f"DecodeError(code={self.code}, message={self.message!r}, id={self.id!r})"


cdef mf_parser *_parser = mf_parser_new(MAX_DEPTH)
if _parser is NULL:
    raise MemoryError("cannot allocate the simdjson parser")

# Frames that do not come from the LineFramer (which keeps padding after every frame) are
# copied into this buffer, which always has MF_PADDING zeroed bytes of room after them.
cdef uint8_t *_scratch = NULL
cdef size_t _scratch_capacity = 0


cdef const uint8_t *_padded_copy(const char *data, size_t size) except NULL:
    global _scratch, _scratch_capacity
    cdef size_t need = size + MF_PADDING
    cdef uint8_t *grown
    if need > _scratch_capacity:
        grown = <uint8_t *>realloc(_scratch, need)
        if grown is NULL:
            raise MemoryError(f"cannot allocate {need} bytes to decode a frame")
        _scratch = grown
        _scratch_capacity = need
        memset(_scratch + size, 0, MF_PADDING)
    memcpy(_scratch, data, size)
    return _scratch


cdef object _parse_failure(int status, const char *detail):
    if status == MF_PARSE_BAD_UTF8:
        return DecodeError(PARSE_ERROR, "Parse error: invalid UTF-8")
    if status == MF_PARSE_TOO_DEEP:
        return DecodeError(PARSE_ERROR, f"Parse error: nesting deeper than {MAX_DEPTH} levels")
    if status == MF_PARSE_BIGINT:
        return DecodeError(PARSE_ERROR, "Parse error: integer out of range (beyond 64 bits)")
    if status == MF_PARSE_NUMBER:
        return DecodeError(PARSE_ERROR, "Parse error: invalid or out-of-range number")
    if status == MF_PARSE_TOO_LARGE:
        return DecodeError(PARSE_ERROR, "Parse error: frame too large for the parser")
    if status == MF_PARSE_NO_MEMORY:
        return MemoryError("cannot allocate memory to parse a frame")
    # simdjson's messages start with the error's name ("TAPE_ERROR: ..."): keep that part.
    return DecodeError(PARSE_ERROR, "Parse error: invalid JSON ("
                       + detail.decode("utf-8", "replace").partition(":")[0] + ")")


cdef inline object _id_object(const mf_envelope *e):
    if e.id_kind == MF_ID_INT:
        return PyLong_FromLongLong(e.id_int)
    if e.id_kind == MF_ID_STR:
        return make_str(e.id_str, e.id_len)
    if e.id_kind == MF_ID_UINT:
        return PyLong_FromUnsignedLongLong(e.id_uint)
    return None


cdef inline int _attach_payload(Message m, const uint64_t *tape, const uint8_t *strings,
                                const mf_envelope *e) except -1:
    if e.payload_end != e.payload_start:
        attach_tape(m, tape, e.payload_start, e.payload_end, strings)
    return 0


cdef object _message(const uint64_t *tape, const uint8_t *strings, size_t i, bint *invalid):
    """The message at tape index i, or a DecodeError instance (and *invalid set)."""
    cdef mf_envelope e
    cdef int kind = mf_classify(tape, strings, i, &e)
    cdef Request request
    cdef Notification notification
    cdef Response response
    cdef ErrorResponse error
    if kind == MF_KIND_REQUEST:
        request = Request.__new__(Request)
        request.id = _id_object(&e)
        request.method = cached_str(e.method, e.method_len)
        _attach_payload(request, tape, strings, &e)
        return request
    if kind == MF_KIND_NOTIFICATION:
        notification = Notification.__new__(Notification)
        notification.method = cached_str(e.method, e.method_len)
        _attach_payload(notification, tape, strings, &e)
        return notification
    if kind == MF_KIND_RESPONSE:
        response = Response.__new__(Response)
        response.id = _id_object(&e)
        _attach_payload(response, tape, strings, &e)
        return response
    if kind == MF_KIND_ERROR:
        error = ErrorResponse.__new__(ErrorResponse)
        error.id = _id_object(&e)
        error.code = e.code
        error.message = make_str(e.message, e.message_len)
        _attach_payload(error, tape, strings, &e)
        return error
    invalid[0] = True
    return DecodeError(INVALID_REQUEST, "Invalid Request: " + e.problem.decode("utf-8"),
                       _id_object(&e))


@cython.binding(False)
@cython.embedsignature.format("clinic")
def decode(object frame, /):
    """Decode one frame (bytes, bytearray, memoryview or str) into typed messages.

    Returns a Request, Notification, Response or ErrorResponse; for a JSON array (a batch) a
    list with one entry per element, where an invalid element is a DecodeError instance in
    place.  Raises DecodeError for a frame that is not valid JSON (-32700), not a valid
    message (-32600, with the id when it could be read), or an empty batch (-32600).
    """
    cdef Py_buffer view
    cdef const char *data
    cdef Py_ssize_t size
    cdef const uint8_t *padded
    cdef const char *detail
    cdef int status
    # Payloads of earlier messages still viewing the parser's buffers get their own copy
    # first (on MemoryError nothing was parsed and those views stay valid).
    release_borrowed()
    if type(frame) is bytes:
        padded = _padded_copy(PyBytes_AS_STRING(frame), PyBytes_GET_SIZE(frame))
        status = mf_parse(_parser, padded, PyBytes_GET_SIZE(frame), &detail)
    elif isinstance(frame, str):
        data = PyUnicode_AsUTF8AndSize(frame, &size)
        padded = _padded_copy(data, size)
        status = mf_parse(_parser, padded, size, &detail)
    else:
        PyObject_GetBuffer(frame, &view, PyBUF_SIMPLE)
        try:
            if has_frame_padding(frame):
                # A LineFramer frame: padding follows it in its buffer, parse it in place.
                padded = <const uint8_t *>view.buf
            else:
                padded = _padded_copy(<const char *>view.buf, view.len)
            status = mf_parse(_parser, padded, view.len, &detail)
        finally:
            PyBuffer_Release(&view)
    if status != MF_PARSE_OK:
        raise _parse_failure(status, detail)
    return _messages(mf_parser_tape(_parser), mf_parser_strings(_parser))


ctypedef struct _batch_args:
    const uint64_t *tape
    const uint8_t *strings


cdef object _batch(void *arg):
    # The messages of the batch the document is; run with the collector paused (below).
    cdef const uint64_t *tape = (<_batch_args *>arg).tape
    cdef const uint8_t *strings = (<_batch_args *>arg).strings
    cdef size_t i = 2
    cdef size_t end = MF_TAPE_NEXT(tape[1]) - 1
    cdef uint32_t count = MF_TAPE_COUNT(tape[1])
    cdef uint32_t k
    cdef bint invalid = False
    cdef object batch, one
    if count < MF_TAPE_COUNT_SATURATED:
        # The tape knows the batch's length: the list is made at its size.
        batch = PyList_New(count)
        for k in range(count):
            one = _message(tape, strings, i, &invalid)
            Py_INCREF(one)
            PyList_SET_ITEM(batch, k, one)
            i = mf_tape_skip(tape, i)
    else:
        batch = []
        while i < end:
            PyList_Append(batch, _message(tape, strings, i, &invalid))
            i = mf_tape_skip(tape, i)
    return batch


cdef object _messages(const uint64_t *tape, const uint8_t *strings):
    # tape[0] is the root word; the document's value starts at index 1.
    cdef bint invalid = False
    cdef object one
    cdef _batch_args args
    if MF_TAPE_TYPE(tape[1]) != b'[':
        one = _message(tape, strings, 1, &invalid)
        if invalid:
            raise one
        return one
    if MF_TAPE_NEXT(tape[1]) == 3:
        raise DecodeError(INVALID_REQUEST, "Invalid Request: empty batch")
    # Building a batch allocates objects the collector tracks; a collection could run a
    # finalizer that decodes, overwriting the tape being read: none runs meanwhile.
    args.tape = tape
    args.strings = strings
    return mf_call_without_gc(_batch, &args)
