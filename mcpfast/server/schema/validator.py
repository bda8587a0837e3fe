"""The argument validator of a tool: one closure over the per-parameter converters; and the
description of the calls it takes without converting anything (`plain_arguments`)."""

from __future__ import annotations

from typing import Any, Callable, Mapping

from .errors import ArgumentError, Mismatch, kind_of, unknown_key_error
from .sentinels import ABSENT, REQUIRED


def compile_validator(
    plan: list[tuple[str, Callable[[Any], Any], Any, type | None]],
) -> Callable[[Any], dict[str, Any]]:
    """One closure that checks and converts the arguments of a call: a loop over the
    per-parameter converters compiled at decoration time. A value whose type is the
    parameter's plain scalar type (``exact``) is taken as it is, without a call."""
    names = {name for name, _, _, _ in plan}
    # A type no JSON value has, for converters without an exact fast path.
    steps = tuple((name, convert, default, exact or _NoExactType) for name, convert, default, exact in plan)
    empty: dict[str, Any] = {}
    absent = ABSENT

    def validate(arguments: Any) -> dict[str, Any]:
        if arguments is None:
            arguments = empty
        elif type(arguments) is not dict:
            if not isinstance(arguments, Mapping):
                raise ArgumentError((), f"expected object, got {kind_of(arguments)}")
            arguments = dict(arguments)
        kwargs: dict[str, Any] = {}
        seen = 0
        get = arguments.get
        name = ""
        try:
            for name, convert, default, exact in steps:
                value = get(name, absent)
                if value is absent:
                    if default is REQUIRED:
                        raise ArgumentError((name,), "missing required argument")
                    kwargs[name] = default
                    continue
                seen += 1
                kwargs[name] = value if type(value) is exact else convert(value)
        except Mismatch as exc:
            exc.path.append(name)
            raise ArgumentError(tuple(reversed(exc.path)), exc.reason) from None
        if seen != len(arguments):
            unknown = unknown_key_error(arguments, names, "argument")
            raise ArgumentError(tuple(unknown.path), unknown.reason)
        return kwargs

    return validate


def plain_arguments(
    plan: list[tuple[str, Callable[[Any], Any], Any, type | None]],
) -> tuple[tuple[str, ...], tuple[type, ...], tuple[Any, ...]]:
    """The parameters' names, plain scalar types (``exact``; for a parameter without one, a
    type no JSON value has) and defaults (REQUIRED for a required parameter), in order.

    What the validator does with an ``arguments`` dict holding every required name and no
    other, each value of exactly its parameter's type: the same dict, the absent names
    taking their defaults. A caller can check that shape without running the validator
    (:class:`mcpfast.server.features.tools.Tool` does, in compiled code), and run it for anything
    else."""
    names = tuple(name for name, _, _, _ in plan)
    types = tuple(exact or _NoExactType for _, _, _, exact in plan)
    defaults = tuple(default for _, _, default, _ in plan)
    return names, types, defaults


class _NoExactType:
    """Placeholder ``exact`` type: no argument value is ever of this type."""
