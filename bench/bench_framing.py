"""Framing benchmark: split a large stream of mixed-size newline-delimited frames.

The stream (about 4 MiB, built once with a fixed seed) mixes the codec fixtures -- 90% small
requests, responses and notifications, 1.3 KB batches, 10 KB tools/list responses -- with an
occasional 256 KiB resource-read response, and arrives in 64 KiB reads, as from a pipe or socket.
One benchmark value is the time of one pass over the whole stream; the report turns it into MB/s
and frames/s with the stream's size and frame count (pyperf metadata ``stream_bytes`` and
``stream_frames``).

Implementations:
- mcpfast: ``LineFramer.feed(chunk)`` per read (zero-copy frames, max frame size enforced);
- bytes.split: the plain loop a user writes (and the official SDK's stdio client does, on str):
  ``(rest + chunk).split(b"\\n")``, keeping the unterminated tail;
- StreamReader.readline: an ``asyncio.StreamReader`` fed each read while a reader task loops
  ``await reader.readline()``, the usual asyncio way.
Before timing, each implementation's frames are compared with the expected list.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import os
import random
import sys

if __package__ in (None, ""):
    # Run as a script (as pyperf runs its workers): make the repository importable.
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench import harness
from bench.fixtures import BY_KEY, compact_json

CHUNK_SIZE = 64 * 1024
TARGET_STREAM_BYTES = 4 * 1024 * 1024
MAX_FRAME_SIZE = 1024 * 1024
CASE = "framing/split/mixed_stream"


def _resource_response() -> bytes:
    blob = base64.b64encode(random.Random(7).randbytes(192 * 1024)).decode()
    return compact_json({
        "jsonrpc": "2.0",
        "id": 9001,
        "result": {"contents": [{"uri": "file:///data/report.pdf", "mimeType": "application/pdf",
                                 "blob": blob}]},
    })


def build_stream() -> tuple[list[bytes], list[bytes]]:
    """(frames, chunks): the frames in stream order and the stream cut into CHUNK_SIZE reads."""
    small = [BY_KEY[key].frame for key in ("call_request", "call_response", "progress")]
    medium = BY_KEY["batch10"].frame
    large = BY_KEY["tools_list"].frame
    huge = _resource_response()
    rng = random.Random(2025)
    frames: list[bytes] = []
    total = 0
    while total < TARGET_STREAM_BYTES:
        roll = rng.random()
        if roll < 0.90:
            frame = rng.choice(small)
        elif roll < 0.985:
            frame = medium
        elif roll < 0.999:
            frame = large
        else:
            frame = huge
        frames.append(frame)
        total += len(frame) + 1
    stream = b"".join(frame + b"\n" for frame in frames)
    chunks = [stream[i:i + CHUNK_SIZE] for i in range(0, len(stream), CHUNK_SIZE)]
    return frames, chunks


# --- mcpfast -------------------------------------------------------------------------------

def mcpfast_count(framer_class: type, chunks: list[bytes]) -> int:
    framer = framer_class(max_frame_size=MAX_FRAME_SIZE)
    count = 0
    for chunk in chunks:
        count += len(framer.feed(chunk))
    return count + len(framer.close())


def mcpfast_collect(framer_class: type, chunks: list[bytes]) -> list[bytes]:
    framer = framer_class(max_frame_size=MAX_FRAME_SIZE)
    out: list = []
    # Each read's frames are copied out before the next read, as a transport consumes them.
    for chunk in chunks:
        out.extend(item if isinstance(item, Exception) else bytes(item) for item in framer.feed(chunk))
    out.extend(item if isinstance(item, Exception) else bytes(item) for item in framer.close())
    return out


# --- bytes.split ---------------------------------------------------------------------------

def split_count(chunks: list[bytes]) -> int:
    rest = b""
    count = 0
    for chunk in chunks:
        lines = (rest + chunk).split(b"\n")
        rest = lines.pop()
        count += len(lines)
    return count + (1 if rest else 0)


def split_collect(chunks: list[bytes]) -> list[bytes]:
    rest = b""
    out = []
    for chunk in chunks:
        lines = (rest + chunk).split(b"\n")
        rest = lines.pop()
        out.extend(lines)
    if rest:
        out.append(rest)
    return out


# --- asyncio.StreamReader.readline ---------------------------------------------------------

async def _readline_pass(chunks: list[bytes], out: list[bytes] | None) -> int:
    reader = asyncio.StreamReader(limit=MAX_FRAME_SIZE)

    async def produce():
        for chunk in chunks:
            reader.feed_data(chunk)
            await asyncio.sleep(0)  # let the reader run, as between two socket reads
        reader.feed_eof()

    producer = asyncio.create_task(produce())
    count = 0
    readline = reader.readline
    while True:
        line = await readline()
        if not line:
            break
        count += 1
        if out is not None:
            out.append(line[:-1] if line.endswith(b"\n") else line)
    await producer
    return count


def readline_count(loop: asyncio.AbstractEventLoop, chunks: list[bytes]) -> int:
    return loop.run_until_complete(_readline_pass(chunks, None))


def readline_collect(loop: asyncio.AbstractEventLoop, chunks: list[bytes]) -> list[bytes]:
    out: list[bytes] = []
    loop.run_until_complete(_readline_pass(chunks, out))
    return out


# --- cases ---------------------------------------------------------------------------------

IMPLEMENTATIONS = (
    ("mcpfast", "mcpfast LineFramer"),
    ("bytes.split", "bytes.split loop"),
    ("readline", "asyncio StreamReader.readline"),
)


def _counter_and_collector(impl: str):
    """(count, collect) callables of one implementation, each taking the chunk list."""
    if impl == "mcpfast":
        from mcpfast._core.framing import LineFramer

        return (functools.partial(mcpfast_count, LineFramer),
                functools.partial(mcpfast_collect, LineFramer))
    if impl == "bytes.split":
        return split_count, split_collect
    if impl == "readline":
        loop = asyncio.new_event_loop()
        return (lambda chunks: readline_count(loop, chunks),
                lambda chunks: readline_collect(loop, chunks))
    raise ValueError(f"unknown framing implementation {impl!r}")


def check(impl: str, frames: list[bytes], chunks: list[bytes]) -> tuple[str, str]:
    if impl == "mcpfast":
        try:
            import mcpfast._core.framing  # noqa: F401
        except ImportError as exc:
            return harness.UNAVAILABLE, f"cannot import mcpfast._core.framing: {exc}"
    count, collect = _counter_and_collector(impl)
    try:
        got = collect(chunks)
        counted = count(chunks)
    except Exception as exc:  # any failure means this implementation frames wrongly
        return harness.WRONG, f"raised {type(exc).__name__}: {exc}"
    if got != frames:
        first = next((i for i, (a, b) in enumerate(zip(got, frames)) if a != b), min(len(got), len(frames)))
        return harness.WRONG, f"{len(got)} frames instead of {len(frames)}; first difference at frame {first}"
    if counted != len(frames):
        return harness.WRONG, f"counted {counted} frames instead of {len(frames)}"
    return harness.OK, ""


def cases() -> list[harness.Case]:
    frames, chunks = build_stream()
    stream_bytes = sum(len(chunk) for chunk in chunks)
    title = (f"split a {stream_bytes / 2**20:.1f} MiB stream of {len(frames):,} mixed frames "
             f"in {CHUNK_SIZE // 1024} KiB reads")
    out = []
    for impl, label in IMPLEMENTATIONS:
        def prepare(impl=impl):
            count, _ = _counter_and_collector(impl)
            return harness.time_calls, (functools.partial(count, chunks),)

        out.append(harness.Case(
            name=f"{CASE}/{impl}",
            impl_label=label,
            case_title=title,
            check=lambda impl=impl: check(impl, frames, chunks),
            prepare=prepare,
            display=harness.DISPLAY_STREAM,
            metadata={"stream_bytes": stream_bytes, "stream_frames": len(frames),
                      "chunk_bytes": CHUNK_SIZE},
        ))
    return out


def main() -> None:
    runner = harness.make_runner()
    harness.run(runner, "framing", cases())


if __name__ == "__main__":
    main()
