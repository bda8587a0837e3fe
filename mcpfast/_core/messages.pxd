# Typed JSON-RPC 2.0 messages.  decode builds them, encode writes them, the session
# layer reads them.  Each message has at most one lazy payload (params, result or
# error.data): its simdjson tape (mf_tape; a view of the parser's tape until the next
# decode, an owned copy after that) turned into Python objects on first access, then cached.
from libc.stdint cimport uint8_t, uint32_t, uint64_t


cdef extern from "mcpfast/tape.h" nogil:
    ctypedef struct mf_tape:
        const uint64_t *words
        const uint8_t *strings
        uint64_t tape_base
        uint64_t string_base
        uint32_t ntape
        uint32_t nstrings
    char MF_TAPE_TYPE(uint64_t w)
    uint64_t MF_TAPE_PAYLOAD(uint64_t w)
    uint32_t MF_TAPE_NEXT(uint64_t w)
    uint32_t MF_TAPE_COUNT(uint64_t w)
    uint32_t MF_TAPE_COUNT_SATURATED
    const char *mf_tape_string(const mf_tape *t, uint64_t w, uint32_t *length)
    size_t mf_tape_container_next(const mf_tape *t, uint64_t w)
    size_t mf_tape_skip(const uint64_t *tape, size_t i)
    void mf_tape_view(mf_tape *t, const uint64_t *tape, size_t start, size_t end,
                      const uint8_t *string_buf)
    size_t mf_tape_copy_size(const mf_tape *t, size_t *lo, size_t *hi)
    mf_tape *mf_tape_own(void *block, const mf_tape *t, size_t lo, size_t hi)


cdef class Message:
    # _tape != NULL: payload not built yet.  _tape == &_view: a view of the parser's tape,
    # listed at index _slot of the borrowers (messages.pyx), copied before the next parse;
    # any other _tape: an owned copy, freed on build or dealloc.
    # _tape == NULL: _payload holds the value; _has_payload tells absent from null.
    cdef object _payload
    cdef mf_tape *_tape
    cdef bint _has_payload
    cdef Py_ssize_t _slot
    cdef mf_tape _view
    cdef object payload(self)
    cdef void set_payload(self, object value, bint present)
    # (name, value) pairs of the envelope and payload: what == compares and repr shows.
    cdef tuple fields(self)


cdef class Request(Message):
    cdef readonly object id
    cdef readonly str method


cdef class Notification(Message):
    cdef readonly str method


cdef class Response(Message):
    cdef readonly object id


cdef class ErrorResponse(Message):
    cdef readonly object id
    cdef readonly long long code
    cdef readonly str message


# A message's payload as a value: the encoder writes it from the message (its tape while
# unbuilt).
cdef class Verbatim:
    cdef readonly Message message


# Short strings (object keys, method names) built through a small direct-mapped cache:
# the same key decodes to the same str object, whose hash is then already known.
cdef str cached_str(const char *data, Py_ssize_t size)
# A new str from UTF-8 bytes already validated by simdjson.
cdef str make_str(const char *data, Py_ssize_t size)
# Make tape[start, end) of the document just parsed the message's lazy payload: a view
# of the parser's buffers, valid until release_borrowed() copies it.
cdef int attach_tape(Message m, const uint64_t *tape, size_t start, size_t end,
                     const uint8_t *strings) except -1
# Give every message still viewing the parser's buffers its own copy; the decoder calls it
# before each parse.  On MemoryError the views not yet copied stay listed (and valid: the
# decoder then does not parse).
cdef int release_borrowed() except -1
# Python objects for the value at index i of a tape (i advanced past it).
cdef object tape_value(const mf_tape *t, size_t *i)
