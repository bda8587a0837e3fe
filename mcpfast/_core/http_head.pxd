# One header line of a plain HTTP/1.1 head, read in place: shared by the request framer's
# and the client response reader's strict fast paths (inline: no module of its own).
cdef extern from "mcpfast/ascii_scan.h":
    # Where a run of bytes 0x20..0x7e (a header value's, on the fast path) ends.
    const char *mf_visible_run_end(const char *p, const char *end) noexcept nogil
    # 1 for the RFC 9110 token characters (header names), else 0.
    const unsigned char mf_tchar[256]


# Where a header's name and value lie in the bytes read.
cdef struct HeaderSpan:
    const char *name
    Py_ssize_t name_size
    const char *value
    Py_ssize_t value_size


cdef inline int head_line(const char **at, const char *end, HeaderSpan *span) noexcept nogil:
    # Reads the line at *at of a head's header section and moves *at past it: 1 for a
    # header line -- token ":" OWS value CRLF, the value non-empty, of bytes 0x20..0x7e,
    # without trailing spaces -- read into span; 0 for the blank line that ends the head;
    # -1 when the line is neither or not all there.
    cdef const char *q = at[0]
    cdef const char *name = q
    cdef const char *value
    if end - q < 2:
        return -1
    if q[0] == b'\r':
        if q[1] != b'\n':
            return -1
        at[0] = q + 2
        return 0
    while q < end and mf_tchar[<unsigned char>q[0]]:
        q += 1
    span.name = name
    span.name_size = q - name
    if q >= end or q[0] != b':' or span.name_size == 0:
        return -1
    q += 1
    while q < end and (q[0] == b' ' or q[0] == b'\t'):
        q += 1
    value = q
    q = mf_visible_run_end(q, end)
    span.value = value
    span.value_size = q - value
    if (end - q < 2 or q[0] != b'\r' or q[1] != b'\n' or span.value_size == 0
            or value[span.value_size - 1] == b' '):
        return -1
    at[0] = q + 2
    return 1


cdef enum:
    # Content-Length values with more digits than this are not read in place.
    MAX_LENGTH_DIGITS = 15


cdef inline Py_ssize_t length_value(const char *value, Py_ssize_t size) noexcept nogil:
    # A Content-Length value of 1 to MAX_LENGTH_DIGITS ASCII digits as a number; -1 for
    # any other value.
    cdef Py_ssize_t length = 0
    cdef Py_ssize_t i
    if size == 0 or size > MAX_LENGTH_DIGITS:
        return -1
    for i in range(size):
        if value[i] < b'0' or value[i] > b'9':
            return -1
        length = length * 10 + (value[i] - 48)  # - '0'
    return length
