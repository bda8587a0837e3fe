"""RFC 6570 URI templates as MCP resource templates use them.

`UriTemplate(template)` parses a template once (ValueError when it is not valid RFC 6570:
unbalanced braces, empty expressions, bad variable names, reserved operators ``= , ! @ |``,
bad prefix lengths, prefix and explode together, control characters or spaces in literals).

Expansion (`UriTemplate.expand`) implements RFC 6570 level 4 fully: every operator (``{var}``,
``{+var}``, ``{#var}``, ``{.var}``, ``{/var}``, ``{;var}``, ``{?var}``, ``{&var}``), prefix
``{var:3}`` and explode ``{var*}`` modifiers, string / list / mapping values. ``None``, empty
lists and empty mappings are undefined (left out); numbers are written with ``str``, booleans as
``true``/``false``.

Matching (`UriTemplate.match`) is the inverse for the URIs expansion produces, compiled to one
regular expression per template, with percent-decoded values:

- ``{var}`` matches one or more characters other than ``/ ? #`` (and ``,`` when the
  expression lists several variables) — one path segment or part of it.
- ``{+var}`` (reserved) matches one or more of any character, ``/`` included; it stops before
  ``?`` and ``#`` when a later part of the template starts a query or fragment.
  ``{#var}`` is the same behind a ``#``, optional as a whole.
- ``{.var}`` / ``{/var}`` / ``{;var}`` match their prefixed forms; the expression is optional
  as a whole. Exploded ``{/path*}`` / ``{.ext*}`` / ``{var*}`` / ``{;v*}`` match one or more
  items and give a list.
- ``{?q,lang}`` / ``{&q}``: the query is parsed as ``name=value`` pairs in any order; each
  variable is optional (absent from the result when missing), a repeated non-exploded variable
  or a parameter the template does not name means no match; an exploded ``{?tag*}`` gives the
  list of its repeated values. Associative (mapping) explode is expansion-only.
- A variable used twice must match the same value both times.
Values that a reserved expansion left percent-encoded (``%20`` inside a ``{+var}`` value) come
back decoded, so ``expand`` then ``match`` returns the original value except for reserved
values that themselves contain ``%XX`` sequences. A match whose percent-encoding is not valid
UTF-8 fails (None).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Union
from urllib.parse import quote, unquote

__all__ = ["UriTemplate", "is_template"]

Value = Union[str, list[str]]

_OPERATORS = "+#./;?&"
_RESERVED_OPERATORS = "=,!@|"
_VARNAME = re.compile(r"(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*")
_VARSPEC = re.compile(rf"({_VARNAME.pattern})(?::([1-9][0-9]{{0,3}})|(\*))?")
_PCT_TRIPLET = re.compile(r"%[0-9A-Fa-f]{2}")
_BAD_LITERAL = re.compile(r"[\x00-\x20\x7f]")
_RESERVED_SAFE = ":/?#[]@!$&'()*+,;="


@dataclass(frozen=True)
class _VarSpec:
    name: str
    prefix: int | None
    explode: bool


@dataclass(frozen=True)
class _Expression:
    operator: str
    varspecs: tuple[_VarSpec, ...]


# operator -> (first, separator, named, if-empty, allow reserved)  (RFC 6570 appendix A)
_BEHAVIOUR: dict[str, tuple[str, str, bool, str, bool]] = {
    "": ("", ",", False, "", False),
    "+": ("", ",", False, "", True),
    "#": ("#", ",", False, "", True),
    ".": (".", ".", False, "", False),
    "/": ("/", "/", False, "", False),
    ";": (";", ";", True, "", False),
    "?": ("?", "&", True, "=", False),
    "&": ("&", "&", True, "=", False),
}


def _parse(template: str) -> list[str | _Expression]:
    if not isinstance(template, str):
        raise TypeError(f"a URI template is a str, got {type(template).__name__}")
    parts: list[str | _Expression] = []
    pos = 0
    length = len(template)
    while pos < length:
        open_at = template.find("{", pos)
        close_at = template.find("}", pos)
        if close_at != -1 and (open_at == -1 or close_at < open_at):
            raise ValueError(f"unmatched '}}' at position {close_at} in URI template {template!r}")
        literal = template[pos:] if open_at == -1 else template[pos:open_at]
        if literal:
            bad = _BAD_LITERAL.search(literal)
            if bad:
                raise ValueError(
                    f"character {bad.group()!r} is not allowed in URI template {template!r}"
                )
            parts.append(literal)
        if open_at == -1:
            break
        close_at = template.find("}", open_at)
        if close_at == -1:
            raise ValueError(f"unclosed '{{' at position {open_at} in URI template {template!r}")
        body = template[open_at + 1 : close_at]
        if "{" in body:
            raise ValueError(f"nested '{{' at position {open_at} in URI template {template!r}")
        parts.append(_parse_expression(body, template))
        pos = close_at + 1
    return parts


def _parse_expression(body: str, template: str) -> _Expression:
    if not body:
        raise ValueError(f"empty expression '{{}}' in URI template {template!r}")
    operator = ""
    if body[0] in _OPERATORS:
        operator, body = body[0], body[1:]
    elif body[0] in _RESERVED_OPERATORS:
        raise ValueError(f"operator {body[0]!r} is reserved (RFC 6570) in URI template {template!r}")
    varspecs = []
    for spec in body.split(","):
        m = _VARSPEC.fullmatch(spec)
        if m is None:
            raise ValueError(f"invalid variable {spec!r} in URI template {template!r}")
        varspecs.append(_VarSpec(m.group(1), int(m.group(2)) if m.group(2) else None, bool(m.group(3))))
    return _Expression(operator, tuple(varspecs))


def _encode(text: str, allow_reserved: bool) -> str:
    if not allow_reserved:
        return quote(text, safe="")
    # Reserved expansion keeps reserved characters and existing %XX triplets as they are.
    out = []
    pos = 0
    for m in _PCT_TRIPLET.finditer(text):
        out.append(quote(text[pos : m.start()], safe=_RESERVED_SAFE))
        out.append(m.group())
        pos = m.end()
    out.append(quote(text[pos:], safe=_RESERVED_SAFE))
    return "".join(out)


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, float)):
        return str(value)
    raise TypeError(f"cannot expand a {type(value).__name__} into a URI")


def _normalize(value: Any) -> str | list[str] | list[tuple[str, str]] | None:
    """None for undefined; str; list of str; list of (key, value) pairs for mappings."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        pairs = [(_scalar(k), _scalar(v)) for k, v in value.items() if v is not None]
        return pairs or None
    if isinstance(value, (list, tuple)):
        items = [_scalar(v) for v in value if v is not None]
        return items or None
    return _scalar(value)


