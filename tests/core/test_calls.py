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


def test_keyword_call_takes_arguments_adds_the_context_and_runs():
    from contextvars import ContextVar

    from mcpfast._core.calls import Invoker, KeywordCall

    class Refused(Exception):
        pass

    var: ContextVar = ContextVar("test_keyword_call_var", default=None)

    def take(arguments):
        if arguments == "bad":
            raise Refused("bad arguments")
        if arguments == "odd":
            raise KeyError("not refused: propagates")
        if arguments == "list":
            return ["not", "a", "dict"]
        return dict(arguments or {})

    def fn(a=1, ctx=None):
        return (a, ctx)

    class Signal(BaseException):
        def result(self):
            return "signalled"

    invoker = Invoker(fn, False, lambda value, extra: ("done", value, extra),
                      lambda exc, extra: ("failed", type(exc).__name__, extra), (), Signal,
                      lambda coroutine, yielded: None, var, lambda *args: "later",
                      frozenset({tuple}), lambda value: False)
    refusals: list = []

    def refuse(exc):
        refusals.append(exc)
        return ("refused", str(exc))

    arguments = {"a": 5}
    # Called as an instance and through its call method: the same.
    runs = (invoker, lambda args, kwargs, ctx, extra: ("python", invoker(args, kwargs, ctx, extra)))
    for run, as_method in [(run, as_method) for run in runs for as_method in (False, True)]:
        with_ctx = KeywordCall(take, Refused, refuse, "ctx", run)
        without = KeywordCall(take, Refused, refuse, None, run)
        if as_method:
            with_ctx, without = with_ctx.call, without.call  # type: ignore[assignment]
        outcome = with_ctx(arguments, "CTX", "extra")
        plain = invoker((), {"a": 5, "ctx": "CTX"}, "CTX", "extra")
        assert outcome == plain or outcome == ("python", plain)
        assert arguments == {"a": 5}  # take made a new dict; the context went there
        assert without(None, "CTX", 7) in (("done", (1, None), 7), ("python", ("done", (1, None), 7)))
        assert with_ctx("bad", "CTX", None) == ("refused", "bad arguments")
        assert type(refusals[-1]) is Refused
        with pytest.raises(KeyError):
            with_ctx("odd", "CTX", None)
        with pytest.raises(TypeError):
            with_ctx("list", "CTX", None)
    with pytest.raises(TypeError):
        KeywordCall(take, "not a type", refuse, None, invoker)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        KeywordCall(take, Refused, refuse, 3, invoker)  # type: ignore[arg-type]


def test_positional_arguments_are_passed_positionally():
    from contextvars import ContextVar

    from mcpfast._core.calls import Invoker, KeywordCall

    class Refused(Exception):
        pass

    def only_positional(a, b=2, /):
        return (a, b)

    var: ContextVar = ContextVar("test_positional_var", default=None)
    invoker = Invoker(only_positional, False, lambda value, extra: ("done", value, extra),
                      lambda exc, extra: ("failed", type(exc).__name__, extra), (), Refused,
                      lambda coroutine, yielded: None, var, lambda *args: "later",
                      frozenset({tuple}), lambda value: False)
    take = exact_kwargs(("a", "b"), (int, int), (REQUIRED, 2), REQUIRED,
                        lambda arguments: {"a": 0}, True)
    assert take({"a": 1}) == (1, 2) and take({"b": 5, "a": 1}) == (1, 5)
    assert take({"a": "x"}) == {"a": 0}  # not the plain shape: otherwise's dict
    call = KeywordCall(take, Refused, lambda exc: None, None, invoker)
    assert call({"a": 1}, "ctx", "x") == call.call({"a": 1}, "ctx", "x") == ("done", (1, 2), "x")
    # A dict from otherwise goes by keyword: this function cannot take it.
    assert call({"a": "x"}, "ctx", None) == ("failed", "TypeError", None)
    # Another run gets the tuple and an empty dict.
    runs: list = []
    python_run = KeywordCall(take, Refused, lambda exc: None, None,
                             lambda args, kwargs, ctx, extra: runs.append((args, kwargs)))
    python_run({"a": 3}, "ctx", None)
    assert runs == [((3, 2), {})]
    # A context by name needs keyword arguments.
    with pytest.raises(TypeError):
        KeywordCall(take, Refused, lambda exc: None, "ctx", invoker)({"a": 1}, "ctx", None)


def test_template_fills_a_new_copy_and_invoker_answers_str_with_it():
    from contextvars import ContextVar

    from mcpfast._core.calls import Invoker, Template

    hole = object()
    shape = {"content": [{"type": "text", "text": hole}], "n": 1, "t": (1, 2)}
    template = Template(shape, hole)
    first, second = template("a"), template("b")
    assert first == {"content": [{"type": "text", "text": "a"}], "n": 1, "t": (1, 2)}
    assert list(first) == ["content", "n", "t"]
    first["content"][0]["text"] = "changed"
    first["content"].append("more")
    assert second == {"content": [{"type": "text", "text": "b"}], "n": 1, "t": (1, 2)}
    assert shape["content"] == [{"type": "text", "text": hole}]  # never changed
    assert Template([hole], hole)(5) == [5] and Template(hole, hole)("x") == "x"
    # Containers off the way to the hole are new in every result too, in either order.
    for shape in ({"a": [hole], "b": {"x": [1]}}, {"b": {"x": [1]}, "a": [0, hole, [2]]}):
        template = Template(shape, hole)
        one, two = template(1), template(2)
        assert one["b"] == two["b"] == shape["b"] and one["b"] is not two["b"]
        assert one["b"]["x"] is not two["b"]["x"] and one["b"] is not shape["b"]
        assert list(one) == list(shape) and hole not in one["a"] and 2 in two["a"]
    nested = Template([{"k": 1, "v": {"deeper": [hole, "x"]}}, 3], hole)
    made = nested("in")
    assert made == [{"k": 1, "v": {"deeper": ["in", "x"]}}, 3]
    assert nested("in") == made and nested("in")[0]["v"] is not made[0]["v"]
    for bad, error in ((["no hole"], ValueError), ([hole, hole], ValueError), ({hole: 1}, ValueError),
                       ({"s": {1}, "h": hole}, TypeError), ({"t": [hole], "u": hole}, ValueError)):
        with pytest.raises(error):
            Template(bad, hole)
    deep: object = hole
    for _ in range(40):
        deep = [deep]
    with pytest.raises(ValueError):
        Template(deep, hole)

    var: ContextVar = ContextVar("test_template_var", default=None)

    def make(fn, text):
        return Invoker(fn, False, lambda value, extra: ("finished", value), lambda exc, extra: "failed",
                       (), KeyboardInterrupt, lambda coroutine, yielded: None, var,
                       lambda *args: "later", frozenset({str, dict}), lambda value: False, text)

    text = Template({"content": [{"type": "text", "text": hole}]}, hole)
    assert make(lambda: "hi", text)((), {}, None, None) == {"content": [{"type": "text", "text": "hi"}]}
    assert make(lambda: "hi", None)((), {}, None, None) == ("finished", "hi")

    class Text(str):
        pass

    # Only an exact str; anything else is finished as before.
    assert make(lambda: Text("x"), text)((), {}, None, None) == ("finished", "x")
    assert make(lambda: {"a": 1}, text)((), {}, None, None) == ("finished", {"a": 1})
    with pytest.raises(TypeError):
        make(lambda: "x", {"not": "a template"})  # type: ignore[arg-type]
