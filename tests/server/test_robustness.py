"""Malformed and random input: the server answers every request with a valid message and
stays usable, in every version."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpfast.server import Server

METHODS = [
    "initialize", "ping", "logging/setLevel", "tools/list", "tools/call", "resources/list",
    "resources/templates/list", "resources/read", "resources/subscribe", "resources/unsubscribe",
    "prompts/list", "prompts/get", "completion/complete", "no/such/method",
]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**53, 2**53) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=10) | st.sampled_from(["t", "p", "mem://r", "x://{a}", "debug", "ref/prompt"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["name", "arguments", "uri", "cursor", "level", "ref", "argument", "a", "type",
                         "value", "protocolVersion", "_meta"]) | st.text(max_size=5),
        inner, max_size=4),
    max_leaves=10,
)


def sync_server():
    app = Server("robust", page_size=2)

    @app.tool()
    def t(a: int = 0) -> int:
        return a

    @app.resource("mem://r")
    def r() -> str:
        return "r"

    @app.resource("x://{a}")
    def x(a: int) -> str:
        return str(a)

    @app.prompt()
    def p(a: str = "") -> str:
        return a

    @app.completion()
    def c(ref, argument):
        return [argument.value]

    return app


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
@given(calls=st.lists(st.tuples(st.sampled_from(METHODS), st.none() | json_values), min_size=1, max_size=6))
@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
def test_random_requests_get_valid_answers(ready_client, version, calls):
    client = ready_client(sync_server(), version)
    for method, params in calls:
        if params is not None and not isinstance(params, (dict, list)):
            params = {"value": params}
        id = client.send_request(method, params)
        response = client.response(id)
        # Every request is answered inline (all handlers are sync) and validated by the client.
        assert response is not None
        assert ("result" in response) != ("error" in response)
    assert client.result("ping") == {}
    assert client.call_tool("t", {"a": 5})["content"][0]["text"] == "5"
    client.conn.close()


@given(frame=st.binary(max_size=64) | st.text(max_size=64).map(str.encode))
@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
def test_random_bytes_never_break_the_connection(ready_client, frame):
    client = ready_client(sync_server())
    try:
        client.conn.feed(frame)
    finally:
        # Whatever came back was validated by the fake client (parse / invalid request errors).
        for message in client.take():
            assert "error" in message or "result" in message
    assert client.result("ping") == {}
    client.conn.close()


def test_deeply_nested_arguments_are_an_error_result(ready_client):
    client = ready_client(sync_server())
    nested = {"a": json.loads("[" * 200 + "]" * 200)}
    result = client.call_tool("t", nested)
    assert result["isError"] is True