def _expand_expression(expr: _Expression, values: Mapping[str, Any]) -> str:
    first, sep, named, if_empty, allow_reserved = _BEHAVIOUR[expr.operator]
    pieces: list[str] = []
    for spec in expr.varspecs:
        value = _normalize(values.get(spec.name))
        if value is None:
            continue
        name = spec.name
        if isinstance(value, str):
            if spec.prefix is not None:
                value = value[: spec.prefix]
            encoded = _encode(value, allow_reserved)
            if named:
                pieces.append(name + ("=" + encoded if value else if_empty))
            else:
                pieces.append(encoded)
            continue
        if spec.prefix is not None:
            raise ValueError(f"the prefix modifier of {name!r} does not apply to a list or mapping")
        # _normalize gives one shape, never both: pairs (from a mapping) or scalars (from a list).
        pairs = [item for item in value if isinstance(item, tuple)]
        scalars = [item for item in value if isinstance(item, str)]
        if not spec.explode:
            if pairs:
                joined = ",".join(
                    _encode(k, allow_reserved) + "," + _encode(v, allow_reserved) for k, v in pairs
                )
            else:
                joined = ",".join(_encode(v, allow_reserved) for v in scalars)
            pieces.append(name + "=" + joined if named else joined)
            continue
        items: list[str] = []
        if pairs:
            for k, v in pairs:
                key = _encode(k, allow_reserved)
                if named:
                    items.append(key + ("=" + _encode(v, allow_reserved) if v else if_empty))
                else:
                    items.append(key + "=" + _encode(v, allow_reserved))
        else:
            for v in scalars:
                encoded = _encode(v, allow_reserved)
                if named:
                    items.append(name + ("=" + encoded if v else if_empty))
                else:
                    items.append(encoded)
        pieces.append(sep.join(items))
    if not pieces:
        return ""
    return first + sep.join(pieces)


# How the matched text of one group becomes a value.
_SCALAR, _LIST_COMMA, _LIST_DOT, _LIST_SLASH, _PARAM, _PARAM_LIST, _QUERY = range(7)


