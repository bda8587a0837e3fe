"""completion/complete: handler forms, result normalisation, the 100-value cap, errors."""

import asyncio

import pytest

from mcpfast.jsonrpc.errors import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND
from mcpfast.server import Completion, CompletionArgument, CompletionRef, Context, Server
from mcpfast.server.features.completion import completion_result


def base_server():
    app = Server("complete")

    @app.prompt()
    def greet(name: str, style: str = "plain") -> str:
        return name

    @app.resource("db://{table}/{row}")
    def row(table: str, row: str) -> str:
        return table + row

    @app.resource("mem://fixed")
    def fixed() -> str:
        return "f"

    return app


def prompt_ref(name="greet"):
    return {"type": "ref/prompt", "name": name}


def complete_params(ref, name="name", value="", context=None):
    params = {"ref": ref, "argument": {"name": name, "value": value}}
    if context is not None:
        params["context"] = {"arguments": context}
    return params


def test_without_a_handler_completion_is_method_not_found(ready_client):
    client = ready_client(base_server())
    assert "completions" not in client.conn.capabilities
    error = client.error("completion/complete", complete_params(prompt_ref()))
    assert error["code"] == METHOD_NOT_FOUND


def test_two_argument_handler_gets_ref_and_argument(ready_client):
    app = base_server()
    calls = []

    @app.completion()
    def complete(ref, argument):
        calls.append((ref, argument))
        return ["alice", "alan", "bob"] if argument.name == "name" else []

    client = ready_client(app)
    assert client.result("completion/complete", complete_params(prompt_ref(), value="al")) == {
        "completion": {"values": ["alice", "alan", "bob"]}}
    assert calls == [(CompletionRef("prompt", name="greet"), CompletionArgument("name", "al"))]

    template = {"type": "ref/resource", "uri": "db://{table}/{row}"}
    client.result("completion/complete", complete_params(template, name="table", value="u"))
    assert calls[-1][0] == CompletionRef("resource", uri="db://{table}/{row}")
    client.result("completion/complete", complete_params({"type": "ref/resource", "uri": "mem://fixed"}))


def test_three_argument_handler_gets_the_context_arguments(ready_client):
    app = base_server()
    seen = []

    @app.completion
    def complete(ref, argument, context, ctx: Context):
        seen.append((context, ctx.method))
        return {"values": [context.get("table", "?") + "-1"], "total": 7, "hasMore": True}

    client = ready_client(app, "2025-06-18")
    template = {"type": "ref/resource", "uri": "db://{table}/{row}"}
    result = client.result("completion/complete", complete_params(template, "row", "", {"table": "users"}))
    assert result == {"completion": {"values": ["users-1"], "total": 7, "hasMore": True}}
    client.result("completion/complete", complete_params(template, "row", ""))
    assert seen == [({"table": "users"}, "completion/complete"), ({}, "completion/complete")]


def test_async_handler(ready_client):
    app = base_server()

    @app.completion()
    async def complete(ref, argument):
        await asyncio.sleep(0)
        return Completion(["x"], total=1, has_more=False)

    client = ready_client(app)

    async def main():
        response = await client.arequest("completion/complete", complete_params(prompt_ref()))
        assert response["result"] == {"completion": {"values": ["x"], "total": 1, "hasMore": False}}

    asyncio.run(main())


def test_more_than_100_values_are_cut(ready_client):
    app = base_server()

    @app.completion()
    def complete(ref, argument):
        return [f"v{i}" for i in range(250)]

    completion = ready_client(app).result("completion/complete", complete_params(prompt_ref()))["completion"]
    assert len(completion["values"]) == 100
    assert completion["values"][-1] == "v99"
    assert completion["total"] == 250 and completion["hasMore"] is True


def test_completion_result_normalisation():
    assert completion_result(None) == {"completion": {"values": []}}
    assert completion_result(("a", "b")) == {"completion": {"values": ["a", "b"]}}
    assert completion_result({"values": ["a"] * 101, "total": 500}) == {
        "completion": {"values": ["a"] * 100, "total": 500, "hasMore": True}}
    for bad in ("abc", 5, [1], {"values": ["a"], "extra": 1}, {"values": ["a"], "total": -1},
                {"values": ["a"], "hasMore": "yes"}):
        with pytest.raises((TypeError, ValueError)):
            completion_result(bad)


@pytest.mark.parametrize("params, fragment", [
    (complete_params(prompt_ref("ghost")), "Unknown prompt"),
    (complete_params({"type": "ref/resource", "uri": "db://other"}), "Unknown resource template"),
    (complete_params({"type": "ref/tool", "name": "x"}), "unknown ref type"),
    (complete_params({"type": "ref/prompt"}), "needs a name"),
    (complete_params({"type": "ref/resource"}), "needs a uri"),
    ({"ref": prompt_ref()}, "params.argument"),
    ({"ref": prompt_ref(), "argument": {"name": "x", "value": 1}}, "params.argument"),
    ({"argument": {"name": "x", "value": ""}}, "params.ref"),
    (complete_params(prompt_ref(), context={"a": 1}), "context.arguments"),
    (None, "needs params"),
])
def test_malformed_requests_are_invalid_params(ready_client, params, fragment):
    app = base_server()
    app.completion(lambda ref, argument: [])
    error = ready_client(app).error("completion/complete", params)
    assert error["code"] == INVALID_PARAMS
    assert fragment in error["message"]


def test_failing_or_misbehaving_handlers_are_internal_errors(ready_client):
    app = base_server()

    @app.completion()
    def complete(ref, argument):
        if argument.value == "boom":
            raise LookupError("index unavailable")
        return 12

    client = ready_client(app)
    error = client.error("completion/complete", complete_params(prompt_ref(), value="boom"))
    assert error == {"code": INTERNAL_ERROR, "message": "Completion failed: index unavailable"}
    assert client.error("completion/complete", complete_params(prompt_ref()))["code"] == INTERNAL_ERROR


def test_handler_signatures_are_checked():
    app = Server("sig")
    with pytest.raises(TypeError):
        app.completion(lambda ref: [])
    with pytest.raises(TypeError):
        app.completion(lambda a, b, c, d: [])
    with pytest.raises(TypeError):
        app.completion(5)

    def kw_only(ref, argument, *, required):
        return []

    with pytest.raises(TypeError):
        app.completion(kw_only)
    app.completion(lambda *args: [])  # varargs take all three
    assert app.completer.takes_context_arguments is True
