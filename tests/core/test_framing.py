"""LineFramer: newline framing, \\r\\n, blank lines, splits, oversize lines, close(), zero-copy
views and their padding, argument checking, and property tests against a reference model."""

import array
import ctypes
import gc
import pickle
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpfast._core.framing import (
    DEFAULT_MAX_FRAME_SIZE,
    FRAME_PADDING,
    MAX_FRAME_SIZE_LIMIT,
    FrameBuffer,
    FrameTooLarge,
    LineFramer,
)

KiB = 1024
MiB = 1024 * KiB

# Stands for a FrameTooLarge in expected output sequences.
TOO_LARGE = "FrameTooLarge"


def check_frame(frame):
    """Assert frame is a read-only byte view of a FrameBuffer with padding after it."""
    assert type(frame) is memoryview
    assert frame.readonly
    assert frame.ndim == 1 and frame.itemsize == 1 and frame.format == "B"
    assert frame.c_contiguous
    buf = frame.obj
    assert type(buf) is FrameBuffer
    start, stop = buf.span(frame)
    assert stop - start == len(frame) > 0
    assert stop + FRAME_PADDING <= buf.capacity


def collect(items, limit):
    """Frames (still as views) and TOO_LARGE markers of one feed()/close() result."""
    out = []
    for item in items:
        if isinstance(item, FrameTooLarge):
            assert item.limit == limit
            assert item.size > limit
            out.append(TOO_LARGE)
        else:
            check_frame(item)
            out.append(item)
    return out


def as_bytes(items):
    return [item if item is TOO_LARGE else bytes(item) for item in items]


def run(chunks, limit=DEFAULT_MAX_FRAME_SIZE, hold=True):
    """Feed chunks then close; frames are read only at the end when hold is true."""
    framer = LineFramer(max_frame_size=limit)
    out = []
    for chunk in chunks:
        got = collect(framer.feed(chunk), limit)
        out.extend(got if hold else as_bytes(got))
        assert framer.buffered <= limit + 1
    got = collect(framer.close(), limit)
    out.extend(got if hold else as_bytes(got))
    return as_bytes(out)


def expected(stream, limit=None):
    """Reference model: what feeding `stream` then closing must give."""
    out = []
    for line in stream.split(b"\n"):  # the last piece is the unterminated tail
        frame = line[:-1] if line.endswith(b"\r") else line
        if limit is not None and len(frame) > limit:
            out.append(TOO_LARGE)
        elif frame.strip(b" \t\r"):
            out.append(frame)
    return out


def chunked(data, cuts):
    points = [0, *sorted(set(cuts)), len(data)]
    return [data[a:b] for a, b in zip(points, points[1:])]


# --- basic framing ------------------------------------------------------------------------


def test_single_frame():
    framer = LineFramer()
    (frame,) = framer.feed(b'{"jsonrpc":"2.0"}\n')
    check_frame(frame)
    assert frame == b'{"jsonrpc":"2.0"}'
    assert framer.buffered == 0


def test_many_frames_in_one_feed():
    frames = [b'{"id":%d}' % i for i in range(2000)]
    got = LineFramer().feed(b"\n".join(frames) + b"\n")
    assert len(got) == 2000
    for frame in got:
        check_frame(frame)
    assert [bytes(f) for f in got] == frames


def test_frames_behave_as_ordinary_byte_views():
    first, frame = LineFramer().feed(b"x\n{ab}\n")
    assert len(frame) == frame.nbytes == 4
    assert frame.shape == (4,) and frame.strides == (1,)
    assert frame.tobytes() == bytes(frame) == b"{ab}"
    assert frame.tolist() == list(b"{ab}")
    assert frame[0] == ord("{") and frame[-1] == ord("}")
    assert bytes(frame[1:3]) == b"ab" and bytes(frame[::-1]) == b"}ba{"
    assert hash(frame) == hash(b"{ab}")
    assert frame == b"{ab}" and frame != first
    assert bytes(memoryview(frame)) == b"{ab}"
    assert bytes(frame.cast("c")) == b"{ab}"
    assert b"{ab}" in [frame]
    assert bytes(first) == b"x"


def test_frames_of_one_feed_share_one_buffer():
    got = LineFramer().feed(b"a\nbb\nccc\n")
    assert got[0].obj is got[1].obj is got[2].obj
    assert [got[0].obj.span(f) for f in got] == [(0, 1), (2, 4), (5, 8)]


