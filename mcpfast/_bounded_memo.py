"""Bounded memos: dicts of verdicts kept by values that come from the network (header
values, method names, versions), which must not grow without bound.

The policy is the simplest that bounds them: a memo holding ``limit`` entries is emptied
before the next one goes in. The values it is asked about repeat (a client sends the same
few), so an emptied memo fills again with them at once.
"""

from __future__ import annotations

from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


def remember(memo: dict[K, V], key: K, value: V, limit: int) -> V:
    """``memo[key] = value``, the memo emptied first when it holds ``limit`` entries;
    answers ``value``. The memo is emptied in place, never replaced: callers holding it
    keep seeing the same dict."""
    if len(memo) >= limit:
        memo.clear()
    memo[key] = value
    return value
