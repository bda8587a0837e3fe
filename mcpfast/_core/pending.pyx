"""PendingTable: the in-flight outgoing requests of one connection.

Ids come from a counter (``next_id``); each request waiting for its response is added with
a waiter -- whatever object the session layer wants back when the response, a timeout or a
cancellation arrives (a Future, a callback) -- and an optional deadline in monotonic
seconds.  No asyncio here: the table only stores and hands back waiters.
"""
from cpython.float cimport PyFloat_AS_DOUBLE, PyFloat_Check, PyFloat_CheckExact
from cpython.long cimport PyLong_AsLongLongAndOverflow, PyLong_Check, PyLong_CheckExact
from cpython.bool cimport PyBool_Check
from cpython.list cimport PyList_New
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF

from mcpfast._core.cpython cimport mf_writable_member_descriptor
from libc.math cimport INFINITY
from libc.stdint cimport int64_t, uint32_t
from libc.stdlib cimport free, malloc

cimport cython

from types import GenericAlias


cdef extern from *:
    """
    /* The table's reference to a waiter, handed to the caller as a new reference (no
     * refcount traffic: the reference moves out of the table). */
    static inline PyObject *mf_pending_take(void *waiter) { return (PyObject *)waiter; }

    /* tp_traverse support: visit every waiter the table holds. */
    static int mf_pending_visit(const mf_pending *t, visitproc visit, void *arg) {
        for (uint32_t i = 0; i < t->slot_top; i++)
            if (t->slots[i].waiter != NULL) Py_VISIT((PyObject *)t->slots[i].waiter);
        return 0;
    }
    """
    # Declared as returning a new reference: Cython takes ownership without an INCREF.
    # Never called with NULL.
    object mf_pending_take(void *waiter)
    # Steals the reference to item (PyList_SET_ITEM on a list fresh from PyList_New).
    void mf_list_set_item "PyList_SET_ITEM"(object lst, Py_ssize_t i, PyObject *item)
    void mf_decref "Py_DECREF"(PyObject *o)

    ctypedef int (*visitproc)(PyObject *, void *) noexcept
    ctypedef int (*traverseproc)(PyObject *, visitproc, void *) noexcept
    ctypedef int (*inquiry)(PyObject *) noexcept
    ctypedef struct PyTypeObject:
        traverseproc tp_traverse
        inquiry tp_clear
    int mf_pending_visit(const mf_pending *t, visitproc visit, void *arg) noexcept


#: The largest id ``next_id`` issues (2**60 - 1).
MAX_REQUEST_ID = (1 << 60) - 1
#: Capacity used when none is given.
DEFAULT_CAPACITY = 65536
#: The largest capacity a table accepts.
MAX_CAPACITY = MF_PENDING_MAX_CAPACITY

cdef long long _MAX_REQUEST_ID = (1 << 60) - 1


class PendingError(Exception):
    """Base class of the errors PendingTable raises."""


class DuplicateRequestId(PendingError):
    """add() was given an id that is already pending (an id collision)."""

    def __init__(self, id):
        self.id = id
        super().__init__(f"request id {id!r} is already pending")

    def __reduce__(self):
        return (type(self), (self.id,))


class PendingTableFull(PendingError):
    """add() was called while the table held `capacity` in-flight requests."""

    def __init__(self, capacity):
        self.capacity = capacity
        super().__init__(
            f"pending-request table is full: {capacity} requests already in flight "
            f"(the capacity); wait for responses or raise the capacity"
        )

    def __reduce__(self):
        return (type(self), (self.capacity,))


class IdSpaceExhausted(PendingError):
    """next_id() was called after the largest request id had been issued."""

    def __init__(self, max_id):
        self.max_id = max_id
        super().__init__(
            f"request id space exhausted: every id up to {max_id} has been issued "
            f"on this table; open a new session"
        )

    def __reduce__(self):
        return (type(self), (self.max_id,))


cdef inline int _int64_key(object id, int64_t *key) except -1:
    """1 and *key set when id is an int (not bool) that fits int64, else 0."""
    cdef int overflow = 0
    cdef long long value
    if not PyLong_CheckExact(id):
        if not PyLong_Check(id) or PyBool_Check(id):
            return 0
    value = PyLong_AsLongLongAndOverflow(id, &overflow)
    if overflow:
        return 0
    key[0] = value
    return 1


cdef inline double _deadline_value(object deadline) except? -1.0:
    """The C deadline for a deadline argument: +inf for None; TypeError/ValueError else."""
    cdef double value
    if deadline is None:
        return INFINITY
    if PyFloat_CheckExact(deadline):
        value = PyFloat_AS_DOUBLE(deadline)
    elif PyFloat_Check(deadline) or (PyLong_Check(deadline) and not PyBool_Check(deadline)):
        value = deadline
    else:
        raise TypeError(
            f"deadline must be a float (monotonic seconds) or None, "
            f"not {type(deadline).__name__}"
        )
    if value != value:
        raise ValueError("deadline must not be NaN")
    return value


