"""Capabilities: requests the server did not advertise, and what the client advertises."""

import pytest

from mcpfast.client import CapabilityError, Client
from mcpfast.client.capabilities import METHOD_CAPABILITIES, ServerCapabilities, client_capabilities
from mcpfast.jsonrpc import ConnectionClosed

# (capability, method, call) for every request that needs a capability.
CALLS = [
    ("tools", "tools/call", lambda c: c.call_tool("t", {})),
    ("tools", "tools/list", lambda c: c.list_tools()),
    ("tools", "tools/list", lambda c: c.list_tools_page()),
    ("resources", "resources/list", lambda c: c.list_resources()),
    ("resources", "resources/list", lambda c: c.list_resources_page()),
    ("resources", "resources/templates/list", lambda c: c.list_resource_templates()),
    ("resources", "resources/templates/list", lambda c: c.list_resource_templates_page()),
    ("resources", "resources/read", lambda c: c.read_resource("file:///x")),
    ("resources.subscribe", "resources/subscribe", lambda c: c.subscribe("file:///x")),
    ("resources.subscribe", "resources/unsubscribe", lambda c: c.unsubscribe("file:///x")),
    ("prompts", "prompts/list", lambda c: c.list_prompts()),
    ("prompts", "prompts/list", lambda c: c.list_prompts_page()),
    ("prompts", "prompts/get", lambda c: c.get_prompt("p")),
    ("completions", "completion/complete", lambda c: c.complete("a", "v", prompt="p")),
    ("logging", "logging/setLevel", lambda c: c.set_logging_level("info")),
]


@pytest.mark.parametrize("capability, method, call", CALLS,
                         ids=[f"{m}-{i}" for i, (_, m, _) in enumerate(CALLS)])
def test_unadvertised_requests_raise_capability_error_and_send_nothing(
        fake, arun, capability, method, call):
    server = fake(capabilities={})

    async def main():
        client = await server.connect()
        before = len(server.from_client)
        with pytest.raises(CapabilityError) as info:
            await call(client)
        assert info.value.capability == capability
        assert info.value.method == method
        assert repr(capability) in str(info.value) and repr(method) in str(info.value)
        await server.settle()
        assert len(server.from_client) == before
        assert METHOD_CAPABILITIES[method] == capability

    arun(main())


def test_resources_without_subscribe_refuse_only_subscriptions(fake, arun):
    server = fake(capabilities={"resources": {}})
    server.router.add_request_handler("resources/read", lambda p, c: {"contents": []})

    async def main():
        client = await server.connect()
        assert await client.read_resource("file:///x") == {"contents": []}
        with pytest.raises(CapabilityError) as info:
            await client.subscribe("file:///x")
        assert info.value.capability == "resources.subscribe"

    arun(main())


def test_completion_needs_no_capability_in_2024_11_05(fake, arun):
    server = fake(capabilities={}, answer_version="2024-11-05")
    server.router.add_request_handler(
        "completion/complete", lambda p, c: {"completion": {"values": ["x"]}})

    async def main():
        client = await server.connect()
        result = await client.complete("a", "v", prompt="p")
        assert result == {"completion": {"values": ["x"]}}

    arun(main())


def test_check_capabilities_false_sends_anyway(fake, arun):
    server = fake(capabilities={})
    server.router.add_request_handler("tools/call", lambda p, c: {"content": []})

    async def main():
        client = await server.connect(check_capabilities=False)
        assert await client.call_tool("t") == {"content": []}
        assert client.features.tools and not client.features.tools_list_changed

    arun(main())


def test_after_the_connection_closes_requests_raise_connection_closed(fake, arun):
    server = fake()

    async def main():
        client = await server.connect()
        server.drop(ConnectionError("gone"))
        with pytest.raises(ConnectionClosed):
            await client.call_tool("t")
        with pytest.raises(ConnectionClosed):
            await client.ping()

    arun(main())


def test_server_features_flags():
    features = ServerCapabilities({
        "tools": {"listChanged": True}, "resources": {"subscribe": True}, "prompts": {},
        "logging": {},
    }, "2025-11-25")
    assert features.tools and features.resources and features.subscribe
    assert features.prompts and features.logging and not features.completions
    assert features.tools_list_changed and not features.resources_list_changed
    assert features.allows("resources.subscribe") and not features.allows("completions")
    assert "tools" in repr(features)
    # A capability that is not an object is not advertised.
    odd = ServerCapabilities({"tools": True, "resources": {"subscribe": "yes"}}, "2025-11-25")
    assert not odd.tools and odd.resources and not odd.subscribe
    assert repr(ServerCapabilities({}, "2025-06-18")) == "<ServerCapabilities none>"


def test_client_advertises_only_what_it_has_handlers_for():
    assert Client().capabilities == {}
    sampling = Client(sampling=lambda p: {}).capabilities
    assert sampling == {"sampling": {}}
    everything = Client(sampling=lambda p: {}, elicitation=lambda p: {}, roots=[]).capabilities
    assert everything == {
        "sampling": {}, "elicitation": {"form": {}}, "roots": {"listChanged": True},
    }


def test_extra_capabilities_merge_over_the_handled_ones():
    caps = client_capabilities(
        sampling=True, elicitation=True, roots=False,
        extra={"sampling": {"tools": {}}, "elicitation": {"url": {}},
               "experimental": {"x": {"on": True}}},
    )
    assert caps == {
        "sampling": {"tools": {}},
        "elicitation": {"form": {}, "url": {}},
        "experimental": {"x": {"on": True}},
    }


@pytest.mark.parametrize("name", ["sampling", "elicitation", "roots"])
def test_a_handled_capability_without_its_handler_is_refused(name):
    with pytest.raises(ValueError, match=name):
        Client(capabilities={name: {}})


def test_bad_extra_capabilities_are_type_errors():
    with pytest.raises(TypeError):
        client_capabilities(sampling=False, elicitation=False, roots=False, extra=[1])
    with pytest.raises(TypeError):
        client_capabilities(sampling=False, elicitation=False, roots=False, extra={"x": 1})
    with pytest.raises(TypeError):
        client_capabilities(sampling=False, elicitation=False, roots=False, extra={1: {}})


def test_advertised_capabilities_go_out_in_initialize(fake, arun, mcp_schema):
    server = fake()

    async def main():
        await server.connect(
            sampling=lambda p: {}, roots=["file:///tmp"],
            capabilities={"experimental": {"demo": {}}},
        )
        assert server.initialize_params["capabilities"] == {
            "sampling": {}, "roots": {"listChanged": True}, "experimental": {"demo": {}},
        }
        server.check_schema(mcp_schema)

    arun(main())
