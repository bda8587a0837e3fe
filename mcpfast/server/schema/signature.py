"""`ToolSignature`: the MCP metadata and compiled validators of one tool function, and the two
calls that use them per request (`validate_arguments`, `serialize_output`)."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping

from .errors import Mismatch, OutputError


@dataclasses.dataclass(frozen=True, eq=False)
class ToolSignature:
    """MCP metadata and compiled validators of one tool function (see `function_schema`)."""

    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    context_param: str | None
    wraps_output: bool
    parameters: tuple[str, ...]
    validator: Callable[[Any], dict[str, Any]] = dataclasses.field(repr=False)
    output_dumper: Callable[[Any], Any] | None = dataclasses.field(repr=False)
    # The arguments the validator takes as they are (validator.plain_arguments): names,
    # plain types, defaults; None: not known (a validator made elsewhere).
    plain_arguments: tuple[tuple[str, ...], tuple[type, ...], tuple[Any, ...]] | None = (
        dataclasses.field(default=None, repr=False))

    def to_tool(self) -> dict[str, Any]:
        """The ``Tool`` object for tools/list: name, description (when not empty),
        inputSchema and outputSchema (when there is one)."""
        tool: dict[str, Any] = {"name": self.name}
        if self.description:
            tool["description"] = self.description
        tool["inputSchema"] = self.input_schema
        if self.output_schema is not None:
            tool["outputSchema"] = self.output_schema
        return tool


def validate_arguments(sig: ToolSignature, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    """Check the ``arguments`` of a tools/call against ``sig`` and convert them to the keyword
    arguments of the call (Enum members, dataclass and TypedDict instances, tuples, sets,
    defaults filled in; the context parameter is not included). Raises `ArgumentError`."""
    return sig.validator(arguments)


def serialize_output(sig: ToolSignature, value: Any) -> dict[str, Any] | None:
    """The ``structuredContent`` for a tool's return value, or None when the tool has no
    output schema. Dataclasses become dicts, Enums their values, tuples and sets lists;
    ``{"result": ...}`` wraps non-object types. Raises `OutputError` when the value does not
    match the output schema."""
    if sig.output_dumper is None:
        return None
    try:
        dumped = sig.output_dumper(value)
    except Mismatch as exc:
        raise OutputError(tuple(reversed(exc.path)), exc.reason) from None
    if sig.wraps_output:
        return {"result": dumped}
    return dumped
