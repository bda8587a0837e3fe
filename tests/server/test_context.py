"""Context: progress, cancellation, and the requests a handler sends to the client
(sampling, elicitation, roots, ping), with their capability and version checks."""

import asyncio
import dataclasses
import enum
import json

import pytest

from loop import until
from mcpfast.jsonrpc.errors import MISSING_REQUIRED_CLIENT_CAPABILITY
from mcpfast.server import ClientCapabilityError, Context, PromptMessage, Root, Server
from mcpfast.server.request.context import NOT_SENT, SENT

ALL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")


def text(result):
    return result["content"][0]["text"]


# -- progress -----------------------------------------------------------------------------


def progress_server():
    app = Server("progress")

    @app.tool()
    async def work(steps: int, ctx: Context) -> str:
        sent = []
        for step in range(1, steps + 1):
            await asyncio.sleep(0)
            sent.append(bool(await ctx.report_progress(step, steps, f"step {step}")))
        return str(sent)

    @app.tool()
    def backwards(ctx: Context) -> str:
        ctx.report_progress(5)
        ctx.report_progress(4)
        return "unreachable"

    return app


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_progress_goes_out_with_the_request_token(ready_client, version):
    client = ready_client(progress_server(), version)

    async def main():
        result = await client.aresult("tools/call", {"name": "work", "arguments": {"steps": 3},
                                                     "_meta": {"progressToken": "tok-1"}})
        assert text(result) == "[True, True, True]"

    asyncio.run(main())
    notes = client.notifications("notifications/progress")
    assert [n["params"]["progress"] for n in notes] == [1, 2, 3]
    assert {n["params"]["progressToken"] for n in notes} == {"tok-1"}
    assert all(n["params"]["total"] == 3 for n in notes)
    # 2024-11-05 has no progress message: it is dropped there.
    assert all(("message" in n["params"]) == (version >= "2025-03-26") for n in notes)


def test_no_progress_without_a_token(ready_client):
    client = ready_client(progress_server())

    async def main():
        assert text(await client.acall_tool("work", {"steps": 2})) == "[False, False]"

    asyncio.run(main())
    assert client.notifications("notifications/progress") == []


def test_progress_must_increase(ready_client):
    client = ready_client(progress_server())
    result = client.result("tools/call", {"name": "backwards", "_meta": {"progressToken": 9}})
    assert result["isError"] is True and "must increase" in text(result)
    assert [n["params"]["progress"] for n in client.notifications("notifications/progress")] == [5]


def test_sent_is_awaitable_and_truthy():
    async def main():
        assert await SENT is True
        assert await NOT_SENT is False

    asyncio.run(main())
    assert SENT and not NOT_SENT


# -- cancellation -------------------------------------------------------------------------


def test_cancelled_requests_stop_and_get_no_response(ready_client):
    app = Server("cancel")
    events = []

    @app.tool()
    async def wait_forever(ctx: Context) -> str:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            events.append(("cancelled", ctx.cancelled, ctx.cancel_reason))
            raise
        return "never"

    client = ready_client(app)

    async def main():
        id = client.send_request("tools/call", {"name": "wait_forever", "arguments": {}})
        for _ in range(5):
            await asyncio.sleep(0)
        client.notify("notifications/cancelled", {"requestId": id, "reason": "user hit stop"})
        for _ in range(10):
            await asyncio.sleep(0)
        assert client.response(id) is None
        assert client.take() == []
        # The connection goes on.
        assert (await client.aresult("ping")) == {}

    asyncio.run(main())
    assert events == [("cancelled", True, "user hit stop")]


def test_initialize_cannot_be_cancelled(make_client):
    app = Server("c")
    client = make_client(app)
    client.notify("notifications/cancelled", {"requestId": 1})
    assert client.initialize()["protocolVersion"] == "2025-11-25"


# -- sampling -----------------------------------------------------------------------------


