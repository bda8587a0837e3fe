"""Docstrings -> description + per-parameter descriptions (Google, Sphinx and NumPy styles)."""

from __future__ import annotations

import dataclasses
import enum
import inspect
import re

_GOOGLE_PARAM_SECTIONS = frozenset(
    {
        "args",
        "arguments",
        "parameters",
        "params",
        "keyword args",
        "keyword arguments",
        "kwargs",
        "other parameters",
    }
)
_ATTRIBUTE_SECTIONS = frozenset({"attributes"})
_GOOGLE_HEADER = re.compile(r"^([A-Za-z][A-Za-z ]*?)\s*:\s*$")
_GOOGLE_ENTRY = re.compile(r"^\*{0,2}([A-Za-z_]\w*)\s*(?:\([^)]*\))?\s*:(?:\s+(.*))?$")
_NUMPY_UNDERLINE = re.compile(r"^\s*-{3,}\s*$")
_NUMPY_ENTRY = re.compile(r"^(\*{0,2}[A-Za-z_]\w*(?:\s*,\s*\*{0,2}[A-Za-z_]\w*)*)\s*(?::.*)?$")
_SPHINX_PARAM = re.compile(
    r"^:(?:param|parameter|arg|argument|key|keyword)\s+(?:[^:]*?\s+)?\*{0,2}([A-Za-z_]\w*)\s*:\s*(.*)$"
)
_SPHINX_TYPE = re.compile(r"^:(?:type|kwtype)\s+\*{0,2}[A-Za-z_]\w*\s*:.*$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def parse_docstring(
    doc: str | None, *, sections: frozenset[str] = _GOOGLE_PARAM_SECTIONS
) -> tuple[str, dict[str, str]]:
    """Split a docstring into (description, {parameter: description}).

    The description is the docstring without its parameter section(s); other sections
    (Returns, Raises, ...) stay. ``sections`` names the Google/NumPy headers (lower case) that
    hold parameter entries; Sphinx ``:param x:`` / ``:type x:`` fields are always taken.
    """
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    params: dict[str, list[str]] = {}
    kept: list[str] = []
    i = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        stripped = line.strip()
        indent = _indent(line)
        header = _GOOGLE_HEADER.match(stripped)
        # NumPy: "Parameters" underlined by dashes.
        if (
            i + 1 < n
            and stripped.lower() in sections
            and _NUMPY_UNDERLINE.match(lines[i + 1])
        ):
            i += 2
            current: list[str] | None = None
            while i < n:
                entry_line = lines[i]
                if not entry_line.strip():
                    i += 1
                    continue
                if i + 1 < n and _NUMPY_UNDERLINE.match(lines[i + 1]):
                    break  # next NumPy section
                numpy_indent = _indent(entry_line)
                if numpy_indent < indent:
                    break
                m = _NUMPY_ENTRY.match(entry_line.strip())
                if numpy_indent == indent and m:
                    current = []
                    for name in m.group(1).split(","):
                        params[name.strip().lstrip("*")] = current
                elif numpy_indent == indent:
                    break
                elif current is not None:
                    current.append(entry_line.strip())
                i += 1
            continue
        # Google: "Args:" followed by indented entries.
        if header and header.group(1).lower() in sections:
            i += 1
            entry_indent: int | None = None
            current = None
            while i < n:
                entry_line = lines[i]
                if not entry_line.strip():
                    i += 1
                    continue
                this_indent = _indent(entry_line)
                if this_indent <= indent:
                    break
                if entry_indent is None:
                    entry_indent = this_indent
                m = _GOOGLE_ENTRY.match(entry_line.strip())
                if this_indent <= entry_indent and m:
                    current = [m.group(2)] if m.group(2) else []
                    params[m.group(1)] = current
                elif current is not None:
                    current.append(entry_line.strip())
                i += 1
            continue
        # Sphinx: ":param x: ..." with indented continuation lines.
        m = _SPHINX_PARAM.match(stripped)
        if m or _SPHINX_TYPE.match(stripped):
            current = None
            if m:
                current = [m.group(2)] if m.group(2) else []
                params[m.group(1)] = current
            i += 1
            while i < n and lines[i].strip() and _indent(lines[i]) > indent:
                if current is not None:
                    current.append(lines[i].strip())
                i += 1
            continue
        kept.append(line)
        i += 1
    description = "\n".join(line.rstrip() for line in kept).strip()
    description = re.sub(r"\n{3,}", "\n\n", description)
    return description, {k: " ".join(v).strip() for k, v in params.items() if " ".join(v).strip()}


def class_doc(cls: type) -> tuple[str, dict[str, str]]:
    """Description and attribute descriptions from a class docstring; the docstrings that
    ``@dataclass`` and (on Python 3.10) Enum generate when there is none are ignored."""
    doc = cls.__dict__.get("__doc__")
    if not isinstance(doc, str):
        return "", {}
    if dataclasses.is_dataclass(cls) and doc.startswith(f"{cls.__name__}("):
        return "", {}
    if issubclass(cls, enum.Enum) and doc == "An enumeration.":  # set by Python 3.10
        return "", {}
    return parse_docstring(
        doc, sections=_GOOGLE_PARAM_SECTIONS | _ATTRIBUTE_SECTIONS
    )
