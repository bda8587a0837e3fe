"""Generic conversion of Python values to JSON values, without looking at any annotation."""

from __future__ import annotations

import collections.abc
import dataclasses
import datetime
import enum
import math
import uuid
from pathlib import PurePath
from typing import Any, Mapping


def _json_key(key: Any) -> str:
    if isinstance(key, str):
        return key.value if isinstance(key, enum.Enum) else str.__str__(key)
    if isinstance(key, enum.Enum):
        return _json_key(key.value)
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if isinstance(key, int):
        return str(int(key))
    if isinstance(key, float):
        return repr(float(key))
    raise TypeError(f"cannot use a {type(key).__name__} as a JSON object key")


def to_jsonable(value: Any) -> Any:
    """Convert a Python value to JSON-compatible data without looking at any annotation.

    dataclass instances -> dicts of their fields, Enum -> its value, tuples/sets -> lists,
    mappings -> dicts (str keys; int/float/bool/None keys become strings as ``json`` does),
    date/datetime/time -> ISO 8601 strings, UUID and paths -> strings, objects with a
    pydantic-style ``model_dump`` -> its ``mode="json"`` output. Raises TypeError for anything
    else (bytes included: return `mcpfast.server.content` objects for binary data) and
    ValueError for NaN and infinities, which JSON cannot represent.
    """
    t = type(value)
    if t is str or t is int or t is bool or value is None:
        return value
    if t is float:
        if not math.isfinite(value):
            raise ValueError(f"{value!r} cannot be represented in JSON")
        return value
    if t is dict:
        return {_json_key(k): to_jsonable(v) for k, v in value.items()}
    if t is list or t is tuple:
        return [to_jsonable(v) for v in value]
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return to_jsonable(float(value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {_json_key(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset, collections.abc.Set)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, (uuid.UUID, PurePath)):
        return str(value)
    model_dump = getattr(value, "model_dump", None)
    if callable(model_dump) and not isinstance(value, type):
        return to_jsonable(model_dump(mode="json"))
    raise TypeError(f"cannot convert a {type(value).__name__} to JSON")