def sampling_server():
    app = Server("sampling")

    @app.tool()
    async def ask(question: str, ctx: Context) -> str:
        answer = await ctx.sample(
            [PromptMessage("You are terse.", role="assistant"), question],
            max_tokens=50, system_prompt="Be brief", temperature=0.2, stop_sequences=["\n"],
            model_preferences="claude", include_context="none", metadata={"trace": "t1"},
        )
        return f"{answer.model}/{answer.role}/{answer.stop_reason}: {answer.text}"

    @app.tool()
    async def ask_simple(question: str, ctx: Context) -> str:
        return (await ctx.sample(question)).text or "(no text)"

    @app.tool()
    async def ask_with_tools(ctx: Context) -> str:
        answer = await ctx.sample("weather?", tools=[{"name": "w", "inputSchema": {"type": "object"}}],
                                  tool_choice={"mode": "auto"})
        return str(answer.content)

    return app


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_sampling_round_trip(ready_client, version):
    client = ready_client(sampling_server(), version, capabilities={"sampling": {}})

    async def main():
        id = client.send_request("tools/call", {"name": "ask", "arguments": {"question": "2+2?"}})
        request = await client.wait_request("sampling/createMessage")
        assert request["params"] == {
            "messages": [
                {"role": "assistant", "content": {"type": "text", "text": "You are terse."}},
                {"role": "user", "content": {"type": "text", "text": "2+2?"}},
            ],
            "maxTokens": 50, "systemPrompt": "Be brief", "temperature": 0.2, "stopSequences": ["\n"],
            "modelPreferences": {"hints": [{"name": "claude"}]}, "includeContext": "none",
            "metadata": {"trace": "t1"},
        }
        client.respond(request["id"], {"role": "assistant", "model": "m-1", "stopReason": "endTurn",
                                       "content": {"type": "text", "text": "4"}})
        response = await client.wait_response(id)
        assert text(response["result"]) == "m-1/assistant/endTurn: 4"

    asyncio.run(main())


def test_sampling_without_the_capability_is_refused_before_sending(ready_client):
    client = ready_client(sampling_server())

    async def main():
        result = await client.acall_tool("ask_simple", {"question": "hi"})
        assert result["isError"] is True
        assert "did not declare the 'sampling' capability" in text(result)

    asyncio.run(main())
    assert client.requests() == []


@pytest.mark.parametrize(("tool", "arguments"), [("ask_simple", {"question": "hi"}), ("ask_with_tools", {})])
def test_sampling_in_a_stateless_request_says_there_is_no_way_back(tool, arguments):
    # A stateless HTTP request knows none of the client's capabilities: the reason is that
    # nothing can be asked of the client, not that it declared no sampling.
    async def main():
        frames = []
        connection = sampling_server().connect_stateless(frames.append, "2025-11-25")
        connection.feed(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                    "params": {"name": tool, "arguments": arguments}}).encode())
        await until(lambda: frames)
        result = json.loads(frames[0])["result"]
        assert result["isError"] is True
        assert text(result) == ("[-32008] cannot send sampling/createMessage to the client: "
                                "a stateless HTTP request has no channel back to the client")

    asyncio.run(main())


def test_sampling_with_tools_needs_the_tools_capability_and_2025_11_25(ready_client):
    plain = ready_client(sampling_server(), capabilities={"sampling": {}})
    old = ready_client(sampling_server(), "2025-06-18", capabilities={"sampling": {"tools": {}}})
    able = ready_client(sampling_server(), capabilities={"sampling": {"tools": {}}})

    async def main():
        refused = await plain.acall_tool("ask_with_tools", {})
        assert refused["isError"] and "'tools'" in text(refused)
        too_old = await old.acall_tool("ask_with_tools", {})
        assert too_old["isError"] and "2025-11-25" in text(too_old)
        id = able.send_request("tools/call", {"name": "ask_with_tools", "arguments": {}})
        request = await able.wait_request("sampling/createMessage")
        assert request["params"]["tools"][0]["name"] == "w"
        assert request["params"]["toolChoice"] == {"mode": "auto"}
        able.respond(request["id"], {"role": "assistant", "model": "m", "stopReason": "toolUse",
                                     "content": [{"type": "tool_use", "id": "u1", "name": "w", "input": {}}]})
        response = await able.wait_response(id)
        assert "tool_use" in text(response["result"])

    asyncio.run(main())


def test_client_refusal_and_malformed_results_become_tool_errors(ready_client):
    client = ready_client(sampling_server(), capabilities={"sampling": {}})

    async def main():
        id = client.send_request("tools/call", {"name": "ask_simple", "arguments": {"question": "q"}})
        request = await client.wait_request("sampling/createMessage")
        client.respond_error(request["id"], -1, "User rejected sampling")
        result = (await client.wait_response(id))["result"]
        assert result["isError"] is True and "User rejected sampling" in text(result)

        id = client.send_request("tools/call", {"name": "ask_simple", "arguments": {"question": "q"}})
        request = await client.wait_request("sampling/createMessage")
        client.respond(request["id"], {"role": "robot", "model": "m", "content": {"type": "text", "text": "x"}})
        result = (await client.wait_response(id))["result"]
        assert result["isError"] is True and "invalid result" in text(result)

    asyncio.run(main())


