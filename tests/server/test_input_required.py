"""InputRequiredResult round trips (2026-07-28): handler code that asks the client
(ctx.elicit / sample / list_roots) answers with the questions, and the client's retry with
inputResponses and the signed requestState completes it. Frames are schema-checked."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Optional

import pytest

from mcpfast import AccessToken, Context, Server
from mcpfast.jsonrpc.errors import INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY
from mcpfast.protocol import meta_keys
from mcpfast.server.request.input_required import RequestStateCodec, params_digest

from .test_stateless_era import V2026, Wire, meta

CAPS = {"elicitation": {}, "sampling": {}, "roots": {}}
NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
ELICITED = {"action": "accept", "content": {"name": "Ada"}}
SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"}
ROOTS = {"roots": [{"uri": "file:///work", "name": "work"}]}


def make_server(**options: Any) -> Server:
    app = Server("mrtr", **options)
    calls: list[str] = []
    app.calls = calls  # type: ignore[attr-defined]

    @app.tool()
    async def greet(ctx: Context) -> str:
        calls.append("greet")
        answer = await ctx.elicit("Name?", NAME, input_key="user_name")
        return f"Hello, {answer.content['name']}!"

    @app.tool()
    async def everything(ctx: Context) -> str:
        name, capital, roots = await asyncio.gather(
            ctx.elicit("Name?", NAME), ctx.sample("Capital of France?"), ctx.list_roots())
        return f"{name.content['name']} {capital.text} {roots[0].uri}"

    @app.tool()
    async def two_rounds(ctx: Context) -> str:
        first = await ctx.elicit("Step 1", NAME, input_key="step1")
        second = await ctx.elicit("Step 2", NAME, input_key="step2")
        return f"{first.content['name']}+{second.content['name']}"

    @app.tool()
    def sync_asks(ctx: Context) -> Any:
        async def inner() -> str:
            answer = await ctx.elicit("Name?", NAME)
            return answer.content["name"]
        return inner()

    @app.prompt()
    async def context_prompt(ctx: Context) -> str:
        answer = await ctx.elicit("Context?", NAME, input_key="user_context")
        return f"Use {answer.content['name']}"

    @app.resource("note://secret")
    async def secret(ctx: Context) -> str:
        answer = await ctx.elicit("Password?", NAME, input_key="password")
        return f"secret for {answer.content['name']}"

    return app


class Client:
    """Sends 2026-07-28 requests through a Wire and waits for async answers."""

    def __init__(self, server: Server, mcp_schema: Any, capabilities: Optional[dict] = None) -> None:
        self.wire = Wire(server, mcp_schema)
        self.capabilities = CAPS if capabilities is None else capabilities
        self.ids = iter(range(100, 10_000))

    async def send(self, method: str, params: dict, **extra: Any) -> dict:
        request_id = next(self.ids)
        params = {**params, **extra, "_meta": meta(self.capabilities)}
        self.wire.methods[request_id] = (method, V2026)
        self.wire.conn.feed(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method,
                                        "params": params}).encode())
        for _ in range(200):
            for index, frame in enumerate(self.wire.frames):
                if frame.get("id") == request_id and "method" not in frame:
                    return self.wire.frames.pop(index)
            await asyncio.sleep(0)
        raise AssertionError(f"no answer to {method}")

    async def result(self, method: str, params: dict, **extra: Any) -> dict:
        answer = await self.send(method, params, **extra)
        assert "result" in answer, answer
        return answer["result"]


def call(name: str) -> dict:
    return {"name": name, "arguments": {}}


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def test_a_question_and_the_retry_that_answers_it(mcp_schema):
    async def main():
        app = make_server()
        client = Client(app, mcp_schema)
        first = await client.result("tools/call", call("greet"))
        assert first["resultType"] == "input_required"
        assert first["inputRequests"] == {"user_name": {"method": "elicitation/create", "params": {
            "mode": "form", "message": "Name?", "requestedSchema": NAME}}}
        assert isinstance(first["requestState"], str)
        assert meta_keys.SERVER_INFO in first["_meta"] and "ttlMs" not in first
        done = await client.result("tools/call", call("greet"), inputResponses={"user_name": ELICITED},
                                   requestState=first["requestState"])
        assert done["resultType"] == "complete" and done["content"][0]["text"] == "Hello, Ada!"
        assert app.calls == ["greet", "greet"]  # the handler ran again from the start
        assert [f for f in client.wire.frames if "method" in f and "id" in f] == []

    run(main())


def test_questions_asked_side_by_side_come_in_one_round(mcp_schema):
    async def main():
        client = Client(make_server(), mcp_schema)
        first = await client.result("tools/call", call("everything"))
        requests = first["inputRequests"]
        assert {k: v["method"] for k, v in requests.items()} == {
            "input_1": "elicitation/create", "input_2": "sampling/createMessage", "input_3": "roots/list"}
        answers = {"input_1": ELICITED, "input_2": SAMPLED, "input_3": ROOTS}
        done = await client.result("tools/call", call("everything"), inputResponses=answers,
                                   requestState=first["requestState"])
        assert done["content"][0]["text"] == "Ada Paris file:///work"

    run(main())


def test_answers_of_earlier_rounds_travel_in_the_state(mcp_schema):
    async def main():
        client = Client(make_server(), mcp_schema)
        first = await client.result("tools/call", call("two_rounds"))
        assert list(first["inputRequests"]) == ["step1"]
        second = await client.result("tools/call", call("two_rounds"),
                                     inputResponses={"step1": ELICITED},
                                     requestState=first["requestState"])
        assert list(second["inputRequests"]) == ["step2"]
        bob = {"action": "accept", "content": {"name": "Bob"}}
        # Round 3 sends only step2's answer: step1's comes from the state.
        done = await client.result("tools/call", call("two_rounds"), inputResponses={"step2": bob},
                                   requestState=second["requestState"])
        assert done["content"][0]["text"] == "Ada+Bob"

    run(main())


def test_missing_or_unknown_answers_ask_again_and_extra_keys_are_ignored(mcp_schema):
    async def main():
        client = Client(make_server(), mcp_schema)
        wrong = await client.result("tools/call", call("greet"), inputResponses={"other": ELICITED})
        assert wrong["resultType"] == "input_required" and list(wrong["inputRequests"]) == ["user_name"]
        extra = await client.result("tools/call", call("greet"),
                                    inputResponses={"user_name": ELICITED, "junk": {"x": 1}})
        assert extra["content"][0]["text"] == "Hello, Ada!"

    run(main())


@pytest.mark.parametrize("responses", [12345, {"user_name": 12345}, ["user_name"]])
def test_malformed_input_responses_are_invalid_params(mcp_schema, responses):
    async def main():
        client = Client(make_server(), mcp_schema)
        answer = await client.send("tools/call", call("greet"), inputResponses=responses)
        assert answer["error"]["code"] == INVALID_PARAMS and "inputResponses" in answer["error"]["message"]

    run(main())


def test_a_tampered_or_foreign_state_is_refused(mcp_schema):
    async def main():
        client = Client(make_server(), mcp_schema)
        first = await client.result("tools/call", call("greet"))
        state = first["requestState"]
        payload, _, mac = state.partition(".")
        tampered = payload[:-2] + ("A" if payload[-2] != "A" else "B") + payload[-1] + "." + mac
        for bad in (tampered, state + "x", "not-a-state", 17):
            answer = await client.send("tools/call", call("greet"), inputResponses={"user_name": ELICITED},
                                       requestState=bad)
            assert answer["error"]["code"] == INVALID_PARAMS, bad
        # A state from another request (other params) or another deployment (another secret:
        # the processes of one deployment share theirs, MCPFAST_SECRET) is refused too.
        other = await client.send("tools/call", {"name": "greet", "arguments": {"x": 1}},
                                  requestState=state)
        assert "another request" in other["error"]["message"]
        foreign = await Client(make_server(request_state_secret=b"another deployment"),
                               mcp_schema).send("tools/call", call("greet"), requestState=state)
        assert "integrity" in foreign["error"]["message"]

    run(main())


def test_the_state_is_bound_to_the_subject_and_expires():
    codec = RequestStateCodec(b"k" * 32, ttl=60)
    digest = params_digest({"name": "greet", "arguments": {}, "_meta": {"ignored": True}})
    assert digest == params_digest({"name": "greet", "arguments": {}, "requestState": "x"})
    state = codec.encode("tools/call", digest, "alice", {"user_name": ELICITED}, now=1000.0)
    assert codec.decode(state, "tools/call", digest, "alice", now=1010.0) == {"user_name": ELICITED}
    with pytest.raises(Exception, match="another client"):
        codec.decode(state, "tools/call", digest, "mallory", now=1010.0)
    with pytest.raises(Exception, match="expired"):
        codec.decode(state, "tools/call", digest, "alice", now=1061.0)
    with pytest.raises(Exception, match="another request"):
        codec.decode(state, "prompts/get", digest, "alice", now=1010.0)
    # Another process of the same service (same secret) accepts it.
    assert RequestStateCodec(b"k" * 32).decode(state, "tools/call", digest, "alice", now=1010.0)
    with pytest.raises(ValueError):
        RequestStateCodec(b"short")


def test_prompts_and_resources_ask_too(mcp_schema):
    async def main():
        client = Client(make_server(), mcp_schema)
        first = await client.result("prompts/get", {"name": "context_prompt"})
        assert list(first["inputRequests"]) == ["user_context"]
        done = await client.result("prompts/get", {"name": "context_prompt"},
                                   inputResponses={"user_context": ELICITED},
                                   requestState=first["requestState"])
        assert done["messages"][0]["content"]["text"] == "Use Ada"
        read = await client.result("resources/read", {"uri": "note://secret"})
        assert list(read["inputRequests"]) == ["password"] and "ttlMs" not in read
        done = await client.result("resources/read", {"uri": "note://secret"},
                                   inputResponses={"password": ELICITED}, requestState=read["requestState"])
        assert done["contents"][0]["text"] == "secret for Ada" and done["ttlMs"] == 0

    run(main())


def test_undeclared_capabilities_are_never_asked_for(mcp_schema):
    async def main():
        client = Client(make_server(), mcp_schema, capabilities={"sampling": {}})
        answer = await client.send("tools/call", call("greet"))
        error = answer["error"]
        assert error["code"] == MISSING_REQUIRED_CLIENT_CAPABILITY
        assert error["data"]["requiredCapabilities"] == {"elicitation": {}}

    run(main())


def test_a_sync_tool_returning_a_coroutine_that_asks(mcp_schema):
    async def main():
        client = Client(make_server(), mcp_schema)
        first = await client.result("tools/call", call("sync_asks"))
        done = await client.result("tools/call", call("sync_asks"), inputResponses={"input_1": ELICITED},
                                   requestState=first["requestState"])
        assert done["content"][0]["text"] == "Ada"

    run(main())


def test_the_authenticated_subject_binds_the_state(mcp_schema):
    async def main():
        app = make_server()
        client = Client(app, mcp_schema)
        client.wire.conn.auth = AccessToken("alice")
        first = await client.result("tools/call", call("greet"))
        client.wire.conn.auth = AccessToken("mallory")
        stolen = await client.send("tools/call", call("greet"), inputResponses={"user_name": ELICITED},
                                   requestState=first["requestState"])
        assert "another client" in stolen["error"]["message"]

    run(main())


def test_handshake_era_requests_still_ask_the_client_directly(mcp_schema, ready_client):
    app = make_server()
    fake = ready_client(app, "2025-11-25", capabilities=CAPS)

    async def main():
        request_id = fake.send_request("tools/call", call("greet"))
        for _ in range(50):
            await asyncio.sleep(0)
            asked = fake.requests("elicitation/create")
            if asked:
                break
        fake.respond(asked[0]["id"], ELICITED)
        for _ in range(50):
            await asyncio.sleep(0)
            response = fake.response(request_id)
            if response is not None:
                return response

    response = asyncio.run(main())
    assert response["result"]["content"][0]["text"] == "Hello, Ada!"
    assert "resultType" not in response["result"]
