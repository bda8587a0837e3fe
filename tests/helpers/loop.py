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


async def eventually(predicate, timeout: float = 10.0) -> None:
    """Let the loop run until predicate() holds, for what waits on another process (a
    real server restarting, a subscription coming back): AssertionError after
    ``timeout`` seconds, a bound for a hung test, not a speed assertion."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not reached")
        await asyncio.sleep(0.01)
