"""The list requests' pagination on the client: one page checked for its shape, or every
page followed through ``nextCursor`` (a cursor seen twice is a server loop:
PaginationError)."""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Optional

from mcpfast.client.arguments import str_arg
from mcpfast.client.errors import InvalidResult, PaginationError

__all__ = ["every_page", "page_of"]

#: ``request(method, params, timeout=...)``: the client's request of one result.
Request = Callable[..., Awaitable[Any]]


async def page_of(request: Request, method: str, key: str, cursor: Optional[str],
                  timeout: Optional[float]) -> dict:
    """One page of ``method`` (its items under ``key``), from ``cursor`` (None: the first)."""
    params = None if cursor is None else {"cursor": str_arg("cursor", cursor)}
    page = await request(method, params, timeout=timeout)
    if type(page) is not dict:
        raise InvalidResult(method, f"expected an object, got {page!r}")
    if type(page.get(key)) is not list:
        raise InvalidResult(method, f"{key!r} must be an array")
    next_cursor = page.get("nextCursor")
    if next_cursor is not None and type(next_cursor) is not str:
        raise InvalidResult(method, f"nextCursor must be a string, got {next_cursor!r}")
    return page


async def every_page(request: Request, method: str, key: str, timeout: Optional[float]) -> list:
    """The items of every page of ``method``, in order."""
    page = await page_of(request, method, key, None, timeout)
    items = list(page[key])
    cursor = page.get("nextCursor")
    seen: set[str] = set()
    while cursor is not None:
        if cursor in seen:
            raise PaginationError(method, cursor)
        seen.add(cursor)
        page = await page_of(request, method, key, cursor, timeout)
        items.extend(page[key])
        cursor = page.get("nextCursor")
    return items