def _prefix_group(plain_char: str, prefix: int) -> str:
    """A group for ``{var:N}``: N characters before encoding, each either one plain character
    or the 1-4 %XX triplets of its UTF-8 form; the decoded length is checked after matching."""
    return f"((?:%[0-9A-Fa-f]{{2}}|{plain_char}){{1,{4 * prefix}}})"


def _decode(text: str) -> str:
    return unquote(text, errors="strict")


class UriTemplate:
    """A parsed RFC 6570 URI template; see the module docstring for the matching rules."""

    __slots__ = ("template", "_parts", "variables", "_regex", "_groups", "_query_vars", "_query_prefixes")

    template: str
    variables: tuple[str, ...]
    _parts: tuple[Union[str, _Expression], ...]
    _regex: re.Pattern[str]
    _groups: tuple[tuple[int, str, int, int], ...]
    _query_vars: dict[str, bool]
    _query_prefixes: dict[str, int]

    def __init__(self, template: str) -> None:
        parts = _parse(template)
        object.__setattr__(self, "template", template)
        object.__setattr__(self, "_parts", tuple(parts))
        names: list[str] = []
        for part in parts:
            if isinstance(part, _Expression):
                for spec in part.varspecs:
                    if spec.name not in names:
                        names.append(spec.name)
        object.__setattr__(self, "variables", tuple(names))
        self._compile()

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("UriTemplate is immutable")

    def __repr__(self) -> str:
        return f"UriTemplate({self.template!r})"

    def __str__(self) -> str:
        return self.template

    def __eq__(self, other: object) -> bool:
        if isinstance(other, UriTemplate):
            return self.template == other.template
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.template)

    @property
    def is_static(self) -> bool:
        """True when the template has no expression (it matches only itself)."""
        return not self.variables

    # -- expansion ----------------------------------------------------------------------

    def expand(self, values: Mapping[str, Any] | None = None, /, **kwargs: Any) -> str:
        """The URI for the given variable values (a mapping and/or keyword arguments; names
        that are not Python identifiers need the mapping). Missing variables are undefined."""
        merged: dict[str, Any] = dict(values) if values else {}
        merged.update(kwargs)
        out = []
        for part in self._parts:
            if isinstance(part, str):
                out.append(part)
            else:
                out.append(_expand_expression(part, merged))
        return "".join(out)

    # -- matching -----------------------------------------------------------------------

    def _compile(self) -> None:
        pattern: list[str] = []
        # (group number, variable name, how to read it, prefix length or 0)
        groups: list[tuple[int, str, int, int]] = []
        query_vars: dict[str, bool] = {}  # name -> explode
        query_prefixes: dict[str, int] = {}  # name -> prefix length
        group = 0
        parts = self._parts
        for index, part in enumerate(parts):
            if isinstance(part, str):
                pattern.append(re.escape(part))
                continue
            op = part.operator
            later_query = any(
                (isinstance(p, str) and ("?" in p or "#" in p))
                or (isinstance(p, _Expression) and p.operator in "?&#")
                for p in parts[index + 1 :]
            )
            if op in ("?", "&"):
                group += 1
                lead = r"\?" if op == "?" else "&"
                pattern.append(f"(?:{lead}([^#]*))?")
                groups.append((group, "", _QUERY, 0))
                for spec in part.varspecs:
                    if query_vars.get(spec.name, spec.explode) != spec.explode:
                        raise ValueError(
                            f"query variable {spec.name!r} is both exploded and not in {self.template!r}"
                        )
                    query_vars[spec.name] = spec.explode
                    if spec.prefix is not None:
                        query_prefixes[spec.name] = spec.prefix
                continue
            if op in ("", "+", "#"):
                if op == "":
                    char = "[^/?#,]" if len(part.varspecs) > 1 else "[^/?#]"
                elif later_query:
                    char = "[^?#,]" if len(part.varspecs) > 1 else "[^?#]"
                else:
                    char = "[^,]" if len(part.varspecs) > 1 else "[\\s\\S]"
                pieces = []
                for spec in part.varspecs:
                    group += 1
                    if spec.prefix is not None:
                        plain = char[:-1] + "%]" if char.startswith("[^") else "[^%]"
                        pieces.append(_prefix_group(plain, spec.prefix))
                    else:
                        pieces.append(f"({char}+)")
                    groups.append(
                        (group, spec.name, _LIST_COMMA if spec.explode else _SCALAR, spec.prefix or 0)
                    )
                body = ",".join(pieces)
                if op == "#":
                    pattern.append(f"(?:#{body})?")
                else:
                    pattern.append(body)
                continue
            if op in (".", "/"):
                lead = re.escape(op)
                char = "[^/?#.]" if op == "." else "[^/?#]"
                pieces = []
                for spec in part.varspecs:
                    group += 1
                    if spec.explode:
                        pieces.append(f"((?:{lead}{char}+)+)")
                        groups.append((group, spec.name, _LIST_DOT if op == "." else _LIST_SLASH, 0))
                    elif spec.prefix is not None:
                        pieces.append(lead + _prefix_group(char[:-1] + "%]", spec.prefix))
                        groups.append((group, spec.name, _SCALAR, spec.prefix))
                    else:
                        pieces.append(f"{lead}({char}+)")
                        groups.append((group, spec.name, _SCALAR, 0))
                pattern.append(f"(?:{''.join(pieces)})?")
                continue
            # ";" path-style parameters: each one optional, in template order.
            pieces = []
            for spec in part.varspecs:
                group += 1
                name = re.escape(spec.name)
                if spec.explode:
                    pieces.append(f"((?:;{name}(?:=[^;/?#]*)?(?=[;/?#]|$))+)?")
                    groups.append((group, spec.name, _PARAM_LIST, 0))
                else:
                    pieces.append(f"(;{name}(?:=[^;/?#]*)?(?=[;/?#]|$))?")
                    groups.append((group, spec.name, _PARAM, spec.prefix or 0))
            pattern.append("".join(pieces))
        object.__setattr__(self, "_regex", re.compile("".join(pattern)))
        object.__setattr__(self, "_groups", tuple(groups))
        object.__setattr__(self, "_query_vars", query_vars)
        object.__setattr__(self, "_query_prefixes", query_prefixes)

    def match(self, uri: str) -> dict[str, Value] | None:
        """The variable values that expand to ``uri`` (percent-decoded; lists for exploded
        variables), or None when ``uri`` does not fit the template."""
        if not isinstance(uri, str):
            return None
        m = self._regex.fullmatch(uri)
        if m is None:
            return None
        result: dict[str, Value] = {}
        query_blobs: list[str] = []
        try:
            for number, name, how, prefix in self._groups:
                text = m.group(number)
                if text is None:
                    continue
                if how == _QUERY:
                    query_blobs.append(text)
                    continue
                value: Value
                if how == _SCALAR:
                    value = _decode(text)
                elif how == _LIST_COMMA:
                    value = [_decode(item) for item in text.split(",")]
                elif how == _LIST_DOT:
                    value = [_decode(item) for item in text[1:].split(".")]
                elif how == _LIST_SLASH:
                    value = [_decode(item) for item in text[1:].split("/")]
                elif how == _PARAM:
                    _, _, raw = text[1:].partition("=")
                    value = _decode(raw)
                else:  # _PARAM_LIST
                    value = [_decode(item.partition("=")[2]) for item in text[1:].split(";")]
                if prefix and len(value) > prefix:
                    return None  # longer than the prefix modifier allows
                if name in result and result[name] != value:
                    return None
                result[name] = value
            if query_blobs and not self._read_query("&".join(query_blobs), result):
                return None
        except UnicodeDecodeError:
            return None
        return result

    def _read_query(self, query: str, result: dict[str, Value]) -> bool:
        query_vars = self._query_vars
        seen: set[str] = set()
        for pair in query.split("&"):
            if not pair:
                continue
            raw_name, has_value, raw_value = pair.partition("=")
            name = _decode(raw_name)
            if name not in query_vars:
                return False
            value = _decode(raw_value) if has_value else ""
            if len(value) > self._query_prefixes.get(name, len(value)):
                return False
            if query_vars[name]:
                existing = result.get(name)
                if name in seen and isinstance(existing, list):
                    existing.append(value)
                elif name in result and name not in seen:
                    # Also bound by a non-query expression: must agree.
                    if result[name] != [value]:
                        return False
                    seen.add(name)
                else:
                    result[name] = [value]
                    seen.add(name)
            else:
                if name in seen:
                    return False
                if name in result and result[name] != value:
                    return False
                result[name] = value
                seen.add(name)
        return True


def is_template(text: str) -> bool:
    """True when ``text`` is a valid URI template with at least one expression (a plain URI,
    or text with malformed braces, is not)."""
    if not isinstance(text, str) or "{" not in text:
        return False
    try:
        return bool(UriTemplate(text).variables)
    except ValueError:
        return False
