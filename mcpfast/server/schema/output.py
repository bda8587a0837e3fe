"""The output side of a tool: which return annotations get an output schema, and its dumper.

A value whose class derives from `UnstructuredOutput` (the MCP content classes of
`mcpfast.server.content` do) describes itself as content and is not data: a return annotation
that mentions such a class gets no output schema. The marker lives here so that this package
never imports the content module (content depends on this package, not the other way).
"""

from __future__ import annotations

import json
import typing
from typing import Any, Callable

from .annotations import split_annotated
from .builder import SchemaBuilder
from .sentinels import MISSING


class UnstructuredOutput:
    """Base of classes whose instances a tool returns as MCP content rather than as data (see
    the module docstring): a return annotation mentioning one gets no output schema. (The
    content classes, and ToolResult: a whole result, whose structured content is free.)"""

    __slots__ = ()


def _mentions_unstructured(tp: Any) -> bool:
    tp = split_annotated(tp)[0]
    # (typing.get_origin: on Python 3.10 ``list[int]`` also passes isinstance(x, type).)
    if typing.get_origin(tp) is None and isinstance(tp, type) and issubclass(tp, UnstructuredOutput):
        return True
    return any(_mentions_unstructured(arg) for arg in typing.get_args(tp) if arg is not Ellipsis)


def output_plan(
    annotation: Any, structured_output: bool | None, tool_name: str, globalns: dict[str, Any]
) -> tuple[dict[str, Any] | None, bool, Callable[[Any], Any] | None]:
    """(output schema, wraps_output, dumper) for a return annotation."""
    if structured_output is False:
        return None, False, None
    where = f"the return value of {tool_name}"

    def no_schema(reason: str) -> tuple[None, bool, None]:
        if structured_output:
            raise TypeError(f"{tool_name}: no structured output possible, {reason}")
        return None, False, None

    if annotation is MISSING:
        return no_schema("the return value has no annotation")
    base = split_annotated(annotation)[0]
    if base is None or base is type(None):
        return no_schema("the function returns None")
    if base is Any or base is object:
        return no_schema("the return annotation is Any")
    if _mentions_unstructured(annotation):
        return no_schema("the function returns MCP content objects")
    if base is str and not structured_output:
        return None, False, None
    builder = SchemaBuilder(globalns)
    try:
        node = builder.annotated(annotation, where)[0]
    except TypeError:
        if structured_output:
            raise
        return None, False, None

    if node.kinds == frozenset({"object"}):
        schema = dict(node.schema)
        ref = schema.pop("$ref", None)
        if ref is not None:
            def_name = ref.rsplit("/", 1)[1]
            schema = {**builder.defs[def_name], **schema}
            # Keep the definition only when something still refers to it (recursion).
            rest = {k: v for k, v in builder.defs.items() if k != def_name}
            if ref in json.dumps([schema, rest]):
                rest = builder.defs
            defs = rest
        else:
            defs = builder.defs
        schema.setdefault("type", "object")
        if defs:
            schema["$defs"] = defs
        return schema, False, node.dump

    schema = {"type": "object", "properties": {"result": node.schema}, "required": ["result"]}
    if builder.defs:
        schema["$defs"] = builder.defs
    return schema, True, node.dump
