# The table of in-flight outgoing requests: request id -> waiter, with optional deadlines.
# The C structure (include/mcpfast/pending.h) stores waiters as opaque pointers; this
# module stores a PyObject* there and owns one reference to it while it is in the table.
from libc.stdint cimport int64_t, uint32_t

cimport cython


cdef extern from "mcpfast/pending.h" nogil:
    uint32_t MF_PENDING_MAX_CAPACITY
    int MF_PENDING_OK
    int MF_PENDING_DUPLICATE
    int MF_PENDING_FULL
    int MF_PENDING_NOMEM
    int MF_PENDING_BAD_DEADLINE
    int MF_PENDING_BAD_CAPACITY

    ctypedef struct mf_pending_entry:
        int64_t id
        void *waiter

    ctypedef struct mf_pending:
        uint32_t count
        uint32_t capacity
        uint32_t slot_top

    int mf_pending_init(mf_pending *t, uint32_t capacity)
    void mf_pending_free(mf_pending *t)
    bint mf_pending_contains(const mf_pending *t, int64_t id)
    int mf_pending_add(mf_pending *t, int64_t id, void *waiter, double deadline)
    void *mf_pending_pop(mf_pending *t, int64_t id)
    double mf_pending_next_deadline(const mf_pending *t)
    void *mf_pending_pop_expired(mf_pending *t, double now)
    void *mf_pending_pop_slot(mf_pending *t, uint32_t i)
    uint32_t mf_pending_drain(mf_pending *t, mf_pending_entry *out)


@cython.final
cdef class PendingTable:
    cdef mf_pending _table
    cdef long long _next_id
    # Always None.  A Python-object field is what makes Cython give the type GC support;
    # the module then extends tp_traverse/tp_clear to reach the waiters held as pointers.
    cdef object _gc_marker

    cpdef long long next_id(self) except -1
    cpdef add(self, object id, object waiter, object deadline=*)
    cpdef object pop(self, object id)
    cpdef object cancel(self, object id)
    cpdef list expire(self, double now)
    cpdef object next_deadline(self)
    cpdef list clear(self)

    # C-typed entry points for Cython callers that already hold a C id and deadline
    # (deadline: +inf for none).
    cdef int add_id(self, int64_t id, object waiter, double deadline) except -1
    cdef object pop_id(self, int64_t id)
    # Remove every waiter, dropping the table's references (dealloc and GC clear).
    cdef void release_all(self) noexcept


# The fields of one outgoing request (mcpfast.jsonrpc.outgoing.OutgoingRequest, its
# Python subclass, documents them): the waiter a session keeps in its PendingTable, read
# in C where the session resolves it (mcpfast._core.dispatch).
cdef class OutgoingCore:
    cdef object book
    cdef object id
    cdef object method
    cdef object future
    cdef object on_progress
    cdef object origin
    cdef object timeout
    cdef object raw