@cython.final
@cython.auto_pickle(False)
cdef class PendingTable:
    """In-flight requests keyed by int id, each with a waiter and an optional deadline.

    PendingTable(capacity=65536, first_id=1): at most `capacity` requests may be pending at
    once; next_id() issues first_id, first_id + 1, ... up to MAX_REQUEST_ID (2**60 - 1).
    The table holds a reference to each waiter until the entry is popped, cancelled,
    expired or cleared.
    """

    def __cinit__(self, capacity=DEFAULT_CAPACITY, first_id=1):
        # __dealloc__ runs even when this raises: the zeroed table it sees frees nothing.
        if not PyLong_Check(capacity) or PyBool_Check(capacity):
            raise TypeError(f"capacity must be an int, not {type(capacity).__name__}")
        if not PyLong_Check(first_id) or PyBool_Check(first_id):
            raise TypeError(f"first_id must be an int, not {type(first_id).__name__}")
        if not 1 <= capacity <= MF_PENDING_MAX_CAPACITY:
            raise ValueError(
                f"capacity must be between 1 and {MF_PENDING_MAX_CAPACITY}, got {capacity}"
            )
        if not 0 <= first_id <= _MAX_REQUEST_ID:
            raise ValueError(f"first_id must be between 0 and {_MAX_REQUEST_ID}, got {first_id}")
        if mf_pending_init(&self._table, <uint32_t>capacity) != MF_PENDING_OK:
            raise MemoryError("cannot allocate the pending-request table")
        self._next_id = first_id

    def __dealloc__(self):
        self.release_all()
        mf_pending_free(&self._table)

    cdef void release_all(self) noexcept:
        # Each entry leaves the table before its reference is dropped, so code run by the
        # DECREF (a finaliser, a weakref callback) always sees a consistent table -- even
        # one that adds or clears entries; the outer loop picks up anything added.
        cdef uint32_t i
        cdef void *waiter
        while self._table.count:
            i = self._table.slot_top
            while i > 0:
                i -= 1
                waiter = mf_pending_pop_slot(&self._table, i)
                if waiter != NULL:
                    mf_decref(<PyObject *>waiter)

    cpdef long long next_id(self) except -1:
        """A fresh request id: first_id, then one more on each call.

        Raises IdSpaceExhausted once MAX_REQUEST_ID (2**60 - 1) has been issued.
        """
        cdef long long id = self._next_id
        if id > _MAX_REQUEST_ID:
            raise IdSpaceExhausted(_MAX_REQUEST_ID)
        self._next_id = id + 1
        return id

    cpdef add(self, object id, object waiter, object deadline=None):
        """Register a pending request: id -> waiter, expiring at deadline (None: never).

        id: an int (not bool) that fits in int64.  waiter: any object but None.
        deadline: monotonic seconds as a float or int, or None; NaN is refused.
        Raises TypeError, OverflowError, ValueError, DuplicateRequestId (id already
        pending) or PendingTableFull (capacity requests already pending).
        """
        cdef int64_t key
        if not _int64_key(id, &key):
            if PyLong_Check(id) and not PyBool_Check(id):
                raise OverflowError(
                    f"request id {id} does not fit in a signed 64-bit integer"
                )
            raise TypeError(f"request id must be an int, not {type(id).__name__}")
        self.add_id(key, waiter, _deadline_value(deadline))

    cdef int add_id(self, int64_t id, object waiter, double deadline) except -1:
        if waiter is None:
            raise TypeError("waiter must not be None (pop() returns None for unknown ids)")
        cdef int rc = mf_pending_add(&self._table, id, <void *>waiter, deadline)
        if rc == MF_PENDING_OK:
            Py_INCREF(waiter)  # the table's reference, dropped when the entry leaves
            return 0
        if rc == MF_PENDING_DUPLICATE:
            raise DuplicateRequestId(id)
        if rc == MF_PENDING_FULL:
            raise PendingTableFull(self._table.capacity)
        if rc == MF_PENDING_BAD_DEADLINE:
            raise ValueError("deadline must not be NaN")
        raise MemoryError("cannot grow the pending-request table")

    cpdef object pop(self, object id):
        """Remove id and return its waiter; None when id is not pending.

        Any object is accepted: ids come back from the peer, so a str, float, bool or
        out-of-range id is simply unknown.
        """
        cdef int64_t key
        if not _int64_key(id, &key):
            return None
        return self.pop_id(key)

    cdef object pop_id(self, int64_t id):
        cdef void *waiter = mf_pending_pop(&self._table, id)
        if waiter == NULL:
            return None
        return mf_pending_take(waiter)

    cpdef object cancel(self, object id):
        """Remove id (and its deadline) and return its waiter; None when not pending.

        The same operation as pop(), named for a request given up on by this side.
        """
        cdef int64_t key
        if not _int64_key(id, &key):
            return None
        return self.pop_id(key)

    cpdef list expire(self, double now):
        """Remove and return the waiters whose deadline is <= now.

        Earliest deadline first; equal deadlines in ascending id order.
        """
        if now != now:
            raise ValueError("now must not be NaN")
        cdef list expired = []
        cdef void *waiter
        cdef object owned
        while True:
            waiter = mf_pending_pop_expired(&self._table, now)
            if waiter == NULL:
                return expired
            owned = mf_pending_take(waiter)
            expired.append(owned)

    cpdef object next_deadline(self):
        """The earliest deadline of any pending request, or None when none has one."""
        cdef double deadline = mf_pending_next_deadline(&self._table)
        if deadline == INFINITY:
            return None
        return deadline

    cpdef list clear(self):
        """Remove every pending request; return their waiters in ascending id order."""
        cdef uint32_t n = self._table.count
        if n == 0:
            return []
        cdef list waiters = PyList_New(n)
        cdef mf_pending_entry *entries = <mf_pending_entry *>malloc(n * sizeof(mf_pending_entry))
        if entries == NULL:
            raise MemoryError("cannot allocate room to clear the pending-request table")
        n = mf_pending_drain(&self._table, entries)
        cdef uint32_t i
        for i in range(n):
            mf_list_set_item(waiters, i, <PyObject *>entries[i].waiter)
        free(entries)
        return waiters

    @property
    def capacity(self):
        """The most requests that may be pending at once."""
        return self._table.capacity

    def __len__(self):
        return self._table.count

    def __contains__(self, id):
        cdef int64_t key
        if not _int64_key(id, &key):
            return False
        return mf_pending_contains(&self._table, key)

    def __repr__(self):
        return f"<PendingTable {self._table.count}/{self._table.capacity} pending>"

    # PendingTable[Future] in annotations: the stub declares the class generic in its waiter.
    __class_getitem__ = classmethod(GenericAlias)


