"""The declared server core: what lower modules read of a server and of a connection is
declared in mcpfast.server.core, the Server and its connections provide all of it, the
registry of connections is public, and the HTTP session table and the client's
subscription objects work through public methods and callbacks."""

from __future__ import annotations

import ast
import asyncio
import pathlib
from typing import Any, Optional

import pytest

import mcpfast
from mcpfast import Server
from mcpfast.client.listening import Listening
from mcpfast.client.subscriptions import Subscription
from mcpfast.jsonrpc.errors import ConnectionClosed
from mcpfast.server import core
from mcpfast.server.logs import LogTarget, MCPLogHandler
from mcpfast.transports.http.session import HTTPSession
from mcpfast.transports.http.session_table import SessionTable

SERVER = pathlib.Path(core.__file__).parent
# The modules the issue names: they take the core, never the Server facade.
LOWER = ["connection.py", "handlers.py", "listen.py", "logs.py", "eras/stateless.py",
         "tasks/methods.py", "request/context.py", "request/input_required.py",
         "request/state_source.py", "tasks/manager.py"]


def _members(protocol: type) -> set[str]:
    names = set(getattr(protocol, "__annotations__", {}))
    names.update(name for name, value in vars(protocol).items()
                 if not name.startswith("_") and (callable(value) or isinstance(value, property)))
    return names


def test_the_server_builds_one_core_that_connections_and_contexts_hold():
    app = Server("core", instructions="hi", max_in_flight=3)
    assert isinstance(app.core, core.ServerCore) and app.core.app is app
    seen: dict[str, Any] = {}

    @app.tool()
    def where(ctx: mcpfast.Context) -> str:
        seen.update(server=ctx.server, core=ctx.core, holder=ctx.connection.server)
        return "ok"

    async def main() -> None:
        async with mcpfast.connect(app) as client:
            await client.call_tool("where")

    asyncio.run(main())
    # Users see the facade; the connection holds the core, and so do the lower modules.
    assert seen == {"server": app, "core": app.core, "holder": app.core}
    assert app.core.stateless_era.server is app.core and app.core.tasks is app.tasks


def test_the_facade_reads_and_writes_the_cores_fields():
    app = Server("core", version="2.0.0", request_timeout=5.0)
    fields = ("name", "version", "instructions", "default_log_level", "logging_enabled",
              "advertise", "request_timeout", "max_in_flight", "logger", "loop", "router",
              "request_checks", "state_sources", "tools_catalog", "resources_catalog",
              "templates_catalog", "prompts_catalog", "completer", "roots_changed_callbacks",
              "publisher", "listen_streams", "tasks", "stateless_era", "cache_policy",
              "request_state_codec", "lifespan")
    for field in fields:
        assert getattr(app, field) is getattr(app.core, field), field
    assert (app.version, app.request_timeout) == ("2.0.0", 5.0)
    # A field set on the facade (the CLI's --redis sets the publisher) is the core's.
    replacement = type(app.publisher)()
    app.publisher = replacement
    assert app.core.publisher is replacement


def test_the_declared_connection_handle_is_small():
    # The core's public surface: what the lower modules read (fields and methods).
    assert len(_members(core.ConnectionHandle)) < 20


def test_a_connection_provides_every_member_of_its_handle():
    app = Server("core")
    connection = app.connect(lambda frame: None)
    try:
        missing = sorted(name for name in _members(core.ConnectionHandle)
                         if not hasattr(connection, name))
        assert missing == []
        assert connection.peer_address is None and connection.session_id is None
    finally:
        connection.close()


