"""What the fuzz harnesses share: running a check under atheris, and turning bytes into
choices deterministically (so that a corpus file replays the same way without atheris).

Each harness module defines ``check(data: bytes) -> None``, which raises AssertionError
(or any unexpected exception) when the property it tests does not hold, and calls
:func:`main` with it. ``python fuzz/fuzz_<name>.py [libFuzzer options] [corpus dirs]``
runs it under atheris; tests/fuzz_corpus/test_replay.py replays the seed corpus through
the same check functions in the normal test suite.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Callable, Sequence

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
#: The seed corpus of each harness: tests/fuzz_corpus/<harness name>/.
CORPUS_ROOT = os.path.join(ROOT, "tests", "fuzz_corpus")

# The checks (and json.loads, which recurses in Python's C stack accounting) walk values
# once per nesting level; mcpfast accepts up to 1024 levels.
sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))


class Choices:
    """Reads choices from a byte string; past its end every read returns zeros/empty."""

    __slots__ = ("data", "pos")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def byte(self) -> int:
        if self.pos >= len(self.data):
            return 0
        value = self.data[self.pos]
        self.pos += 1
        return value

    def int(self, nbytes: int) -> int:
        """An unsigned integer of nbytes bytes (little-endian)."""
        value = 0
        for shift in range(nbytes):
            value |= self.byte() << (8 * shift)
        return value

    def pick(self, options: Sequence):
        return options[self.byte() % len(options)]

    def take(self, size: int) -> bytes:
        chunk = self.data[self.pos:self.pos + size]
        self.pos += len(chunk)
        return chunk

    def rest(self) -> bytes:
        chunk = self.data[self.pos:]
        self.pos = len(self.data)
        return chunk

    @property
    def exhausted(self) -> bool:
        return self.pos >= len(self.data)


def fuzzing() -> bool:
    """True when a harness runs as the main program (under atheris), not in a replay."""
    main_file = getattr(sys.modules.get("__main__"), "__file__", None) or ""
    return os.path.basename(main_file).startswith("fuzz_")


def instrumented():
    """Context for a harness's imports of mcpfast: atheris instruments the Python code
    imported inside it for coverage when fuzzing; a no-op in a replay."""
    if not fuzzing():
        return contextlib.nullcontext()
    import atheris

    return atheris.instrument_imports(include=["mcpfast"])


def quiet_logs() -> None:
    """Fuzzing logs every handler failure it provokes (with its traceback): too much noise."""
    import logging

    logging.disable(logging.CRITICAL)


def main(check: Callable[[bytes], None]) -> None:
    """Fuzz ``check`` with atheris; argv is libFuzzer's (corpus dirs, -max_total_time...).

    The Python code of mcpfast is covered through :func:`instrumented`; the compiled core
    only where it was built with clang's -fsanitize=fuzzer-no-link (not with gcc: then its
    crashes and sanitizer reports still stop the run, see scripts/fuzz --sanitize).
    """
    import atheris

    quiet_logs()
    # The harness's own code (its model of the property, its value builder) gives the
    # coverage feedback where the code under test is compiled.
    atheris.instrument_func(check)
    for module in list(sys.modules.values()):
        if getattr(module, "__file__", "") and os.path.dirname(module.__file__) == HERE:
            for value in vars(module).values():
                if callable(value) and getattr(value, "__module__", None) == module.__name__ \
                        and hasattr(value, "__code__"):
                    atheris.instrument_func(value)
    atheris.Setup(sys.argv, check)
    atheris.Fuzz()
