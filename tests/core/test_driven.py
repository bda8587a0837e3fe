"""mcpfast._core.driven.DrivenCall: a coroutine driven by its futures' callbacks ends as
the same coroutine run by an asyncio.Task does (the behaviour the Python DrivenCall had):
futures that answer or fail, bare yields, awaits of something that is no future,
cancellation while waiting and between steps, context variables kept across steps."""

import asyncio
import contextvars
import sys

import pytest

from mcpfast._core.driven import Answer, DrivenCall, driven_future

VAR: contextvars.ContextVar[str] = contextvars.ContextVar("driven_test_var", default="unset")


def outcome_of(result, exc):
    """An end as a comparable value: the result, or the exception's type and args."""
    if exc is None:
        return ("returned", result)
    return ("raised", type(exc), exc.args)


def driven(coroutine):
    """A DrivenCall of ``coroutine`` after its first step (as the pipeline makes one) and
    a future of its end; (None, the end) when the first step ended it."""
    context = contextvars.copy_context()
    try:
        yielded = context.run(coroutine.send, None)
    except StopIteration as stop:
        return None, outcome_of(stop.value, None)
    call = DrivenCall(coroutine, context, yielded)
    end = asyncio.get_running_loop().create_future()
    call.start(lambda result, exc: end.set_result(outcome_of(result, exc)))
    return call, end


async def task_end(task):
    try:
        return outcome_of(await task, None)
    except BaseException as exc:  # noqa: BLE001 -- the end compared
        return outcome_of(None, exc)


async def both(make, act=None):
    """The ends of make() driven by a DrivenCall and run as a Task, ``act(handle)`` done
    to each after its first step, before the loop runs its next (None: nothing)."""
    call, end = driven(make())
    if act is not None and call is not None:
        act(call)
    task = asyncio.ensure_future(make())
    await asyncio.sleep(0)  # the task's first step
    if act is not None:
        act(task)
    driven_end = end if call is None else await end
    return driven_end, await task_end(task)


def later(value=None, error=None):
    """A future answered (or failed) on the loop's next turn."""
    loop = asyncio.get_running_loop()
    future = loop.create_future()
    if error is None:
        loop.call_soon(future.set_result, value)
    else:
        loop.call_soon(future.set_exception, error)
    return future


class NotAFuture:
    """An awaitable that yields a value that is no future (a Task refuses it too)."""

    def __await__(self):
        yield 42


async def answered():
    first = await later(2)
    second = await later(3)
    return first * second


async def failed_and_caught():
    try:
        await later(error=ValueError("bad"))
    except ValueError as exc:
        return ("caught", exc.args)


async def failed():
    await later(error=KeyError("missing"))


async def bare_yields():
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    return "slept"


async def awaits_no_future():
    try:
        await NotAFuture()
    except RuntimeError:
        return await later("went on")


async def awaits_no_future_uncaught():
    await NotAFuture()


async def keeps_its_context():
    VAR.set("set in the first step")
    await later()
    seen = VAR.get()
    VAR.set("set in the second step")
    await asyncio.sleep(0)
    return (seen, VAR.get())


async def returns_at_once():
    return "inline"


async def waits_forever():
    await asyncio.get_running_loop().create_future()


async def waits_forever_and_catches():
    try:
        await asyncio.get_running_loop().create_future()
    except asyncio.CancelledError as exc:
        return ("cancelled", exc.args)


async def yields_then_catches():
    try:
        await asyncio.sleep(0)
    except asyncio.CancelledError as exc:
        return ("cancelled between steps", exc.args)
    return "not cancelled"


def compare(make, act=None):
    return asyncio.run(both(make, act))


@pytest.mark.parametrize("make", [answered, failed_and_caught, failed, bare_yields, keeps_its_context,
                                  returns_at_once])
def test_ends_as_a_task_running_the_coroutine_ends(make):
    by_driven, by_task = compare(make)
    assert by_driven == by_task


