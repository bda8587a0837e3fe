"""Tool arguments mirrored into HTTP headers (``x-mcp-header``, 2026-07-28).

A tool's inputSchema may mark primitive properties with ``"x-mcp-header": "Region"``; a
client calling it over Streamable HTTP then repeats that argument's value in the header
``Mcp-Param-Region``, so that gateways can route on it without parsing the body. A server
that reads the body must refuse a call whose headers disagree with it (-32020): a header
must be present exactly when its argument is present and not null, and equal to it once
decoded (:mod:`mcpfast.protocol.header_values`).

:func:`header_params_of` reads and checks the annotations of a schema once, when the tool
is registered (a malformed one is a ValueError then, not a surprise for clients, who must
drop such tools); :func:`header_param_problem` checks one call.
"""

from __future__ import annotations

from typing import Any, Mapping, NamedTuple, Optional

from mcpfast.protocol.header_values import encode_header_value, mirrored_value_problem

__all__ = ["HeaderParam", "header_param_problem", "header_params_of", "param_headers"]

HEADER_KEY = "x-mcp-header"
# RFC 9110 tchar: the characters of a header field name.
_TCHARS = frozenset("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_PRIMITIVES = ("string", "integer", "boolean")
# The composition and array keywords an annotation may not sit under.
_OTHER_KEYWORDS = ("items", "prefixItems", "additionalProperties", "allOf", "anyOf", "oneOf",
                   "not", "if", "then", "else", "$defs", "definitions", "dependentSchemas",
                   "patternProperties")


class HeaderParam(NamedTuple):
    """One mirrored argument: its ``path`` of property names, ``header`` (the lower-case
    name of its ``Mcp-Param-`` header) and ``name`` (as annotated, for messages)."""

    path: tuple[str, ...]
    header: str
    name: str


def header_params_of(schema: Mapping[str, Any]) -> tuple[HeaderParam, ...]:
    """The mirrored arguments of an inputSchema (ValueError for a malformed annotation)."""
    found: list[HeaderParam] = []
    _walk(schema, (), found, top=True)
    seen: set[str] = set()
    for param in found:
        if param.header in seen:
            raise ValueError(f"x-mcp-header {param.name!r} is used twice (names are "
                             f"case-insensitive)")
        seen.add(param.header)
    return tuple(found)


def _walk(schema: Any, path: tuple[str, ...], found: list[HeaderParam], top: bool = False) -> None:
    if not isinstance(schema, Mapping):
        return
    name = schema.get(HEADER_KEY)
    if name is not None:
        if top:
            raise ValueError("x-mcp-header belongs on a property, not on the schema itself")
        if type(name) is not str or not name or not _TCHARS.issuperset(name):
            raise ValueError(f"x-mcp-header of {'.'.join(path)!r} must be an HTTP token, got {name!r}")
        if schema.get("type") not in _PRIMITIVES:
            raise ValueError(f"x-mcp-header {name!r} needs a string, integer or boolean "
                             f"property, not {schema.get('type')!r}")
        found.append(HeaderParam(path, "mcp-param-" + name.lower(), name))
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        for key, sub in properties.items():
            _walk(sub, path + (key,), found)
    for keyword in _OTHER_KEYWORDS:
        if _mentions_header(schema.get(keyword)):
            raise ValueError(f"x-mcp-header may only be reached through 'properties' (found "
                             f"under {keyword!r} at {'.'.join(path) or 'the root'})")


def _mentions_header(value: Any) -> bool:
    if isinstance(value, Mapping):
        return HEADER_KEY in value or any(_mentions_header(v) for v in value.values())
    if isinstance(value, list):
        return any(_mentions_header(v) for v in value)
    return False


def _argument(arguments: Any, path: tuple[str, ...]) -> Any:
    value = arguments
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def header_param_problem(params: tuple[HeaderParam, ...], arguments: Any,
                         headers: Mapping[str, str]) -> Optional[str]:
    """Why a call's ``Mcp-Param-*`` headers disagree with its arguments (the -32020
    message), or None when they agree. ``headers``: lower-case names."""
    for param in params:
        value = _argument(arguments, param.path)
        header = headers.get(param.header)
        label = f"Mcp-Param-{param.name}"
        if value is None:
            if header is not None:
                return f"Header mismatch: {label} is sent but the argument is absent"
            continue
        problem = mirrored_value_problem(label, header, value, "(its argument is given)")
        if problem is not None:
            return problem
    return None


def param_headers(params: tuple[HeaderParam, ...], arguments: Any) -> dict[str, str]:
    """The ``Mcp-Param-*`` headers a client sends for a call with ``arguments``: one per
    mirrored argument present and not null (integers in decimal, booleans as
    ``true``/``false``, strings as they are or in the Base64 sentinel form)."""
    headers: dict[str, str] = {}
    for param in params:
        value = _argument(arguments, param.path)
        if value is None:
            continue
        if type(value) is bool:
            text = "true" if value else "false"
        elif type(value) is int:
            text = str(value)
        else:
            text = str(value)
        headers[f"Mcp-Param-{param.name}"] = encode_header_value(text)
    return headers
