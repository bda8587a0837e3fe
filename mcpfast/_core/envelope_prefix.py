"""The id and kind of a JSON-RPC message read from the first bytes of its line.

When a line is over the frame limit it is dropped unread, but the request it carried must
still fail at once (its sender would otherwise wait forever), and for that its id is
needed. Senders usually write ``jsonrpc``, ``id`` and ``method`` before the large
``params`` or ``result``, so the id sits in the line's first bytes: ``read_prefix`` reads
the top-level members of the object in order while they are ``jsonrpc``, ``id`` or
``method`` with a scalar value, and stops at the first other member (its value is what
made the line large) or where the prefix ends.

Only values followed by ``,`` or ``}`` inside the prefix are taken, so a number cut by the
end of the prefix is never mistaken for a shorter id. Runs only for oversize lines (the
error path), so it is plain Python.
"""

from __future__ import annotations

import json
import re
from typing import Any, Optional

__all__ = ["read_prefix"]

_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")
_ENVELOPE = ("jsonrpc", "id", "method")


def _valid_id(value: Any) -> bool:
    return type(value) is str or type(value) is int


def read_prefix(prefix: bytes) -> tuple[Optional[str], Any]:
    """(kind, id) of the message starting with ``prefix``: kind "request" (an id and a
    method, or an id and params), "response" (an id and a result or error), or None when
    they cannot be told; id None when not found or not a valid request id."""
    text = prefix.decode("utf-8", "ignore")
    seen: dict[str, Any] = {}
    stopped_at: Optional[str] = None
    try:
        pos = _SPACE.match(text, 0).end()  # type: ignore[union-attr]
        if text[pos] != "{":
            return None, None
        pos += 1
        while True:
            pos = _SPACE.match(text, pos).end()  # type: ignore[union-attr]
            key, pos = _DECODER.raw_decode(text, pos)
            if type(key) is not str:
                break
            pos = _SPACE.match(text, pos).end()  # type: ignore[union-attr]
            if text[pos] != ":":
                break
            pos = _SPACE.match(text, pos + 1).end()  # type: ignore[union-attr]
            if key not in _ENVELOPE or text[pos] in "{[":
                stopped_at = key
                break
            value, pos = _DECODER.raw_decode(text, pos)
            pos = _SPACE.match(text, pos).end()  # type: ignore[union-attr]
            if text[pos] not in ",}":
                break
            seen[key] = value
            if text[pos] == "}":
                break
            pos += 1
    except (ValueError, IndexError):
        pass
    request_id = seen.get("id")
    if not _valid_id(request_id):
        return None, None
    if "method" in seen or stopped_at == "params":
        return "request", request_id
    if stopped_at in ("result", "error"):
        return "response", request_id
    return None, request_id
