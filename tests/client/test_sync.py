"""The blocking facade: a background loop thread running the async Client."""

import asyncio
import threading

import pytest

from mcpfast.client import CapabilityError, SyncClient, connect_sync
from mcpfast.client.sync import LoopThread
from mcpfast.jsonrpc import ConnectionClosed, InvalidParams


@pytest.fixture
def sync_pair(fake):
    """A SyncClient over a FakeServer living on the SyncClient's loop thread."""
    made = []

    def make(server=None, **options):
        server = server if server is not None else fake()
        runner = LoopThread()
        client = runner.run(server.connect(**options))
        sync = SyncClient(client, runner)
        made.append(sync)
        return server, sync

    yield make
    for sync in made:
        sync.close()


def _tools(server):
    def call(params, ctx):
        if params["name"] == "bad":
            raise InvalidParams("Unknown tool: bad")
        return {"content": [{"type": "text", "text": params["arguments"]["text"]}]}

    server.router.add_request_handler("tools/call", call)
    server.router.add_request_handler(
        "tools/list", lambda p, c: {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]})
    server.router.add_request_handler("resources/read", lambda p, c: {"contents": [{"uri": p["uri"], "text": "x"}]})
    server.router.add_request_handler("prompts/list", lambda p, c: {"prompts": [{"name": "p"}]})
    server.router.add_request_handler("prompts/get", lambda p, c: {"messages": []})
    server.router.add_request_handler("completion/complete", lambda p, c: {"completion": {"values": ["v"]}})
    server.router.add_request_handler("logging/setLevel", lambda p, c: {})
    server.router.add_request_handler("resources/list", lambda p, c: {"resources": []})
    server.router.add_request_handler("resources/templates/list", lambda p, c: {"resourceTemplates": []})
    server.router.add_request_handler("resources/subscribe", lambda p, c: {})
    server.router.add_request_handler("resources/unsubscribe", lambda p, c: {})


def test_blocking_methods_mirror_the_async_client(fake, sync_pair, mcp_schema):
    server = fake()
    _tools(server)
    server, client = sync_pair(server)
    assert client.protocol_version == "2025-11-25"
    assert client.server_info["name"] == "fake"
    assert client.server_capabilities["tools"] == {"listChanged": True}
    assert client.initialize_result["protocolVersion"] == "2025-11-25"
    assert client.instructions is None
    assert client.call_tool("echo", {"text": "hi"})["content"][0]["text"] == "hi"
    assert [t["name"] for t in client.list_tools()] == ["echo"]
    assert client.list_tools_page()["tools"][0]["name"] == "echo"
    assert client.read_resource("file:///a")["contents"][0]["text"] == "x"
    assert client.list_resources() == [] and client.list_resources_page() == {"resources": []}
    assert client.list_resource_templates() == []
    assert client.list_resource_templates_page() == {"resourceTemplates": []}
    assert client.list_prompts() == [{"name": "p"}]
    assert client.list_prompts_page() == {"prompts": [{"name": "p"}]}
    assert client.get_prompt("p", {"a": "b"}) == {"messages": []}
    assert client.complete("a", "v", prompt="p") == {"completion": {"values": ["v"]}}
    assert client.set_logging_level("error") is None
    assert client.ping() is None
    assert client.request("tools/list")["tools"][0]["name"] == "echo"
    client.notify("notifications/roots/list_changed")
    assert client.ping() is None and server.sent("notifications/roots/list_changed")
    with pytest.raises(InvalidParams):
        client.call_tool("bad", {"text": ""})
    assert not client.closed
    client.close()
    assert client.closed
    server.check_schema(mcp_schema)


def test_capability_errors_surface_in_the_calling_thread(fake, sync_pair):
    server, client = sync_pair(fake(capabilities={}))
    with pytest.raises(CapabilityError):
        client.call_tool("x")


