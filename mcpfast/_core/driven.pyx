"""DrivenCall: the rest of a request handler's coroutine, driven by the done-callbacks of
the futures it awaits instead of by an asyncio task of its own.

A handler begun inline (the server pipeline's eager chain) that suspends on a future
(a forwarded request's answer) would otherwise cost a task per request: its creation,
its registration, a frame per resumed step. A DrivenCall steps the coroutine, in the
contextvars context its first step ran in, straight from the awaited future's callback
and reports the outcome to ``on_done(result, exc)`` (or, for a session in C, to a
:class:`DrivenEnd`); the session finishes the request from there. ``cancel(msg)``
cancels the awaited future, whose CancelledError is then thrown into the coroutine, as
asyncio.Task.cancel does.

``driven_future(future, settle, argument)`` is the same call with no coroutine at all: its
end is what ``settle(future, argument)`` returns (or raises) once the future is done, the
whole handler where the answer needs one call of Python to be made (the gateway's
forwarded call). Why ``argument``: settle can then be one bound method for every call
(no closure and cells made per call, each a container the garbage collector tracks).

Only for code that needs no current task (``asyncio.current_task()`` is not this call;
``asyncio.timeout`` needs one): the chain opts in per request (see
mcpfast.server.middleware.pipeline.without_task).

Why compiled: every forwarded call's wake-up and end ran here, four Python frames per
request; in C a step is the context entered, ``PyIter_Send`` (no StopIteration made for
the coroutine's return) and the context left.
"""
cimport cython
from cpython.object cimport PyObject
from cpython.ref cimport Py_XDECREF

from asyncio import CancelledError as _CancelledError
from asyncio import InvalidStateError as _InvalidStateError
from asyncio import get_running_loop as _get_running_loop
from contextvars import Context as _Context


cdef extern from "Python.h":
    # Public API since 3.7 (contexts) and 3.10 (PyIter_Send; the project needs 3.10).
    int PyContext_Enter(object context) except -1
    int PyContext_Exit(object context) except -1
    # PYGEN_RETURN (0): *result is the return value; PYGEN_NEXT (1): what it yielded;
    # PYGEN_ERROR (-1): an exception is set. *result is a new reference unless an error.
    int PyIter_Send(object iterator, object arg, PyObject **result) except? -1
    int PYGEN_RETURN


@cython.auto_pickle(False)
cdef class DrivenEnd:
    """Receives a DrivenCall's end in C (its ``driven_end``, which a compiled subclass
    defines: :class:`mcpfast._core.dispatch.SessionCore`)."""

    cdef int driven_end(self, object tag, object result, object exc) except -1:
        raise NotImplementedError(f"{type(self).__name__} does not define driven_end()")


