"""Requests the server sends: sampling, elicitation, roots, ping."""

import asyncio
import dataclasses
import logging
from pathlib import Path

import pytest

from mcpfast.client import Client, ClientError
from mcpfast.client.handlers import normalize_roots, with_request
from mcpfast.jsonrpc import InternalError, JSONRPCError, MethodNotFound

SAMPLING_PARAMS = {
    "messages": [{"role": "user", "content": {"type": "text", "text": "Hi?"}}],
    "maxTokens": 20,
}
SAMPLED = {
    "role": "assistant",
    "content": {"type": "text", "text": "Hello."},
    "model": "test-model",
    "stopReason": "endTurn",
}
ELICIT_PARAMS = {
    "mode": "form",
    "message": "Your name?",
    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
}


def test_sampling_with_a_sync_handler(fake, arun, mcp_schema):
    server = fake()
    got = []

    def sample(params):
        got.append(params)
        return SAMPLED

    async def main():
        await server.connect(sampling=sample)
        assert server.initialize_params["capabilities"] == {"sampling": {}}
        result = await server.session.request("sampling/createMessage", SAMPLING_PARAMS)
        assert result == SAMPLED
        assert got == [SAMPLING_PARAMS]
        server.check_schema(mcp_schema)

    arun(main())


def test_sampling_with_an_async_handler(fake, arun, mcp_schema):
    server = fake()

    async def sample(params):
        await asyncio.sleep(0)
        return {**SAMPLED, "content": {"type": "text", "text": params["messages"][0]["content"]["text"]}}

    async def main():
        await server.connect(sampling=sample)
        result = await server.session.request("sampling/createMessage", SAMPLING_PARAMS)
        assert result["content"]["text"] == "Hi?"
        server.check_schema(mcp_schema)

    arun(main())


def test_a_sync_handler_returning_an_awaitable_is_awaited(fake, arun):
    server = fake()

    async def later():
        return SAMPLED

    async def main():
        await server.connect(sampling=lambda params: later())
        assert await server.session.request("sampling/createMessage", SAMPLING_PARAMS) == SAMPLED

    arun(main())


def test_a_handler_may_refuse_with_a_jsonrpc_error(fake, arun):
    server = fake()

    def sample(params):
        raise JSONRPCError(-1, "User rejected sampling request")

    async def main():
        await server.connect(sampling=sample)
        with pytest.raises(JSONRPCError) as info:
            await server.session.request("sampling/createMessage", SAMPLING_PARAMS)
        assert info.value.code == -1 and info.value.message == "User rejected sampling request"

    arun(main())


@pytest.mark.parametrize("bad", [None, "text", {"role": "assistant"}, {"content": {}, "model": "m"}])
def test_a_malformed_sampling_result_is_an_internal_error(fake, arun, caplog, bad):
    server = fake()

    async def main():
        await server.connect(sampling=lambda params: bad)
        with caplog.at_level(logging.ERROR):
            with pytest.raises(InternalError):
                await server.session.request("sampling/createMessage", SAMPLING_PARAMS)
        assert any("sampling" in str(r.exc_info[1]) for r in caplog.records if r.exc_info)

    arun(main())


def test_elicitation(fake, arun, mcp_schema):
    server = fake()

    async def elicit(params):
        assert params["message"] == "Your name?"
        return {"action": "accept", "content": {"name": "Ada"}}

    async def main():
        await server.connect(elicitation=elicit)
        assert server.initialize_params["capabilities"] == {"elicitation": {"form": {}}}
        result = await server.session.request("elicitation/create", ELICIT_PARAMS)
        assert result == {"action": "accept", "content": {"name": "Ada"}}
        server.check_schema(mcp_schema)

    arun(main())


