"""The client's checks of what its callers pass (names, URIs, argument maps): a TypeError
saying which argument is wrong, before anything is sent."""

from __future__ import annotations

from typing import Any, Mapping

__all__ = ["dict_arg", "str_arg", "string_map"]


def str_arg(name: str, value: Any) -> str:
    if type(value) is not str:
        raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    return value


def dict_arg(name: str, value: Any) -> dict:
    if type(value) is dict:
        return value
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"{name} must be a dict, not {type(value).__name__}")


def string_map(name: str, value: Any) -> dict:
    """A dict of str -> str (prompt arguments, completion context)."""
    value = dict_arg(name, value)
    for key, item in value.items():
        if type(key) is not str or type(item) is not str:
            raise TypeError(f"{name} maps str to str; {key!r} -> {item!r} is not")
    return value