def test_sampling_parameters_are_checked(ready_client):
    app = Server("s")

    @app.tool()
    async def bad(kind: str, ctx: Context) -> str:
        if kind == "tokens":
            await ctx.sample("x", max_tokens=0)
        elif kind == "empty":
            await ctx.sample([])
        elif kind == "role":
            await ctx.sample([{"role": "system", "content": "x"}])
        elif kind == "audio":
            await ctx.sample([{"type": "audio", "data": "AA==", "mimeType": "audio/wav"}])
        return "sent"

    client = ready_client(app, "2024-11-05", capabilities={"sampling": {}})

    async def main():
        for kind, fragment in [("tokens", "max_tokens"), ("empty", "at least one"),
                               ("role", "'user' or 'assistant'"), ("audio", "2025-03-26")]:
            result = await client.acall_tool("bad", {"kind": kind})
            assert result["isError"] is True and fragment in text(result), (kind, result)

    asyncio.run(main())
    assert client.requests() == []


# -- elicitation --------------------------------------------------------------------------


class Plan(enum.Enum):
    FREE = "free"
    PRO = "pro"


@dataclasses.dataclass
class Profile:
    name: str
    age: int
    plan: Plan = Plan.FREE


def elicitation_server():
    app = Server("elicit")

    @app.tool()
    async def signup(ctx: Context) -> str:
        result = await ctx.elicit("Your profile?", Profile)
        if not result.accepted:
            return result.action
        profile = result.data
        return f"{profile.name} {profile.age} {profile.plan.value}"

    @app.tool()
    async def confirm(ctx: Context) -> str:
        result = await ctx.elicit("Sure?", {
            "type": "object",
            "properties": {"ok": {"type": "boolean", "default": False},
                           "note": {"type": "string", "default": "none"}},
            "required": ["ok"],
        })
        return f"{result.action} {result.content}"

    @app.tool()
    async def visit(ctx: Context) -> str:
        result = await ctx.elicit_url("Log in please", "https://example.org/login", "e-1")
        return result.action

    return app


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
def test_elicitation_with_a_dataclass(ready_client, version):
    client = ready_client(elicitation_server(), version, capabilities={"elicitation": {}})

    async def main():
        id = client.send_request("tools/call", {"name": "signup", "arguments": {}})
        request = await client.wait_request("elicitation/create")
        params = request["params"]
        assert params["message"] == "Your profile?"
        assert ("mode" in params) == (version == "2025-11-25")
        schema = params["requestedSchema"]
        assert schema["required"] == ["name", "age"]
        assert set(schema["properties"]) == {"name", "age", "plan"}
        client.respond(request["id"], {"action": "accept", "content": {"name": "Ann", "age": 31, "plan": "pro"}})
        assert text((await client.wait_response(id))["result"]) == "Ann 31 pro"

        id = client.send_request("tools/call", {"name": "signup", "arguments": {}})
        request = await client.wait_request("elicitation/create")
        client.respond(request["id"], {"action": "decline"})
        assert text((await client.wait_response(id))["result"]) == "decline"

        id = client.send_request("tools/call", {"name": "signup", "arguments": {}})
        request = await client.wait_request("elicitation/create")
        client.respond(request["id"], {"action": "accept", "content": {"name": "Ann"}})
        result = (await client.wait_response(id))["result"]
        assert result["isError"] is True and "does not fit the schema" in text(result)

    asyncio.run(main())


def test_elicitation_defaults_only_where_the_version_has_them(ready_client):
    older = ready_client(elicitation_server(), "2025-06-18", capabilities={"elicitation": {}})
    newer = ready_client(elicitation_server(), "2025-11-25", capabilities={"elicitation": {}})

    async def main():
        for client, note_default in ((older, False), (newer, True)):
            id = client.send_request("tools/call", {"name": "confirm", "arguments": {}})
            request = await client.wait_request("elicitation/create")
            properties = request["params"]["requestedSchema"]["properties"]
            assert properties["ok"]["default"] is False  # booleans had defaults already
            assert ("default" in properties["note"]) == note_default
            client.respond(request["id"], {"action": "cancel"})
            assert text((await client.wait_response(id))["result"]) == "cancel None"

    asyncio.run(main())


@pytest.mark.parametrize("version, capabilities, fragment", [
    ("2025-11-25", {}, "'elicitation' capability"),
    ("2025-03-26", {"elicitation": {}}, "2025-06-18 or later"),
])
def test_elicitation_refused_without_capability_or_version(ready_client, version, capabilities, fragment):
    client = ready_client(elicitation_server(), version, capabilities=capabilities)

    async def main():
        result = await client.acall_tool("signup", {})
        assert result["isError"] is True and fragment in text(result)

    asyncio.run(main())
    assert client.requests() == []


