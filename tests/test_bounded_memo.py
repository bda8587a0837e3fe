"""mcpfast._bounded_memo: the one policy of the memos kept by values from the network."""

from __future__ import annotations

from mcpfast._bounded_memo import remember
from mcpfast.transports.http.security import HostPolicy


def test_a_memo_at_its_limit_is_emptied_in_place_before_the_next_entry():
    memo: dict[int, str] = {}
    for n in range(3):
        assert remember(memo, n, f"v{n}", 3) == f"v{n}"
    assert memo == {0: "v0", 1: "v1", 2: "v2"}
    same = memo
    assert remember(memo, 3, "v3", 3) == "v3"
    assert memo is same and memo == {3: "v3"}
    # A key already there is written again, counted as any other.
    remember(memo, 3, "again", 3)
    assert memo == {3: "again"}


def test_the_host_policy_keeps_at_most_its_limit_of_verdicts():
    policy = HostPolicy.for_bind("127.0.0.1")
    for n in range(600):
        assert policy.check(f"h{n}.example", None)[0] == 421
        assert len(policy._verdicts) <= 256
    assert policy.check("127.0.0.1:8000", None) is None
    assert policy.check("127.0.0.1:8000", "http://evil.example")[0] == 403