@cython.final
@cython.auto_pickle(False)
cdef class DrivenCall:
    """A suspended coroutine and what it awaits (module docstring); the session's TaskLike.

    ``DrivenCall(coroutine, context, yielded)``: ``yielded`` is what the coroutine's first
    step (run in ``context``, a contextvars.Context) yielded.
    """

    def __init__(self, coroutine, context, yielded):
        if type(context) is not _Context:
            raise TypeError(f"context must be a contextvars.Context, not {type(context).__name__}")
        self._coroutine = coroutine
        self._context = context
        self._yielded = yielded
        self._waiter = None
        self._on_done = None
        self._owner = None
        self._tag = None
        self._done = False
        self._cancelling = False
        self._cancel_message = None
        self._settle = None
        self._argument = None
        self._observer = None
        self._observer_argument = None
        self._observers = None

    def observe(self, fn, argument=None):
        """``fn(argument, result, exc)`` is called with the end (``exc`` None when it
        returned) before it is reported: the pipeline's around routes that wrap this call,
        in the order they were added (the innermost first). What an observer raises is
        reported as unraisable, never as the request's outcome."""
        if not callable(fn):
            raise TypeError(f"an observer must be callable, not {type(fn).__name__}")
        if self._done:
            raise RuntimeError("this DrivenCall has ended")
        if self._observer is None:
            self._observer = fn
            self._observer_argument = argument
            return
        if self._observers is None:
            self._observers = []
        self._observers.append((fn, argument))

    def start(self, on_done):
        """Wait for what the first step awaited; ``on_done(result, exc)`` at the end."""
        self._on_done = on_done
        yielded = self._yielded
        self._yielded = None
        self._wait(yielded)

    cdef int start_for(self, DrivenEnd owner, object tag) except -1:
        self._owner = owner
        self._tag = tag
        yielded = self._yielded
        self._yielded = None
        return self._wait(yielded)

    cdef int _wait(self, object yielded) except -1:
        if type(yielded) is Answer:
            # Told at once when settled (no done-callback through the loop).
            self._waiter = yielded
            if self._cancelling:
                yielded.cancel(self._cancel_message)
            if (<Answer>yielded)._state != 0:
                return self._answered(yielded)
            (<Answer>yielded)._call = self
            return 0
        if yielded is None:
            # A bare yield (asyncio.sleep(0)): the next step on the loop's next turn.
            _get_running_loop().call_soon(self._next_step)
            return 0
        if getattr(yielded, "_asyncio_future_blocking", None) is None:
            return self._step(True, RuntimeError(f"a driven call awaited {yielded!r}, not a future"))
        yielded._asyncio_future_blocking = False
        self._waiter = yielded
        if self._cancelling:
            yielded.cancel(self._cancel_message)
        yielded.add_done_callback(self._wakeup)
        return 0

    def _next_step(self):
        # After a bare yield: the coroutine goes on, nothing sent.
        self._step(False, None)

    def _wakeup(self, future):
        # The awaited future is done: its outcome sent (or thrown) into the coroutine.
        self._answered(future)

    cdef int _answered(self, object future) except -1:
        settle = self._settle
        if settle is not None:
            # (driven_future) The end is what settle makes of the future. Both let go
            # first: the argument may hold the request, whose context holds this call.
            argument = self._argument
            self._settle = None
            self._argument = None
            self._waiter = None
            self._cancelling = False
            try:
                result = settle(future, argument)
            except BaseException as exc:  # the request's outcome, reported
                return self._end(None, exc)
            return self._end(result, None)
        try:
            value = future.result()
        except BaseException as exc:  # thrown into the coroutine, as a task does
            return self._step(True, exc)
        return self._step(False, value)

    cdef int _step(self, bint throw, object value) except -1:
        cdef PyObject *out = NULL
        cdef int sent
        self._waiter = None
        if self._cancelling and not throw:
            # Cancelled between two steps (no future to cancel then): thrown in now.
            throw = True
            value = _CancelledError(self._cancel_message)
        self._cancelling = False
        context = self._context
        if throw:
            try:
                PyContext_Enter(context)
                try:
                    yielded = self._coroutine.throw(value)
                finally:
                    PyContext_Exit(context)
            except StopIteration as stop:
                return self._end(stop.value, None)
            except BaseException as exc:  # the request's outcome, reported
                return self._end(None, exc)
            return self._wait(yielded)
        try:
            PyContext_Enter(context)
            try:
                sent = PyIter_Send(self._coroutine, value, &out)
            finally:
                PyContext_Exit(context)
        except BaseException as exc:  # the request's outcome, reported
            return self._end(None, exc)
        yielded = <object>out
        Py_XDECREF(out)
        if sent == PYGEN_RETURN:
            return self._end(yielded, None)
        return self._wait(yielded)

    cdef int _end(self, object result, object exc) except -1:
        self._done = True
        observer = self._observer
        if observer is not None:
            argument = self._observer_argument
            more = self._observers
            self._observer = None
            self._observer_argument = None
            self._observers = None
            _tell(observer, argument, result, exc)
            if more is not None:
                for observer, argument in more:
                    _tell(observer, argument, result, exc)
        owner = self._owner
        if owner is not None:
            tag = self._tag
            self._owner = None
            self._tag = None
            return (<DrivenEnd>owner).driven_end(tag, result, exc)
        on_done = self._on_done
        self._on_done = None
        if on_done is not None:
            on_done(result, exc)
        return 0

    def done(self):
        """Whether the coroutine has ended."""
        return self._done

    def cancel(self, msg=None):
        """Throw CancelledError(msg) into the coroutine where it waits; False when done."""
        if self._done:
            return False
        self._cancelling = True
        self._cancel_message = msg
        waiter = self._waiter
        if waiter is not None:
            waiter.cancel(msg)
        return True

    def add_done_callback(self, fn):
        """Not supported (TaskLike): the session takes the end through ``start``."""
        raise NotImplementedError("a DrivenCall reports its end to the session's on_done")

    def __await__(self):
        # Awaited by a caller that is not the session: its outcome through a future.
        return _outcome(self).__await__()


