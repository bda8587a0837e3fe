"""FakeRuntime: a Session runtime with a fake clock and no event loop.

It implements mcpfast.jsonrpc.runtime.Runtime with plain Python objects: ``time()`` is a
number the test moves with ``advance(seconds)``; ``call_at`` timers fire only inside
``advance``, in deadline order; futures and tasks are small stand-ins for asyncio's, run
step by step by ``run_ready()`` (which ``advance`` also calls). A coroutine run as a task
may await FakeFutures (``runtime.create_future()``), other tasks and coroutines doing the
same; ``await runtime.sleep(0)`` yields once. Cancellation throws asyncio.CancelledError
(only the exception class comes from asyncio; no loop exists).

Nothing here waits on the wall clock, so tests built on it have no timing races.
"""

from __future__ import annotations

import heapq
import itertools
from asyncio import CancelledError, InvalidStateError
from collections import deque
from typing import Any, Callable, Optional

__all__ = ["FakeFuture", "FakeRuntime", "FakeTask", "FakeTimer"]

_PENDING = "pending"
_DONE = "done"
_CANCELLED = "cancelled"


class FakeTimer:
    """A call_at handle: ``cancel()`` keeps it from firing."""

    __slots__ = ("when", "callback", "args", "cancelled")

    def __init__(self, when: float, callback: Callable[..., Any], args: tuple) -> None:
        self.when = when
        self.callback = callback
        self.args = args
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True

    def __repr__(self) -> str:
        state = " cancelled" if self.cancelled else ""
        return f"<FakeTimer at {self.when}{state}>"


class FakeFuture:
    """A future whose callbacks run through the runtime's ready queue (as asyncio's do)."""

    def __init__(self, runtime: FakeRuntime) -> None:
        self._runtime = runtime
        self._state = _PENDING
        self._result: Any = None
        self._exception: Optional[BaseException] = None
        self._cancel_message: Any = None
        self._callbacks: list[Callable[[FakeFuture], Any]] = []

    def done(self) -> bool:
        return self._state != _PENDING

    def cancelled(self) -> bool:
        return self._state == _CANCELLED

    def result(self) -> Any:
        if self._state == _CANCELLED:
            raise CancelledError(*(() if self._cancel_message is None else (self._cancel_message,)))
        if self._state == _PENDING:
            raise InvalidStateError("result is not set")
        if self._exception is not None:
            raise self._exception
        return self._result

    def exception(self) -> Optional[BaseException]:
        if self._state == _CANCELLED:
            raise CancelledError()
        if self._state == _PENDING:
            raise InvalidStateError("exception is not set")
        return self._exception

    def set_result(self, result: Any) -> None:
        if self._state != _PENDING:
            raise InvalidStateError(f"{self!r} is already done")
        self._result = result
        self._settle(_DONE)

    def set_exception(self, exception: BaseException) -> None:
        if self._state != _PENDING:
            raise InvalidStateError(f"{self!r} is already done")
        self._exception = exception
        self._settle(_DONE)

    def cancel(self, msg: Any = None) -> bool:
        if self._state != _PENDING:
            return False
        self._cancel_message = msg
        self._settle(_CANCELLED)
        return True

    def add_done_callback(self, fn: Callable[[FakeFuture], Any]) -> None:
        if self._state != _PENDING:
            self._runtime.call_soon(fn, self)
        else:
            self._callbacks.append(fn)

    def remove_done_callback(self, fn: Callable[[FakeFuture], Any]) -> None:
        self._callbacks = [cb for cb in self._callbacks if cb is not fn]

    def _settle(self, state: str) -> None:
        self._state = state
        callbacks, self._callbacks = self._callbacks, []
        for fn in callbacks:
            self._runtime.call_soon(fn, self)

    def __await__(self):
        if self._state == _PENDING:
            yield self
        return self.result()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._state}>"


