# Newline-delimited framing with zero-copy frames.  LineFramer copies incoming bytes once
# into a FrameBuffer and hands out each complete line as a read-only memoryview of it;
# the decoder cimports FrameBuffer / has_frame_padding to parse such a view in place,
# because every byte range a FrameBuffer exports has FRAME_PADDING readable bytes after it.
cimport cython
from cpython.object cimport PyObject, PyTypeObject
from cpython.memoryview cimport PyMemoryView_Check


cpdef enum:
    # Readable bytes guaranteed after the end of any buffer exported by a FrameBuffer
    # (simdjson's SIMDJSON_PADDING).
    FRAME_PADDING = 64
    # LineFramer's max_frame_size when none is given: 16 MiB.
    DEFAULT_MAX_FRAME_SIZE = 16777216


from mcpfast._core.cpython cimport memoryview_base, type_of


@cython.final
cdef class FrameBuffer:
    # Owns one allocation of `capacity` bytes, every byte of it initialized.  Buffers it
    # exports are read-only and lie inside [0, capacity - FRAME_PADDING), so FRAME_PADDING
    # readable bytes always follow their end inside the same allocation.
    cdef char *data
    cdef readonly Py_ssize_t capacity
    # Py_buffers currently exported; the owner may move or free bytes only when 0.
    # Frame views narrowed from one memoryview share that view's single export.
    cdef readonly Py_ssize_t exports

    # A new read-only memoryview of the whole usable range (one export).
    cdef object whole(self)
    # Changes the allocation size, keeping the first min(old, new) bytes; requires no
    # exports.
    cdef int resize(self, Py_ssize_t capacity) except -1


# A FrameBuffer of `capacity` bytes, all zero.
cdef FrameBuffer new_frame_buffer(Py_ssize_t capacity)


cdef inline bint has_frame_padding(object frame):
    """True when frame is a memoryview over a FrameBuffer.

    Then any contiguous buffer obtained from it (PyObject_GetBuffer) is followed by
    FRAME_PADDING readable bytes inside the same allocation, so it can be parsed in place.
    """
    cdef PyObject *base
    if not PyMemoryView_Check(frame):
        return False
    base = memoryview_base(frame)
    return base != NULL and type_of(base) == <PyTypeObject *>FrameBuffer


@cython.final
cdef class LineFramer:
    cdef FrameBuffer _buf
    # The unterminated line being assembled is _buf[_start:_end]; every byte of it has
    # been scanned already (it holds no newline), so scanning resumes at _end.
    cdef Py_ssize_t _start
    cdef Py_ssize_t _end
    cdef readonly Py_ssize_t max_frame_size
    # Largest slice of one feed() copied in at a time: keeps memory bounded by the
    # limit when one call brings a huge line.
    cdef Py_ssize_t _piece
    # Largest capacity ever needed: a partial line at the limit plus one piece.
    cdef Py_ssize_t _max_capacity
    # An oversize line was reported and its bytes are skipped up to the next newline.
    cdef bint _discarding
    cdef bint _closed
    # Inside feed()/close(): guards against re-entry from code run by the GC.
    cdef bint _busy

    cpdef list feed(self, object data)
    cpdef list close(self)
    cdef list _feed(self, const char *src, Py_ssize_t size)
    cdef int _reserve(self, Py_ssize_t incoming) except -1
    cdef int _scan(self, Py_ssize_t scan_from, list out) except -1
