"""Opaque, tamper-evident cursors for the paginated MCP list methods.

`Paginator(page_size).page(items, cursor)` returns one page of ``items`` and the cursor of the
next page (None on the last page). A cursor is the unpadded base64url form of 33 bytes:

    format version (1) | next offset (8) | anchor (8) | HMAC-SHA256 truncated (16)

The HMAC covers the paginator's ``namespace`` too, so a cursor from ``tools/list`` is refused
by ``prompts/list``. Its key is random per process unless one is given (give the same ``secret``
to every worker when several processes serve one client). Anything that is not a cursor this
paginator issued — garbage, a forged or edited cursor, one from another namespace, key or
process — raises `InvalidCursor`, which the server answers with -32602 (Invalid params).

What happens when the list changes between two pages:

- With ``item_key`` (a function giving each item a stable identity, e.g. the tool name), the
  anchor is a hash of the key of the last item served. The next page starts right after that
  item wherever it now is, so items before it that were added or removed do not shift the page:
  nothing is served twice and nothing after the anchor is skipped (items inserted before the
  anchor are not served in this pass; the server's list_changed notification tells the client
  to list again). If the anchor item is gone, the cursor is stale: `InvalidCursor`.
- Without ``item_key``, the anchor is the length of the list when the cursor was issued; a list
  of another length makes the cursor stale (`InvalidCursor`). Pages of an unchanged list are
  exact; a change that keeps the length is not detected.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import struct
from typing import Any, Callable, Generic, Sequence, TypeVar

from mcpfast.server.shared_secret import derived_key

__all__ = ["InvalidCursor", "Paginator"]

T = TypeVar("T")

INVALID_PARAMS = -32602

_FORMAT_VERSION = 1
_PAYLOAD = struct.Struct(">BQQ")
_MAC_SIZE = 16
_RAW_SIZE = _PAYLOAD.size + _MAC_SIZE
# base64url of 33 bytes is exactly 44 characters, without padding.
_CURSOR_SHAPE = re.compile(r"[A-Za-z0-9_-]{%d}" % (_RAW_SIZE * 4 // 3))


class InvalidCursor(ValueError):
    """A cursor that this paginator did not issue, or that no longer fits the list.

    ``code`` is the JSON-RPC error code the server answers with (-32602, Invalid params).
    """

    code = INVALID_PARAMS


def _key_hash(key: Any) -> int:
    if isinstance(key, bytes):
        data = b"b" + key
    elif isinstance(key, str):
        data = b"s" + key.encode("utf-8", "surrogatepass")
    else:
        data = b"r" + repr(key).encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")


class Paginator(Generic[T]):
    """Splits lists into pages of ``page_size`` items with opaque cursors.

    ``page_size`` must be an int >= 1. ``namespace`` binds cursors to one list method;
    ``secret`` (>= 16 bytes) replaces the deployment's key
    (:mod:`mcpfast.server.shared_secret`: ``MCPFAST_SECRET``, else random per process); ``item_key`` enables the
    anchor-based resumption described in the module docstring.
    """

    __slots__ = ("page_size", "namespace", "_item_key", "_mac_key")

    def __init__(
        self,
        page_size: int = 100,
        *,
        namespace: str = "",
        secret: bytes | None = None,
        item_key: Callable[[T], Any] | None = None,
    ) -> None:
        if not isinstance(page_size, int) or isinstance(page_size, bool) or page_size < 1:
            raise ValueError(f"page_size must be an int >= 1, got {page_size!r}")
        if not isinstance(namespace, str):
            raise TypeError(f"namespace must be a str, got {type(namespace).__name__}")
        if secret is None:
            # The deployment's (MCPFAST_SECRET), so that any process of it takes a cursor.
            secret = derived_key("cursor")
        elif not isinstance(secret, (bytes, bytearray)) or len(secret) < 16:
            raise ValueError("secret must be at least 16 bytes")
        self.page_size = page_size
        self.namespace = namespace
        self._item_key = item_key
        # Derive a per-namespace key so the namespace needs no room in the cursor itself.
        self._mac_key = hmac.new(
            bytes(secret), b"mcpfast-cursor\x00" + namespace.encode("utf-8"), hashlib.sha256
        ).digest()

    def _mac(self, payload: bytes) -> bytes:
        return hmac.new(self._mac_key, payload, hashlib.sha256).digest()[:_MAC_SIZE]

    def _encode(self, offset: int, anchor: int) -> str:
        payload = _PAYLOAD.pack(_FORMAT_VERSION, offset, anchor)
        raw = payload + self._mac(payload)
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")

    def _decode(self, cursor: Any) -> tuple[int, int]:
        if not isinstance(cursor, str):
            raise InvalidCursor(f"cursor must be a string, got {type(cursor).__name__}")
        # 33 bytes fill 44 base64 characters exactly (no padding bits), so checking the
        # alphabet and the length makes the textual form canonical before decoding.
        if _CURSOR_SHAPE.fullmatch(cursor) is None:
            raise InvalidCursor("invalid cursor")
        raw = base64.urlsafe_b64decode(cursor)
        payload, mac = raw[: _PAYLOAD.size], raw[_PAYLOAD.size :]
        if not hmac.compare_digest(mac, self._mac(payload)):
            raise InvalidCursor("invalid cursor")
        version, offset, anchor = _PAYLOAD.unpack(payload)
        if version != _FORMAT_VERSION:
            raise InvalidCursor("invalid cursor")
        return offset, anchor

    def page(self, items: Sequence[T], cursor: str | None = None) -> tuple[list[T], str | None]:
        """One page of ``items`` starting at ``cursor`` (None: the first page) and the cursor
        of the next page, None when this page reaches the end. Raises `InvalidCursor`."""
        total = len(items)
        start = 0
        if cursor is not None:
            offset, anchor = self._decode(cursor)
            start = self._resume(items, offset, anchor)
        end = min(start + self.page_size, total)
        page = list(items[start:end])
        if end >= total:
            return page, None
        if self._item_key is None:
            anchor = total
        else:
            anchor = _key_hash(self._item_key(items[end - 1]))
        return page, self._encode(end, anchor)

    def _resume(self, items: Sequence[T], offset: int, anchor: int) -> int:
        total = len(items)
        if self._item_key is None:
            if anchor != total or offset >= total:
                raise InvalidCursor("stale cursor: the list changed, list again from the start")
            return offset
        item_key = self._item_key
        # Fast path: the anchor item is where we left it.
        if 0 < offset <= total and _key_hash(item_key(items[offset - 1])) == anchor:
            return offset
        for index in range(total):
            if _key_hash(item_key(items[index])) == anchor:
                return index + 1
        raise InvalidCursor("stale cursor: the list changed, list again from the start")
