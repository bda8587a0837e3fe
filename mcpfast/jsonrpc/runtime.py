"""Runtime: where a Session gets its futures, tasks, timers and clock.

The session core never touches an event loop itself (the split asyncpg makes between its
CoreProtocol and the BaseProtocol that owns the loop): everything time- or
scheduling-related goes through one small :class:`Runtime`. The default,
:class:`AsyncioRuntime`, is a thin wrapper over an asyncio (or uvloop) loop; a test passes
a runtime with a fake clock and drives ``Session.feed`` without any loop at all.

What the session asks of a runtime:

``time()``
    The clock timeouts are measured on (seconds, monotonic).
``call_at(when, callback, *args)``
    Run ``callback(*args)`` once ``time() >= when``; returns a handle with ``cancel()``.
    A runtime may run it up to ``timer_slack`` seconds early (asyncio does, by one clock
    tick); the session expires deadlines with that slack so such a wake-up is not wasted.
``create_future()``
    A future (``done``, ``result``, ``exception``, ``set_result``, ``set_exception``,
    ``cancel``, ``add_done_callback``, awaitable) that outgoing requests settle.
``create_task(coroutine)``
    Run a coroutine (an async handler); returns a handle with ``cancel(msg)``, ``done()``
    and ``add_done_callback``. Cancellation is delivered as ``asyncio.CancelledError``
    (the exception class is the convention; no loop is implied).

Both ``create_future`` and ``create_task`` raise RuntimeError when the runtime cannot
schedule anything (AsyncioRuntime without a loop, outside a running one): sync handlers
never need them.
"""

from __future__ import annotations

import asyncio
import time
from asyncio import get_running_loop
from typing import (
    Any,
    Callable,
    Coroutine,
    Generator,
    Optional,
    Protocol,
    runtime_checkable,
)

__all__ = ["AsyncioRuntime", "FutureLike", "Runtime", "TaskLike", "TimerHandle", "as_runtime",
           "bound"]


class TimerHandle(Protocol):
    """A scheduled callback that can still be called off."""

    def cancel(self) -> None: ...


class FutureLike(Protocol):
    """The part of asyncio.Future the session uses."""

    def done(self) -> bool: ...

    def result(self) -> Any: ...

    def exception(self) -> Optional[BaseException]: ...

    def set_result(self, result: Any) -> None: ...

    def set_exception(self, exception: BaseException) -> None: ...

    def cancel(self, msg: Any = None) -> bool: ...

    def add_done_callback(self, fn: Callable[[Any], Any]) -> None: ...

    def __await__(self) -> Generator[Any, None, Any]: ...


class TaskLike(Protocol):
    """The part of asyncio.Task the session uses."""

    def done(self) -> bool: ...

    def cancel(self, msg: Any = None) -> bool: ...

    def add_done_callback(self, fn: Callable[[Any], Any]) -> None: ...


@runtime_checkable
class Runtime(Protocol):
    """Futures, tasks, timers and the clock of a Session (see the module docstring)."""

    timer_slack: float

    def time(self) -> float: ...

    def call_at(self, when: float, callback: Callable[..., Any], *args: Any) -> TimerHandle: ...

    def create_future(self) -> FutureLike: ...

    def create_task(self, coroutine: Coroutine[Any, Any, Any]) -> TaskLike: ...


# asyncio runs a timer up to one clock tick early.
_ASYNCIO_SLACK = time.get_clock_info("monotonic").resolution


class AsyncioRuntime:
    """The default Runtime: an asyncio (or uvloop) event loop.

    loop: the loop to use; None uses the loop running at each call (so a Session can be
    made before the loop starts, as long as it is used from inside it).
    """

    __slots__ = ("_loop",)

    timer_slack = _ASYNCIO_SLACK

    def __init__(self, loop: Optional[asyncio.AbstractEventLoop] = None) -> None:
        self._loop = loop

    @property
    def loop(self) -> Optional[asyncio.AbstractEventLoop]:
        """The loop given at construction (None: the running loop at each call)."""
        return self._loop

    def time(self) -> float:
        return (self._loop or get_running_loop()).time()

    def call_at(self, when: float, callback: Callable[..., Any], *args: Any) -> TimerHandle:
        return (self._loop or get_running_loop()).call_at(when, callback, *args)

    def create_future(self) -> asyncio.Future:
        return (self._loop or get_running_loop()).create_future()

    def create_task(self, coroutine: Coroutine[Any, Any, Any]) -> asyncio.Task:
        return (self._loop or get_running_loop()).create_task(coroutine)

    def bound(self, name: str) -> Callable[..., Any]:
        """The loop's own method ``name`` (``create_task``, ``create_future``, ``time``) of
        the loop (the running one when none was given). RuntimeError without a loop."""
        return getattr(self._loop or get_running_loop(), name)

    def __repr__(self) -> str:
        return f"<AsyncioRuntime loop={self._loop!r}>"


_RUNNING_LOOP_RUNTIME = AsyncioRuntime()


def as_runtime(runtime: Optional[Runtime] = None,
               loop: Optional[asyncio.AbstractEventLoop] = None) -> Runtime:
    """The runtime a Session uses: ``runtime`` when given, else an AsyncioRuntime over
    ``loop`` (None: the running loop). Giving both is a TypeError."""
    if runtime is not None:
        if loop is not None:
            raise TypeError("give a Session either runtime= or loop=, not both")
        for name in ("time", "call_at", "create_future", "create_task"):
            if not callable(getattr(runtime, name, None)):
                raise TypeError(f"runtime must have a {name}() method (see Runtime)")
        return runtime
    if loop is None:
        return _RUNNING_LOOP_RUNTIME
    return AsyncioRuntime(loop)


def bound(runtime: Runtime, name: str) -> Callable[..., Any]:
    """``runtime.<name>`` as one callable to keep: for the asyncio runtime the loop's own
    (C) method, so that a Session, which lives on one loop, pays one call per task, future
    or clock reading instead of a Python call and a running-loop lookup (a getpid system
    call) each time. Resolve it from inside the loop (RuntimeError otherwise)."""
    if isinstance(runtime, AsyncioRuntime):
        return runtime.bound(name)
    method: Callable[..., Any] = getattr(runtime, name)
    return method