def test_crlf_is_not_part_of_the_frame():
    assert run([b"one\r\ntwo\r\n"]) == [b"one", b"two"]


def test_only_one_trailing_cr_is_stripped_and_inner_cr_kept():
    assert run([b"a\r\r\n", b"b\rc\n"]) == [b"a\r", b"b\rc"]


def test_lone_cr_does_not_end_a_frame():
    assert run([b"a\rb\n"]) == [b"a\rb"]


def test_empty_and_blank_lines_are_skipped():
    stream = b"\n\n\r\n \n\t\r\n \t \r\r\nx\n\n  y \n\r\n"
    assert run([stream]) == [b"x", b"  y "]


def test_blank_line_check_looks_past_leading_whitespace():
    assert run([b"   {}\n\t\r[1]\r\n"]) == [b"   {}", b"\t\r[1]"]


def test_non_ascii_and_nul_bytes_pass_through():
    frame = "héllo \u2603".encode() + b"\x00\xff\x01"
    assert run([frame + b"\n"]) == [frame]


def test_empty_feed_returns_nothing():
    framer = LineFramer()
    assert framer.feed(b"") == []
    assert framer.feed(b"ab") == []
    assert framer.feed(b"") == []
    assert framer.buffered == 2
    assert [bytes(f) for f in framer.feed(b"\n")] == [b"ab"]


def test_frame_split_byte_by_byte():
    stream = b'{"a":1}\r\n\n{"b":[2,3]}\n'
    framer = LineFramer()
    out = []
    for i in range(len(stream)):
        out.extend(framer.feed(stream[i : i + 1]))
    assert [bytes(f) for f in out] == [b'{"a":1}', b'{"b":[2,3]}']


def test_buffered_counts_the_partial_line():
    framer = LineFramer()
    framer.feed(b"abc\nde")
    assert framer.buffered == 2
    framer.feed(b"f\r")
    assert framer.buffered == 4
    framer.feed(b"\n")
    assert framer.buffered == 0


STREAM = b'{"a":1}\r\n\n x \n{"bb":2}\nlast\r\n\r\n\tz\rq\n'


@pytest.mark.parametrize("hold", [True, False])
def test_every_single_split_point(hold):
    want = expected(STREAM)
    assert want == [b'{"a":1}', b" x ", b'{"bb":2}', b"last", b"\tz\rq"]
    for i in range(len(STREAM) + 1):
        assert run([STREAM[:i], STREAM[i:]], hold=hold) == want, i


def test_every_pair_of_split_points():
    want = expected(STREAM)
    n = len(STREAM)
    for i in range(n + 1):
        for j in range(i, n + 1):
            assert run([STREAM[:i], STREAM[i:j], STREAM[j:]]) == want, (i, j)


def test_every_pair_of_split_points_with_a_limit():
    stream = b"ok\r\ntoolong\nfits\r\nxxxxx\r\n\nabcd\r"
    limit = 4
    want = expected(stream, limit)
    assert want == [b"ok", TOO_LARGE, b"fits", TOO_LARGE, b"abcd"]
    n = len(stream)
    for i in range(n + 1):
        for j in range(i, n + 1):
            assert run([stream[:i], stream[i:j], stream[j:]], limit) == want, (i, j)


