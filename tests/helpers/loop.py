"""Event-loop helpers shared by the tests."""

import asyncio


async def settle(rounds: int = 20) -> None:
    """Let the callbacks and tasks already queued on the running loop run (no waiting on
    any clock: ``rounds`` passes through the loop's ready queue)."""
    for _ in range(rounds):
        await asyncio.sleep(0)


async def until(predicate, rounds: int = 200) -> None:
    """Let the loop run until predicate() holds (bounded; no wall-clock waiting)."""
    for _ in range(rounds):
        if predicate():
            return
        await asyncio.sleep(0)
    raise AssertionError("condition not reached")
