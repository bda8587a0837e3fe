"""BatchReply: the one reply to a JSON-RPC batch, sent once all its requests are done."""

from __future__ import annotations

from typing import Any, Callable, Optional

from mcpfast._core.codec import encode_batch

__all__ = ["BatchReply"]


class BatchReply:
    """Collects the replies to one batch and delivers them as one array when all are done.

    ``deliver(frame)`` gets the encoded array, or None when the batch owed a reply but
    nothing is left to send (its requests were all cancelled). ``pending`` counts the
    async requests still running plus one for the loop feeding the batch's elements;
    ``owed`` is True once the batch held a request or an invalid element (a batch of only
    notifications and responses gets no reply at all).
    """

    __slots__ = ("deliver", "frames", "pending", "owed")

    def __init__(self, deliver: Callable[[Optional[bytes]], None]) -> None:
        self.deliver = deliver
        self.frames: list[Any] = []
        self.pending = 1
        self.owed = False

    def add(self, frame: bytes) -> None:
        """A reply produced while the batch is being fed (sync handlers, errors)."""
        self.frames.append(frame)

    def hold(self) -> None:
        """One more request of the batch runs asynchronously."""
        self.pending += 1

    def release(self, frame: Optional[bytes]) -> None:
        """One part is done (with its reply, or None); delivers when it was the last."""
        if frame is not None:
            self.frames.append(frame)
        self.pending -= 1
        if self.pending == 0 and self.owed:
            frames = self.frames
            self.deliver(encode_batch(frames) if frames else None)