def test_the_ends_themselves():
    assert compare(answered)[0] == ("returned", 6)
    assert compare(failed)[0] == ("raised", KeyError, ("missing",))
    assert compare(keeps_its_context)[0] == ("returned", ("set in the first step", "set in the second step"))


@pytest.mark.parametrize("make", [awaits_no_future, awaits_no_future_uncaught])
def test_an_await_of_no_future_throws_runtime_error_in_as_a_task_does(make):
    by_driven, by_task = compare(make)
    # (The messages differ: each names its driver.)
    assert by_driven[:2] == by_task[:2]
    if make is awaits_no_future:
        assert by_driven == ("returned", "went on")
    else:
        assert by_driven[1] is RuntimeError and "not a future" in by_driven[2][0]


@pytest.mark.parametrize("make", [waits_forever, waits_forever_and_catches])
def test_cancelled_while_waiting_as_a_task(make):
    by_driven, by_task = compare(make, lambda handle: handle.cancel("why"))
    if sys.version_info >= (3, 11):
        assert by_driven == by_task
    else:
        # asyncio 3.10's task throws the cancellation in without its message.
        assert by_driven[0] == by_task[0]
    expected = ("raised", asyncio.CancelledError, ("why",)) if make is waits_forever \
        else ("returned", ("cancelled", ("why",)))
    assert by_driven == expected


def test_cancelled_between_steps_as_a_task():
    by_driven, by_task = compare(yields_then_catches, lambda handle: handle.cancel("late"))
    assert by_driven == by_task == ("returned", ("cancelled between steps", ("late",)))


def test_context_variables_stay_in_the_call():
    async def main():
        call, end = driven(keeps_its_context())
        await end
        return VAR.get()

    assert asyncio.run(main()) == "unset"


def test_done_and_cancel_after_the_end():
    async def main():
        call, end = driven(answered())
        assert call.done() is False
        await end
        assert call.done() is True
        assert call.cancel() is False

    asyncio.run(main())


def test_the_end_is_reported_once():
    ends = []

    async def main():
        call = undriven(waits_forever_and_catches())
        call.start(lambda result, exc: ends.append((result, exc)))
        assert call.cancel() is True
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert call.cancel() is False

    asyncio.run(main())
    assert ends == [(("cancelled", ()), None)]


def undriven(coroutine):
    """A DrivenCall of ``coroutine`` after its first step, not started."""
    context = contextvars.copy_context()
    return DrivenCall(coroutine, context, context.run(coroutine.send, None))


def test_awaited_by_a_task_and_cancelled_with_it():
    async def main():
        assert await undriven(answered()) == 6
        blocked = undriven(waits_forever())

        async def wait():
            return await blocked

        waiter = asyncio.ensure_future(wait())
        await asyncio.sleep(0)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        await asyncio.sleep(0)
        assert blocked.done()

    asyncio.run(main())


def test_refuses_a_context_that_is_no_context():
    with pytest.raises(TypeError, match="contextvars.Context"):
        DrivenCall(None, {}, None)


def test_add_done_callback_is_refused():
    async def main():
        call, end = driven(answered())
        with pytest.raises(NotImplementedError):
            call.add_done_callback(print)
        await end

    asyncio.run(main())



def future_call(future, settle, argument=2):
    """driven_future(future, settle, argument) started, and a future of its end."""
    call = driven_future(future, settle, argument)
    end = asyncio.get_running_loop().create_future()
    call.start(lambda result, exc: end.set_result(outcome_of(result, exc)))
    return call, end


def multiplied(future, factor):
    # A settle: the future's value times factor, a ValueError as a KeyError, the rest as is.
    try:
        return future.result() * factor
    except ValueError as exc:
        raise KeyError(*exc.args) from None