def test_no_lower_module_imports_the_server_facade():
    offenders = []
    for name in LOWER:
        tree = ast.parse((SERVER / name).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "mcpfast.server.server":
                offenders.append(name)
    assert offenders == []


def test_attach_and_detach_are_the_public_registry_of_connections():
    app = Server("core")

    async def main() -> None:
        connection = app.connect(lambda frame: None)
        assert connection in app.connections and len(app.publisher) == 1
        connection.close()
        assert connection not in app.connections and len(app.publisher) == 0
        # attach/detach is what the connection calls; a caller may use it the same way.
        app.attach(connection)
        assert connection in app.connections
        app.detach(connection)
        assert app.connections == ()

    asyncio.run(main())


def test_the_log_handler_needs_only_a_log_target():
    sent: list[tuple[str, Any, Optional[str]]] = []

    class Target:
        logging_enabled = True
        loop = None

        def broadcast_log(self, level: str, data: Any, logger: Optional[str] = None) -> int:
            sent.append((level, data, logger))
            return 1

    target: LogTarget = Target()
    handler = MCPLogHandler(target)
    import logging

    logger = logging.getLogger("test.core.contract")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("disk at %d%%", 91)
    finally:
        logger.removeHandler(handler)
    assert sent == [("warning", "disk at 91%", "test.core.contract")]


class _Conn:
    def __init__(self, send: Any) -> None:
        self.closed = False
        self.session_id = None

    def feed(self, frame: Any, channel: Any = None) -> bool:
        return True

    def feed_error(self, exc: BaseException, channel: Any = None) -> bool:
        return True

    def close(self, exc: Optional[BaseException] = None) -> None:
        self.closed = True


def test_the_session_table_makes_admits_and_ends_sessions():
    admitted: list[int] = []
    table = SessionTable(lambda sid: HTTPSession(sid, _Conn, None, 15.0, None),
                         lambda: admitted.append(len(table)),
                         idle_timeout=60.0, keepalive_interval=15.0)
    session = table.new("abc")
    # The session gave its connection its id (the transport contract's optional attribute).
    assert session.connection.session_id == "abc"
    assert table.get("abc") is None and len(table) == 0  # not admitted yet
    table.admit(session)
    assert table.get("abc") is session and admitted == [1] and list(table) == [session]
    table.end(session)
    assert table.get("abc") is None and session.closed and session.connection.closed
    other = table.new("def")
    table.admit(other)
    table.end_all()
    assert len(table) == 0 and other.closed


def test_the_endpoint_keeps_its_sessions_in_its_table():
    app = Server("core")
    endpoint = app.http_endpoint()
    assert endpoint.sessions is endpoint.session_table.sessions
    assert endpoint.session_table.idle_timeout == endpoint.session_idle_timeout


def test_a_subscription_is_ended_through_its_release_callback():
    released: list[Subscription] = []

    async def release(subscription: Subscription) -> None:
        released.append(subscription)
        subscription.end(None)

    async def main() -> None:
        subscription = Subscription(release, "file:///a")
        assert subscription.push({"uri": "file:///a"}) is None
        assert await subscription.__anext__() == {"uri": "file:///a"}
        await subscription.unsubscribe()
        assert released == [subscription] and not subscription.active
        with pytest.raises(StopAsyncIteration):
            await subscription.__anext__()
        dropped = Subscription(release, "file:///b")
        dropped.end(ConnectionError("gone"))
        with pytest.raises(ConnectionClosed):
            await dropped.__anext__()

    asyncio.run(main())


def test_a_listen_stream_opens_and_forgets_through_its_callbacks():
    opened: list[Listening] = []
    forgotten: list[Listening] = []

    class Request:
        id = 7

        def __init__(self) -> None:
            self.future = asyncio.get_running_loop().create_future()

        def cancel(self, reason: str) -> None:
            self.future.cancel()

    def open_listen(stream: Listening) -> Request:
        opened.append(stream)
        request = Request()
        asyncio.get_running_loop().call_soon(
            stream.push, "notifications/subscriptions/acknowledged",
            {"notifications": {"toolsListChanged": True}})
        return request

    async def main() -> None:
        stream = Listening(open_listen, forgotten.append, {"toolsListChanged": True}, 5)
        async with stream:
            assert stream.id == 7 and stream.acknowledged == {"toolsListChanged": True}
            stream.push("notifications/tools/list_changed", {})
            assert await stream.__anext__() == {"method": "notifications/tools/list_changed",
                                                "params": {}}
        assert opened == [stream] and forgotten == [stream]
        assert stream.requested == {"toolsListChanged": True}

    asyncio.run(main())


def test_the_core_is_what_a_request_sees_as_its_server():
    app = Server("core")

    @app.tool()
    def name_of(ctx: mcpfast.Context) -> str:
        return f"{ctx.server.name} {ctx.server is app}"

    async def main() -> str:
        async with mcpfast.connect(app) as client:
            return (await client.call_tool("name_of"))["content"][0]["text"]

    assert asyncio.run(main()) == "core True"


def test_the_compiled_connection_reads_the_cores_declared_fields():
    from mcpfast.protocol.log_levels import level_index
    from mcpfast.server.core_fields import CoreFields

    class RecordingPublisher:
        """A publisher without skips_parked: a recycled connection is detached from it."""

        def __init__(self) -> None:
            self.calls: list[tuple[str, Any]] = []

        def attach(self, connection: Any) -> None:
            self.calls.append(("attach", connection))

        def detach(self, connection: Any) -> None:
            self.calls.append(("detach", connection))

        def publish(self, event: Any) -> int:
            return 0

    app = Server("core", log_level="info")
    # The fields compiled code reads are C fields of the core's compiled base.
    assert isinstance(app.core, CoreFields)
    assert {type(vars(CoreFields)[name]).__name__ for name in ("publisher", "default_log_level")} \
        == {"member_descriptor"}
    publisher = RecordingPublisher()
    app.publisher = publisher  # as --redis does, before serving

    async def main() -> None:
        connection = app.connect_stateless(lambda frame: None, "2025-11-25")
        assert publisher.calls == [("attach", connection)]
        connection.state.log_level = level_index("debug")
        # Changed on the core after the connection was made: recycle() reads it then.
        app.core.default_log_level = level_index("error")
        assert connection.recycle() is True
        assert connection.state.log_level == level_index("error") and connection.parked
        connection.revive()
        assert publisher.calls[1:] == [("detach", connection), ("attach", connection)]
        connection.close()

    asyncio.run(main())
