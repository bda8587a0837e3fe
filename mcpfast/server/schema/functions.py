"""Python function -> `ToolSignature`: `function_schema` (see the package docstring)."""

from __future__ import annotations

import inspect
import typing
from typing import Any, Callable

from .annotations import UNION_ORIGINS, split_annotated
from .builder import SchemaBuilder, set_default
from .docstrings import parse_docstring
from .output import output_plan
from .sentinels import MISSING, REQUIRED
from .signature import ToolSignature
from .validator import compile_validator, plain_arguments


def _is_context_annotation(tp: Any, context_type: Any) -> bool:
    tp = split_annotated(tp)[0]
    if typing.get_origin(tp) in UNION_ORIGINS:
        members = [a for a in typing.get_args(tp) if a is not type(None)]
        return len(members) == 1 and _is_context_annotation(members[0], context_type)
    tp = typing.get_origin(tp) or tp
    return isinstance(tp, type) and issubclass(tp, context_type)


def _resolved_signature(fn: Callable[..., Any], name: str) -> tuple[inspect.Signature, dict[str, Any]]:
    """The signature with annotations evaluated (``from __future__ import annotations`` and
    string annotations), Annotated metadata kept, and a dict of the annotations by name
    (``"return"`` for the return annotation).

    ``inspect.signature(eval_str=True)`` rather than ``typing.get_type_hints``: it works for
    partials and callable objects too, and does not turn ``x: int = None`` into
    ``Optional[int]`` as get_type_hints does on Python 3.10 only. String forward references
    nested inside an annotation are resolved later, against the function's globals."""
    try:
        signature = inspect.signature(fn, eval_str=True)
    except (NameError, SyntaxError, AttributeError, TypeError) as exc:
        raise TypeError(f"cannot resolve the type annotations of {name}: {exc}") from None
    except ValueError as exc:
        raise TypeError(f"cannot read the signature of {name}: {exc}") from None
    hints = {
        p.name: p.annotation
        for p in signature.parameters.values()
        if p.annotation is not inspect.Parameter.empty
    }
    if signature.return_annotation is not inspect.Signature.empty:
        hints["return"] = signature.return_annotation
    return signature, hints


def function_schema(
    fn: Callable[..., Any],
    *,
    context_type: type | tuple[type, ...] | None = None,
    name: str | None = None,
    description: str | None = None,
    structured_output: bool | None = None,
) -> ToolSignature:
    """Read ``fn`` once and build its `ToolSignature`.

    ``context_type``: parameters annotated with this class (or ``Optional`` of it, or a generic
    alias of it) receive the request context; they are left out of the schema and the
    validator, and their name is ``context_param``. ``name``/``description`` override the
    function name and docstring. ``structured_output``: None derives an output schema when the
    return annotation allows one, False never does, True requires one (TypeError otherwise).

    Raises TypeError for parameters that cannot be described: unsupported annotations,
    ``*args``/``**kwargs``, positional-only parameters, more than one context parameter.
    """
    tool_name = name or getattr(fn, "__name__", None) or type(fn).__name__
    signature, hints = _resolved_signature(fn, tool_name)
    unwrapped = inspect.unwrap(fn)
    globalns = getattr(unwrapped, "__globals__", None)
    if globalns is None:
        module = inspect.getmodule(unwrapped) or inspect.getmodule(type(unwrapped))
        globalns = vars(module) if module is not None else {}
    doc_description, param_docs = parse_docstring(inspect.getdoc(fn))
    builder = SchemaBuilder(globalns)

    properties: dict[str, Any] = {}
    required: list[str] = []
    plan: list[tuple[str, Callable[[Any], Any], Any, type | None]] = []
    context_param: str | None = None
    for param in signature.parameters.values():
        where = f"parameter {param.name!r} of {tool_name}"
        annotation = hints.get(param.name, Any)
        if context_type is not None and _is_context_annotation(annotation, context_type):
            if context_param is not None:
                raise TypeError(f"{tool_name} has two context parameters: {context_param!r} and {param.name!r}")
            context_param = param.name
            continue
        if param.kind is inspect.Parameter.VAR_POSITIONAL or param.kind is inspect.Parameter.VAR_KEYWORD:
            raise TypeError(f"{where}: *args and **kwargs cannot be described by a JSON Schema")
        if param.kind is inspect.Parameter.POSITIONAL_ONLY:
            raise TypeError(f"{where}: positional-only parameters cannot receive named arguments")
        base, param_description, fld = split_annotated(annotation)
        node = builder.apply_meta(builder.node(base, where), param_description, fld, where)
        schema = dict(node.schema)
        if "description" not in schema and param.name in param_docs:
            schema["description"] = param_docs[param.name]
        default: Any = REQUIRED
        if param.default is not inspect.Parameter.empty:
            default = param.default
        elif fld is not None and fld.default is not MISSING:
            default = fld.default
        if default is REQUIRED:
            required.append(param.name)
        else:
            set_default(schema, node, default)
        properties[param.name] = schema
        plan.append((param.name, node.convert, default, node.exact))

    input_schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        input_schema["required"] = required
    input_schema["additionalProperties"] = False
    if builder.defs:
        input_schema["$defs"] = builder.defs

    output_schema, wraps, dumper = output_plan(
        hints.get("return", MISSING)
        if signature.return_annotation is not inspect.Signature.empty
        else MISSING,
        structured_output,
        tool_name,
        globalns,
    )
    return ToolSignature(
        name=tool_name,
        description=description if description is not None else doc_description,
        input_schema=input_schema,
        output_schema=output_schema,
        context_param=context_param,
        wraps_output=wraps,
        parameters=tuple(p[0] for p in plan),
        validator=compile_validator(plan),
        output_dumper=dumper,
        plain_arguments=plain_arguments(plan),
    )
