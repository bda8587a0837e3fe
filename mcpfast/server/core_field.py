"""CoreField: an attribute of the Server facade that is a field of its ServerCore.

``Server.publisher`` and the like read and write ``server.core.publisher``: users keep
reading (and, for the few meant for it, setting) them on the Server, while the lower
modules hold the core alone (:mod:`mcpfast.server.core`).
"""

from __future__ import annotations

from typing import Any, Generic, Optional, TypeVar, overload

__all__ = ["CoreField"]

T = TypeVar("T")


class CoreField(Generic[T]):
    """A data descriptor forwarding one attribute to the owner's ``core``."""

    __slots__ = ("name",)

    def __init__(self) -> None:
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: Optional[type] = None) -> CoreField[T]: ...

    @overload
    def __get__(self, instance: Any, owner: Optional[type] = None) -> T: ...

    def __get__(self, instance: Any, owner: Optional[type] = None) -> Any:
        if instance is None:
            return self
        return getattr(instance.core, self.name)

    def __set__(self, instance: Any, value: T) -> None:
        setattr(instance.core, self.name, value)
