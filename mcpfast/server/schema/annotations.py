"""Reading type annotations: the typing origins each kind of annotation has (with and without
typing_extensions), ``Annotated`` metadata, TypedDict requiredness wrappers, printable names."""

from __future__ import annotations

import collections.abc
import types
import typing
from typing import Any

from .fields import Field

UNION_ORIGINS: tuple[Any, ...] = (typing.Union,)
if hasattr(types, "UnionType"):
    UNION_ORIGINS += (types.UnionType,)

LIST_ORIGINS = (list, collections.abc.Sequence, collections.abc.MutableSequence)
SET_ORIGINS = (set, frozenset, collections.abc.Set, collections.abc.MutableSet)
DICT_ORIGINS = (dict, collections.abc.Mapping, collections.abc.MutableMapping)

REQUIREDNESS_WRAPPERS: set[Any] = set()
for _module_name in ("typing", "typing_extensions"):
    try:
        _module = __import__(_module_name)
    except ImportError:  # typing_extensions is optional
        continue
    for _name in ("Required", "NotRequired", "ReadOnly"):
        _wrapper = getattr(_module, _name, None)
        if _wrapper is not None:
            REQUIREDNESS_WRAPPERS.add(_wrapper)

LITERAL_ORIGINS: set[Any] = {typing.Literal}
ANNOTATED_ORIGINS: set[Any] = {typing.Annotated}
try:
    import typing_extensions as _te

    LITERAL_ORIGINS.add(_te.Literal)
    ANNOTATED_ORIGINS.add(_te.Annotated)
except ImportError:  # typing_extensions is optional
    pass


def split_annotated(tp: Any) -> tuple[Any, str | None, Field | None]:
    """Annotated[X, ...] -> (X, description, Field). Later metadata wins."""
    description: str | None = None
    fld: Field | None = None
    while typing.get_origin(tp) in ANNOTATED_ORIGINS:
        for meta in tp.__metadata__:
            if isinstance(meta, str):
                description = meta
            elif isinstance(meta, Field):
                fld = meta if fld is None else fld.merged(meta)
        tp = tp.__origin__
    if fld is not None and fld.description is not None:
        description = fld.description
    return tp, description, fld


def typeddict_key_required(hint: Any, declared: bool) -> bool:
    """Whether a TypedDict key is required. An explicit Required/NotRequired wrapper decides;
    the class's ``__required_keys__`` cannot see them when annotations are strings
    (``from __future__ import annotations``), so they are read from the resolved hint."""
    while True:
        origin = typing.get_origin(hint)
        if origin not in REQUIREDNESS_WRAPPERS:
            return declared
        if getattr(origin, "_name", None) == "Required":
            return True
        if getattr(origin, "_name", None) == "NotRequired":
            return False
        hint = typing.get_args(hint)[0]  # ReadOnly[...] says nothing about requiredness


def strip_requiredness(tp: Any) -> Any:
    while typing.get_origin(tp) in REQUIREDNESS_WRAPPERS:
        tp = typing.get_args(tp)[0]
    return tp


def type_name(tp: Any) -> str:
    if isinstance(tp, type):
        return tp.__qualname__
    return repr(tp)
