"""Server-Sent Events framing (the ``text/event-stream`` format), as bytes.

One JSON-RPC message is one event: ``id: <event id>`` (when the stream is resumable),
``event: message`` and ``data: <the compact JSON>``. A compact JSON text holds no newline,
so it always fits one ``data:`` line. Comments (``: ...``) keep idle streams alive through
proxies; ``retry:`` tells a client how long to wait before it reconnects.
"""

from __future__ import annotations

from typing import Optional

__all__ = ["comment", "message_event", "priming_event"]


def message_event(frame: bytes, event_id: Optional[str] = None) -> bytes:
    """One JSON-RPC message as an SSE ``message`` event."""
    if event_id is None:
        return b"event: message\ndata: " + frame + b"\n\n"
    return b"id: " + event_id.encode("ascii") + b"\nevent: message\ndata: " + frame + b"\n\n"


def priming_event(event_id: str, retry_ms: Optional[int] = None) -> bytes:
    """An event with an id and empty data: gives the client an id to resume from before
    any message was sent (2025-11-25), with an optional reconnection delay."""
    head = b"" if retry_ms is None else b"retry: %d\n" % retry_ms
    return head + b"id: " + event_id.encode("ascii") + b"\ndata: \n\n"


def comment(text: str = "") -> bytes:
    """A comment line (ignored by clients): the keep-alive of an idle stream."""
    return b": " + text.encode("utf-8") + b"\n\n"