def test_huge_frame_split_across_many_feeds():
    frame = bytes(range(256)).replace(b"\n", b"N") * (10 * MiB // 256)
    stream = b"before\n" + frame + b"\nafter\n"
    framer = LineFramer()
    out = []
    for i in range(0, len(stream), 64 * KiB):
        out.extend(framer.feed(stream[i : i + 64 * KiB]))
        assert framer.buffered <= len(frame)
    assert len(out) == 3
    for f in out:
        check_frame(f)
    assert out[1] == frame
    assert [bytes(out[0]), bytes(out[2])] == [b"before", b"after"]


def test_one_feed_larger_than_the_read_ahead_piece():
    # One call bigger than the framer's 1 MiB copy-in piece: lines cross piece boundaries.
    frames = [b"%07d" % i + b"y" * (i % 200) for i in range(40000)]
    stream = b"\n".join(frames) + b"\n"
    assert len(stream) > 3 * MiB
    assert run([stream]) == frames


def test_huge_frame_in_one_feed():
    frame = b"z" * (5 * MiB)
    assert run([b"a\n" + frame + b"\nb"]) == [b"a", frame, b"b"]


# --- close() ------------------------------------------------------------------------------


def test_close_returns_final_frame_without_newline():
    framer = LineFramer()
    assert bytes(framer.feed(b"one\ntw")[0]) == b"one"
    (last,) = framer.close()
    check_frame(last)
    assert last == b"tw"
    assert framer.closed
    assert framer.buffered == 0


def test_close_strips_a_final_cr():
    framer = LineFramer()
    framer.feed(b"abc\r")
    assert [bytes(f) for f in framer.close()] == [b"abc"]


@pytest.mark.parametrize("tail", [b"", b"x\n", b"x\n\r", b"x\n  \t"])
def test_close_with_nothing_or_blank_buffered(tail):
    framer = LineFramer()
    framer.feed(tail)
    assert framer.close() == []


def test_close_on_a_fresh_framer():
    assert LineFramer().close() == []


def test_close_twice_returns_empty_list():
    framer = LineFramer()
    framer.feed(b"abc")
    assert len(framer.close()) == 1
    assert framer.close() == []


@pytest.mark.parametrize("data", [b"", b"x\n", bytearray(b"x"), "text", None])
def test_feed_after_close_raises(data):
    framer = LineFramer()
    framer.close()
    with pytest.raises(RuntimeError, match="closed"):
        framer.feed(data)


def test_frames_stay_valid_after_close_and_after_the_framer_is_gone():
    framer = LineFramer()
    first = framer.feed(b"first\nsecond")
    last = framer.close()
    del framer
    gc.collect()
    assert [bytes(f) for f in first + last] == [b"first", b"second"]


def test_close_after_an_oversize_line_already_reported():
    framer = LineFramer(max_frame_size=3)
    (err,) = framer.feed(b"abcdef")
    assert isinstance(err, FrameTooLarge)
    assert framer.close() == []


def test_close_accepts_a_final_line_at_the_limit_before_its_cr():
    framer = LineFramer(max_frame_size=3)
    assert framer.feed(b"abc\r") == []
    assert [bytes(f) for f in framer.close()] == [b"abc"]


def test_close_reports_nothing_more_for_a_line_discarded_up_to_its_newline():
    framer = LineFramer(max_frame_size=3)
    assert as_bytes(collect(framer.feed(b"abcdef\nok"), 3)) == [TOO_LARGE]
    assert [bytes(f) for f in framer.close()] == [b"ok"]


# --- max frame size -----------------------------------------------------------------------


def test_default_max_frame_size():
    assert DEFAULT_MAX_FRAME_SIZE == 16 * MiB
    assert LineFramer().max_frame_size == DEFAULT_MAX_FRAME_SIZE
    assert LineFramer(10).max_frame_size == 10
    assert LineFramer(max_frame_size=MAX_FRAME_SIZE_LIMIT).max_frame_size == MAX_FRAME_SIZE_LIMIT


def test_frame_exactly_at_the_limit_is_accepted():
    limit = 8
    assert run([b"12345678\n", b"12345678\r\n"], limit) == [b"12345678", b"12345678"]


def test_frame_one_over_the_limit_is_rejected():
    limit = 8
    assert run([b"123456789\n"], limit) == [TOO_LARGE]
    assert run([b"123456789\r\n"], limit) == [TOO_LARGE]


def test_oversize_in_the_middle_keeps_frames_before_and_after():
    framer = LineFramer(max_frame_size=5)
    got = framer.feed(b"one\n" + b"x" * 50 + b"\ntwo\r\n" + b"y" * 6 + b"\r\nthree\n")
    assert [type(g).__name__ for g in got] == [
        "memoryview",
        "FrameTooLarge",
        "memoryview",
        "FrameTooLarge",
        "memoryview",
    ]
    assert [bytes(got[0]), bytes(got[2]), bytes(got[4])] == [b"one", b"two", b"three"]
    assert (got[1].limit, got[1].size) == (5, 50)
    # A complete line's size is its length without the line ending.
    assert (got[3].limit, got[3].size) == (5, 6)


def test_oversize_is_reported_in_the_feed_that_crosses_the_limit():
    framer = LineFramer(max_frame_size=10)
    assert [bytes(f) for f in framer.feed(b"ok\n" + b"a" * 4)] == [b"ok"]
    assert framer.feed(b"a" * 4) == []
    assert framer.buffered == 8
    (err,) = framer.feed(b"a" * 4)
    assert isinstance(err, FrameTooLarge)
    assert (err.limit, err.size) == (10, 12)
    assert framer.buffered == 0
    # The rest of the line is skipped, and never reported again.
    for _ in range(100):
        assert framer.feed(b"a" * 1000) == []
        assert framer.buffered == 0
    assert [bytes(f) for f in framer.feed(b"aaa\r\nnext\n")] == [b"next"]


def test_oversize_reported_at_limit_plus_one_byte():
    framer = LineFramer(max_frame_size=4)
    assert framer.feed(b"abcd") == []
    (err,) = framer.feed(b"e")
    assert err.size == 5


def test_trailing_cr_at_limit_plus_one_waits_for_the_next_byte():
    framer = LineFramer(max_frame_size=3)
    assert framer.feed(b"abc\r") == []
    assert framer.buffered == 4
    assert [bytes(f) for f in framer.feed(b"\n")] == [b"abc"]
    assert framer.feed(b"abc\r") == []
    (err,) = framer.feed(b"d")
    assert (err.limit, err.size) == (3, 5)
    assert framer.feed(b"\nok\n")[0] == b"ok"


def test_oversize_line_whose_newline_starts_the_next_feed():
    framer = LineFramer(max_frame_size=3)
    (err,) = framer.feed(b"abcd")
    assert err.size == 4
    assert [bytes(f) for f in framer.feed(b"\nok\n")] == [b"ok"]


def test_many_oversize_lines_in_one_feed_each_reported_once_in_place():
    framer = LineFramer(max_frame_size=2)
    got = as_bytes(collect(framer.feed(b"aaa\nb\nccc\r\nddd\n\nee\n"), 2))
    assert got == [TOO_LARGE, b"b", TOO_LARGE, TOO_LARGE, b"ee"]


def test_blank_line_over_the_limit_is_still_oversize():
    assert run([b" " * 10 + b"\nok\n"], 4) == [TOO_LARGE, b"ok"]


def test_oversize_line_spanning_pieces_of_one_big_feed():
    limit = 2 * MiB
    stream = b"a\n" + b"x" * (3 * MiB) + b"\nb\n"
    framer = LineFramer(max_frame_size=limit)
    got = framer.feed(stream)
    assert bytes(got[0]) == b"a" and bytes(got[2]) == b"b" and len(got) == 3
    assert isinstance(got[1], FrameTooLarge)
    assert limit < got[1].size <= 3 * MiB


def test_memory_stays_bounded_by_the_limit():
    limit = 1 * MiB
    chunk = b"x" * (64 * KiB)
    framer = LineFramer(max_frame_size=limit)
    tracemalloc.start()
    try:
        reported = 0
        for _ in range(1024):  # 64 MiB of one line
            got = framer.feed(chunk)
            reported += len(got)
            assert framer.buffered <= limit + 1
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert reported == 1
    assert peak < 6 * MiB
    (frame,) = framer.feed(b"\nok\n")
    assert frame == b"ok"
    assert frame.obj.capacity <= limit + 2 * MiB


def test_buffer_shrinks_after_a_huge_frame_is_released():
    framer = LineFramer()
    big = b"q" * (8 * MiB)
    (frame,) = framer.feed(big + b"\n")
    assert frame.obj.capacity >= 8 * MiB
    del frame
    (small,) = framer.feed(b"small\n")
    assert small.obj.capacity <= 1 * MiB


# --- zero-copy safety ---------------------------------------------------------------------


def test_held_frames_are_unchanged_by_later_feeds():
    framer = LineFramer()
    held = framer.feed(b"alpha\nbeta\r\ngam")
    snapshot = [bytes(f) for f in held]
    # Plenty more data, with and without newlines, forcing new blocks and partial moves.
    for i in range(50):
        framer.feed(b"%d:" % i + b"z" * 9000 + b"\n" + b"p" * 7000)
        assert [bytes(f) for f in held] == snapshot
    framer.feed(b"\n")
    framer.close()
    assert [bytes(f) for f in held] == snapshot == [b"alpha", b"beta"]


def test_partial_line_survives_a_move_while_frames_are_held():
    framer = LineFramer()
    held = framer.feed(b"first\npar")
    filler = b"f" * (300 * KiB)  # more than the block has left: the partial line moves
    assert framer.feed(b"tial" + filler) == []
    (frame,) = framer.feed(b"!\n")
    assert frame == b"partial" + filler + b"!"
    assert frame.obj is not held[0].obj
    assert held[0] == b"first"


def test_live_views_never_overlap_within_a_buffer():
    framer = LineFramer()
    live = []
    for i in range(300):
        live.extend(framer.feed(b"m%d-" % i + b"w" * (i * 37 % 2000) + b"\n"))
    by_buffer = {}
    for frame in live:
        check_frame(frame)
        by_buffer.setdefault(id(frame.obj), []).append(frame.obj.span(frame))
    for spans in by_buffer.values():
        spans.sort()
        for (_, stop), (start, _) in zip(spans, spans[1:]):
            assert stop < start
    assert [bytes(f)[:5] for f in live[:3]] == [b"m0-", b"m1-ww", b"m2-ww"]


def test_block_is_reused_in_place_once_no_view_is_alive():
    framer = LineFramer()
    buf = framer.feed(b"one\ntw")[0].obj
    assert buf.exports == 0
    (frame,) = framer.feed(b"o\n")
    assert frame.obj is buf
    assert buf.span(frame) == (0, 3)  # the partial line was moved to the front
    assert frame == b"two"


def test_exports_follow_live_views():
    # The frames of one feed() share one export of their block; it ends with the last one.
    framer = LineFramer()
    a, b = framer.feed(b"a\nb\n")
    buf = a.obj
    assert b.obj is buf
    assert buf.exports == 1
    (c,) = framer.feed(b"c\n")
    assert c.obj is buf
    assert buf.exports == 2
    sub = a[0:1]
    del a
    assert buf.exports == 2
    del sub
    assert buf.exports == 2
    b.release()
    assert buf.exports == 1
    del c
    assert buf.exports == 0


def test_feeding_a_frame_back_into_its_own_framer():
    framer = LineFramer()
    (frame,) = framer.feed(b"echo\n")
    got = framer.feed(frame)
    assert got == []
    assert framer.buffered == 4
    assert [bytes(f) for f in framer.feed(b"\n")] == [b"echo"]
    assert frame == b"echo"


def test_input_is_copied():
    data = bytearray(b"abc\nde")
    framer = LineFramer()
    (frame,) = framer.feed(data)
    data[:] = b"XYZ\nQQ"
    assert frame == b"abc"
    assert [bytes(f) for f in framer.feed(b"\n")] == [b"de"]


# --- padding ------------------------------------------------------------------------------


def test_frame_padding_constant():
    assert FRAME_PADDING == 64


def test_every_frame_has_padding_after_it_in_its_allocation():
    framer = LineFramer()
    frames = []
    for size in (1, 63, 64, 65, 4095, 64 * KiB - 1, 64 * KiB, 128 * KiB - FRAME_PADDING - 1):
        frames.extend(framer.feed(b"p" * size + b"\n" + b"q" * size))
        frames.extend(framer.feed(b"\n"))
    frames.extend(framer.feed(b"r" * 100))
    frames.extend(framer.close())
    assert len(frames) == 17
    for frame in frames:
        check_frame(frame)


def test_frame_ending_the_allocation_region_still_has_padding():
    # A final frame filling what one block can hold: its padding is the block's last bytes.
    framer = LineFramer()
    framer.feed(b"s" * (128 * KiB - FRAME_PADDING))
    (frame,) = framer.close()
    start, stop = frame.obj.span(frame)
    assert stop - start == 128 * KiB - FRAME_PADDING
    assert stop + FRAME_PADDING <= frame.obj.capacity


@pytest.mark.parametrize("room", [0, 1, FRAME_PADDING - 1, FRAME_PADDING, FRAME_PADDING + 1, 200])
def test_appending_next_to_held_frames_keeps_padding(room):
    # With a view alive the framer appends after it only when the new bytes and their
    # padding both fit; a feed ending `room` bytes short of the block's end probes that.
    framer = LineFramer()
    held = framer.feed(b"h" * 1000 + b"\n")
    capacity = held[0].obj.capacity
    (frame,) = framer.feed(b"n" * (capacity - 1001 - room - 1) + b"\n")
    check_frame(frame)
    check_frame(held[0])


def test_whole_buffer_export_excludes_the_padding():
    (frame,) = LineFramer().feed(b"abc\n")
    buf = frame.obj
    whole = memoryview(buf)
    assert whole.readonly
    assert len(whole) == buf.capacity - FRAME_PADDING
    assert buf.exports == 2
    assert whole[:3] == b"abc"
    whole.release()
    assert buf.exports == 1


def test_frame_buffer_is_read_only():
    (frame,) = LineFramer().feed(b"abc\n")
    for target in (frame, frame.obj):
        with pytest.raises(TypeError):
            (ctypes.c_char * 1).from_buffer(target)
    with pytest.raises(TypeError):
        frame[0] = 0


def test_span_rejects_foreign_buffers():
    (frame,) = LineFramer().feed(b"abc\n")
    with pytest.raises(ValueError):
        frame.obj.span(b"abc")
    with pytest.raises(TypeError):
        frame.obj.span("abc")


def test_frame_buffer_cannot_be_created_directly():
    with pytest.raises(TypeError):
        FrameBuffer()
    empty = FrameBuffer.__new__(FrameBuffer)
    assert empty.capacity == 0
    with pytest.raises(BufferError):
        memoryview(empty)
    with pytest.raises(ValueError):
        empty.span(b"x")


def test_frame_buffer_repr():
    (frame,) = LineFramer().feed(b"abc\n")
    assert repr(frame.obj) == f"<FrameBuffer capacity={frame.obj.capacity} exports=1>"


# --- argument types -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        b"ab\ncd\n",
        bytearray(b"ab\ncd\n"),
        memoryview(b"ab\ncd\n"),
        memoryview(b"__ab\ncd\n__")[2:-2],
        memoryview(b"aXbX\nXcXdX\nX")[::2],  # not contiguous
        array.array("B", b"ab\ncd\n"),
        memoryview(bytearray(b"ab\ncd\n")).cast("B", (2, 3)),
    ],
    ids=["bytes", "bytearray", "memoryview", "slice", "strided", "array", "2d"],
)
def test_feed_accepts_bytes_like_objects(data):
    framer = LineFramer()
    assert [bytes(f) for f in framer.feed(data)] == [b"ab", b"cd"]


