"""Helpers for calling functions on a hot path (stubs; the compiled module's docstring
says what ``step``, ``exact_kwargs``, ``Invoker``, ``Template`` and ``KeywordCall`` do and
why)."""

from contextvars import ContextVar
from typing import Any, Callable, Container, Coroutine, Generator, Iterator, TypeVar

_R = TypeVar("_R")
_S = TypeVar("_S")

def step(coroutine: Coroutine[Any, Any, _R] | Generator[Any, Any, _R] | Iterator[Any],
         suspended: Callable[[Any, Any], _S]) -> _R | _S:
    """Resume ``coroutine`` once with None: its return value if it finished, else
    ``suspended(coroutine, yielded)`` (see the module docstring)."""

def exact_kwargs(names: tuple[str, ...], types: tuple[type, ...], defaults: tuple[Any, ...],
                 required: object, otherwise: Callable[[Any], _R], positional: bool = False
                 ) -> Callable[[Any], dict[str, Any] | tuple[Any, ...] | _R]:
    """``take(arguments)``: a new dict of keyword arguments when ``arguments`` has exactly
    the expected shape, else ``otherwise(arguments)`` (see the module docstring)."""

def track_context() -> None:
    """From now on every Invoker sets its ``var`` to the request's ctx while ``fn`` runs."""

class Invoker:
    """``run(args, kwargs, ctx, extra)`` (see the module docstring)."""

    def __init__(self, fn: Callable[..., Any], at_once: bool, finish: Callable[[Any, Any], Any],
                 fail: Callable[[Exception, Any], Any],
                 passthrough: tuple[type[BaseException], ...], signal: type[BaseException],
                 suspended: Callable[[Any, Any], Any], var: ContextVar[Any],
                 later: Callable[..., Any], plain: Container[object],
                 is_awaitable: Callable[[Any], bool], text: Template | None = None) -> None: ...
    def __call__(self, args: tuple[Any, ...], kwargs: dict[str, Any], ctx: Any,
                 extra: Any) -> Any: ...

class KeywordCall:
    """``call(arguments, ctx, extra)`` (see the module docstring)."""

    def __init__(self, take: Callable[[Any], dict[str, Any]], refused: type[BaseException],
                 refuse: Callable[[Any], Any], ctx_name: str | None,
                 run: Callable[[tuple[Any, ...], dict[str, Any], Any, Any], Any]) -> None: ...
    def __call__(self, arguments: Any, ctx: Any, extra: Any) -> Any: ...
    def call(self, arguments: Any, ctx: Any, extra: Any) -> Any:
        """As calling it, without the tuple of arguments an instance call builds."""

class Template:
    """``template(value)``: a copy of ``shape`` with new dicts and lists and ``value`` in
    place of ``hole`` (see the module docstring)."""

    def __init__(self, shape: Any, hole: object) -> None: ...
    def __call__(self, value: Any) -> Any: ...
