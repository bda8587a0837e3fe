"""Requests to the client go through the request's back channel; they time out by default."""

from __future__ import annotations

from fake_runtime import FakeRuntime
from mcpfast import Context, Server
from mcpfast.server.server import DEFAULT_CLIENT_REQUEST_TIMEOUT


def _server(**options) -> Server:
    app = Server("asker", **options)

    @app.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.sample("hello?")
        return answer.text or ""

    return app


def test_sampling_goes_out_on_the_session_and_its_answer_comes_back(make_client):
    runtime = FakeRuntime()
    client = make_client(_server(), capabilities={"sampling": {}}, runtime=runtime)
    client.initialize()
    id = client.send_request("tools/call", {"name": "ask", "arguments": {}})
    runtime.run_ready()
    [request] = client.requests("sampling/createMessage")
    client.respond(request["id"], {"role": "assistant", "model": "m",
                                   "content": {"type": "text", "text": "hi there"}})
    runtime.run_ready()
    assert client.response(id)["result"]["content"][0]["text"] == "hi there"


def test_an_unanswered_request_to_the_client_times_out_by_default(make_client):
    runtime = FakeRuntime()
    client = make_client(_server(), capabilities={"sampling": {}}, runtime=runtime)
    client.initialize()
    id = client.send_request("tools/call", {"name": "ask", "arguments": {}})
    runtime.run_ready()
    assert len(client.requests("sampling/createMessage")) == 1
    runtime.advance(DEFAULT_CLIENT_REQUEST_TIMEOUT - 1)
    assert client.response(id) is None
    runtime.advance(2)
    result = client.response(id)["result"]
    assert result["isError"] is True
    assert "sampling/createMessage" in result["content"][0]["text"]
    # The client is told the request was given up.
    [cancelled] = client.notifications("notifications/cancelled")
    assert cancelled["params"]["requestId"] is not None


def test_request_timeout_none_waits_as_long_as_the_client_needs(make_client):
    runtime = FakeRuntime()
    client = make_client(_server(request_timeout=None), capabilities={"sampling": {}},
                         runtime=runtime)
    client.initialize()
    id = client.send_request("tools/call", {"name": "ask", "arguments": {}})
    runtime.run_ready()
    runtime.advance(DEFAULT_CLIENT_REQUEST_TIMEOUT * 100)
    assert client.response(id) is None
    [request] = client.requests("sampling/createMessage")
    client.respond(request["id"], {"role": "assistant", "model": "m",
                                   "content": {"type": "text", "text": "late"}})
    runtime.run_ready()
    assert client.response(id)["result"]["content"][0]["text"] == "late"

