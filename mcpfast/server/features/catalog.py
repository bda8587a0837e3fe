"""Catalog: one registry of the server (tools, resources, resource templates or prompts).

A Catalog maps a key (tool name, resource URI, template string, prompt name) to the
registered item, in registration order, and answers the item's list method:

- ``definitions(features)`` -- the wire definitions of every item for one protocol version,
  computed once per version and cached until the catalog changes (a list request costs a
  dict lookup, not a rebuild);
- ``list_result(features, cursor)`` -- the result of ``tools/list`` & co. Without a page
  size the whole list is one result object, cached per version as well; with a page size,
  pages and opaque cursors come from :class:`~mcpfast.server.pagination.Paginator`
  (a bad cursor is InvalidParams, -32602, as the specification asks). A cursor given to an
  unpaginated list is refused the same way: this server never issued it.

Items must have ``definition(features) -> dict``. ``on_change`` is called after every add or
remove (the server sends list_changed notifications from it).
"""

from __future__ import annotations

from typing import Any, Callable, Generic, Iterable, Iterator, Optional, TypeVar

from mcpfast.jsonrpc.errors import InvalidParams
from mcpfast.protocol.features import VersionFeatures
from mcpfast.server.pagination import InvalidCursor, Paginator

__all__ = ["Catalog"]

T = TypeVar("T")


class Catalog(Generic[T]):
    """Key -> item registry with cached, paginated list results (module docstring).

    method: the list method ("tools/list"); result_key: the list's key in its result
    ("tools"); id_field: the field of a definition that identifies it ("name", "uri",
    "uriTemplate"), used to anchor cursors; page_size: items per page, None for one page.
    """

    __slots__ = ("method", "result_key", "items", "on_change", "_paginator", "_definitions",
                 "_results")

    def __init__(self, method: str, result_key: str, id_field: str,
                 page_size: Optional[int] = None,
                 on_change: Optional[Callable[[], None]] = None) -> None:
        self.method = method
        self.result_key = result_key
        # Read directly on hot paths (tools/call looks tools up here).
        self.items: dict[str, T] = {}
        self.on_change = on_change
        self._paginator: Optional[Paginator[dict[str, Any]]] = None
        if page_size is not None:
            self._paginator = Paginator(
                page_size, namespace=method, item_key=lambda d: d[id_field]
            )
        self._definitions: dict[str, list[dict[str, Any]]] = {}
        self._results: dict[str, dict[str, Any]] = {}

    @property
    def page_size(self) -> Optional[int]:
        return None if self._paginator is None else self._paginator.page_size

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[T]:
        return iter(list(self.items.values()))

    def __contains__(self, key: object) -> bool:
        return key in self.items

    def get(self, key: str) -> Optional[T]:
        return self.items.get(key)

    def add(self, key: str, item: T) -> Optional[T]:
        """Register item under key (replacing and returning any previous one)."""
        previous = self.items.get(key)
        if previous is not None:
            del self.items[key]
        self.items[key] = item
        self._changed()
        return previous

    def remove(self, key: str) -> T:
        """Unregister and return the item under key; KeyError when there is none."""
        item = self.items.pop(key)
        self._changed()
        return item

    def add_many(self, entries: Iterable[tuple[str, T]]) -> None:
        """Register several items at once: one change (one list_changed) when any."""
        entries = list(entries)
        for key, item in entries:
            self.items.pop(key, None)
            self.items[key] = item
        if entries:
            self._changed()

    def remove_many(self, keys: Iterable[str]) -> None:
        """Unregister the items under ``keys`` (absent ones ignored): one change when any."""
        removed = [self.items.pop(key) for key in keys if key in self.items]
        if removed:
            self._changed()

    def _changed(self) -> None:
        self._definitions = {}
        self._results = {}
        if self.on_change is not None:
            self.on_change()

    def definitions(self, features: VersionFeatures) -> list[dict[str, Any]]:
        """Every item's wire definition for one version (cached; do not modify)."""
        found = self._definitions.get(features.version)
        if found is None:
            found = [item.definition(features) for item in self.items.values()]  # type: ignore[attr-defined]
            self._definitions[features.version] = found
        return found

    def list_result(self, features: VersionFeatures, cursor: Any = None) -> dict[str, Any]:
        """The result of the list method (module docstring); InvalidParams for bad cursors."""
        paginator = self._paginator
        if paginator is None:
            if cursor is not None:
                raise InvalidParams(f"Invalid cursor for {self.method}: this list is not paginated")
            found = self._results.get(features.version)
            if found is None:
                found = {self.result_key: self.definitions(features)}
                self._results[features.version] = found
            return found
        try:
            page, next_cursor = paginator.page(self.definitions(features), cursor)
        except InvalidCursor as exc:
            raise InvalidParams(f"Invalid cursor for {self.method}: {exc}") from None
        result: dict[str, Any] = {self.result_key: page}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return result
