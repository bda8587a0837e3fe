"""Argument completion (completion/complete): the request's parts and the handler's answer.

One completion handler per server (``@app.completion()``) answers for every prompt argument
and resource template variable. It is called as ``handler(ref, argument)`` or
``handler(ref, argument, context)`` -- whichever its signature takes, plus the request
Context through a parameter annotated with it -- where

- ``ref`` is a :class:`CompletionRef`: ``type`` "prompt" (``name`` set) or "resource"
  (``uri`` set: the template string, or a resource URI);
- ``argument`` is a :class:`CompletionArgument`: ``name`` and the partial ``value``;
- ``context`` is a dict of the arguments already resolved (2025-06-18 ``context.arguments``;
  empty when the client sent none).

It returns a list of strings, a :class:`Completion`, a dict with ``values`` / ``total`` /
``hasMore``, or None (no suggestions). The specification caps a response at 100 values:
longer lists are cut to 100 with ``hasMore`` true and ``total`` at least the full count.

Errors (-32602 Invalid params, per the specification): a ref to an unknown prompt or an
unknown resource template, a malformed ref or argument.
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
import typing
from typing import Any, Callable, Mapping, Optional, Sequence

from mcpfast.jsonrpc.errors import INTERNAL_ERROR, InvalidParams, JSONRPCError
from mcpfast.jsonrpc.router import is_async_handler
from mcpfast.server.request.invocation import invoker

__all__ = [
    "MAX_VALUES",
    "Completer",
    "Completion",
    "CompletionArgument",
    "CompletionRef",
    "completion_result",
    "parse_completion_request",
]

MAX_VALUES = 100
_LOGGER = logging.getLogger("mcpfast.server")


@dataclasses.dataclass(frozen=True)
class CompletionRef:
    """What is being completed: a prompt (``name``) or a resource template (``uri``)."""

    type: str
    name: Optional[str] = None
    uri: Optional[str] = None


@dataclasses.dataclass(frozen=True)
class CompletionArgument:
    """The argument being completed and the value typed so far."""

    name: str
    value: str


@dataclasses.dataclass(frozen=True)
class Completion:
    """A completion answer: ``values`` (str), optional ``total`` and ``has_more``."""

    values: Sequence[str] = ()
    total: Optional[int] = None
    has_more: Optional[bool] = None


def completion_result(value: Any) -> dict[str, Any]:
    """The CompleteResult for what a handler returned (module docstring)."""
    total: Any = None
    has_more: Any = None
    if value is None:
        values: Any = []
    elif isinstance(value, Completion):
        values, total, has_more = value.values, value.total, value.has_more
    elif isinstance(value, Mapping):
        unknown = set(value) - {"values", "total", "hasMore"}
        if unknown:
            raise ValueError(f"unknown completion keys: {sorted(unknown)}")
        values = value.get("values", [])
        total = value.get("total")
        has_more = value.get("hasMore")
    elif isinstance(value, (list, tuple)):
        values = value
    else:
        raise TypeError(
            f"a completion handler returns a list of str, a Completion or a dict, "
            f"not {type(value).__name__}"
        )
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise TypeError("completion values must be a list of str")
    values = list(values)
    for item in values:
        if not isinstance(item, str):
            raise TypeError(f"completion values must be str, got {type(item).__name__}")
    if total is not None and (isinstance(total, bool) or not isinstance(total, int) or total < 0):
        raise ValueError(f"completion total must be an int >= 0, got {total!r}")
    if has_more is not None and not isinstance(has_more, bool):
        raise ValueError(f"completion hasMore must be a bool, got {has_more!r}")
    if len(values) > MAX_VALUES:
        total = max(total or 0, len(values))
        values = values[:MAX_VALUES]
        has_more = True
    completion: dict[str, Any] = {"values": values}
    if total is not None:
        completion["total"] = total
    if has_more is not None:
        completion["hasMore"] = has_more
    return {"completion": completion}


def parse_completion_request(params: Any) -> tuple[CompletionRef, CompletionArgument, dict[str, str]]:
    """(ref, argument, context arguments) of completion/complete params; InvalidParams."""
    if not isinstance(params, dict):
        raise InvalidParams("completion/complete needs params with ref and argument")
    ref = params.get("ref")
    if not isinstance(ref, dict):
        raise InvalidParams("completion/complete: params.ref must be an object")
    kind = ref.get("type")
    if kind == "ref/prompt":
        name = ref.get("name")
        if not isinstance(name, str):
            raise InvalidParams("completion/complete: a ref/prompt needs a name")
        parsed_ref = CompletionRef("prompt", name=name)
    elif kind == "ref/resource":
        uri = ref.get("uri")
        if not isinstance(uri, str):
            raise InvalidParams("completion/complete: a ref/resource needs a uri")
        parsed_ref = CompletionRef("resource", uri=uri)
    else:
        raise InvalidParams(f"completion/complete: unknown ref type {kind!r}")
    argument = params.get("argument")
    if (
        not isinstance(argument, dict)
        or not isinstance(argument.get("name"), str)
        or not isinstance(argument.get("value"), str)
    ):
        raise InvalidParams("completion/complete: params.argument needs a name and a value (strings)")
    context: dict[str, str] = {}
    raw_context = params.get("context")
    if raw_context is not None:
        arguments = raw_context.get("arguments") if isinstance(raw_context, dict) else None
        if arguments is not None:
            if not isinstance(arguments, dict) or not all(isinstance(v, str) for v in arguments.values()):
                raise InvalidParams("completion/complete: context.arguments must map names to strings")
            context = dict(arguments)
    return parsed_ref, CompletionArgument(argument["name"], argument["value"]), context


def _is_context(annotation: Any, context_type: type) -> bool:
    """True for context_type, a subclass, or Optional of one."""
    if isinstance(annotation, type):
        return issubclass(annotation, context_type)
    args = typing.get_args(annotation)
    members = [a for a in args if a is not type(None)]
    return len(members) == 1 and _is_context(members[0], context_type)


class Completer:
    """The server's completion handler (see the module docstring)."""

    __slots__ = ("fn", "is_async", "context_param", "takes_context_arguments", "_invoke")

    def __init__(self, fn: Callable[..., Any], context_type: Optional[type] = None) -> None:
        if not callable(fn):
            raise TypeError(f"a completion handler must be callable, got {fn!r}")
        try:
            signature = inspect.signature(fn)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"cannot read the signature of the completion handler: {exc}") from None
        try:
            hints = typing.get_type_hints(inspect.unwrap(fn))
        except Exception:
            hints = {}
        self.context_param: Optional[str] = None
        positional = 0
        required = 0
        varargs = False
        for param in signature.parameters.values():
            annotation = hints.get(param.name, param.annotation)
            if context_type is not None and _is_context(annotation, context_type):
                self.context_param = param.name
                continue
            if param.kind in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
                positional += 1
                if param.default is param.empty:
                    required += 1
            elif param.kind is param.VAR_POSITIONAL:
                varargs = True
            elif param.kind is param.KEYWORD_ONLY and param.default is param.empty:
                raise TypeError(
                    f"the completion handler's keyword-only parameter {param.name!r} needs a default"
                )
        if required > 3 or (positional < 2 and not varargs):
            raise TypeError(
                "a completion handler takes (ref, argument) or (ref, argument, context), "
                "plus an optional Context parameter"
            )
        self.takes_context_arguments = varargs or positional >= 3
        self.fn = fn
        self.is_async = is_async_handler(fn)
        self._invoke = invoker(fn, self.is_async, _result, _fail)

    def complete(self, ref: CompletionRef, argument: CompletionArgument,
                 context: dict[str, str], ctx: Any) -> Any:
        """The CompleteResult, or a coroutine producing it."""
        args: tuple[Any, ...] = (ref, argument, context) if self.takes_context_arguments else (ref, argument)
        kwargs = {self.context_param: ctx} if self.context_param is not None else {}
        return self._invoke(args, kwargs, ctx, None)


def _fail(exc: Exception, extra: Any = None) -> Any:
    raise _failure(exc) from exc


def _result(value: Any, extra: Any = None) -> dict[str, Any]:
    try:
        return completion_result(value)
    except (TypeError, ValueError) as exc:
        raise _failure(exc) from exc


def _failure(exc: Exception) -> JSONRPCError:
    _LOGGER.error("completion handler failed", exc_info=exc)
    return JSONRPCError(INTERNAL_ERROR, f"Completion failed: {str(exc) or type(exc).__name__}")
