"""The HTTP refusals carried by a JSON-RPC error: RateLimited and InsufficientScope, and
http_refusal reading the HTTP meaning back from a code and data (what the endpoint sees)."""

from __future__ import annotations

import pickle

import pytest

from mcpfast.jsonrpc.errors import (
    INSUFFICIENT_SCOPE,
    INVALID_PARAMS,
    RATE_LIMITED,
    HTTPRefusal,
    InsufficientScope,
    JSONRPCError,
    RateLimited,
    http_refusal,
)


def test_rate_limited_carries_retry_after_and_rounds_up_to_whole_seconds() -> None:
    error = RateLimited(2.0001, limit={"rate": 1})
    assert error.code == RATE_LIMITED and error.data == {"retryAfter": 2.0, "limit": {"rate": 1}}
    assert "retry after 2.000 s" in error.message
    assert http_refusal(error.code, error.data) == HTTPRefusal(429, retry_after=2)
    assert http_refusal(RATE_LIMITED, {"retryAfter": 2.2}).retry_after == 3
    assert http_refusal(RATE_LIMITED, {"retryAfter": 0}).retry_after == 1  # never "retry after 0"
    for bad in (-1, float("nan"), float("inf"), True):
        with pytest.raises(ValueError):
            RateLimited(bad)


def test_insufficient_scope_names_every_scope_needed() -> None:
    error = InsufficientScope(["b", "a", "a"])
    assert error.code == INSUFFICIENT_SCOPE and error.data == {"requiredScopes": ["a", "b"]}
    assert error.scopes == ("a", "b") and "a b" in error.message
    assert http_refusal(error.code, error.data) == HTTPRefusal(403, scopes=("a", "b"))
    with pytest.raises(ValueError):
        InsufficientScope([])


@pytest.mark.parametrize("code, data", [
    (RATE_LIMITED, None), (RATE_LIMITED, {"limit": 5}), (RATE_LIMITED, {"retryAfter": "soon"}),
    (RATE_LIMITED, {"retryAfter": -3}), (INSUFFICIENT_SCOPE, {"requiredScopes": []}),
    (INSUFFICIENT_SCOPE, {"requiredScopes": ["two words"]}), (INSUFFICIENT_SCOPE, {"requiredScopes": "a"}),
    (INVALID_PARAMS, {"retryAfter": 1}),
])
def test_data_that_does_not_say_what_the_refusal_needs_is_just_an_answer(code, data) -> None:
    assert http_refusal(code, data) is None


def test_the_errors_survive_pickling_as_their_class() -> None:
    for error in (RateLimited(1.5), InsufficientScope(["x"])):
        copy = pickle.loads(pickle.dumps(error))
        assert type(copy) is type(error) and isinstance(copy, JSONRPCError)
        assert (copy.code, copy.message, copy.data) == (error.code, error.message, error.data)
