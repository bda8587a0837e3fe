"""Newline-delimited framing with zero-copy frames.

LineFramer turns a byte stream (MCP stdio, newline-framed TCP) into frames: each complete
line, without its line ending, as a read-only memoryview of a FrameBuffer the framer owns.
Incoming bytes are copied exactly once, into that buffer; every frame is followed there by
FRAME_PADDING readable bytes, so the decoder parses it in place with no further copy.
"""
cimport cython
from cpython.buffer cimport (
    PyBUF_FORMAT,
    PyBUF_ND,
    PyBUF_SIMPLE,
    PyBUF_STRIDES,
    PyBUF_WRITABLE,
    PyBuffer_Release,
    PyObject_CheckBuffer,
    PyObject_GetBuffer,
)
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.mem cimport PyMem_RawCalloc, PyMem_RawFree, PyMem_RawRealloc
from cpython.memoryview cimport PyMemoryView_Check, PyMemoryView_FromObject, PyMemoryView_GET_BUFFER
from libc.stdint cimport uintptr_t
from libc.string cimport memchr, memcpy, memmove, memset
from posix.mman cimport MAP_ANONYMOUS, MAP_FAILED, MAP_PRIVATE, PROT_READ, PROT_WRITE, mmap, munmap

from mcpfast._core.envelope_prefix import read_prefix


from mcpfast._core.cpython cimport PY_SSIZE_T_MAX


cdef enum:
    # Smallest allocation: one 64 KiB transport read plus a partial line and padding fit.
    MIN_CAPACITY = 128 * 1024
    # Most bytes of one feed() copied in before they are scanned (see LineFramer._piece).
    PIECE = 1024 * 1024
    # An idle buffer above this size that is 4x larger than needed is shrunk, so one huge
    # frame does not pin its memory for the life of the connection.
    SHRINK_ABOVE = 1024 * 1024
    # Leading bytes of an oversize line kept to read its id from (the error path only).
    LINE_PREFIX = 1024
    # Blocks of at least this size are mapped from the system (mmap) rather than taken
    # from malloc, so that freeing one gives its memory back at once: glibc raises its
    # mmap threshold (up to 32 MiB) as large blocks are freed, then serves them from the
    # heap, which it shrinks only from the top. On a loaded machine a TCP server stayed
    # 21 MB above its start after twelve peers' 12 MB unterminated lines had all gone.
    MAP_ABOVE = 1024 * 1024

# Largest max_frame_size accepted: keeps every capacity computation far from overflow.
MAX_FRAME_SIZE_LIMIT = PY_SSIZE_T_MAX // 4

cdef char *BYTE_FORMAT = "B"


cdef inline bytes line_prefix(const char *start, Py_ssize_t size):
    # The first bytes of an oversize line, for FrameTooLarge to find its id in.
    return PyBytes_FromStringAndSize(start, size if size < LINE_PREFIX else LINE_PREFIX)


class FrameTooLarge(ValueError):
    """A line longer than the framer's max_frame_size; its bytes were dropped.

    LineFramer does not raise it: it places an instance in the list feed() or close()
    returns, where the frame would have been, and goes on with the next line.

    Attributes:
        limit: the max_frame_size in force.
        size: bytes of the line the framer had read when it reported it, not counting its
            line ending; the line's full length when its newline had been read by then.
        kind: "request" or "response" when the line's first bytes tell (see
            mcpfast._core.envelope_prefix), else None.
        request_id: the message's id when its first bytes hold it, else None.
    """

    def __init__(self, limit, size, prefix=b""):
        self.limit = limit
        self.size = size
        self.prefix = bytes(prefix)
        self.kind, self.request_id = read_prefix(self.prefix) if prefix else (None, None)
        super().__init__(
            f"frame larger than max_frame_size={limit} bytes ({size} bytes read); "
            f"dropped up to the next newline"
        )

    def __reduce__(self):
        return (type(self), (self.limit, self.size, self.prefix))


cdef inline object narrowed_view(object base, char *start, Py_ssize_t size):
    # A new memoryview sharing base's export, covering [start, start + size) instead:
    # what base[a:b] gives, without building a slice and two ints.  `base` is a 1-D
    # contiguous byte view and the new view is not yet seen by anyone, so rewriting its
    # private copy of the buffer (pointer, length, shape) is all slicing would do.
    cdef object view = PyMemoryView_FromObject(base)
    cdef Py_buffer *info
    if view is base:
        raise SystemError("PyMemoryView_FromObject returned its argument")
    info = PyMemoryView_GET_BUFFER(view)
    info.buf = start
    info.len = size
    info.shape[0] = size
    return view


