"""DrivenCall: the rest of a request handler's coroutine, driven by the done-callbacks of
the futures it awaits instead of by an asyncio task of its own.

A handler begun inline (the server pipeline's eager chain) that suspends on a future
(a forwarded request's answer) would otherwise cost a task per request: its creation,
its registration, a frame per resumed step. A DrivenCall steps the coroutine, in the
contextvars context its first step ran in, straight from the awaited future's callback
and reports the outcome to ``on_done(result, exc)``; the session finishes the request
from there. ``cancel(msg)`` cancels the awaited future, whose CancelledError is then
thrown into the coroutine, as asyncio.Task.cancel does.

Only for code that needs no current task (``asyncio.current_task()`` is not this call;
``asyncio.timeout`` needs one): the chain opts in per request (see
mcpfast.server.middleware.pipeline.without_task).
"""

from __future__ import annotations

import contextvars
from asyncio import CancelledError, get_running_loop
from typing import Any, Callable, Optional

__all__ = ["DrivenCall"]


class DrivenCall:
    """A suspended coroutine and what it awaits (module docstring); the session's TaskLike."""

    __slots__ = ("_coroutine", "_context", "_yielded", "_waiter", "_on_done", "_done", "_cancel_message",
                 "_cancelling")

    def __init__(self, coroutine: Any, context: contextvars.Context, yielded: Any) -> None:
        self._coroutine = coroutine
        self._context = context
        self._yielded = yielded
        self._waiter: Any = None
        self._on_done: Optional[Callable[[Any, Optional[BaseException]], None]] = None
        self._done = False
        self._cancelling = False
        self._cancel_message: Any = None

    def start(self, on_done: Callable[[Any, Optional[BaseException]], None]) -> None:
        """Wait for what the first step awaited; ``on_done(result, exc)`` at the end."""
        self._on_done = on_done
        yielded, self._yielded = self._yielded, None
        self._wait(yielded)

    def _wait(self, yielded: Any) -> None:
        if yielded is None:
            # A bare yield (asyncio.sleep(0)): the next step on the loop's next turn.
            get_running_loop().call_soon(self._step, False, None)
            return
        if getattr(yielded, "_asyncio_future_blocking", None) is None:
            self._step(True, RuntimeError(f"a driven call awaited {yielded!r}, not a future"))
            return
        yielded._asyncio_future_blocking = False
        self._waiter = yielded
        if self._cancelling:
            yielded.cancel(self._cancel_message)
        yielded.add_done_callback(self._wakeup)

    def _wakeup(self, future: Any) -> None:
        try:
            value = future.result()
        except BaseException as exc:  # noqa: BLE001 -- thrown into the coroutine, as a task does
            self._step(True, exc)
            return
        if self._cancelling:
            self._step(False, value)
            return
        # The common wake-up (an answer, no cancellation): _step and _end inline, every
        # driven request's last step.
        self._waiter = None
        try:
            yielded = self._context.run(self._coroutine.send, value)
        except StopIteration as stop:
            self._done = True
            on_done, self._on_done = self._on_done, None
            if on_done is not None:
                on_done(stop.value, None)
        except BaseException as exc:  # noqa: BLE001 -- the request's outcome, reported
            self._end(None, exc)
        else:
            self._wait(yielded)

    def _step(self, throw: bool, value: Any) -> None:
        self._waiter = None
        if self._cancelling and not throw:
            # Cancelled between two steps (no future to cancel then): thrown in now.
            throw, value = True, CancelledError(self._cancel_message)
        self._cancelling = False
        coroutine = self._coroutine
        try:
            yielded = self._context.run(coroutine.throw if throw else coroutine.send, value)
        except StopIteration as stop:
            self._end(stop.value, None)
        except BaseException as exc:  # noqa: BLE001 -- the request's outcome, reported
            self._end(None, exc)
        else:
            self._wait(yielded)

    def _end(self, result: Any, exc: Optional[BaseException]) -> None:
        self._done = True
        on_done, self._on_done = self._on_done, None
        if on_done is not None:
            on_done(result, exc)

    def done(self) -> bool:
        """Whether the coroutine has ended."""
        return self._done

    def cancel(self, msg: Any = None) -> bool:
        """Throw CancelledError(msg) into the coroutine where it waits; False when done."""
        if self._done:
            return False
        self._cancelling = True
        self._cancel_message = msg
        waiter = self._waiter
        if waiter is not None:
            waiter.cancel(msg)
        return True

    def add_done_callback(self, fn: Callable[[Any], Any]) -> None:  # TaskLike; the session uses on_done
        raise NotImplementedError("a DrivenCall reports its end to the session's on_done")

    def __await__(self) -> Any:
        # Awaited by a caller that is not the session: its outcome through a future.
        outcome = get_running_loop().create_future()

        def settle(result: Any, exc: Optional[BaseException]) -> None:
            if outcome.done():
                return
            if exc is None:
                outcome.set_result(result)
            elif isinstance(exc, CancelledError):
                outcome.cancel()
            else:
                outcome.set_exception(exc)

        self.start(settle)
        try:
            return (yield from outcome.__await__())
        except CancelledError:
            self.cancel()
            raise