def test_feed_takes_raw_bytes_of_wider_items():
    data = array.array("H", [0x0A61, 0x0A62])  # little-endian: b"a\nb\n"
    if data.tobytes() != b"a\nb\n":
        data.byteswap()
    assert [bytes(f) for f in LineFramer().feed(memoryview(data))] == [b"a", b"b"]


@pytest.mark.parametrize("data", ["text\n", None, 10, 1.5, [10], (b"a",), object()])
def test_feed_rejects_non_bytes(data):
    framer = LineFramer()
    with pytest.raises(TypeError, match="bytes"):
        framer.feed(data)
    assert [bytes(f) for f in framer.feed(b"still\n")] == [b"still"]


@pytest.mark.parametrize("value", ["16", 1.0, None, True, False, b"1", [1]])
def test_max_frame_size_must_be_an_int(value):
    with pytest.raises(TypeError, match="max_frame_size"):
        LineFramer(max_frame_size=value)


@pytest.mark.parametrize("value", [0, -1, -(2**70), MAX_FRAME_SIZE_LIMIT + 1, 2**80])
def test_max_frame_size_must_be_in_range(value):
    with pytest.raises(ValueError, match="max_frame_size"):
        LineFramer(max_frame_size=value)


def test_properties_are_read_only():
    framer = LineFramer(5)
    for name in ("max_frame_size", "buffered", "closed"):
        with pytest.raises(AttributeError):
            setattr(framer, name, 1)


