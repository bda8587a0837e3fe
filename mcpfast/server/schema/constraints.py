"""`Field` constraints as JSON Schema keywords and as a check of JSON values."""

from __future__ import annotations

import re
from typing import Any, Callable

from .errors import Mismatch
from .fields import Field
from .nodes import NUMERIC_KINDS


def constraint_check(fld: Field) -> Callable[[Any], None] | None:
    """Build a check for the JSON value against Field constraints (JSON Schema semantics: a
    keyword only applies to values of the types it is defined for)."""
    ge, le, gt, lt, mult = fld.ge, fld.le, fld.gt, fld.lt, fld.multiple_of
    min_len, max_len = fld.min_length, fld.max_length
    regex = re.compile(fld.pattern) if fld.pattern is not None else None
    numeric = any(v is not None for v in (ge, le, gt, lt, mult))
    sized = min_len is not None or max_len is not None
    if not numeric and not sized and regex is None:
        return None

    def count_check(count: int, noun: str) -> None:
        if min_len is not None and count < min_len:
            raise Mismatch(f"expected at least {min_len} {noun}, got {count}")
        if max_len is not None and count > max_len:
            raise Mismatch(f"expected at most {max_len} {noun}, got {count}")

    def check(value: Any) -> None:
        t = type(value)
        if (t is int or t is float) and numeric:
            if ge is not None and not value >= ge:
                raise Mismatch(f"must be >= {ge}, got {value!r}")
            if le is not None and not value <= le:
                raise Mismatch(f"must be <= {le}, got {value!r}")
            if gt is not None and not value > gt:
                raise Mismatch(f"must be > {gt}, got {value!r}")
            if lt is not None and not value < lt:
                raise Mismatch(f"must be < {lt}, got {value!r}")
            if mult is not None:
                if isinstance(mult, int) and t is int:
                    bad = value % mult != 0
                else:
                    try:
                        quotient = value / mult
                        bad = quotient != int(quotient)
                    except (OverflowError, ValueError):
                        bad = True
                if bad:
                    raise Mismatch(f"must be a multiple of {mult}, got {value!r}")
        elif t is str:
            if sized:
                count_check(len(value), "characters")
            if regex is not None and regex.search(value) is None:
                raise Mismatch(f"must match pattern {fld.pattern!r}")
        elif t is list and sized:
            count_check(len(value), "items")
        elif t is dict and sized:
            count_check(len(value), "properties")

    return check


def constraint_keywords(fld: Field, kinds: frozenset[str], where: str) -> dict[str, Any]:
    keywords: dict[str, Any] = {}
    numeric = {
        "ge": "minimum",
        "le": "maximum",
        "gt": "exclusiveMinimum",
        "lt": "exclusiveMaximum",
        "multiple_of": "multipleOf",
    }
    for attr, keyword in numeric.items():
        value = getattr(fld, attr)
        if value is not None:
            if not kinds & NUMERIC_KINDS:
                raise TypeError(f"Field({attr}=...) on {where} needs a numeric type")
            keywords[keyword] = value
    sized = {"string": ("minLength", "maxLength"), "array": ("minItems", "maxItems"),
             "object": ("minProperties", "maxProperties")}
    if fld.min_length is not None or fld.max_length is not None:
        applicable = [kind for kind in sized if kind in kinds]
        if not applicable:
            raise TypeError(f"Field(min_length/max_length) on {where} needs a string, array or object type")
        for kind in applicable:
            low, high = sized[kind]
            if fld.min_length is not None:
                keywords[low] = fld.min_length
            if fld.max_length is not None:
                keywords[high] = fld.max_length
    if fld.pattern is not None:
        if "string" not in kinds:
            raise TypeError(f"Field(pattern=...) on {where} needs a string type")
        keywords["pattern"] = fld.pattern
    return keywords
