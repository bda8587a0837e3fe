"""Helpers for calling functions on a hot path (stubs; the compiled module's docstring
says what ``step`` and ``exact_kwargs`` do and why)."""

from typing import Any, Callable, Coroutine, Generator, Iterator, TypeVar

_R = TypeVar("_R")
_S = TypeVar("_S")

def step(coroutine: Coroutine[Any, Any, _R] | Generator[Any, Any, _R] | Iterator[Any],
         suspended: Callable[[Any, Any], _S]) -> _R | _S:
    """Resume ``coroutine`` once with None: its return value if it finished, else
    ``suspended(coroutine, yielded)`` (see the module docstring)."""

def exact_kwargs(names: tuple[str, ...], types: tuple[type, ...], defaults: tuple[Any, ...],
                 required: object, otherwise: Callable[[Any], _R]
                 ) -> Callable[[Any], dict[str, Any] | _R]:
    """``take(arguments)``: a new dict of keyword arguments when ``arguments`` has exactly
    the expected shape, else ``otherwise(arguments)`` (see the module docstring)."""
