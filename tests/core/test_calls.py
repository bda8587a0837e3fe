"""mcpfast._core.calls: one step of a coroutine (``step``) and keyword arguments taken from
a dict of the expected shape (``exact_kwargs``), a registered function's call and outcome
(``Invoker``)."""

from __future__ import annotations

import asyncio
import types
from typing import Any

import pytest

from mcpfast._core.calls import exact_kwargs, step


def _never(coroutine: Any, yielded: Any) -> Any:
    raise AssertionError(f"{coroutine!r} suspended with {yielded!r}")


def _kept(coroutine: Any, yielded: Any) -> tuple[str, Any, Any]:
    return ("suspended", coroutine, yielded)


@types.coroutine
def _yield(value: Any) -> Any:
    # A generator-based awaitable: what asyncio's futures do under ``await``.
    sent = yield value
    return sent


# -- step ------------------------------------------------------------------------------


def test_a_coroutine_that_finishes_gives_its_value():
    async def answer() -> list[int]:
        return [42]

    value = step(answer(), _never)
    assert value == [42]


def test_a_coroutine_returning_none_gives_none():
    async def nothing() -> None:
        return None

    assert step(nothing(), _never) is None


def test_a_coroutine_that_suspends_goes_to_the_callback_with_what_it_yielded():
    marker = object()

    async def waits() -> str:
        got = await _yield(marker)
        return f"resumed with {got}"

    coroutine = waits()
    outcome = step(coroutine, _kept)
    assert outcome[0] == "suspended" and outcome[1] is coroutine and outcome[2] is marker
    # The coroutine was only stepped: whoever takes it over goes on where it stopped.
    with pytest.raises(StopIteration) as stop:
        coroutine.send("x")
    assert stop.value.value == "resumed with x"


def test_a_suspended_coroutine_continues_as_a_task():
    async def waits() -> str:
        await _yield(None)  # a bare yield: the task steps it again on the next loop pass
        await asyncio.sleep(0)
        return "done"

    async def main() -> str:
        coroutine = waits()
        assert step(coroutine, _kept)[2] is None

        async def rest() -> Any:
            # Go on from the second step, as a task would from the first.
            return await _resume(coroutine)

        return await asyncio.create_task(rest())

    @types.coroutine
    def _resume(coroutine: Any) -> Any:
        sent = None
        while True:
            try:
                yielded = coroutine.send(sent)
            except StopIteration as stop:
                return stop.value
            sent = yield yielded

    assert asyncio.run(main()) == "done"


def test_exceptions_propagate_unchanged():
    error = ValueError("broken")

    async def fails() -> None:
        raise error

    with pytest.raises(ValueError) as raised:
        step(fails(), _never)
    assert raised.value is error

    async def cancelled() -> None:
        raise asyncio.CancelledError("stop")

    with pytest.raises(asyncio.CancelledError, match="stop"):
        step(cancelled(), _never)

    async def stops() -> None:
        raise StopIteration("inside")

    # PEP 479: the coroutine itself turns a StopIteration into RuntimeError.
    with pytest.raises(RuntimeError, match="coroutine raised StopIteration"):
        step(stops(), _never)


def test_the_callback_answers_and_raises_for_step():
    async def waits() -> None:
        await _yield("tick")

    def refuse(coroutine: Any, yielded: Any) -> Any:
        coroutine.close()
        raise RuntimeError(f"suspended on {yielded}")

    coroutine = waits()
    with pytest.raises(RuntimeError, match="suspended on tick"):
        step(coroutine, refuse)
    assert coroutine.cr_frame is None  # closed by the callback


def test_generators_and_iterators_are_stepped_too():
    def gen() -> Any:
        yield "first"
        return "end"

    generator = gen()
    assert step(generator, _kept)[2] == "first"
    assert step(generator, _never) == "end"
    assert step(iter([7]), _kept)[2] == 7
    assert step(iter([]), _never) is None  # exhausted: no value
    with pytest.raises(AttributeError):
        step(3, _never)


def test_a_finished_coroutine_cannot_be_stepped_again():
    async def once() -> int:
        return 1

    coroutine = once()
    assert step(coroutine, _never) == 1
    with pytest.raises(RuntimeError, match="cannot reuse already awaited coroutine"):
        step(coroutine, _never)


# -- exact_kwargs ----------------------------------------------------------------------

REQUIRED = object()


class _Otherwise:
    """The fallback: records what it was given and answers with a marker."""

    def __init__(self) -> None:
        self.calls: list[Any] = []

    def __call__(self, arguments: Any) -> Any:
        self.calls.append(arguments)
        return ("otherwise", arguments)


def _take(otherwise: Any = None) -> Any:
    return exact_kwargs(("text", "count", "ratio", "flag"), (str, int, float, bool),
                        (REQUIRED, 3, 0.5, False), REQUIRED, otherwise or _Otherwise())


def test_a_dict_of_the_expected_shape_is_taken_with_defaults_in_order():
    otherwise = _Otherwise()
    take = _take(otherwise)
    arguments = {"flag": True, "text": "hi"}
    kwargs = take(arguments)
    assert list(kwargs.items()) == [("text", "hi"), ("count", 3), ("ratio", 0.5), ("flag", True)]
    assert kwargs is not arguments and arguments == {"flag": True, "text": "hi"}
    full = {"text": "a", "count": 1, "ratio": 2.5, "flag": False}
    assert take(full) == full and take(full) is not full
    assert otherwise.calls == []


