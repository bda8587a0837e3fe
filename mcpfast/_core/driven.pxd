# DrivenCall: a request handler's coroutine driven by its awaited futures' callbacks
# (driven.pyx). DrivenEnd: who a DrivenCall reports its end to in C (the session).

# The receiver of a DrivenCall's end without a Python call: ``tag`` is what the receiver
# gave with the call (the request's context), ``exc`` None when the coroutine returned.
cdef class DrivenEnd:
    cdef int driven_end(self, object tag, object result, object exc) except -1


cdef class DrivenCall:
    cdef object _coroutine
    # The contextvars.Context every step runs in.
    cdef object _context
    # What the first step yielded, until start().
    cdef object _yielded
    # The future the coroutine waits on (None between steps).
    cdef object _waiter
    # Where the end goes: _owner.driven_end(_tag, ...) when set, else _on_done(...).
    cdef object _on_done
    cdef DrivenEnd _owner
    cdef object _tag
    cdef bint _done
    cdef bint _cancelling
    cdef object _cancel_message
    # A call made by driven_future (no coroutine): settle(future, _argument) gives its end.
    cdef object _settle
    cdef object _argument
    # observe(fn, argument): fn(argument, result, exc) told the end before its receiver;
    # a second observer (an around route outside the first) makes it a list of pairs.
    cdef object _observer
    cdef object _observer_argument
    cdef list _observers

    # start() for a receiver in C.
    cdef int start_for(self, DrivenEnd owner, object tag) except -1
    cdef int _wait(self, object yielded) except -1
    cdef int _step(self, bint throw, object value) except -1
    cdef int _end(self, object result, object exc) except -1
    # What the awaited future's done-callback does (the future done).
    cdef int _answered(self, object future) except -1


# A future whose one waiter is a DrivenCall, told at once when it is settled.
cdef class Answer:
    # 0 pending, 1 a result, 2 an exception, 3 cancelled.
    cdef int _state
    cdef object _result
    cdef object _exception
    cdef object _cancel_message
    # The DrivenCall waiting on it (None before it waits and once told).
    cdef DrivenCall _call
    cdef int _settled(self) except -1