cdef inline bint is_blank(const char *p, Py_ssize_t size) noexcept nogil:
    # Lines holding only JSON whitespace carry no message; a frame starts with a
    # non-blank byte almost always, so this returns on the first byte.
    cdef Py_ssize_t i
    for i in range(size):
        if p[i] != c' ' and p[i] != c'\t' and p[i] != c'\r':
            return False
    return True


@cython.final
cdef class FrameBuffer:
    """A padded block of bytes that LineFramer's frames are views of.

    Created only by LineFramer.  Supports the buffer protocol, read-only: every buffer it
    exports lies inside its first ``capacity - FRAME_PADDING`` bytes, so FRAME_PADDING
    readable bytes follow the end of any frame (the decoder relies on this).  The framer
    never changes or frees bytes of a FrameBuffer while any buffer of it is exported.
    """

    def __cinit__(self):
        self.data = NULL
        self.capacity = 0
        self.exports = 0

    def __init__(self):
        raise TypeError("FrameBuffer instances are created by LineFramer")

    def __dealloc__(self):
        release_block(self.data, self.capacity)

    def __getbuffer__(self, Py_buffer *view, int flags):
        if flags & PyBUF_WRITABLE:
            raise BufferError("FrameBuffer is read-only")
        if self.data == NULL:
            raise BufferError("FrameBuffer has no allocation")
        view.buf = self.data
        view.len = self.capacity - FRAME_PADDING
        view.readonly = 1
        view.itemsize = 1
        view.format = BYTE_FORMAT if (flags & PyBUF_FORMAT) == PyBUF_FORMAT else NULL
        view.ndim = 1
        view.shape = &view.len if (flags & PyBUF_ND) == PyBUF_ND else NULL
        view.strides = &view.itemsize if (flags & PyBUF_STRIDES) == PyBUF_STRIDES else NULL
        view.suboffsets = NULL
        view.internal = NULL
        view.obj = self
        self.exports += 1

    def __releasebuffer__(self, Py_buffer *view):
        self.exports -= 1

    def span(self, frame):
        """Offsets (start, stop) of the bytes of contiguous buffer ``frame`` in this block.

        Raises ValueError when they do not lie inside this FrameBuffer's allocation.
        """
        cdef Py_buffer view
        cdef uintptr_t base = <uintptr_t>self.data
        cdef uintptr_t at
        PyObject_GetBuffer(frame, &view, PyBUF_SIMPLE)
        try:
            at = <uintptr_t>view.buf
            if self.data == NULL or at < base or at - base + <uintptr_t>view.len > <uintptr_t>self.capacity:
                raise ValueError("the buffer does not lie inside this FrameBuffer")
            return (<Py_ssize_t>(at - base), <Py_ssize_t>(at - base) + view.len)
        finally:
            PyBuffer_Release(&view)

    def __repr__(self):
        return f"<FrameBuffer capacity={self.capacity} exports={self.exports}>"

    cdef object whole(self):
        return PyMemoryView_FromObject(self)

    cdef int resize(self, Py_ssize_t capacity) except -1:
        cdef char *data
        if self.exports:
            raise BufferError("cannot resize a FrameBuffer while views of it exist")
        if capacity < MAP_ABOVE and self.capacity < MAP_ABOVE:
            data = <char *>PyMem_RawRealloc(self.data, <size_t>capacity)
            if data == NULL:
                raise MemoryError()
            if capacity > self.capacity:
                # Keep every byte initialized: decoders read the padding by design.
                memset(data + self.capacity, 0, <size_t>(capacity - self.capacity))
        else:
            # A mapped block on either side: a new block (zeroed), the bytes kept copied.
            data = new_block(capacity)
            memcpy(data, self.data, <size_t>(capacity if capacity < self.capacity else self.capacity))
            release_block(self.data, self.capacity)
        self.data = data
        self.capacity = capacity
        return 0