def test_accepted_elicitation_gets_the_schema_defaults_for_left_out_fields(fake, arun, mcp_schema):
    server = fake()
    schema = {"type": "object", "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
        "verified": {"type": "boolean", "default": True},
        "note": {"type": "string"},
    }}
    answers = iter([{"action": "accept"}, {"action": "accept", "content": {"name": "Ada", "note": "hi"}},
                    {"action": "decline"}])

    async def main():
        await server.connect(elicitation=lambda params: next(answers))
        params = {"mode": "form", "message": "Who?", "requestedSchema": schema}
        everything = await server.session.request("elicitation/create", params)
        assert everything == {"action": "accept", "content": {
            "name": "John Doe", "age": 30, "status": "active", "verified": True}}
        # What the handler gave wins; fields without a default stay out unless given.
        mixed = await server.session.request("elicitation/create", params)
        assert mixed["content"] == {"name": "Ada", "age": 30, "status": "active", "verified": True,
                                    "note": "hi"}
        # Declining sends no content.
        assert await server.session.request("elicitation/create", params) == {"action": "decline"}
        server.check_schema(mcp_schema)

    arun(main())


@pytest.mark.parametrize("bad", [{"action": "maybe"}, {}, ["accept"]])
def test_a_malformed_elicitation_result_is_an_internal_error(fake, arun, bad):
    server = fake()

    async def main():
        await server.connect(elicitation=lambda params: bad)
        with pytest.raises(InternalError):
            await server.session.request("elicitation/create", ELICIT_PARAMS)

    arun(main())


def test_elicitation_decline_in_2025_06_18(fake, arun, mcp_schema):
    server = fake(answer_version="2025-06-18")

    async def main():
        await server.connect(elicitation=lambda params: {"action": "decline"})
        params = {k: v for k, v in ELICIT_PARAMS.items() if k != "mode"}
        assert await server.session.request("elicitation/create", params) == {"action": "decline"}
        server.check_schema(mcp_schema)

    arun(main())


def test_handlers_must_be_callable():
    with pytest.raises(TypeError, match="sampling"):
        Client(sampling="no")
    with pytest.raises(TypeError, match="elicitation"):
        Client(elicitation=3)


def test_unoffered_server_requests_are_method_not_found(fake, arun):
    server = fake()

    async def main():
        await server.connect()
        for method in ("sampling/createMessage", "elicitation/create", "roots/list"):
            with pytest.raises(MethodNotFound):
                await server.session.request(method, {})

    arun(main())


def test_ping_from_the_server(fake, arun, mcp_schema):
    server = fake()

    async def main():
        await server.connect()
        assert await server.session.request("ping") == {}
        server.check_schema(mcp_schema)

    arun(main())


@dataclasses.dataclass
class RootObject:
    uri: str
    name: str = None


def test_roots_from_every_accepted_form(tmp_path):
    roots = normalize_roots([
        "file:///srv/a",
        {"uri": "file:///srv/b", "name": "B"},
        RootObject("file:///srv/c", "C"),
        RootObject("file:///srv/d"),
        tmp_path,
    ])
    assert roots == [
        {"uri": "file:///srv/a"},
        {"uri": "file:///srv/b", "name": "B"},
        {"uri": "file:///srv/c", "name": "C"},
        {"uri": "file:///srv/d"},
        {"uri": tmp_path.as_uri()},
    ]


@pytest.mark.parametrize("bad, error", [
    (["http://example.com"], ValueError),
    ([{"name": "no uri"}], ValueError),
    ([Path("relative/dir")], ValueError),
    ([42], TypeError),
    ([{"uri": "file:///x", "name": 3}], TypeError),
    ("file:///a", TypeError),
    ({"uri": "file:///a"}, TypeError),
])
def test_bad_roots_are_refused(bad, error):
    with pytest.raises(error):
        normalize_roots(bad)
    with pytest.raises(error):
        Client(roots=bad)


def test_roots_list_and_list_changed(fake, arun, mcp_schema):
    server = fake()
    changed = []
    server.router.add_notification_handler(
        "notifications/roots/list_changed", lambda p, c: changed.append(p))

    async def main():
        client = await server.connect(roots=["file:///work"])
        assert server.initialize_params["capabilities"] == {"roots": {"listChanged": True}}
        assert await server.session.request("roots/list") == {"roots": [{"uri": "file:///work"}]}
        client.set_roots([{"uri": "file:///other", "name": "Other"}])
        await server.settle()
        assert changed == [None]
        assert await server.session.request("roots/list") == {
            "roots": [{"uri": "file:///other", "name": "Other"}]
        }
        server.check_schema(mcp_schema)

    arun(main())