class FakeTask(FakeFuture):
    """Runs a coroutine one step per wake-up; awaits FakeFutures (and bare yields)."""

    def __init__(self, runtime: FakeRuntime, coroutine: Any) -> None:
        super().__init__(runtime)
        self._coroutine = coroutine
        self._waiting: Optional[FakeFuture] = None
        self._must_cancel = False
        self._task_cancel_message: Any = None
        runtime.call_soon(self._step)

    def cancel(self, msg: Any = None) -> bool:
        if self.done():
            return False
        self._must_cancel = True
        self._task_cancel_message = msg
        waiting = self._waiting
        if waiting is not None:
            # Stop waiting: the next step throws CancelledError into the coroutine.
            waiting.remove_done_callback(self._wakeup)
            self._waiting = None
            self._runtime.call_soon(self._step)
        return True

    def _wakeup(self, future: FakeFuture) -> None:
        if self._waiting is future:
            self._waiting = None
            self._step()

    def _step(self) -> None:
        if self.done():
            return
        coroutine = self._coroutine
        try:
            if self._must_cancel:
                self._must_cancel = False
                message = self._task_cancel_message
                yielded = coroutine.throw(
                    CancelledError(*(() if message is None else (message,)))
                )
            else:
                yielded = coroutine.send(None)
        except StopIteration as stop:
            FakeFuture.set_result(self, stop.value)
            return
        except CancelledError as exc:
            FakeFuture.cancel(self, exc.args[0] if exc.args else None)
            return
        except BaseException as exc:  # the task's outcome, like asyncio.Task
            FakeFuture.set_exception(self, exc)
            return
        if yielded is None:
            # A bare yield (sleep(0)): run again on the next pass.
            self._runtime.call_soon(self._step)
        elif isinstance(yielded, FakeFuture):
            self._waiting = yielded
            yielded.add_done_callback(self._wakeup)
        else:
            coroutine.close()
            FakeFuture.set_exception(self, TypeError(f"a FakeTask cannot wait for {yielded!r}"))

    def set_result(self, result: Any) -> None:
        raise RuntimeError("a task's result comes from its coroutine")

    def set_exception(self, exception: BaseException) -> None:
        raise RuntimeError("a task's exception comes from its coroutine")


class _Yield:
    def __await__(self):
        yield None


class FakeRuntime:
    """The fake-clock Runtime (see the module docstring).

    ``now``: the clock (starts at ``start``); ``armed``: the ``when`` of every call_at
    made, in order; ``timers``: the live (not fired, not cancelled) timers.
    """

    timer_slack = 0.0

    def __init__(self, start: float = 1000.0) -> None:
        self.now = float(start)
        self.armed: list[float] = []
        self._heap: list[tuple[float, int, FakeTimer]] = []
        self._ready: deque[tuple[Callable[..., Any], tuple]] = deque()
        self._seq = itertools.count()

    # -- the Runtime interface -----------------------------------------------------------

    def time(self) -> float:
        return self.now

    def call_at(self, when: float, callback: Callable[..., Any], *args: Any) -> FakeTimer:
        timer = FakeTimer(when, callback, args)
        self.armed.append(when)
        heapq.heappush(self._heap, (when, next(self._seq), timer))
        return timer

    def create_future(self) -> FakeFuture:
        return FakeFuture(self)

    def create_task(self, coroutine: Any) -> FakeTask:
        return FakeTask(self, coroutine)

    # -- driving it ----------------------------------------------------------------------

    def call_soon(self, callback: Callable[..., Any], *args: Any) -> None:
        self._ready.append((callback, args))

    def sleep(self, _seconds: float = 0) -> _Yield:
        """``await runtime.sleep(0)`` inside a task: yield once (no clock involved)."""
        return _Yield()

    @property
    def timers(self) -> list[FakeTimer]:
        return sorted(
            (t for _, _, t in self._heap if not t.cancelled), key=lambda t: t.when
        )

    def run_ready(self, limit: int = 100_000) -> int:
        """Run queued callbacks and task steps until none is left; returns how many ran."""
        ran = 0
        ready = self._ready
        while ready:
            if ran >= limit:
                raise RuntimeError(f"more than {limit} callbacks: a task never settles")
            callback, args = ready.popleft()
            callback(*args)
            ran += 1
        return ran

    def advance(self, seconds: float) -> None:
        """Move the clock forward, firing due timers in order (and what they make ready)."""
        if seconds < 0:
            raise ValueError("the clock never goes back")
        target = self.now + seconds
        self.run_ready()
        heap = self._heap
        while heap and heap[0][0] <= target:
            when, _, timer = heapq.heappop(heap)
            if timer.cancelled:
                continue
            self.now = max(self.now, when)
            timer.callback(*timer.args)
            self.run_ready()
        self.now = target
        self.run_ready()

    def run(self, coroutine: Any) -> Any:
        """Run a coroutine as a task until it settles (advancing no clock); its result."""
        task = self.create_task(coroutine)
        self.run_ready()
        if not task.done():
            raise RuntimeError("the coroutine is still waiting (advance the clock?)")
        return task.result()