def test_url_elicitation(ready_client):
    form_only = ready_client(elicitation_server(), capabilities={"elicitation": {"form": {}}})
    with_url = ready_client(elicitation_server(), capabilities={"elicitation": {"url": {}}})

    async def main():
        refused = await form_only.acall_tool("visit", {})
        assert refused["isError"] and "elicitation.url" in text(refused)
        id = with_url.send_request("tools/call", {"name": "visit", "arguments": {}})
        request = await with_url.wait_request("elicitation/create")
        assert request["params"] == {"mode": "url", "message": "Log in please",
                                     "url": "https://example.org/login", "elicitationId": "e-1"}
        with_url.respond(request["id"], {"action": "accept"})
        assert text((await with_url.wait_response(id))["result"]) == "accept"

    asyncio.run(main())


def test_elicitation_schema_checks():
    from mcpfast.protocol.features import features_for
    from mcpfast.server.request.requests_to_client import elicitation_params

    features = features_for("2025-11-25")
    with pytest.raises(ValueError):
        elicitation_params(features, "m", {"type": "array"})
    with pytest.raises(ValueError):
        elicitation_params(features, "m", {"type": "object", "properties": {"a": {"type": "object"}}})
    with pytest.raises(ValueError):
        elicitation_params(features, "m", {"type": "object", "properties": {}, "required": ["x"]})
    with pytest.raises(TypeError):
        elicitation_params(features, "m", int)
    with pytest.raises(TypeError):
        elicitation_params(features, 5, {"type": "object", "properties": {}})
    multi = {"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string", "enum": ["a"]}}}}
    assert elicitation_params(features, "m", multi)[0]["requestedSchema"] == multi
    with pytest.raises(ValueError):
        elicitation_params(features_for("2025-06-18"), "m", multi)


# -- roots, ping, roots changed ----------------------------------------------------------------


def roots_server():
    app = Server("roots")
    changes = []

    @app.tool()
    async def roots(ctx: Context) -> str:
        found = await ctx.list_roots()
        return ",".join(f"{r.name}={r.uri}" for r in found)

    @app.tool()
    async def ping_back(ctx: Context) -> str:
        await ctx.ping()
        return "pong"

    @app.on_roots_changed
    async def changed(ctx: Context) -> None:
        changes.append([root.uri for root in await ctx.list_roots()])

    app.changes = changes
    return app


def test_list_roots(ready_client):
    client = ready_client(roots_server(), capabilities={"roots": {"listChanged": True}})

    async def main():
        id = client.send_request("tools/call", {"name": "roots", "arguments": {}})
        request = await client.wait_request("roots/list")
        assert "params" not in request
        client.respond(request["id"], {"roots": [{"uri": "file:///a", "name": "A"}, {"uri": "file:///b"}]})
        assert text((await client.wait_response(id))["result"]) == "A=file:///a,None=file:///b"

    asyncio.run(main())


def test_roots_need_the_capability(ready_client):
    client = ready_client(roots_server())

    async def main():
        result = await client.acall_tool("roots", {})
        assert result["isError"] and "'roots' capability" in text(result)

    asyncio.run(main())


def test_roots_changed_notification_calls_the_callback(ready_client):
    app = roots_server()
    client = ready_client(app, capabilities={"roots": {"listChanged": True}})

    async def main():
        client.notify("notifications/roots/list_changed")
        request = await client.wait_request("roots/list")
        client.respond(request["id"], {"roots": [{"uri": "file:///new"}]})
        for _ in range(10):
            await asyncio.sleep(0)

    asyncio.run(main())
    assert app.changes == [["file:///new"]]


def test_server_pings_the_client(ready_client):
    client = ready_client(roots_server())

    async def main():
        id = client.send_request("tools/call", {"name": "ping_back", "arguments": {}})
        request = await client.wait_request("ping")
        client.respond(request["id"], {})
        assert text((await client.wait_response(id))["result"]) == "pong"

    asyncio.run(main())


def test_connection_level_requests(ready_client):
    app = roots_server()
    client = ready_client(app, capabilities={"roots": {}})

    async def main():
        task = asyncio.ensure_future(client.conn.list_roots())
        request = await client.wait_request("roots/list")
        client.respond(request["id"], {"roots": [{"uri": "file:///x", "name": "x"}]})
        assert await task == [Root("file:///x", "x")]
        ping = asyncio.ensure_future(client.conn.ping())
        client.respond((await client.wait_request("ping"))["id"], {})
        await ping

    asyncio.run(main())


def test_capability_error_carries_its_code():
    error = ClientCapabilityError("sampling", "no sampling")
    assert error.code == MISSING_REQUIRED_CLIENT_CAPABILITY == -32021
    assert error.data == {"capability": "sampling", "requiredCapabilities": {"sampling": {}}}