cdef char *new_block(Py_ssize_t capacity) except NULL:
    # `capacity` zeroed bytes: mapped from the system from MAP_ABOVE on (see MAP_ABOVE).
    cdef void *data
    if capacity < MAP_ABOVE:
        data = PyMem_RawCalloc(<size_t>capacity, 1)
        if data == NULL:
            raise MemoryError()
        return <char *>data
    data = mmap(NULL, <size_t>capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
    if data == MAP_FAILED:
        raise MemoryError()
    return <char *>data


cdef void release_block(char *data, Py_ssize_t capacity) noexcept:
    # Frees what new_block gave for this capacity (NULL: nothing).
    if data == NULL:
        return
    if capacity < MAP_ABOVE:
        PyMem_RawFree(data)
    else:
        munmap(data, <size_t>capacity)


cdef FrameBuffer new_frame_buffer(Py_ssize_t capacity):
    cdef FrameBuffer buf = FrameBuffer.__new__(FrameBuffer)
    buf.data = new_block(capacity)
    buf.capacity = capacity
    return buf


@cython.final
cdef class LineFramer:
    """Splits a byte stream into newline-delimited frames, zero-copy.

    feed() returns, in stream order, one read-only memoryview per complete line (without
    its ``\\n`` or ``\\r\\n``) and one FrameTooLarge per line longer than max_frame_size.
    Lines holding only spaces, tabs or ``\\r`` are skipped.  A frame view stays valid and
    unchanged for as long as it is held; its ``.obj`` is a FrameBuffer.
    """

    def __cinit__(self, max_frame_size=DEFAULT_MAX_FRAME_SIZE):
        if type(max_frame_size) is bool or not isinstance(max_frame_size, int):
            raise TypeError(
                f"max_frame_size must be an int, not {type(max_frame_size).__name__}"
            )
        if max_frame_size <= 0:
            raise ValueError(f"max_frame_size must be > 0, got {max_frame_size}")
        if max_frame_size > MAX_FRAME_SIZE_LIMIT:
            raise ValueError(
                f"max_frame_size must be at most {MAX_FRAME_SIZE_LIMIT}, got {max_frame_size}"
            )
        self.max_frame_size = max_frame_size
        self._piece = PIECE
        self._max_capacity = self.max_frame_size + 1 + PIECE + FRAME_PADDING
        self._buf = None
        self._start = 0
        self._end = 0
        self._discarding = False
        self._closed = False
        self._busy = False

    @property
    def buffered(self):
        """Bytes of the unterminated line currently held (0 while skipping an oversize one)."""
        return self._end - self._start

    @property
    def closed(self):
        """True once close() was called."""
        return self._closed

    def __repr__(self):
        return (
            f"<LineFramer max_frame_size={self.max_frame_size} buffered={self._end - self._start}"
            f"{' closed' if self._closed else ''}>"
        )

    cpdef list feed(self, object data):
        """Add bytes; return the frames and FrameTooLarge errors they complete, in order."""
        cdef Py_buffer view
        if self._closed:
            raise RuntimeError("LineFramer is closed: feed() after close()")
        if self._busy:
            raise RuntimeError("LineFramer.feed() called while the framer is running")
        if type(data) is bytes:
            return self._feed(PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data))
        if not PyObject_CheckBuffer(data):
            raise TypeError(
                f"feed() takes bytes, bytearray or memoryview, not {type(data).__name__}"
            )
        if PyMemoryView_Check(data) and not data.c_contiguous:
            data = data.tobytes()
            return self._feed(PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data))
        # Holding the buffer keeps a bytearray from being resized while it is read.
        PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
        try:
            return self._feed(<const char *>view.buf, view.len)
        finally:
            PyBuffer_Release(&view)

    cpdef list close(self):
        """End of stream: return the final line if it had no newline; later feed() raises.

        A final line over the limit needs no report here: feed() reports a line as soon as
        it is certain to exceed max_frame_size, so what is still buffered is within it.
        Calling close() again returns an empty list.
        """
        cdef list out = []
        cdef FrameBuffer buf = self._buf
        cdef Py_ssize_t start = self._start
        cdef Py_ssize_t end = self._end
        if self._busy:
            raise RuntimeError("LineFramer.close() called while the framer is running")
        if self._closed:
            return out
        self._closed = True
        self._buf = None
        self._start = 0
        self._end = 0
        if buf is not None and not self._discarding:
            if end > start and buf.data[end - 1] == c'\r':
                end -= 1
            if not is_blank(buf.data + start, end - start):
                out.append(narrowed_view(buf.whole(), buf.data + start, end - start))
        self._discarding = False
        return out

    def release(self):
        """End of stream without a last line (the connection was dropped): the buffer is
        freed now rather than with the framer; later feed() raises, close() returns [].
        Frames already returned keep the block they view alive until they go."""
        if self._busy:
            raise RuntimeError("LineFramer.release() called while the framer is running")
        self._closed = True
        self._buf = None
        self._start = 0
        self._end = 0
        self._discarding = False

    cdef list _feed(self, const char *src, Py_ssize_t size):
        cdef list out = []
        cdef Py_ssize_t pos = 0
        cdef Py_ssize_t take
        cdef Py_ssize_t scan_from
        cdef const char *newline
        self._busy = True
        try:
            while pos < size:
                if self._discarding:
                    # Bytes of a reported oversize line are skipped without copying.
                    newline = <const char *>memchr(src + pos, c'\n', <size_t>(size - pos))
                    if newline == NULL:
                        break
                    pos = newline - src + 1
                    self._discarding = False
                    continue
                take = size - pos
                if take > self._piece:
                    take = self._piece
                self._reserve(take)
                # memmove: a caller may feed a view of this very buffer back in.
                memmove(self._buf.data + self._end, src + pos, <size_t>take)
                scan_from = self._end
                self._end += take
                pos += take
                self._scan(scan_from, out)
        finally:
            self._busy = False
        return out

    cdef int _reserve(self, Py_ssize_t incoming) except -1:
        # Make room for `incoming` bytes plus padding after the partial line.
        cdef FrameBuffer buf = self._buf
        cdef FrameBuffer fresh
        cdef Py_ssize_t partial = self._end - self._start
        cdef Py_ssize_t needed = partial + incoming + FRAME_PADDING
        cdef Py_ssize_t capacity
        if buf is None:
            self._buf = new_frame_buffer(needed if needed > MIN_CAPACITY else MIN_CAPACITY)
            return 0
        if buf.exports == 0:
            # No view of the block is alive: reuse it in place.
            if self._start:
                memmove(buf.data, buf.data + self._start, <size_t>partial)
                self._start = 0
                self._end = partial
            if buf.capacity < needed:
                # Doubling keeps a huge line arriving in small reads linear overall.
                capacity = 2 * buf.capacity
                if capacity > self._max_capacity:
                    capacity = self._max_capacity
                if capacity < needed:
                    capacity = needed
                buf.resize(capacity)
            elif buf.capacity > SHRINK_ABOVE and buf.capacity > 4 * needed:
                capacity = 2 * needed
                buf.resize(capacity if capacity > MIN_CAPACITY else MIN_CAPACITY)
            return 0
        if buf.capacity - self._end >= incoming + FRAME_PADDING:
            # Views are alive, but appending after the last written byte touches none of them.
            return 0
        # Views are alive and the block is full: move the partial line to a new block and
        # leave the old one to the views, which free it when the last one goes.
        fresh = new_frame_buffer(needed if needed > MIN_CAPACITY else MIN_CAPACITY)
        memcpy(fresh.data, buf.data + self._start, <size_t>partial)
        self._buf = fresh
        self._start = 0
        self._end = partial
        return 0

    cdef int _scan(self, Py_ssize_t scan_from, list out) except -1:
        # Emit every line completed by the bytes in [scan_from, _end); those before
        # scan_from were scanned already and hold no newline.
        cdef FrameBuffer buf = self._buf
        # One export of the whole block per scan; each frame is a narrowed copy of it.
        cdef object whole = None
        cdef char *data = buf.data
        cdef char *cursor = data + scan_from
        cdef char *stop = data + self._end
        cdef char *newline
        cdef Py_ssize_t start = self._start
        cdef Py_ssize_t end
        cdef Py_ssize_t limit = self.max_frame_size
        cdef Py_ssize_t partial
        while True:
            newline = <char *>memchr(cursor, c'\n', <size_t>(stop - cursor))
            if newline == NULL:
                break
            end = newline - data
            if end > start and data[end - 1] == c'\r':
                end -= 1
            cursor = newline + 1
            # State first: an exception below loses one frame, never the stream's framing.
            self._start = cursor - data
            if end - start > limit:
                out.append(FrameTooLarge(limit, end - start, line_prefix(data + start, end - start)))
            elif not is_blank(data + start, end - start):
                if whole is None:
                    whole = buf.whole()
                out.append(narrowed_view(whole, data + start, end - start))
            start = self._start
        partial = self._end - start
        # Over the limit for sure once it holds limit + 1 bytes not ending in \r (a \r there
        # may still be the line ending), or limit + 2 bytes.
        if partial > limit and (partial > limit + 1 or data[self._end - 1] != c'\r'):
            self._end = start
            self._discarding = True
            out.append(FrameTooLarge(limit, partial, line_prefix(data + start, partial)))
        return 0