def test_a_future_call_ends_with_what_settle_makes_of_its_future():
    async def main():
        loop = asyncio.get_running_loop()
        futures = [loop.create_future() for _ in range(3)]
        calls = [future_call(future, multiplied) for future in futures]
        assert [call.done() for call, _ in calls] == [False] * 3
        futures[0].set_result(21)
        futures[1].set_exception(ValueError("bad"))
        futures[2].set_result(None)  # None * 2: settle itself fails
        ends = [await end for _, end in calls]
        assert ends[0] == ("returned", 42)
        assert ends[1] == ("raised", KeyError, ("bad",))
        assert ends[2][:2] == ("raised", TypeError)
        assert [call.done() for call, _ in calls] == [True] * 3
        assert calls[0][0].cancel() is False
        # Awaited by a caller that is not the session: its end, through a future.
        answered = loop.create_future()
        loop.call_soon(answered.set_result, 4)
        assert await driven_future(answered, multiplied, 3) == 12

    asyncio.run(main())


def test_a_future_call_cancelled_gives_settle_the_cancelled_future():
    seen = []

    def settle(future, argument):
        seen.append((future.cancelled(), argument))
        return future.result()  # raises the CancelledError

    async def main():
        future = asyncio.get_running_loop().create_future()
        call, end = future_call(future, settle)
        assert call.cancel("gave up") is True
        assert future.cancelled()
        outcome = await end
        assert outcome[:2] == ("raised", asyncio.CancelledError)
        if sys.version_info >= (3, 11):
            assert outcome[2] == ("gave up",)
        assert call.done() and call.cancel() is False

    asyncio.run(main())
    assert seen == [(True, 2)]


def test_a_future_call_refuses_what_is_no_future_and_a_settle_that_is_not_callable():
    with pytest.raises(TypeError, match="an asyncio future or an Answer"):
        driven_future(object(), multiplied)

    async def main():
        with pytest.raises(TypeError, match="settle must be callable"):
            driven_future(asyncio.get_running_loop().create_future(), None)

    asyncio.run(main())


def test_a_future_call_lets_go_of_its_argument_at_its_end():
    # The argument may hold what holds the call (a request whose context holds it): let
    # go at the end, no cycle is left for the garbage collector.
    import gc
    import weakref

    class Held:
        pass

    async def main():
        future = asyncio.get_running_loop().create_future()
        held = Held()
        held.call, end = future_call(future, lambda done, argument: done.result(), held)
        gone = weakref.ref(held)
        del held
        future.set_result(1)
        assert await end == ("returned", 1)
        assert gone() is None

    gc.disable()
    try:
        asyncio.run(main())
    finally:
        gc.enable()


def answer_call(settle=multiplied, argument=2):
    """driven_future on an Answer, started; the call, its answer and the ends it reported."""
    answer = Answer()
    call = driven_future(answer, settle, argument)
    ends = []
    call.start(lambda result, exc: ends.append(outcome_of(result, exc)))
    return call, answer, ends


def test_a_call_on_an_answer_ends_in_the_call_that_settles_it():
    # No loop turn between the answer and the end: ends is filled inside set_result.
    call, answer, ends = answer_call()
    assert not answer.done() and ends == [] and not call.done()
    answer.set_result(21)
    assert ends == [("returned", 42)] and call.done()
    assert answer.done() and answer.result() == 21 and answer.exception() is None
    call, answer, ends = answer_call()
    answer.set_exception(ValueError("bad"))
    assert ends == [("raised", KeyError, ("bad",))]
    assert isinstance(answer.exception(), ValueError)
    with pytest.raises(ValueError, match="bad"):
        answer.result()
    call, answer, ends = answer_call()
    answer.set_exception(RuntimeError)  # a class: an instance of it
    assert ends[0][:2] == ("raised", RuntimeError)


def test_a_call_on_an_answer_cancelled_gives_settle_the_cancelled_answer_at_once():
    seen = []

    def settle(answer, argument):
        seen.append((answer.cancelled(), argument))
        return answer.result()  # raises the CancelledError

    call, answer, ends = answer_call(settle)
    assert call.cancel("gave up") is True
    assert answer.cancelled() and seen == [(True, 2)]
    assert ends == [("raised", asyncio.CancelledError, ("gave up",))]
    assert call.done() and call.cancel() is False and answer.cancel() is False
    with pytest.raises(asyncio.CancelledError):
        answer.exception()


