# The stream transport's per-frame work in C (stream_core.pyx): FrameCore under
# mcpfast.transports.stream.FrameProtocol.
from mcpfast._core.framing cimport LineFramer


cdef class FrameCore:
    # The StreamState's value (the _state property gives and takes the enum's members).
    cdef int state_code
    # Frames gathered for one write (a list), None when not gathering (see stream.py's send).
    cdef public object _gathered
    # The size of the pieces the gathering is written in, and that minus the bytes
    # gathered in this piece.
    cdef public Py_ssize_t _piece
    cdef public Py_ssize_t _gather_room
    # Monotonic ns of the last send written at once, and until when a send continues a burst.
    cdef public long long _last_write_ns
    cdef public long long _burst_until_ns
    # Bytes written while backed up (the write_timeout watch).
    cdef public Py_ssize_t _stall_written
    cdef public bint _client_side
    cdef public bint _frames_seen
    # The write transport's write (or a stand-in once it is lost), the conn's feed.
    cdef public object _write
    cdef public object _feed
    cdef public LineFramer _framer
    # Frames read but not handed over while our writes are backed up (a list), or None.
    cdef public object _waiting
    cdef public object _budget
    cdef public object _loop

    cdef int deliver(self, list frames) except -1
    cdef int begin_gathering(self, object frame, Py_ssize_t piece) except -1
    cdef int flush_gathered(self) except -1
