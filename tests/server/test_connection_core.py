"""mcpfast.server.connection_core: a server connection's compiled fields and its
recycling for stateless HTTP (what a parked connection hears: test_publisher.py)."""

from __future__ import annotations

import asyncio
import types

from mcpfast import Context, Server
from mcpfast.auth import AccessToken
from mcpfast.server.connection import ServerConnection
from mcpfast.server.connection_core import ConnectionCore


def make_server() -> Server:
    app = Server("core", log_level="warning")

    @app.tool()
    async def wait(ctx: Context) -> str:
        await asyncio.sleep(10)
        return "late"

    return app


def test_the_fields_are_member_descriptors_of_the_base():
    for name in ("session", "server", "state", "auth", "subscriptions", "parked", "_parks_attached",
                 "_gated"):
        assert type(ConnectionCore.__dict__[name]) is types.MemberDescriptorType, name
    connection = make_server().connect_stateless(lambda frame: None, "2025-11-25")
    assert isinstance(connection, ConnectionCore) and isinstance(connection, ServerConnection)
    # Other attributes live in the instance's dict as before.
    connection.extra = 1  # type: ignore[attr-defined]
    assert connection.extra == 1  # type: ignore[attr-defined]


def test_recycling_resets_what_a_request_left():
    app = make_server()
    connection = app.connect_stateless(lambda frame: None, "2025-11-25")
    default = connection.state.log_level
    connection.auth = AccessToken(token="t", subject="someone")
    connection.subscriptions.add("note://one")
    connection.state.log_level = 0
    assert connection in app.connections
    assert connection.recycle() is True
    assert connection.auth is None and connection.subscriptions == set()
    assert connection.state.log_level == default and connection.parked is True
    assert connection not in app.connections
    connection.revive()
    assert connection.parked is False and connection in app.connections


def test_a_busy_or_closed_connection_is_not_recycled():
    async def main() -> None:
        app = make_server()
        frames: list[bytes] = []
        connection = app.connect_stateless(frames.append, "2025-11-25")
        connection.feed(b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait","arguments":{}}}')
        await asyncio.sleep(0)
        assert frames == []  # the tool is running
        assert connection.recycle() is False and connection.parked is False
        connection.close()
        assert connection.recycle() is False

    asyncio.run(main())