# GC support for the waiters held as pointers: a waiter that refers back to the table
# (a Future whose callback holds the session that owns the table) would otherwise form a
# cycle the collector cannot see.  Extend the slots Cython generated for the type.
cdef traverseproc _generated_traverse = (<PyTypeObject *>PendingTable).tp_traverse
cdef inquiry _generated_clear = (<PyTypeObject *>PendingTable).tp_clear


cdef int _traverse(PyObject *o, visitproc visit, void *arg) noexcept:
    cdef int rc = mf_pending_visit(&(<PendingTable>o)._table, visit, arg)
    if rc:
        return rc
    return _generated_traverse(o, visit, arg)


cdef int _clear(PyObject *o) noexcept:
    (<PendingTable>o).release_all()
    return _generated_clear(o)


(<PyTypeObject *>PendingTable).tp_traverse = _traverse
(<PyTypeObject *>PendingTable).tp_clear = _clear


@cython.auto_pickle(False)
cdef class OutgoingCore:
    """The fields of a request this side sent and is waiting for: ``book``, ``id``,
    ``method``, ``future``, ``on_progress``, ``origin``, ``timeout``, ``raw`` (the base of
    :class:`mcpfast.jsonrpc.outgoing.OutgoingRequest`, which documents them). Set by a
    constructor in C: one request made per outgoing request, without a Python frame."""

    def __init__(self, book, id, method, future, on_progress, origin, timeout, raw=False):
        self.book = book
        self.id = id
        self.method = method
        self.future = future
        self.on_progress = on_progress
        self.origin = origin
        self.timeout = timeout
        self.raw = raw


# The fields as writable member descriptors (Python reads them often: the session's book),
# instead of the getset properties Cython makes for `cdef public object` fields.
cdef extern from *:
    """
    #define MF_OUTGOING(tp, f) MF_EXPOSE(tp, __pyx_obj_7mcpfast_5_core_7pending_OutgoingCore, f)
    #define MF_EXPOSE_OUTGOING(t_) (( \
    MF_OUTGOING(t_, book) || MF_OUTGOING(t_, id) || MF_OUTGOING(t_, method) || \
    MF_OUTGOING(t_, future) || MF_OUTGOING(t_, on_progress) || MF_OUTGOING(t_, origin) || \
    MF_OUTGOING(t_, timeout) || MF_OUTGOING(t_, raw)) ? -1 : 0)
    """
    int MF_EXPOSE_OUTGOING(object outgoing) except -1

MF_EXPOSE_OUTGOING(OutgoingCore)
