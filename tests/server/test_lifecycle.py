"""Lifecycle: initialize, version negotiation, capabilities, the pre-initialization gate,
double initialize, batches per version."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpfast.jsonrpc.errors import INVALID_PARAMS, INVALID_REQUEST, NOT_INITIALIZED
from mcpfast.protocol.versions import LATEST_VERSION, SUPPORTED_VERSIONS, negotiate_version
from mcpfast.server import Server

ALL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")


def full_server(**options):
    app = Server("full", "2.0.0", title="Full server", description="does everything",
                 website_url="https://example.org", icons=[{"src": "https://example.org/i.png"}],
                 instructions="Use the tools.", **options)

    @app.tool()
    def t(x: int) -> int:
        return x

    @app.resource("mem://r")
    def r() -> str:
        return "r"

    @app.prompt()
    def p() -> str:
        return "p"

    @app.completion()
    def c(ref, argument):
        return []

    return app


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_supported_version_is_answered_with_itself(make_client, version):
    client = make_client(full_server(), version)
    result = client.initialize()
    assert result["protocolVersion"] == version
    assert client.version == version


@pytest.mark.parametrize("requested", ["2026-07-28", "2024-10-07", "1999-01-01", "latest", ""])
def test_unsupported_version_is_answered_with_the_latest(make_client, requested):
    client = make_client(full_server(), requested)
    result = client.initialize()
    assert result["protocolVersion"] == LATEST_VERSION == "2025-11-25"


@given(st.text(max_size=20))
@settings(max_examples=200)
def test_negotiation_always_yields_a_supported_version(requested):
    answer = negotiate_version(requested)
    assert answer in SUPPORTED_VERSIONS
    assert answer == (requested if requested in SUPPORTED_VERSIONS else LATEST_VERSION)


@pytest.mark.parametrize("requested", [None, 20250618, ["2025-06-18"], {"v": 1}])
def test_negotiation_of_non_strings_yields_the_latest(requested):
    assert negotiate_version(requested) == LATEST_VERSION


def test_capabilities_follow_what_is_registered(make_client):
    empty = make_client(Server("empty")).initialize()
    assert empty["capabilities"] == {"logging": {}}

    result = make_client(full_server()).initialize()
    assert result["capabilities"] == {
        "completions": {},
        "logging": {},
        "prompts": {"listChanged": True},
        "resources": {"subscribe": True, "listChanged": True},
        "tools": {"listChanged": True},
    }

    quiet = make_client(Server("quiet", logging=False)).initialize()
    assert quiet["capabilities"] == {}


def test_a_template_alone_gives_the_resources_capability(make_client):
    app = Server("t")

    @app.resource("file:///{path}")
    def read(path: str) -> str:
        return path

    assert make_client(app).initialize()["capabilities"]["resources"] == {
        "subscribe": True, "listChanged": True,
    }


def test_completions_capability_needs_2025_03_26(make_client):
    old = make_client(full_server(), "2024-11-05").initialize()
    assert "completions" not in old["capabilities"]
    newer = make_client(full_server(), "2025-03-26").initialize()
    assert newer["capabilities"]["completions"] == {}


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_server_info_carries_only_what_the_version_has(make_client, version):
    result = make_client(full_server(), version).initialize()
    info = result["serverInfo"]
    assert info["name"] == "full" and info["version"] == "2.0.0"
    assert ("title" in info) == (version >= "2025-06-18")
    for field in ("description", "websiteUrl", "icons"):
        assert (field in info) == (version == "2025-11-25"), field
    assert result["instructions"] == "Use the tools."


def test_no_instructions_key_without_instructions(make_client):
    assert "instructions" not in make_client(Server("plain")).initialize()


def test_client_info_and_capabilities_are_kept_on_the_connection(make_client):
    client = make_client(full_server(), capabilities={"sampling": {}, "roots": {"listChanged": True}},
                         name="probe")
    client.initialize()
    state = client.conn.state
    assert state.protocol_version == LATEST_VERSION
    assert state.client_info == {"name": "probe", "version": "1.0"}
    assert state.client_capabilities == {"sampling": {}, "roots": {"listChanged": True}}
    assert state.initialized is True
    assert client.conn.capabilities["tools"] == {"listChanged": True}


def test_requests_before_initialize_are_refused_except_ping(make_client):
    client = make_client(full_server())
    assert client.result("ping") == {}
    for method, params in [("tools/list", None), ("tools/call", {"name": "t", "arguments": {"x": 1}}),
                           ("resources/read", {"uri": "mem://r"}), ("prompts/get", {"name": "p"}),
                           ("logging/setLevel", {"level": "debug"}), ("no/such/method", None)]:
        error = client.error(method, params)
        assert error["code"] == NOT_INITIALIZED == -32005
        assert error["data"] == {"method": method}
        assert "not initialized" in error["message"]


def test_requests_between_initialize_and_initialized_are_refused(make_client):
    client = make_client(full_server())
    client.initialize(initialized=False)
    assert client.error("tools/list")["code"] == NOT_INITIALIZED
    assert client.result("ping") == {}
    client.notify("notifications/initialized")
    assert client.result("tools/list")["tools"][0]["name"] == "t"
    # The gate is gone for good: nothing runs before dispatch any more.
    assert client.conn.session.before_dispatch is None


def test_initialized_notification_before_initialize_is_ignored(make_client):
    client = make_client(full_server())
    client.notify("notifications/initialized")
    assert client.take() == []
    assert client.error("tools/list")["code"] == NOT_INITIALIZED
    assert client.conn.state.initialized is False


def test_second_initialize_is_refused(make_client):
    client = make_client(full_server(), "2025-06-18")
    client.initialize()
    error = client.error("initialize", {"protocolVersion": "2024-11-05", "capabilities": {},
                                        "clientInfo": {"name": "x", "version": "1"}})
    assert error["code"] == INVALID_REQUEST
    assert "already initialized" in error["message"]
    # The first negotiation stands.
    assert client.conn.state.protocol_version == "2025-06-18"


def test_second_initialize_before_initialized_is_refused_too(make_client):
    client = make_client(full_server())
    client.initialize(initialized=False)
    assert client.error("initialize", {"protocolVersion": LATEST_VERSION})["code"] == INVALID_REQUEST


@pytest.mark.parametrize("params", [
    None,
    {},
    {"protocolVersion": 2025},
    {"protocolVersion": None},
    {"protocolVersion": "2025-06-18", "capabilities": []},
    {"protocolVersion": "2025-06-18", "clientInfo": "me"},
    ["2025-06-18"],
])
def test_malformed_initialize_params_are_invalid_params(make_client, params):
    client = make_client(full_server())
    error = client.error("initialize", params)
    assert error["code"] == INVALID_PARAMS
    # Nothing was negotiated: a correct initialize still works.
    assert client.conn.state.protocol_version is None
    assert client.initialize()["protocolVersion"] == LATEST_VERSION


def test_initialize_without_client_info_is_tolerated(make_client):
    client = make_client(full_server())
    result = client.result("initialize", {"protocolVersion": "2025-06-18"})
    assert result["protocolVersion"] == "2025-06-18"
    assert client.conn.state.client_info == {}


def batch(*messages):
    return json.dumps(list(messages)).encode()


def test_batches_are_served_when_2025_03_26_was_negotiated(ready_client):
    client = ready_client(full_server(), "2025-03-26")
    assert client.conn.session.batches_allowed is True
    client.pending.update({10: "tools/call", 11: "ping", 12: "tools/list"})
    owed = client.feed(batch(
        {"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {"name": "t", "arguments": {"x": 4}}},
        {"jsonrpc": "2.0", "id": 11, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}},
        {"jsonrpc": "2.0", "id": 12, "method": "tools/list"},
    ))
    assert owed is True
    (reply,) = client.take()
    assert isinstance(reply, list)
    by_id = {item["id"]: item for item in reply}
    assert by_id[10]["result"] == {"content": [{"type": "text", "text": "4"}]}
    assert by_id[11]["result"] == {}
    assert by_id[12]["result"]["tools"][0]["name"] == "t"


@pytest.mark.parametrize("version", ["2024-11-05", "2025-06-18", "2025-11-25"])
def test_batches_are_refused_for_other_versions(ready_client, version):
    client = ready_client(full_server(), version)
    assert client.conn.session.batches_allowed is False
    client.feed(batch({"jsonrpc": "2.0", "id": 10, "method": "ping"}))
    (reply,) = client.take()
    assert reply["id"] is None
    assert reply["error"]["code"] == INVALID_REQUEST


def test_batches_are_refused_before_initialize(make_client):
    client = make_client(full_server(), "2025-03-26")
    client.feed(batch({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
    (reply,) = client.take()
    assert reply["error"]["code"] == INVALID_REQUEST


def test_unknown_method_after_initialization_is_method_not_found(ready_client):
    client = ready_client(full_server())
    error = client.error("tasks/list")
    assert error["code"] == -32601
    assert error["data"] == {"method": "tasks/list"}


def test_garbage_frames_get_parse_errors_and_the_connection_goes_on(ready_client):
    client = ready_client(full_server())
    assert client.feed(b"{not json") is True
    (reply,) = client.take()
    assert reply["error"]["code"] == -32700 and reply["id"] is None
    assert client.call_tool("t", {"x": 2})["content"][0]["text"] == "2"


def test_ping_is_an_empty_result_in_every_version(ready_client):
    for version in ALL_VERSIONS:
        client = ready_client(full_server(), version)
        assert client.result("ping") == {}
        assert client.result("ping", {"_meta": {"progressToken": 3}}) == {}


def test_closing_a_connection_detaches_it_from_the_server(make_client):
    app = full_server()
    client = make_client(app)
    assert client.conn in app.connections
    client.conn.close()
    client.conn.close()
    assert client.conn not in app.connections
    assert client.conn.closed


def test_server_constructor_checks_its_arguments():
    with pytest.raises(ValueError):
        Server("")
    with pytest.raises(ValueError):
        Server("x", "")
    with pytest.raises(ValueError):
        Server("x", page_size=0)
    with pytest.raises(ValueError):
        Server("x", page_size=True)
    with pytest.raises(ValueError):
        Server("x", log_level="verbose")
    with pytest.raises(TypeError):
        Server("x", instructions=5)
    with pytest.raises(ValueError):
        Server("x", icons=[{"no": "src"}])


def test_advertise_declares_capabilities_of_empty_registries(ready_client):
    app = Server("gateway", advertise=("tools", "resources", "prompts", "completions"))
    client = ready_client(app)
    assert client.conn.capabilities == {
        "completions": {}, "logging": {},
        "prompts": {"listChanged": True},
        "resources": {"subscribe": True, "listChanged": True},
        "tools": {"listChanged": True},
    }
    assert client.result("tools/list") == {"tools": []}
    # Advertised without a handler: completion answers with no suggestions.
    app.add_prompt(lambda: "x", name="p")
    client.notifications()
    assert client.result("completion/complete", {"ref": {"type": "ref/prompt", "name": "p"},
                                                 "argument": {"name": "a", "value": ""}}) == {
        "completion": {"values": []}}
    # Tools registered later reach this client: it was told about tools.
    app.add_tool(lambda: "late", name="late")
    assert len(client.notifications("notifications/tools/list_changed")) == 1
    assert Server("one", advertise="tools").advertise == frozenset({"tools"})
    with pytest.raises(ValueError, match="advertise takes"):
        Server("bad", advertise=("logging",))
