"""What a request's ``Accept`` header allows: JSON, SSE (the Streamable HTTP endpoint's
POST and GET checks)."""

from __future__ import annotations

from mcpfast._bounded_memo import remember
from mcpfast.transports.http import headers as h

__all__ = ["accepted", "accepts"]

# (JSON, SSE) by header value. Clients send the same one or two values again and again;
# bounded, since the values come from the network.
_ACCEPTS: dict[str, tuple[bool, bool]] = {}
_ACCEPTS_KEPT = 256


def accepted(accept: str) -> tuple[bool, bool]:
    """Whether an Accept header allows JSON and whether it allows SSE (cached)."""
    found = _ACCEPTS.get(accept)
    if found is None:
        found = remember(_ACCEPTS, accept,
                         (accepts(accept, h.JSON), accepts(accept, h.EVENT_STREAM)), _ACCEPTS_KEPT)
    return found


def accepts(accept: str, media_type: str) -> bool:
    """Whether an Accept header allows media_type (wildcards included; q=0 refuses)."""
    major = media_type.split("/")[0] + "/*"
    for part in accept.split(","):
        item, _, parameters = part.strip().partition(";")
        item = item.strip().lower()
        if item in (media_type, major, "*/*"):
            q = parameters.replace(" ", "").lower()
            if "q=0" in q and not any(c in q.split("q=0", 1)[1][:4] for c in "123456789"):
                continue
            return True
    return False
