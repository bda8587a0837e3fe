"""DrivenCall: the rest of a request handler's coroutine, driven by the done-callbacks of
the futures it awaits instead of by an asyncio task of its own (stubs; the compiled
module's docstring says more)."""

import contextvars
from typing import Any, Callable, Generator, Optional, final

class DrivenEnd:
    """Receives a DrivenCall's end in C; the base of
    :class:`mcpfast._core.dispatch.SessionCore`."""

@final
class DrivenCall:
    """A suspended coroutine and what it awaits; the session's TaskLike."""

    def __init__(self, coroutine: Any, context: contextvars.Context, yielded: Any) -> None: ...
    def observe(self, fn: Callable[[Any, Any, Optional[BaseException]], None], argument: Any = None) -> None:
        """``fn(argument, result, exc)`` is called with the end before it is reported."""
    def start(self, on_done: Callable[[Any, Optional[BaseException]], None]) -> None:
        """Wait for what the first step awaited; ``on_done(result, exc)`` at the end."""
    def done(self) -> bool:
        """Whether the coroutine has ended."""
    def cancel(self, msg: Any = None) -> bool:
        """Throw CancelledError(msg) into the coroutine where it waits; False when done."""
    def add_done_callback(self, fn: Callable[[Any], Any]) -> None:
        """Not supported (TaskLike): the session takes the end through ``start``."""
    def __await__(self) -> Generator[Any, None, Any]: ...

@final
class Answer:
    """A future for one DrivenCall made by ``driven_future``: settled, it ends that call at once."""

    def done(self) -> bool:
        """Whether it was settled."""
    def cancelled(self) -> bool:
        """Whether it was cancelled."""
    def result(self) -> Any:
        """The result; raises the exception it was settled with, or CancelledError."""
    def exception(self) -> Optional[BaseException]:
        """The exception it was settled with (None for a result)."""
    def set_result(self, result: Any) -> None:
        """Settle it with ``result``."""
    def set_exception(self, exception: Any) -> None:
        """Settle it with ``exception``."""
    def cancel(self, msg: Any = None) -> bool:
        """Cancel it; False when settled already."""

def driven_future(future: Any, settle: Callable[[Any, Any], Any], argument: Any = None) -> DrivenCall:
    """A DrivenCall waiting on ``future`` (an asyncio future, or an Answer) alone: its end is what
    ``settle(future, argument)`` returns or raises once the future is done; ``cancel(msg)`` cancels the future."""
