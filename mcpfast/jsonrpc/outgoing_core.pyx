"""A session's outgoing requests started in C: :class:`OutgoingBook`, the base of
:class:`mcpfast.jsonrpc.outgoing.OutgoingRequests` (which documents the book and keeps
everything but ``start`` in Python), and the two argument rules ``start`` applies,
``check_timeout`` and ``with_progress_token``.

Why compiled: ``start`` is on the path of every request a session sends -- each call of
mcpfast's client and each call a gateway forwards upstream -- and was a Python frame of
some sixty bytecodes, plus a Python ``__init__`` of the request handle; here the handle is
made by its type's allocator and its fields set in C.
"""
cimport cython
from cpython.object cimport PyObject, PyTypeObject
from cpython.dict cimport PyDict_SetItem
from libc.math cimport INFINITY

from mcpfast._core.cpython cimport mf_writable_member_descriptor
from mcpfast._core.encode cimport encode_request
from mcpfast._core.pending cimport OutgoingCore, PendingTable

from mcpfast.jsonrpc.errors import ConnectionClosed
from mcpfast.jsonrpc.runtime import bound

cdef object _inf = float("inf")


def check_timeout(timeout):
    """None, or a positive number of seconds (math.inf: never) as a float; TypeError for
    anything but a number (bool included) or None, ValueError for one not positive."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(
            f"timeout must be a number of seconds or None, not {type(timeout).__name__}"
        )
    if not timeout > 0:
        raise ValueError(f"timeout must be positive, got {timeout!r}")
    return float(timeout)


def with_progress_token(params, token):
    """A copy of params (a dict or None) with ``_meta.progressToken`` = token (TypeError
    for params of another type, or a ``_meta`` that is not a dict)."""
    if params is None:
        return {"_meta": {"progressToken": token}}
    if not isinstance(params, dict):
        raise TypeError(
            f"a request with a progress callback needs params as a dict (to carry "
            f"_meta.progressToken), not {type(params).__name__}"
        )
    params = dict(params)
    meta = params.get("_meta")
    if meta is None:
        params["_meta"] = {"progressToken": token}
    elif isinstance(meta, dict):
        meta = dict(meta)
        meta["progressToken"] = token
        params["_meta"] = meta
    else:
        raise TypeError(f"params['_meta'] must be a dict, not {type(meta).__name__}")
    return params


cdef extern from *:
    """
    static PyObject *mf_new_request(PyObject *type) {
        /* The request handle's type's allocator, without its __init__ (the fields are
           set by the caller): tp_new of an OutgoingCore subclass. (Cython makes
           OutgoingCore.__new__(cls) a Python method call for a class it does not know.) */
        PyTypeObject *tp = (PyTypeObject *)type;
        PyObject *args = PyTuple_New(0);
        PyObject *made;
        if (args == NULL)
            return NULL;
        made = tp->tp_new(tp, args, NULL);
        Py_DECREF(args);
        return made;
    }
    """
    object mf_new_request(object type)


@cython.auto_pickle(False)
cdef class OutgoingBook:
    """The fields of a session's book of outgoing requests and its ``start``; not made
    alone: :class:`mcpfast.jsonrpc.outgoing.OutgoingRequests` subclasses it."""

    def start(self, method, params=None, *, timeout=None, progress=None, origin=None,
              raw=False, future=None):
        """Register and send one request; returns its handle. Session.send_request *is*
        this method (arguments and errors: Session.request). ``raw``: the handle's future
        gets the Response message, not its result (for a caller that passes the result on
        unread: ``messages.Verbatim``). ``future``: the handle's future, settled as the
        runtime's would be (a :class:`~mcpfast.jsonrpc.driven.Answer`: one DrivenCall
        waits on it), instead of a new one from the runtime."""
        return self.begin(method, params, timeout, progress, origin, raw, future)

    cdef object begin(self, object method, object params, object timeout, object progress,
                      object origin, bint raw, object future):
        if self._closed:
            raise ConnectionClosed("the session is closed")
        if timeout is None:
            timeout = self.default_timeout
        elif type(timeout) is not float or not timeout > 0.0:
            timeout = check_timeout(timeout)  # (a positive float, the common case, is one already)
        if progress is not None and not callable(progress):
            raise TypeError(f"progress must be callable, not {type(progress).__name__}")
        cdef PendingTable table = <PendingTable?>self._table
        cdef long long request_id = table.next_id()
        cdef object id_object = request_id
        if progress is not None:
            params = with_progress_token(params, id_object)
        frame = encode_request(id_object, method, params)
        if future is None:
            create_future = self._create_future
            if create_future is None:
                create_future = self._create_future = bound(self._runtime, "create_future")
            future = create_future()
        cdef OutgoingCore out = <OutgoingCore?>mf_new_request(self._request_type)
        out.book = self
        out.id = id_object
        out.method = method
        out.future = future
        out.on_progress = progress
        out.origin = origin
        out.timeout = timeout
        out.raw = raw
        cdef double deadline = INFINITY
        if timeout is not None and timeout != _inf:
            clock = self._time
            if clock is None:
                clock = self._time = bound(self._runtime, "time")
            deadline = clock() + <double>timeout
        # Registered before sending: a transport may deliver the response re-entrantly.
        table.add_id(request_id, out, deadline)
        if progress is not None:
            PyDict_SetItem(<dict?>self._progress, id_object, out)
        if deadline != INFINITY:
            when = self._timer_when
            if when is None or when > deadline:  # (else the timer fires soon enough already)
                self._arm_timer(deadline)
        channel = origin.channel if origin is not None else None
        try:
            if channel is None:
                self._send(frame)
            else:
                channel.send(frame)
        except BaseException:
            table.pop_id(request_id)
            (<dict>self._progress).pop(id_object, None)
            raise
        return out


cdef extern from *:
    """
    #define MF_BOOK_FIELD(tp, f) \
        MF_EXPOSE(tp, __pyx_obj_7mcpfast_7jsonrpc_13outgoing_core_OutgoingBook, f)
    #define MF_EXPOSE_BOOK_FIELDS(b_) (( \
    MF_BOOK_FIELD(b_, _send) || MF_BOOK_FIELD(b_, _runtime) || MF_BOOK_FIELD(b_, _table) || \
    MF_BOOK_FIELD(b_, _progress) || MF_BOOK_FIELD(b_, _timer_when) || \
    MF_BOOK_FIELD(b_, _closed) || MF_BOOK_FIELD(b_, default_timeout) || \
    MF_BOOK_FIELD(b_, _create_future) || MF_BOOK_FIELD(b_, _time) || \
    MF_BOOK_FIELD(b_, _request_type)) ? -1 : 0)
    """
    int MF_EXPOSE_BOOK_FIELDS(object book) except -1

# Member descriptors (which the interpreter specializes) instead of the getset properties
# Cython makes for `cdef public object` fields: the Python subclass reads them often.
# Never deleted (a deleted one would be NULL).
MF_EXPOSE_BOOK_FIELDS(OutgoingBook)
