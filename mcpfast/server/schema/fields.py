"""`Field`: constraints and descriptions for ``Annotated[X, Field(...)]``."""

from __future__ import annotations

import dataclasses
import math
import re
from typing import Any

from .sentinels import MISSING


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclasses.dataclass(frozen=True)
class Field:
    """Schema details for ``Annotated[X, Field(...)]`` (pydantic is not a dependency).

    ``ge``/``le``/``gt``/``lt``/``multiple_of`` apply to numbers (``minimum``, ``maximum``,
    ``exclusiveMinimum``, ``exclusiveMaximum``, ``multipleOf``); ``min_length``/``max_length``
    to strings, arrays and objects (``minLength``/``minItems``/``minProperties`` and the max
    forms); ``pattern`` (a regular expression searched in the string) to strings. ``default``
    makes the parameter or field optional; ``examples`` and ``title`` are copied to the schema.
    Constraints are enforced by `validate_arguments` and `serialize_output`.
    """

    description: str | None = None
    default: Any = MISSING
    ge: float | None = None
    le: float | None = None
    gt: float | None = None
    lt: float | None = None
    multiple_of: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    examples: list[Any] | None = None
    title: str | None = None

    def __post_init__(self) -> None:
        for name in ("ge", "le", "gt", "lt", "multiple_of"):
            value = getattr(self, name)
            if value is not None and not is_number(value):
                raise ValueError(f"Field({name}=...) must be a number, got {value!r}")
            if value is not None and not math.isfinite(value):
                raise ValueError(f"Field({name}=...) must be finite, got {value!r}")
        if self.multiple_of is not None and self.multiple_of <= 0:
            raise ValueError(f"Field(multiple_of=...) must be > 0, got {self.multiple_of!r}")
        for name in ("min_length", "max_length"):
            value = getattr(self, name)
            if value is not None and (
                not isinstance(value, int) or isinstance(value, bool) or value < 0
            ):
                raise ValueError(f"Field({name}=...) must be an int >= 0, got {value!r}")
        if (
            self.min_length is not None
            and self.max_length is not None
            and self.min_length > self.max_length
        ):
            raise ValueError("Field(min_length=...) is greater than max_length")
        if self.pattern is not None:
            if not isinstance(self.pattern, str):
                raise ValueError(f"Field(pattern=...) must be a string, got {self.pattern!r}")
            try:
                re.compile(self.pattern)
            except re.error as exc:
                raise ValueError(f"Field(pattern={self.pattern!r}) is not a valid regex: {exc}") from None
        if self.examples is not None:
            if not isinstance(self.examples, (list, tuple)):
                raise ValueError("Field(examples=...) must be a list")
            object.__setattr__(self, "examples", list(self.examples))
        for name in ("description", "title"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise ValueError(f"Field({name}=...) must be a string, got {value!r}")

    def merged(self, other: Field) -> Field:
        """This Field with every attribute ``other`` sets replacing ours."""
        changes = {}
        for f in dataclasses.fields(other):
            value = getattr(other, f.name)
            if value is not f.default:
                changes[f.name] = value
        return dataclasses.replace(self, **changes)