def test_an_answer_settled_before_its_call_waits_ends_the_call_when_it_starts():
    # (A transport that delivers the response while the request is being sent.)
    answer = Answer()
    answer.set_result(5)
    call = driven_future(answer, multiplied, 3)
    ends = []
    call.start(lambda result, exc: ends.append(outcome_of(result, exc)))
    assert ends == [("returned", 15)]
    cancelled = Answer()
    call = driven_future(cancelled, multiplied, 3)
    assert call.cancel("early") is True  # before it started: cancelled when it waits
    ends = []
    call.start(lambda result, exc: ends.append(outcome_of(result, exc)))
    assert ends[0][:2] == ("raised", asyncio.CancelledError) and cancelled.cancelled()


def test_an_answer_is_settled_once_and_refuses_what_is_no_exception():
    answer = Answer()
    with pytest.raises(asyncio.InvalidStateError):
        answer.result()
    with pytest.raises(TypeError, match="needs an exception"):
        answer.set_exception(42)
    assert not answer.done() and repr(answer) == "<Answer pending>"
    answer.set_result(1)
    with pytest.raises(asyncio.InvalidStateError):
        answer.set_result(2)
    with pytest.raises(asyncio.InvalidStateError):
        answer.set_exception(ValueError())
    assert answer.cancel() is False and answer.result() == 1 and repr(answer) == "<Answer result>"


def test_a_call_failing_to_end_from_an_answer_is_unraisable_and_the_settler_goes_on():
    # What ends the call raising (here the receiver) never reaches whoever settled the
    # answer (the upstream's reader): written as unraisable, as a done-callback's would be.
    answer = Answer()
    call = driven_future(answer, multiplied, 2)

    def receiver(result, exc):
        raise OSError("the receiver broke")

    call.start(receiver)
    seen = []
    hook, sys.unraisablehook = sys.unraisablehook, seen.append
    try:
        answer.set_result(1)
    finally:
        sys.unraisablehook = hook
    assert call.done() and len(seen) == 1 and isinstance(seen[0].exc_value, OSError)


def test_observers_are_told_the_end_in_order_before_it_is_reported(monkeypatch):
    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", lambda info: unraisable.append(info.exc_value))

    async def main():
        told = []

        def observer(name, result, exc):
            told.append((name, result, None if exc is None else type(exc)))
            if name == "failing":
                raise ValueError("observer bug")

        # Returned: every observer in order (one that raises is unraisable), then on_done.
        future = asyncio.get_running_loop().create_future()
        call = driven_future(future, lambda done, argument: done.result() + argument, 1)
        for name in ("inner", "failing", "outer"):
            call.observe(observer, name)
        end = asyncio.get_running_loop().create_future()
        call.start(lambda result, exc: end.set_result((list(told), outcome_of(result, exc))))
        future.set_result(41)
        seen, outcome = await end
        assert seen == [("inner", 42, None), ("failing", 42, None), ("outer", 42, None)]
        assert outcome == ("returned", 42)
        assert [type(exc) for exc in unraisable] == [ValueError]
        # Raised: the exception told, then reported as the end.
        told.clear()
        future = later(error=KeyError("gone"))

        async def waits():
            return await future

        call, end = driven(waits())
        call.observe(observer, "only")
        assert await end == ("raised", KeyError, ("gone",))
        assert told == [("only", None, KeyError)]
        # After the end, or with what is not callable: refused.
        with pytest.raises(RuntimeError, match="ended"):
            call.observe(observer, "late")
        with pytest.raises(TypeError, match="callable"):
            driven_future(later(1), lambda done, _: done.result()).observe(42)

    asyncio.run(main())
