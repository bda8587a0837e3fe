"""Codec benchmarks: decode and encode of the five fixtures by mcpfast and its peers.

Run directly (pyperf options apply) or through bench/run.py:

    python bench/bench_codec.py -o codec.json --status-output codec-status.json

Benchmark names are ``codec/<decode|encode>/<fixture>/<library>``; each value is the time of one
decode (parse and read the fields, see bench/peers.py) or one encode (fields to wire bytes).
"""

from __future__ import annotations

import os
import sys

if __package__ in (None, ""):
    # Run as a script (as pyperf runs its workers): make the repository importable.
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench import harness, peers
from bench.fixtures import FIXTURES, Fixture

OPS = (peers.DECODE, peers.ENCODE)


def _case(op: str, fixture: Fixture, peer: peers.Peer) -> harness.Case:
    def check():
        return peers.check(peer, op, fixture)

    def prepare():
        build = peer.decoder if op == peers.DECODE else peer.encoder
        return harness.time_calls, (build(fixture),)

    return harness.Case(
        name=f"codec/{op}/{fixture.key}/{peer.key}",
        impl_label=peer.label,
        case_title=f"{op} {fixture.title} ({fixture.size:,} B)",
        check=check,
        prepare=prepare,
        metadata={"library_version": peer.version(), "frame_bytes": fixture.size},
    )


def cases() -> list[harness.Case]:
    """Every (operation, fixture, library) triple; rows a library cannot do are reported, not timed."""
    out = []
    for op in OPS:
        for fixture in FIXTURES:
            for peer in peers.PEERS:
                if op == peers.ENCODE and not peer.encodes and peer.key.startswith("mcpfast"):
                    continue  # decode-only mcpfast variant: no encode row at all
                out.append(_case(op, fixture, peer))
    return out


def main() -> None:
    runner = harness.make_runner()
    harness.run(runner, "codec", cases())


if __name__ == "__main__":
    main()