def test_callbacks_run_on_the_loop_thread(fake, sync_pair):
    server, client = sync_pair()
    threads = []
    seen = []

    def on_log(params):
        threads.append(threading.current_thread().name)
        seen.append(params["data"])

    client.on_log(on_log)
    kinds = []
    client.on_list_changed(kinds.append)
    client.on_resource_updated(lambda params: seen.append(params["uri"]))
    client.on_notification("notifications/custom", lambda params: seen.append("custom"))
    decorated = client.on_notification("notifications/other")(lambda params: seen.append("other"))
    assert callable(decorated)

    async def notify():
        server.session.notify("notifications/message", {"level": "info", "data": "hello"})
        server.session.notify("notifications/tools/list_changed")
        server.session.notify("notifications/resources/updated", {"uri": "file:///u"})
        server.session.notify("notifications/custom")
        server.session.notify("notifications/other")
        await server.settle()

    client._runner.run(notify())
    assert seen == ["hello", "file:///u", "custom", "other"] and kinds == ["tools"]
    assert threads == ["mcpfast-client"]


def test_calling_the_sync_client_from_a_callback_is_refused(fake, sync_pair):
    server, client = sync_pair()
    errors = []

    def on_log(params):
        try:
            client.ping()
        except RuntimeError as exc:
            errors.append(str(exc))

    client.on_log(on_log)

    async def notify():
        server.session.notify("notifications/message", {"level": "info", "data": 1})
        await server.settle()

    client._runner.run(notify())
    assert errors and "own event loop thread" in errors[0]


def test_sync_subscriptions(fake, sync_pair):
    server = fake()
    _tools(server)
    server, client = sync_pair(server)
    with client.subscribe("file:///a") as sub:
        assert sub.uri == "file:///a" and sub.active

        async def update():
            server.session.notify("notifications/resources/updated", {"uri": "file:///a"})
            await server.settle()

        client._runner.run(update())
        assert next(sub) == {"uri": "file:///a"}
    assert not sub.active
    assert list(sub) == []
    assert server.sent("resources/unsubscribe")
    callback_seen = []
    client.subscribe("file:///b", callback_seen.append)
    client.unsubscribe("file:///b")
    assert "SyncSubscription" in repr(sub)


def test_sync_roots(fake, sync_pair):
    server, client = sync_pair(roots=["file:///a"])
    client.set_roots(["file:///b"])
    assert client.notify_roots_changed() is True

    async def roots():
        await server.settle()
        return await server.session.request("roots/list")

    assert client._runner.run(roots()) == {"roots": [{"uri": "file:///b"}]}
    assert len(server.sent("notifications/roots/list_changed")) == 2


def test_a_drop_fails_a_blocked_call(fake, sync_pair):
    server = fake()
    started = threading.Event()

    async def never(params, ctx):
        started.set()
        await asyncio.sleep(60)

    server.router.add_request_handler("tools/call", never)
    server, client = sync_pair(server)
    errors = []

    def call():
        try:
            client.call_tool("t")
        except ConnectionClosed as exc:
            errors.append(exc)

    worker = threading.Thread(target=call)
    worker.start()
    assert started.wait(5)
    client._runner.call(server.drop, ConnectionError("gone"))
    worker.join(5)
    assert not worker.is_alive()
    assert len(errors) == 1 and isinstance(errors[0].__cause__, ConnectionError)
    assert client.closed


def test_close_is_idempotent_and_stops_the_thread(fake, sync_pair):
    server, client = sync_pair()
    thread = client._runner._thread
    client.close()
    client.close()
    assert not thread.is_alive()
    with pytest.raises(RuntimeError, match="stopped"):
        client.ping()
    assert "SyncClient" in repr(client)


def test_connect_sync_raises_what_connect_raises_and_leaves_no_thread():
    before = {t.name for t in threading.enumerate()}
    with pytest.raises(OSError):
        connect_sync("ws://127.0.0.1:1/mcp")  # nothing listens there
    with pytest.raises(FileNotFoundError):
        connect_sync(["mcpfast-no-such-program"])
    alive = [t for t in threading.enumerate() if t.name == "mcpfast-client" and t.name not in before]
    assert alive == []