def test_roots_from_a_function(fake, arun, mcp_schema):
    server = fake()
    current = ["file:///one"]

    async def async_roots():
        await asyncio.sleep(0)
        return ["file:///async"]

    async def main():
        client = await server.connect(roots=lambda: list(current))
        assert await server.session.request("roots/list") == {"roots": [{"uri": "file:///one"}]}
        current.append("file:///two")
        assert client.notify_roots_changed() is True
        result = await server.session.request("roots/list")
        assert [r["uri"] for r in result["roots"]] == ["file:///one", "file:///two"]
        client.set_roots(async_roots)
        assert await server.session.request("roots/list") == {"roots": [{"uri": "file:///async"}]}
        await server.settle()
        assert len(server.sent("notifications/roots/list_changed")) == 2
        server.check_schema(mcp_schema)

    arun(main())


def test_a_roots_function_returning_bad_roots_is_an_internal_error(fake, arun):
    server = fake()

    async def main():
        await server.connect(roots=lambda: ["not-a-file-uri"])
        with pytest.raises(InternalError):
            await server.session.request("roots/list")

    arun(main())


def test_set_roots_needs_the_roots_capability_and_waits_for_initialize(fake, arun):
    server = fake()

    async def main():
        plain = Client()
        with pytest.raises(ClientError, match="roots"):
            plain.set_roots(["file:///x"])
        with pytest.raises(ClientError):
            plain.notify_roots_changed()
        client = Client(roots=[])
        await server.connect(client, initialize=False)
        # Not initialized yet: the new roots are kept, nothing is sent.
        client.set_roots(["file:///x"])
        assert client.notify_roots_changed() is False
        await client.initialize()
        await server.settle()
        assert not server.sent("notifications/roots/list_changed")
        assert await server.session.request("roots/list") == {"roots": [{"uri": "file:///x"}]}

    arun(main())


def test_server_requests_while_a_call_is_running(fake, arun, mcp_schema):
    """A tool that samples during its call: the classic nested round trip."""
    server = fake()

    async def call(params, ctx):
        sampled = await ctx.request("sampling/createMessage", SAMPLING_PARAMS)
        roots = await ctx.request("roots/list")
        return {"content": [{"type": "text", "text": sampled["content"]["text"]}],
                "structuredContent": {"roots": len(roots["roots"])}}

    server.router.add_request_handler("tools/call", call)

    async def main():
        client = await server.connect(sampling=lambda p: SAMPLED, roots=["file:///a", "file:///b"])
        result = await client.call_tool("ask")
        assert result["content"][0]["text"] == "Hello."
        assert result["structuredContent"] == {"roots": 2}
        server.check_schema(mcp_schema)

    arun(main())


def test_with_request_handlers_are_told_which_request_they_serve(fake, arun):
    server = fake()
    seen = []

    def sample(params, request):
        seen.append(request)
        return SAMPLED

    async def elicit(params, request):
        await asyncio.sleep(0)
        seen.append(request)
        return {"action": "accept", "content": {"name": "Ada"}}

    async def roots(request):
        seen.append(request)
        return ["file:///w"]

    async def main():
        await server.connect(sampling=with_request(sample), elicitation=with_request(elicit),
                             roots=with_request(roots))
        assert set(server.initialize_params["capabilities"]) == {"sampling", "elicitation", "roots"}
        asked = [server.session.send_request(method, params) for method, params in (
            ("sampling/createMessage", SAMPLING_PARAMS), ("elicitation/create", ELICIT_PARAMS), ("roots/list", None))]
        answers = [await out.wait() for out in asked]
        assert answers == [SAMPLED, {"action": "accept", "content": {"name": "Ada"}}, {"roots": [{"uri": "file:///w"}]}]
        # (the async handlers answer after the sync one)
        assert sorted((request.id, request.method) for request in seen) == [(out.id, out.method) for out in asked]
        # Nothing ties a request of this transport to one of the client's own.
        assert [request.related_request_id for request in seen] == [None, None, None]

    arun(main())


def test_with_request_needs_a_callable():
    with pytest.raises(TypeError, match="callable"):
        with_request("not a function")