def test_framer_repr():
    framer = LineFramer(7)
    framer.feed(b"abc")
    assert repr(framer) == "<LineFramer max_frame_size=7 buffered=3>"
    framer.close()
    assert repr(framer) == "<LineFramer max_frame_size=7 buffered=0 closed>"


# --- FrameTooLarge ------------------------------------------------------------------------


def test_frame_too_large_exception():
    err = FrameTooLarge(10, 25)
    assert isinstance(err, ValueError)
    assert (err.limit, err.size) == (10, 25)
    assert "10" in str(err) and "25" in str(err)
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is FrameTooLarge
    assert (again.limit, again.size, str(again)) == (10, 25, str(err))


def test_frame_too_large_can_be_raised_by_callers():
    framer = LineFramer(2)
    (err,) = framer.feed(b"abc\n")
    with pytest.raises(FrameTooLarge) as info:
        raise err
    assert info.value.size == 3


# --- property tests -----------------------------------------------------------------------

frame_bytes = st.binary(max_size=40).map(lambda b: b.replace(b"\n", b""))
mostly_text = st.lists(st.sampled_from(b' \t\r{}"ax\x00\xff'), max_size=30).map(bytes)


@st.composite
def streams(draw):
    frames = st.one_of(frame_bytes, mostly_text)
    parts = draw(st.lists(frames, max_size=25))
    endings = draw(st.lists(st.sampled_from([b"\n", b"\r\n"]), min_size=len(parts), max_size=len(parts)))
    stream = b"".join(p + e for p, e in zip(parts, endings))
    if draw(st.booleans()):
        stream += draw(frames)  # an unterminated final frame
    cuts = draw(st.lists(st.integers(0, len(stream)), max_size=12))
    return stream, chunked(stream, cuts)