@pytest.mark.parametrize("arguments", [
    None, [], "text", {},                                   # not a dict / required absent
    {"count": 1},                                           # required absent
    {"text": "a", "other": 1},                              # a key not among the names
    {"text": 1}, {"text": "a", "count": True},              # bool is not int
    {"text": "a", "count": 1.0}, {"text": "a", "ratio": 1},  # no conversions here
    {"text": "a", "flag": 1}, {"text": None},
])
def test_anything_else_goes_to_otherwise(arguments):
    otherwise = _Otherwise()
    assert _take(otherwise)(arguments) == ("otherwise", arguments)
    assert otherwise.calls == [arguments]


def test_subclasses_are_not_the_exact_type():
    class Text(str):
        pass

    class Args(dict):
        pass

    otherwise = _Otherwise()
    take = _take(otherwise)
    assert take({"text": Text("a")})[0] == "otherwise"
    assert take(Args(text="a"))[0] == "otherwise"
    assert len(otherwise.calls) == 2


def test_what_otherwise_raises_propagates():
    def refuse(arguments: Any) -> Any:
        raise LookupError("refused")

    with pytest.raises(LookupError, match="refused"):
        _take(refuse)({"text": 1})


def test_a_key_whose_comparison_fails_raises_as_a_dict_lookup_does():
    class Key(str):
        def __hash__(self) -> int:
            return hash("text")

        def __eq__(self, other: object) -> bool:
            raise ArithmeticError("no comparing")

    with pytest.raises(ArithmeticError):
        _take()({Key("x"): "a"})


def test_no_names_takes_only_the_empty_dict():
    otherwise = _Otherwise()
    take = exact_kwargs((), (), (), REQUIRED, otherwise)
    assert take({}) == {}
    assert take({"a": 1})[0] == "otherwise" and take(None)[0] == "otherwise"


def test_inconsistent_descriptions_are_refused():
    with pytest.raises(ValueError, match="one item per argument"):
        exact_kwargs(("a",), (), (REQUIRED,), REQUIRED, _Otherwise())
    with pytest.raises(ValueError, match="one item per argument"):
        exact_kwargs(("a",), (str,), (), REQUIRED, _Otherwise())
    with pytest.raises(TypeError, match="types must hold types"):
        exact_kwargs(("a",), ("str",), (REQUIRED,), REQUIRED, _Otherwise())
    with pytest.raises(TypeError):
        exact_kwargs(["a"], (str,), (REQUIRED,), REQUIRED, _Otherwise())  # type: ignore[arg-type]


def test_invoker_answers_every_outcome_of_a_call():
    from contextvars import ContextVar

    from mcpfast._core.calls import Invoker, track_context

    class Signal(BaseException):
        def result(self):
            return "signalled"

    var: ContextVar = ContextVar("test_invoker_var", default=None)
    seen: list = []

    def later(ctx, value, finish, fail, extra, passthrough):
        return ("later", ctx, value, extra, passthrough)

    def make(fn, at_once=False, passthrough=(KeyError,)):
        return Invoker(fn, at_once, lambda value, extra: ("done", value, extra),
                       lambda exc, extra: ("failed", type(exc).__name__, extra), passthrough,
                       Signal, lambda coroutine, yielded: ("suspended", yielded), var, later,
                       frozenset({str, dict}), lambda value: hasattr(value, "__await__"))

    def plain(a, b=2):
        seen.append(var.get())
        return f"{a}{b}"

    assert make(plain)((1,), {"b": 3}, "ctx", "x") == ("done", "13", "x")
    assert make(lambda: 1 / 0)((), {}, "ctx", "x") == ("failed", "ZeroDivisionError", "x")
    with pytest.raises(KeyError):
        make(lambda: {}["k"])((), {}, "ctx", "x")

    def signalling():
        raise Signal()

    assert make(signalling)((), {}, "ctx", "x") == "signalled"
    with pytest.raises(KeyboardInterrupt):
        make(lambda: (_ for _ in ()).throw(KeyboardInterrupt()))((), {}, "ctx", "x")

    async def at_once(text):
        return text

    assert make(at_once, at_once=True)(("hi",), {}, "ctx", 7) == ("done", "hi", 7)

    async def waits():
        await asyncio.sleep(0)

    # What suspended answers is the value finished with (the server's own raises instead).
    assert make(waits, at_once=True)((), {}, "ctx", 7) == ("done", ("suspended", None), 7)
    coroutine = at_once("later")
    outcome = make(lambda: coroutine)((), {}, "ctx", 7)
    assert outcome == ("later", "ctx", coroutine, 7, (KeyError,))
    coroutine.close()
    with pytest.raises(TypeError):
        make(plain)([1], {}, "ctx", None)  # type: ignore[arg-type]
    # Once tracking is on (it stays on), the variable holds ctx while the function runs.
    track_context()
    assert make(plain)((1,), {}, "ctx", None) == ("done", "12", None)
    assert seen[-1] == "ctx" and var.get() is None
