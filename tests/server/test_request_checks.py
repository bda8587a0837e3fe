"""The ordered chain of per-request checks: the initialization gate first, then the server's."""

from __future__ import annotations

from mcpfast import Server
from mcpfast.jsonrpc.errors import INVALID_REQUEST, NOT_INITIALIZED, JSONRPCError


def _refuse(method: str, seen: list):
    def check(ctx) -> None:
        seen.append((method, ctx.method))
        if ctx.method == method:
            raise JSONRPCError(INVALID_REQUEST, f"{method} refused by a check")
    return check


def _server(*checks) -> Server:
    app = Server("checked", request_checks=checks)

    @app.tool()
    def echo(text: str) -> str:
        return text

    return app


def test_gate_runs_before_the_server_checks(make_client):
    seen: list = []
    client = make_client(_server(_refuse("tools/call", seen)))
    assert client.error("tools/call", {"name": "echo", "arguments": {"text": "x"}})["code"] == NOT_INITIALIZED
    # The gate refused first: the server's check never saw the request.
    assert ("tools/call", "tools/call") not in seen


def test_server_checks_run_in_order_after_initialization(make_client):
    seen: list = []
    first, second = _refuse("tools/call", seen), _refuse("prompts/list", seen)
    client = make_client(_server(first, second))
    client.initialize()
    connection = client.conn
    assert connection.checks == (first, second)  # the gate left the chain
    error = client.error("tools/call", {"name": "echo", "arguments": {"text": "x"}})
    assert error == {"code": INVALID_REQUEST, "message": "tools/call refused by a check"}
    assert seen[-1] == ("tools/call", "tools/call")
    seen.clear()
    assert client.error("prompts/list")["message"] == "prompts/list refused by a check"
    assert seen == [("tools/call", "prompts/list"), ("prompts/list", "prompts/list")]


def test_checks_added_and_removed_per_connection(make_client):
    client = make_client(_server())
    client.initialize()
    connection = client.conn
    assert connection.checks == ()
    assert connection.session.before_dispatch is None  # nothing runs per request
    seen: list = []
    check = _refuse("tools/call", seen)
    connection.add_check(check)
    assert client.error("tools/call", {"name": "echo", "arguments": {"text": "x"}})["code"] == INVALID_REQUEST
    connection.remove_check(check)
    assert client.call_tool("echo", {"text": "ok"})["content"][0]["text"] == "ok"
    assert connection.session.before_dispatch is None


def test_a_check_that_is_not_callable_is_refused():
    import pytest

    with pytest.raises(TypeError, match="callable"):
        Server("x", request_checks=["nope"])
