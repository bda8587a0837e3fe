"""The event loop mcpfast runs on: uvloop when it is installed, asyncio's own otherwise.

uvloop (libuv) moves bytes with less overhead per read and write than asyncio's selector
loop and gathers the writes of one loop iteration into one system call; it is a dependency
on Linux and macOS. Everything in mcpfast also runs on the standard loop.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from typing import Any, Awaitable, Callable, Coroutine, Iterable, Optional, TypeVar

__all__ = ["loop_factory", "new_event_loop", "run", "until_signalled", "uvloop_available"]

T = TypeVar("T")


def uvloop_available() -> bool:
    """True when uvloop can be imported."""
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return False
    return True


def loop_factory(use_uvloop: bool = True) -> Callable[[], asyncio.AbstractEventLoop]:
    """A function creating new event loops: uvloop's when wanted and installed."""
    if use_uvloop:
        try:
            import uvloop
        except ImportError:
            pass
        else:
            return uvloop.new_event_loop
    return asyncio.new_event_loop


def new_event_loop(use_uvloop: bool = True) -> asyncio.AbstractEventLoop:
    """A new event loop (uvloop's when wanted and installed); not set as current."""
    return loop_factory(use_uvloop)()


def run(
    main: Coroutine[Any, Any, T], *, use_uvloop: bool = True, debug: Optional[bool] = None
) -> T:
    """Run coroutine main to completion on a new loop (uvloop when installed) and return its result.

    Like asyncio.run: the loop is closed afterwards, remaining tasks are cancelled and async
    generators finalized. use_uvloop=False forces the standard asyncio loop.
    """
    if not asyncio.iscoroutine(main):
        raise TypeError(f"run() needs a coroutine, not {type(main).__name__}")
    factory = loop_factory(use_uvloop)
    if sys.version_info >= (3, 11):
        with asyncio.Runner(debug=debug, loop_factory=factory) as runner:
            return runner.run(main)
    # Python 3.10 has no loop_factory: swap the policy for the duration of the run.
    if factory is asyncio.new_event_loop:
        return asyncio.run(main, debug=debug)
    import uvloop

    previous = asyncio.get_event_loop_policy()
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    try:
        return asyncio.run(main, debug=debug)
    finally:
        asyncio.set_event_loop_policy(previous)


async def until_signalled(main: Awaitable[T],
                          signals: Iterable[int] = (signal.SIGTERM,)) -> Optional[T]:
    """Await ``main``; one of ``signals`` (SIGTERM unless told) cancels it, the way Ctrl-C
    cancels the main task under :func:`run`, so that a server shuts down gracefully when
    a process manager stops it. Returns main's result, or None when a signal stopped it.

    Where signal handlers cannot be installed (not the main thread, Windows) it is just
    ``await main``.
    """
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    received: list[int] = []

    def stop(number: int) -> None:
        received.append(number)
        task.cancel()  # a second signal interrupts the graceful part too

    installed = []
    for number in signals:
        try:
            loop.add_signal_handler(number, stop, number)
        except (NotImplementedError, RuntimeError, ValueError):
            continue
        installed.append(number)
    try:
        return await main
    except asyncio.CancelledError:
        if not received:
            raise
        if sys.version_info >= (3, 11):
            task.uncancel()
        return None
    finally:
        for number in installed:
            loop.remove_signal_handler(number)
