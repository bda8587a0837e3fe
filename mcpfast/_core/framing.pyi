"""Newline-delimited framing with zero-copy frames.

LineFramer turns a byte stream (MCP stdio, newline-framed TCP) into frames: each complete
line, without its line ending, as a read-only memoryview of a FrameBuffer the framer owns.
Incoming bytes are copied exactly once, into that buffer; every frame is followed there by
FRAME_PADDING readable bytes, so the decoder parses it in place with no further copy.
"""

import sys
from typing import Final, final

from typing_extensions import Buffer

#: Readable bytes guaranteed after the end of every buffer a FrameBuffer exports (64,
#: simdjson's SIMDJSON_PADDING).
FRAME_PADDING: Final[int]
#: LineFramer's max_frame_size when none is given (16 MiB).
DEFAULT_MAX_FRAME_SIZE: Final[int]
#: The largest max_frame_size LineFramer accepts.
MAX_FRAME_SIZE_LIMIT: Final[int]

class FrameTooLarge(ValueError):
    """A line longer than the framer's max_frame_size; its bytes were dropped.

    LineFramer does not raise it: it places an instance in the list feed() or close()
    returns, where the frame would have been, and goes on with the next line.  Each
    oversize line is reported exactly once, in the feed() call in which it became certain
    to exceed the limit.  Picklable.
    """

    limit: int
    """The max_frame_size in force."""
    kind: str | None
    """"request" or "response" when the line's first bytes tell, else None."""
    request_id: str | int | None
    """The message's id when the line's first bytes hold it, else None."""
    prefix: bytes
    """The line's first bytes (up to 1 KiB) the id was looked for in."""
    size: int
    """Bytes of the line read when it was reported, not counting its line ending (the
    line's full length when its newline had been read by then); always > limit."""

    def __init__(self, limit: int, size: int, prefix: bytes = b"") -> None: ...

@final
class FrameBuffer:
    """A padded block of bytes that LineFramer's frames are views of.

    Created only by LineFramer (calling the class raises TypeError).  Supports the buffer
    protocol, read-only: every buffer it exports lies inside its first
    ``capacity - FRAME_PADDING`` bytes, so FRAME_PADDING readable bytes follow the end of
    any frame inside the same allocation.  The framer never changes or frees bytes of a
    FrameBuffer while any buffer of it is exported.
    """

    @property
    def capacity(self) -> int:
        """Size of the allocation in bytes, padding included."""
    @property
    def exports(self) -> int:
        """Buffers of this block currently exported; 0 once no view of it is alive.

        The frames one feed() returns share a single export, which ends when the last of
        them is released; each memoryview made of the FrameBuffer itself counts one.
        """
    def span(self, frame: Buffer) -> tuple[int, int]:
        """Offsets (start, stop) of the bytes of contiguous buffer `frame` in this block.

        Raises ValueError when they do not lie inside this FrameBuffer's allocation.
        """
    def __init__(self, *args: object) -> None:
        """Raises TypeError: FrameBuffers are made by LineFramer only."""
    if sys.version_info >= (3, 12):
        def __buffer__(self, flags: int, /) -> memoryview: ...
        def __release_buffer__(self, buffer: memoryview, /) -> None: ...

@final
class LineFramer:
    """Splits a byte stream into newline-delimited frames, zero-copy.

    feed() returns, in stream order, one read-only memoryview per complete line (without
    its ``\\n`` or ``\\r\\n``) and one FrameTooLarge per line longer than max_frame_size.
    Lines holding only spaces, tabs or ``\\r`` are skipped.  A frame view stays valid and
    unchanged for as long as it is held; its ``.obj`` is a FrameBuffer.

    Memory held is bounded by max_frame_size (plus one MiB of read-ahead), whatever the
    peer sends: a line is reported and dropped as soon as it exceeds the limit, and its
    further bytes are skipped without being stored.
    """

    def __new__(cls, max_frame_size: int = 16777216) -> LineFramer:
        """max_frame_size: the most bytes a frame may have, line ending not counted.

        Raises TypeError when it is not an int (bool included), ValueError when it is not
        in 1..MAX_FRAME_SIZE_LIMIT.
        """
    @property
    def max_frame_size(self) -> int:
        """The most bytes a frame may have (its ``\\n`` / ``\\r\\n`` not counted)."""
    @property
    def buffered(self) -> int:
        """Bytes of the unterminated line currently held (0 while skipping an oversize one)."""
    @property
    def closed(self) -> bool:
        """True once close() was called."""
    def feed(self, data: Buffer) -> list[memoryview | FrameTooLarge]:
        """Add bytes; return the frames and FrameTooLarge errors they complete, in order.

        `data` may be any bytes-like object (a non-contiguous memoryview is copied first);
        anything else raises TypeError.  Lines may be split across any number of calls and
        one call may complete many.  Raises RuntimeError after close().
        """
    def close(self) -> list[memoryview | FrameTooLarge]:
        """End of stream: return the final line if it had no newline (at most one frame).

        A final line over the limit was already reported by feed().  Frames handed out stay
        valid.  Afterwards feed() raises RuntimeError; close() again returns [].
        """
    def release(self) -> None:
        """End of stream without a last line (the connection was dropped): the buffer is
        freed now rather than with the framer; afterwards feed() raises RuntimeError and
        close() returns [].  Frames handed out stay valid."""