@settings(max_examples=400, deadline=None)
@given(streams(), st.booleans())
def test_property_frames_come_through_unchanged(case, hold):
    stream, chunks = case
    assert run(chunks, hold=hold) == expected(stream)


@settings(max_examples=400, deadline=None)
@given(streams(), st.integers(1, 30), st.booleans())
def test_property_oversize_frames_become_one_error_each(case, limit, hold):
    stream, chunks = case
    assert run(chunks, limit, hold=hold) == expected(stream, limit)


@settings(max_examples=200, deadline=None)
@given(st.lists(frame_bytes, max_size=20), st.integers(1, 20), st.data())
def test_property_error_size_is_what_was_read_of_the_line(frames, limit, data):
    stream = b"".join(f + b"\n" for f in frames)
    chunks = chunked(stream, data.draw(st.lists(st.integers(0, len(stream)), max_size=10)))
    framer = LineFramer(limit)
    errors = [g for chunk in chunks for g in framer.feed(chunk) if isinstance(g, FrameTooLarge)]
    long_lines = [f for f in frames if len(f[:-1] if f.endswith(b"\r") else f) > limit]
    assert len(errors) == len(long_lines)
    for err, line in zip(errors, long_lines):
        assert limit < err.size <= len(line)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.binary(min_size=1, max_size=3000).map(lambda b: b"{" + b.replace(b"\n", b"")), max_size=80),
       st.integers(1, 5000))
