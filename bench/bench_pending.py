"""Pending-request benchmark: add + pop of in-flight requests.

One operation is what a client does per request: allocate an id, register the request's waiter
(an asyncio Future), and later pop it when the response with that id arrives.  Two shapes:

- in_flight_1: each request is answered before the next is sent (add, pop, add, pop, ...);
- in_flight_256: 256 requests are outstanding; they are added, then popped in a fixed shuffled
  order (responses arrive out of order), window after window.

Implementations:
- mcpfast: ``PendingTable.next_id()``, ``add(id, future)``, ``pop(id)``;
- mcpfast + deadline: the same with a deadline on every request (the table keeps them ordered
  for ``expire``), shown beside the plain row; the dict below tracks no deadlines at all;
- dict of Futures: ``next(itertools.count())``, ``table[id] = future``, ``table.pop(id, None)``.
Every implementation stores the same Future objects (created once, outside the timed loop).
Before timing, each must hand back exactly the waiter that was added under each id.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import random
import sys
import time
from typing import Callable

if __package__ in (None, ""):
    # Run as a script (as pyperf runs its workers): make the repository importable.
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench import harness

WINDOWS = (1, 256)
DEADLINE_IN = 60.0  # seconds; far enough that nothing expires during the benchmark
IMPLEMENTATIONS = (
    ("mcpfast", "mcpfast PendingTable"),
    ("mcpfast-deadline", "mcpfast PendingTable + deadline"),
    ("dict", "dict of asyncio Futures"),
)


def _waiters(count: int) -> list[asyncio.Future]:
    """Futures as a client would store them; their loop never runs here, so it is closed at once."""
    loop = asyncio.new_event_loop()
    try:
        return [loop.create_future() for _ in range(count)]
    finally:
        loop.close()


def _pop_order(window: int) -> list[int]:
    order = list(range(window))
    random.Random(window).shuffle(order)
    return order


def build(impl: str, window: int) -> tuple[Callable[[], object], list, list[int]]:
    """(run, waiters, order): ``run()`` adds ``window`` requests, pops them in ``order`` and
    returns the popped waiters (for a window of 1, the single waiter itself)."""
    waiters = _waiters(window)
    order = _pop_order(window)
    ids = [0] * window
    if impl in ("mcpfast", "mcpfast-deadline"):
        from mcpfast._core.pending import PendingTable

        table = PendingTable(capacity=max(1024, 2 * window))
        next_id, add, pop = table.next_id, table.add, table.pop
        deadline = time.monotonic() + DEADLINE_IN if impl == "mcpfast-deadline" else None
        if window == 1:
            waiter = waiters[0]

            def run():
                request_id = next_id()
                add(request_id, waiter, deadline)
                return pop(request_id)
        else:
            def run():
                for slot, waiter in enumerate(waiters):
                    request_id = next_id()
                    add(request_id, waiter, deadline)
                    ids[slot] = request_id
                return [pop(ids[slot]) for slot in order]
    elif impl == "dict":
        pending: dict[int, asyncio.Future] = {}
        next_id, pop = itertools.count(1).__next__, pending.pop
        if window == 1:
            waiter = waiters[0]

            def run():
                request_id = next_id()
                pending[request_id] = waiter
                return pop(request_id, None)
        else:
            def run():
                for slot, waiter in enumerate(waiters):
                    request_id = next_id()
                    pending[request_id] = waiter
                    ids[slot] = request_id
                return [pop(ids[slot], None) for slot in order]
    else:
        raise ValueError(f"unknown pending-table implementation {impl!r}")
    return run, waiters, order


def check(impl: str, window: int) -> tuple[str, str]:
    if impl.startswith("mcpfast"):
        try:
            import mcpfast._core.pending  # noqa: F401
        except ImportError as exc:
            return harness.UNAVAILABLE, f"cannot import mcpfast._core.pending: {exc}"
    try:
        run, waiters, order = build(impl, window)
        want = [waiters[slot] for slot in order]
        for _ in range(3):  # ids keep growing from one window to the next
            got = run()
            if window == 1:
                got = [got]
            if len(got) != len(want) or any(a is not b for a, b in zip(got, want)):
                return harness.WRONG, "pop did not return the waiter added under that id"
    except Exception as exc:  # any failure means this implementation is wrong
        return harness.WRONG, f"raised {type(exc).__name__}: {exc}"
    return harness.OK, ""


def cases() -> list[harness.Case]:
    out = []
    for window in WINDOWS:
        title = ("add + pop, one request in flight" if window == 1 else
                 f"add + pop, {window} requests in flight, answered out of order")
        for impl, label in IMPLEMENTATIONS:
            def prepare(impl=impl, window=window):
                return harness.time_calls, (build(impl, window)[0],)

            out.append(harness.Case(
                name=f"pending/add_pop/in_flight_{window}/{impl}",
                impl_label=label,
                case_title=title,
                check=lambda impl=impl, window=window: check(impl, window),
                prepare=prepare,
                inner_loops=window,  # one loop is `window` requests: values are per request
                metadata={"in_flight": window},
            ))
    return out


def main() -> None:
    runner = harness.make_runner()
    harness.run(runner, "pending", cases())


if __name__ == "__main__":
    main()
