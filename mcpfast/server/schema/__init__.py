"""Python function -> MCP tool metadata: JSON Schemas, argument validation, structured output.

`function_schema(fn)` reads a function's signature, type annotations and docstring once, at
decoration time, and returns a `ToolSignature` holding:

- ``input_schema``: a JSON Schema (dialect 2020-12, the MCP default, so no ``$schema`` key) of
  type ``object`` with one property per parameter, ``required`` for parameters without a default,
  named object types (dataclasses, TypedDicts) under ``$defs`` so recursive types work, and
  ``"additionalProperties": false``. Unknown arguments are rejected by `validate_arguments`, so
  the schema says so; the specification recommends exactly this form for parameterless tools and
  the official TypeScript SDK emits it for every tool. (The official Python SDK leaves the key out
  and silently drops unknown arguments; a client that honours the schema never notices the
  difference.) Nested dataclass / TypedDict objects are closed the same way.
- ``output_schema``: the schema of ``structuredContent``, derived from the return annotation, or
  None when there is no annotation or it is ``None``, ``str``, ``Any`` or mentions MCP content
  classes (`mcpfast.server.content`). MCP requires ``type: object`` at the root, so an object
  return type (dataclass, TypedDict, ``dict[str, X]``) is used directly and anything else is
  wrapped as ``{"result": <value>}`` (``wraps_output`` is then True and `serialize_output` wraps
  the value the same way). Return annotations that cannot be described give no output schema
  unless ``structured_output=True`` asks for one, in which case they are a TypeError.
- a validator compiled once per signature (one converter closure per parameter, nested closures
  for containers) that `validate_arguments` runs per call, and the matching output serializer.

Supported annotations: ``str``, ``int``, ``float``, ``bool``, ``None``, ``Optional[X]`` /
``X | None``, ``Union``, ``list[X]`` / ``List`` / ``Sequence``, ``tuple[X, ...]`` / ``tuple[A, B]``,
``set[X]`` / ``frozenset[X]``, ``dict[str, X]`` / ``Mapping``, ``Any`` (also an unannotated
parameter), ``Literal[...]``, ``Enum`` subclasses, ``TypedDict`` (``total=``, ``Required``,
``NotRequired``), dataclasses, ``NewType``, and ``Annotated[X, "description"]`` /
``Annotated[X, Field(...)]``. Anything else raises TypeError naming the parameter and the type.

Validation rules (they mirror what a JSON Schema validator says about the generated schema):
``bool`` is not an integer; an integer is accepted for ``float`` (converted to float); a float
with an integral value is accepted for ``int`` (JSON Schema counts 3.0 as an integer; converted
to int); ``None`` only where the type allows null; unknown arguments and missing required
arguments are errors; defaults are filled in. Values are converted to what the annotation asks
for: Enum members, dataclass instances, TypedDict dicts, tuples, sets.

Modules (one concern each; the names below are the public API, importable from this package):

- ``functions``: `function_schema` (function -> `ToolSignature`).
- ``signature``: `ToolSignature`, `validate_arguments`, `serialize_output`.
- ``builder``: annotation -> JSON Schema + converter + dumper (``SchemaBuilder``).
- ``nodes``: the compiled form of one annotation and the scalar / choice nodes.
- ``annotations``: reading typing constructs (Annotated, Required, origins).
- ``constraints``: `Field` constraints as schema keywords and checks.
- ``fields``: `Field`. ``sentinels``: `MISSING` and the default markers.
- ``validator``: the per-tool argument validator. ``output``: output schema and dumper,
  `UnstructuredOutput` (the base the MCP content classes derive from).
- ``docstrings``: `parse_docstring`. ``jsonable``: `to_jsonable`.
- ``errors``: `ArgumentError`, `OutputError`.

This package never imports `mcpfast.server.content`; content imports it.
"""

from __future__ import annotations

from .docstrings import parse_docstring
from .errors import ArgumentError, OutputError
from .fields import Field
from .functions import function_schema
from .jsonable import to_jsonable
from .output import UnstructuredOutput
from .sentinels import MISSING
from .signature import ToolSignature, serialize_output, validate_arguments

__all__ = [
    "MISSING",
    "ArgumentError",
    "Field",
    "OutputError",
    "ToolSignature",
    "UnstructuredOutput",
    "function_schema",
    "parse_docstring",
    "serialize_output",
    "to_jsonable",
    "validate_arguments",
]