def test_property_large_chunks_with_held_frames(frames, chunk_size):
    stream = b"\n".join(frames) + b"\n"
    chunks = [stream[i : i + chunk_size] for i in range(0, len(stream), chunk_size)]
    assert run(chunks) == expected(stream)


def test_oversize_lines_carry_the_id_and_kind_from_their_first_bytes():
    framer = LineFramer(100)
    out = framer.feed(
        b'{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"x":"' + b"a" * 500 + b'"}}\n'
        + b'{"jsonrpc":"2.0","id":"r1","result":{"big":"' + b"b" * 300 + b'"}}\n'
        + b'{"params":[' + b"1," * 200 + b'1],"id":5}\n'
        + b'{"id":7}\n'
    )
    assert [(e.kind, e.request_id) for e in out[:3]] == [("request", 42), ("response", "r1"),
                                                         (None, None)]
    assert bytes(out[3]) == b'{"id":7}'
    # Reported mid-line (no newline yet): the prefix read so far is used.
    [partial] = framer.feed(b'{"id":8,"method":"m","params":"' + b"c" * 200)
    assert (partial.kind, partial.request_id) == ("request", 8)
    copy = pickle.loads(pickle.dumps(partial))
    assert (copy.kind, copy.request_id, copy.limit, copy.size) == ("request", 8, 100, partial.size)


def test_release_frees_the_buffer_and_ends_the_stream():
    framer = LineFramer(1 << 20)
    (frame,) = framer.feed(b'{"kept": 1}\n' + b"x" * 300_000)
    assert framer.buffered == 300_000
    framer.release()
    assert framer.buffered == 0 and framer.closed
    assert bytes(frame) == b'{"kept": 1}'  # frames handed out stay valid
    assert framer.close() == []
    with pytest.raises(RuntimeError, match="after close"):
        framer.feed(b"more\n")
    framer.release()  # again: nothing

