"""Replays the seed corpus (and every crash the fuzzers found) through each fuzz harness's
check function: fast, in the normal suite, without atheris.

tests/fuzz_corpus/<harness>/ holds the inputs of fuzz/fuzz_<harness>.py; scripts/fuzz
starts each fuzzer from them. An input that once made a harness fail is kept here under
a name saying what it found, so the failure stays fixed.
"""

import importlib
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
FUZZ = HERE.parents[1] / "fuzz"
HARNESSES = ("framer", "decode", "encode", "session", "http", "http_framer")

sys.path.insert(0, str(FUZZ))


def corpus():
    for harness in HARNESSES:
        for path in sorted((HERE / harness).iterdir()):
            yield pytest.param(harness, path, id=f"{harness}/{path.name}")


@pytest.mark.parametrize("harness, path", list(corpus()))
def test_corpus_input_passes_its_harness(harness, path):
    module = importlib.import_module(f"fuzz_{harness}")
    module.check(path.read_bytes())


def test_every_harness_has_a_seed_corpus():
    for harness in HARNESSES:
        assert len(list((HERE / harness).iterdir())) >= 5, harness
        assert (FUZZ / f"fuzz_{harness}.py").is_file()


def test_the_harnesses_detect_a_broken_property(monkeypatch):
    """The checks can fail: a framer model that disagrees makes check() raise."""
    framer = importlib.import_module("fuzz_framer")
    monkeypatch.setattr(framer, "lines_of", lambda stream, limit: ["not", "these"])
    with pytest.raises(AssertionError):
        framer.check(bytes([7, 1]) + b"a\nb\n")
