"""The handshake: version negotiation, initialize params, the initialized notification."""

import asyncio

import pytest

from mcpfast.client import (
    LATEST_VERSION,
    SUPPORTED_VERSIONS,
    Client,
    InitializeError,
    NotInitialized,
    UnsupportedProtocolVersion,
)
from mcpfast.jsonrpc import JSONRPCError, RequestTimeout


def test_same_version_is_accepted_and_initialized_follows(fake, arun, mcp_schema):
    server = fake(instructions="Be brief.")

    async def main():
        client = await server.connect(name="tester", version="9.9")
        assert client.protocol_version == LATEST_VERSION == "2025-11-25"
        assert client.initialized
        assert client.server_info == {"name": "fake", "version": "1.0.0"}
        assert client.instructions == "Be brief."
        assert client.server_capabilities["tools"] == {"listChanged": True}
        assert client.initialize_result["protocolVersion"] == "2025-11-25"
        params = server.initialize_params
        assert params == {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "tester", "version": "9.9"},
        }
        methods = [m.get("method") for m in server.from_client]
        assert methods == ["initialize", "notifications/initialized"]
        assert "params" not in server.from_client[1]
        assert server.initialized
        assert server.check_schema(mcp_schema) == 2

    arun(main())


@pytest.mark.parametrize("older", ["2025-06-18", "2025-03-26", "2024-11-05"])
def test_an_older_supported_version_is_accepted(fake, arun, older, mcp_schema):
    server = fake(answer_version=older)

    async def main():
        client = await server.connect()
        assert server.initialize_params["protocolVersion"] == "2025-11-25"
        assert client.protocol_version == older
        # Batches exist only in 2025-03-26.
        assert client.session.batches_allowed is (older == "2025-03-26")
        assert server.sent("notifications/initialized")
        await client.ping()
        server.check_schema(mcp_schema)

    arun(main())


@pytest.mark.parametrize("answer", ["2023-01-01", "2026-07-28", "", 20251125, None])
def test_an_unsupported_version_fails_clearly(fake, arun, answer):
    server = fake(initialize_result={
        "protocolVersion": answer, "capabilities": {}, "serverInfo": {"name": "x", "version": "1"},
    })

    async def main():
        with pytest.raises(UnsupportedProtocolVersion) as info:
            await server.connect()
        assert info.value.version == answer
        assert info.value.supported == SUPPORTED_VERSIONS
        assert repr(answer) in str(info.value) and "2025-11-25" in str(info.value)
        await server.settle()
        assert not server.sent("notifications/initialized")
        assert not server.client.initialized
        # Nothing else can be sent on such a connection.
        with pytest.raises(NotInitialized):
            await server.client.call_tool("x")

    arun(main())


@pytest.mark.parametrize("result, problem", [
    (["not", "an", "object"], "expected an object"),
    ({"protocolVersion": "2025-11-25", "capabilities": [], "serverInfo": {}}, "capabilities"),
    ({"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": "x"}, "serverInfo"),
    ({"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {}, "instructions": 3},
     "instructions"),
])
def test_a_malformed_initialize_result_is_an_initialize_error(fake, arun, result, problem):
    server = fake(initialize_result=result)

    async def main():
        with pytest.raises(InitializeError, match=problem) as info:
            await server.connect()
        assert info.value.method == "initialize"
        await server.settle()
        assert not server.sent("notifications/initialized")

    arun(main())


def test_missing_capabilities_and_server_info_count_as_empty(fake, arun):
    server = fake(initialize_result={"protocolVersion": "2025-06-18"})

    async def main():
        client = await server.connect()
        assert client.server_capabilities == {} and client.server_info == {}
        assert client.instructions is None

    arun(main())


def test_an_older_version_can_be_asked_for(fake, arun, mcp_schema):
    server = fake()

    async def main():
        client = await server.connect(protocol_version="2025-03-26", title="Tester")
        assert server.initialize_params["protocolVersion"] == "2025-03-26"
        # Implementation.title does not exist before 2025-06-18.
        assert "title" not in server.initialize_params["clientInfo"]
        assert client.protocol_version == "2025-03-26"
        server.check_schema(mcp_schema)

    arun(main())


def test_the_title_goes_to_newer_versions(fake, arun, mcp_schema):
    server = fake()

    async def main():
        await server.connect(title="Tester")
        assert server.initialize_params["clientInfo"]["title"] == "Tester"
        server.check_schema(mcp_schema)

    arun(main())


@pytest.mark.parametrize("version", ["2099-01-01", "1.0", None, 5])
def test_asking_for_an_unknown_version_is_refused_at_once(version):
    with pytest.raises(ValueError, match="protocol_version"):
        Client(protocol_version=version)


def test_initialize_error_response_raises_the_error(fake, arun):
    server = fake()

    def refuse(params, ctx):
        raise JSONRPCError(-32602, "bad client", {"why": "test"})

    server.router.add_request_handler("initialize", refuse)

    async def main():
        with pytest.raises(JSONRPCError) as info:
            await server.connect()
        assert info.value.code == -32602 and info.value.data == {"why": "test"}

    arun(main())


def test_initialize_times_out_without_cancelling_it(fake, arun):
    server = fake()

    async def never(params, ctx):
        await asyncio.sleep(60)

    server.router.add_request_handler("initialize", never)

    async def main():
        client = Client()
        await server.connect(client, initialize=False)
        with pytest.raises(RequestTimeout):
            await client.initialize(timeout=0.05)
        await server.settle()
        # The specification forbids cancelling initialize.
        assert not server.sent("notifications/cancelled")
        server.drop()

    arun(main())


def test_requests_before_initialize_are_refused_but_ping_works(fake, arun):
    server = fake()

    async def main():
        client = Client()
        with pytest.raises(NotInitialized, match="tools/call"):
            await client.call_tool("x")
        with pytest.raises(NotInitialized):
            await client.ping()
        await server.connect(client, initialize=False)
        with pytest.raises(NotInitialized, match="tools/list"):
            await client.list_tools()
        await client.ping()
        assert [m["method"] for m in server.from_client] == ["ping"]
        await client.initialize()
        assert client.initialized

    arun(main())


def test_initialize_twice_and_bind_twice_are_errors(fake, arun):
    server = fake()

    async def main():
        client = await server.connect()
        with pytest.raises(RuntimeError, match="already"):
            await client.initialize()
        with pytest.raises(RuntimeError, match="already bound"):
            client.bind(lambda frame: None)

    arun(main())


def test_initialize_needs_a_bound_client(arun):
    async def main():
        with pytest.raises(RuntimeError, match="bind"):
            await Client().initialize()

    arun(main())


def test_repr_tells_the_state(fake, arun):
    server = fake()

    async def main():
        client = Client()
        assert "unbound" in repr(client)
        await server.connect(client)
        assert "initialized 2025-11-25" in repr(client) and "fake" in repr(client)
        server.drop()
        assert "closed" in repr(client)

    arun(main())
