"""Run a harness's check over corpus inputs, then over random mutations of them, for a
given time -- without atheris, for the sanitizer build.

    python fuzz/replay.py HARNESS [--seconds N] [--seed S] [CORPUS_DIR ...]

Why not atheris there: with gcc, the AddressSanitizer runtime that must be preloaded
(libasan) also defines the coverage callbacks libFuzzer relies on, so atheris' Python
coverage breaks; atheris' own clang runtime cannot be mixed with gcc-instrumented code.
So the coverage-guided search runs on the normal build (scripts/fuzz), and its grown
corpus is replayed and mutated here under ASan + UBSan, where a memory error aborts the
process with a report. Exit status 0 when every input passed; 1 with the failing input
saved (path printed) otherwise.
"""

from __future__ import annotations

import argparse
import importlib
import os
import random
import sys
import time
import traceback

from common import CORPUS_ROOT, quiet_logs


def mutate(rng: random.Random, data: bytes, pool: list) -> bytes:
    """One random edit of data: flip, insert, delete, repeat, or splice with another input."""
    buf = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(6)
        pos = rng.randint(0, len(buf))
        if op == 0 and buf:
            buf[min(pos, len(buf) - 1)] ^= 1 << rng.randrange(8)
        elif op == 1:
            buf[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        elif op == 2 and buf:
            del buf[pos:pos + rng.randint(1, 16)]
        elif op == 3 and buf:
            piece = buf[pos:pos + rng.randint(1, 32)]
            buf[pos:pos] = piece * rng.randint(1, 64)
        elif op == 4:
            other = rng.choice(pool)
            start = rng.randint(0, len(other))
            buf[pos:pos] = other[start:start + rng.randint(1, 256)]
        else:
            buf[pos:pos] = rng.choice((b"\n", b"\\u", b'"', b"[", b"{", b"}", b"]", b"\r\n",
                                       b"\xff", b"\x00", b"1e999", b"18446744073709551616"))
    return bytes(buf[:65536])


def load(dirs: list) -> list:
    inputs = []
    for folder in dirs:
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            path = os.path.join(folder, name)
            if os.path.isfile(path):
                with open(path, "rb") as f:
                    inputs.append(f.read())
    return inputs or [b""]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("harness")
    parser.add_argument("corpus", nargs="*")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--artifacts", default=".")
    args = parser.parse_intermixed_args(argv)
    quiet_logs()
    check = importlib.import_module(f"fuzz_{args.harness}").check
    dirs = args.corpus or [os.path.join(CORPUS_ROOT, args.harness)]
    pool = load(dirs)
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    runs = 0
    deadline = time.monotonic() + args.seconds
    queue = iter(pool)
    while True:
        data = next(queue, None)
        if data is None:
            if time.monotonic() >= deadline:
                break
            data = mutate(rng, rng.choice(pool), pool)
        try:
            check(data)
        except Exception:
            path = os.path.join(args.artifacts, f"crash-{args.harness}-{seed}-{runs}")
            with open(path, "wb") as f:
                f.write(data)
            traceback.print_exc()
            print(f"replay: {args.harness}: failing input written to {path}", file=sys.stderr)
            return 1
        runs += 1
    print(f"replay: {args.harness}: {runs} inputs passed ({len(pool)} from the corpus, "
          f"seed {seed})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