cdef void _tell(object observer, object argument, object result, object exc) noexcept:
    # (noexcept: what the observer raises is written as unraisable, the end goes on.)
    observer(argument, result, exc)


@cython.final
@cython.auto_pickle(False)
cdef class Answer:
    """A future for one DrivenCall made by ``driven_future``: settled (``set_result``,
    ``set_exception``, ``cancel``) it ends that call at once, in the settling call, where
    an asyncio future would schedule its done-callback on the loop's next turn. For a
    request whose answer only that call waits on (the gateway's plain forwarded call: its
    answer goes downstream while the upstream's response is being read, one loop turn and
    the callback's handle saved). Not awaitable: nothing else may wait on it."""

    def done(self):
        """Whether it was settled."""
        return self._state != 0

    def cancelled(self):
        """Whether it was cancelled."""
        return self._state == 3

    def result(self):
        """The result; raises the exception it was settled with, CancelledError when
        cancelled, InvalidStateError before it is settled."""
        if self._state == 1:
            return self._result
        if self._state == 2:
            raise self._exception
        if self._state == 3:
            raise _CancelledError(self._cancel_message) if self._cancel_message is not None else _CancelledError()
        raise _InvalidStateError("the answer is not ready")

    def exception(self):
        """The exception it was settled with (None for a result); as result() when
        cancelled or not settled."""
        if self._state == 1:
            return None
        if self._state == 2:
            return self._exception
        return self.result()

    def set_result(self, result):
        """Settle it with ``result`` (InvalidStateError when settled already)."""
        if self._state != 0:
            raise _InvalidStateError("the answer is already settled")
        self._state = 1
        self._result = result
        self._settled()

    def set_exception(self, exception):
        """Settle it with ``exception`` (an exception instance or class)."""
        if self._state != 0:
            raise _InvalidStateError("the answer is already settled")
        if isinstance(exception, type):
            exception = exception()
        if not isinstance(exception, BaseException):
            raise TypeError(f"set_exception needs an exception, not {type(exception).__name__}")
        self._state = 2
        self._exception = exception
        self._settled()

    def cancel(self, msg=None):
        """Cancel it (its call then sees CancelledError(msg)); False when settled already."""
        if self._state != 0:
            return False
        self._state = 3
        self._cancel_message = msg
        self._settled()
        return True

    cdef int _settled(self) except -1:
        call = self._call
        if call is not None:
            self._call = None
            _answer_call(call, self)
        return 0

    def __repr__(self):
        state = ("pending", "result", "exception", "cancelled")[self._state]
        return f"<Answer {state}>"


cdef void _answer_call(DrivenCall call, Answer answer) noexcept:
    # (noexcept: a failure ending the call is written as unraisable; whoever settled the
    # answer -- the upstream's reader -- goes on, as a done-callback's failure would not
    # reach the code that set an asyncio future either.)
    call._answered(answer)


def driven_future(future, settle, argument=None):
    """A DrivenCall waiting on ``future`` (an asyncio future, or an :class:`Answer`) alone:
    its end is what ``settle(future, argument)`` returns or raises once the future is done;
    ``cancel(msg)`` cancels the future (settle then sees it cancelled). Waiting on an
    Answer, the call ends in the call that settles it."""
    if type(future) is not Answer and getattr(future, "_asyncio_future_blocking", None) is None:
        raise TypeError(f"driven_future needs an asyncio future or an Answer, not {type(future).__name__}")
    if not callable(settle):
        raise TypeError(f"settle must be callable, not {type(settle).__name__}")
    cdef DrivenCall call = DrivenCall.__new__(DrivenCall)
    call._yielded = future
    call._settle = settle
    call._argument = argument
    return call


async def _outcome(DrivenCall call):
    # What awaiting a DrivenCall returns (or raises): its end, through a future.
    outcome = _get_running_loop().create_future()

    def settle(result, exc):
        if outcome.done():
            return
        if exc is None:
            outcome.set_result(result)
        elif isinstance(exc, _CancelledError):
            outcome.cancel()
        else:
            outcome.set_exception(exc)

    call.start(settle)
    try:
        return await outcome
    except _CancelledError:
        call.cancel()
        raise

