"""Fuzz LineFramer.feed: random streams cut at random points give exactly their lines.

Input: byte 0 picks max_frame_size, byte 1 seeds the cut points, bytes 2.. are the stream.
Property: the frames and FrameTooLarge reports out of feed()...close() are, in order, the
stream's lines (line endings \\n or \\r\\n removed, blank lines skipped, lines over the
limit reported instead), whatever the cuts; nothing is held beyond the limit; every frame
is a read-only view of a FrameBuffer with padding after it.
"""

from __future__ import annotations

import random

from common import Choices, instrumented, main

with instrumented():
    from mcpfast._core.framing import FRAME_PADDING, FrameBuffer, FrameTooLarge, LineFramer

LIMITS = (1, 2, 3, 4, 7, 8, 16, 63, 64, 65, 100, 1000, 4096, 1 << 16, 1 << 24)
TOO_LARGE = object()


def lines_of(stream: bytes, limit: int) -> list:
    """What the framer must give for stream (the independent model of its rules)."""
    out = []
    pieces = stream.split(b"\n")
    for piece in pieces:
        line = piece[:-1] if piece[-1:] == b"\r" else piece
        if len(line) > limit:
            out.append(TOO_LARGE)
        elif line.strip(b" \t\r"):
            out.append(line)
    return out


def check(data: bytes) -> None:
    choices = Choices(data)
    limit = choices.pick(LIMITS)
    rng = random.Random(choices.byte())
    stream = choices.rest()
    cuts = sorted(rng.sample(range(1, len(stream)), min(len(stream) - 1, rng.randint(0, 12)))) \
        if len(stream) > 1 else []
    framer = LineFramer(limit)
    got: list = []
    for start, end in zip([0, *cuts], [*cuts, len(stream)]):
        got.extend(framer.feed(stream[start:end]))
        assert framer.buffered <= limit + 1, (framer.buffered, limit)
    got.extend(framer.close())
    assert framer.feed is not None and framer.closed
    out = []
    for item in got:
        if isinstance(item, FrameTooLarge):
            assert item.limit == limit and item.size > limit, (item.limit, item.size)
            out.append(TOO_LARGE)
            continue
        assert type(item) is memoryview and item.readonly
        owner = item.obj
        assert type(owner) is FrameBuffer
        start, stop = owner.span(item)
        assert stop + FRAME_PADDING <= owner.capacity
        out.append(bytes(item))
    assert out == lines_of(stream, limit), (limit, cuts)


if __name__ == "__main__":
    main(check)
