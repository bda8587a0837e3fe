"""Calling the functions a server registers: one wrapper for tools, resources, prompts and
completions.

``invoker(fn, ...)`` makes, once per registered function, the function that runs it -- sync,
async, or sync returning an awaitable --
and turns its outcome into a protocol result through two callbacks of the caller:
``finish(value, extra)`` for a returned value and ``fail(exc, extra)`` for an exception
(which returns a result -- a tool answers failures with ``isError`` -- or raises the
JSON-RPC error to answer with). Exceptions of the types in ``passthrough`` propagate
untouched: a resource or prompt raising a JSONRPCError answers with exactly that error.
A function stopped by :class:`~mcpfast.server.request.input_required.InputRequired` (it asked the
client something under 2026-07-28) answers with the InputRequiredResult.
The result is the protocol result, or a coroutine producing it that the session runs as
a task.

While the function runs, :data:`current_context` holds the request's Context, so that code
deep inside it (a logging handler) can tell which request it works for. An async function
runs in its own task, so the variable is set inside the task and never leaks to others.
Setting it costs about as much as a third of a small tool call, so it is done only once
something reads it: :func:`track_current_context` (called when a logging handler that
routes records per request is made).
"""

from __future__ import annotations

import dis
import inspect
from contextvars import ContextVar
from typing import Any, Callable, Optional

from mcpfast._core.calls import Invoker as _Invoker
from mcpfast._core.calls import Template, track_context
from mcpfast.jsonrpc.errors import JSONRPCError
from mcpfast.jsonrpc.router import PLAIN_RESULT_TYPES
from mcpfast.server.request.input_required import InputRequired

__all__ = ["PASS_JSONRPC_ERRORS", "Invoker", "current_context", "invoker", "never_suspends",
           "track_current_context"]

# The Context of the request whose registered function is running (None outside one).
current_context: ContextVar[Optional[Any]] = ContextVar("mcpfast_current_context", default=None)
# Whether anything reads current_context (see the module docstring).
_tracking = False


def track_current_context() -> None:
    """From now on, set :data:`current_context` while registered functions run."""
    global _tracking
    _tracking = True
    track_context()

PASS_JSONRPC_ERRORS: tuple[type[BaseException], ...] = (JSONRPCError,)

Finish = Callable[[Any, Any], Any]
Fail = Callable[[Exception, Any], Any]


Invoker = Callable[[tuple[Any, ...], dict[str, Any], Any, Any], Any]


# What a coroutine's code must contain to ever suspend (await, async for, async with).
_SUSPENDING_OPCODES = frozenset(("GET_AWAITABLE", "GET_AITER", "GET_ANEXT", "BEFORE_ASYNC_WITH",
                                 "END_ASYNC_FOR", "SEND", "YIELD_VALUE"))


def never_suspends(fn: Callable[..., Any]) -> bool:
    """True for a coroutine function (or a bound method of one) whose body holds no
    ``await``, ``async for`` or ``async with``: its coroutine runs to its end on the first
    step, so it can be run where it is called, as a sync function would be."""
    fn = getattr(fn, "__func__", fn)
    if not inspect.iscoroutinefunction(fn) or not inspect.isfunction(fn):
        return False
    codes = [fn.__code__]
    # Comprehensions are code objects of their own, run inline.
    codes += [const for const in fn.__code__.co_consts
              if inspect.iscode(const) and const.co_name.startswith("<")]
    return not any(instruction.opname in _SUSPENDING_OPCODES
                   for code in codes for instruction in dis.get_instructions(code))


def invoker(fn: Callable[..., Any], is_async: bool, finish: Finish, fail: Fail,
            passthrough: tuple[type[BaseException], ...] = PASS_JSONRPC_ERRORS,
            text: Optional[Template] = None) -> Invoker:
    """``run(args, kwargs, ctx, extra)``: calls ``fn(*args, **kwargs)`` for the request
    ``ctx`` as the module docstring says. Built once per registered function, so that a
    call passes only what changes per request. ``text``: where ``finish`` answers a str
    value ``text(value)`` (a compiled Template), it may be given to be used instead on the
    compiled path.

    An async function that never suspends (:func:`never_suspends`: ``async def`` out of
    habit, no ``await`` inside) is run to its end at once, as a sync one: no task, and its
    answer goes out with the request's. Why: a task and its scheduling cost more than a
    small tool itself (measured: an async echo tool over HTTP, 32 connections)."""
    at_once = is_async and never_suspends(fn)
    if is_async and not at_once:
        def run_async(args: tuple[Any, ...], kwargs: dict[str, Any], ctx: Any,
                      extra: Any) -> Any:
            return _finish_async(ctx, fn(*args, **kwargs), finish, fail, extra, passthrough)

        return run_async

    # Compiled (mcpfast._core.calls.Invoker): fn(*args, **kwargs), an async function that
    # never suspends run to its end in one step (inline: the hot path of small tools, its
    # value returned without a StopIteration to create and catch), its outcome given to
    # finish or fail as _finish_async does for the others.
    return _Invoker(fn, at_once, finish, fail, tuple(passthrough), InputRequired, _suspended,
                    current_context, _finish_async, PLAIN_RESULT_TYPES, inspect.isawaitable, text)


def _suspended(coroutine: Any, yielded: Any) -> Any:
    """What :func:`step` does with a coroutine that suspended (code without await cannot)."""
    coroutine.close()
    raise RuntimeError(f"{coroutine!r} suspended although its code never awaits")


async def _finish_async(ctx: Any, awaitable: Any, finish: Finish, fail: Fail, extra: Any,
                        passthrough: tuple[type[BaseException], ...]) -> Any:
    token = current_context.set(ctx) if _tracking else None
    try:
        value = await awaitable
    except passthrough:
        raise
    except Exception as exc:
        return fail(exc, extra)
    except InputRequired as signal:
        # The handler stopped for the client's input (2026-07-28): that is its answer.
        return signal.result()
    finally:
        if token is not None:
            try:
                current_context.reset(token)
            except ValueError:
                # Closed from another context (its request dropped before its task ran, the
                # coroutine finalized later): the context it set the variable in is gone.
                pass
    return finish(value, extra)
