"""Server-Sent Events framing (the ``text/event-stream`` format), as bytes.

One JSON-RPC message is one event: ``id: <event id>`` (when the stream is resumable),
``event: message`` and ``data: <the compact JSON>``. A compact JSON text holds no newline,
so it always fits one ``data:`` line. Comments (``: ...``) keep idle streams alive through
proxies; ``retry:`` tells a client how long to wait before it reconnects.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

__all__ = ["SSEEvent", "comment", "message_event", "priming_event", "split_events"]


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


class SSEEvent(NamedTuple):
    """One event read from a stream: ``event`` (its type, "message" unless named),
    ``data`` (its data lines joined), ``id`` and ``retry`` (None when absent)."""

    event: str
    data: bytes
    id: Optional[str]
    retry: Optional[int]


def split_events(buffer: bytes) -> tuple[list[SSEEvent], bytes]:
    """The complete events at the start of ``buffer`` (newlines already normalized to
    ``\n``) and what is left of it (an event still arriving)."""
    events: list[SSEEvent] = []
    while b"\n\n" in buffer:
        raw, buffer = buffer.split(b"\n\n", 1)
        kind = "message"
        data: list[bytes] = []
        event_id: Optional[str] = None
        retry: Optional[int] = None
        for line in raw.split(b"\n"):
            if line.startswith(b"data:"):
                data.append(line[5:].lstrip(b" "))
            elif line.startswith(b"event:"):
                kind = line[6:].strip().decode("utf-8", "replace")
            elif line.startswith(b"id:"):
                event_id = line[3:].strip().decode("utf-8", "replace")
            elif line.startswith(b"retry:"):
                value = line[6:].strip()
                if value.isdigit():
                    retry = int(value)
        events.append(SSEEvent(kind, b"\n".join(data), event_id, retry))
    return events, buffer
