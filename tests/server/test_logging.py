"""Logging: logging/setLevel, per-connection filtering, ctx.log, the Python logging bridge."""

import asyncio
import logging
import threading

import pytest

from mcpfast.jsonrpc.errors import INVALID_PARAMS, METHOD_NOT_FOUND
from mcpfast.server import LEVELS, Context, Server
from mcpfast.server.logs import level_index, mcp_level_for


def log_server(**options):
    app = Server("logs", **options)

    @app.tool()
    def shout(level: str, text: str, ctx: Context, logger: str = "") -> str:
        sent = ctx.log(level, text, logger or None)
        return "sent" if sent else "filtered"

    @app.tool()
    async def chatty(ctx: Context) -> str:
        await ctx.debug("d")
        await ctx.info({"structured": [1, 2]})
        ctx.notice("n")
        ctx.warning("w")
        ctx.error("e")
        ctx.critical("c")
        ctx.alert("a")
        ctx.emergency("!")
        return "done"

    return app


def messages(client):
    return [(n["params"]["level"], n["params"]["data"], n["params"].get("logger"))
            for n in client.notifications("notifications/message")]


def test_default_level_is_info(ready_client):
    client = ready_client(log_server())
    assert client.call_tool("shout", {"level": "debug", "text": "x"})["content"][0]["text"] == "filtered"
    assert client.call_tool("shout", {"level": "info", "text": "y", "logger": "app"})["content"][0]["text"] == "sent"
    assert messages(client) == [("info", "y", "app")]


def test_server_default_level_is_configurable(ready_client):
    client = ready_client(log_server(log_level="error"))
    client.call_tool("shout", {"level": "warning", "text": "x"})
    client.call_tool("shout", {"level": "alert", "text": "y"})
    assert messages(client) == [("alert", "y", None)]


@pytest.mark.parametrize("threshold", LEVELS)
def test_set_level_filters_below_it(ready_client, threshold):
    client = ready_client(log_server())
    assert client.result("logging/setLevel", {"level": threshold}) == {}
    assert client.conn.state.log_level_name == threshold

    async def main():
        assert (await client.acall_tool("chatty", {}))["content"][0]["text"] == "done"

    asyncio.run(main())
    got = messages(client)
    expected = [level for level in LEVELS if level_index(level) >= level_index(threshold)]
    assert [level for level, _, _ in got] == expected
    if threshold == "debug":
        assert got[1][1] == {"structured": [1, 2]}


def test_levels_are_per_connection(ready_client):
    app = log_server()
    loud = ready_client(app)
    quiet = ready_client(app)
    loud.result("logging/setLevel", {"level": "debug"})
    quiet.result("logging/setLevel", {"level": "emergency"})
    assert app.broadcast_log("warning", "disk 91% full", "monitor") == 1
    assert messages(loud) == [("warning", "disk 91% full", "monitor")]
    assert messages(quiet) == []


@pytest.mark.parametrize("params", [{"level": "verbose"}, {"level": 3}, {}, None])
def test_bad_levels_are_invalid_params(ready_client, params):
    client = ready_client(log_server())
    assert client.error("logging/setLevel", params)["code"] == INVALID_PARAMS
    assert client.conn.state.log_level_name == "info"


def test_ctx_log_refuses_unknown_levels_in_the_tool(ready_client):
    result = ready_client(log_server()).call_tool("shout", {"level": "loud", "text": "x"})
    assert result["isError"] is True
    assert "invalid MCP log level 'loud'" in result["content"][0]["text"]


def test_logging_disabled(ready_client):
    app = log_server(logging=False)
    client = ready_client(app)
    assert "logging" not in client.conn.capabilities
    assert client.error("logging/setLevel", {"level": "debug"})["code"] == METHOD_NOT_FOUND
    assert app.broadcast_log("error", "x") == 0


def test_broadcast_reaches_only_negotiated_connections(make_client, ready_client):
    app = log_server()
    ready = ready_client(app)
    fresh = make_client(app)
    assert app.broadcast_log("error", "boom") == 1
    assert fresh.take() == []
    assert messages(ready) == [("error", "boom", None)]
    with pytest.raises(ValueError):
        app.broadcast_log("fatal", "x")


def test_python_level_mapping():
    assert mcp_level_for(logging.DEBUG) == "debug"
    assert mcp_level_for(5) == "debug"
    assert mcp_level_for(logging.INFO) == "info"
    assert mcp_level_for(25) == "info"
    assert mcp_level_for(logging.WARNING) == "warning"
    assert mcp_level_for(logging.ERROR) == "error"
    assert mcp_level_for(logging.CRITICAL) == "critical"
    assert mcp_level_for(100) == "critical"


@pytest.fixture
def bridged_logger():
    logger = logging.getLogger("mcpfast.tests.bridge")
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    handlers = []

    def attach(app):
        handler = app.logging_handler()
        logger.addHandler(handler)
        handlers.append(handler)
        return logger

    yield attach
    for handler in handlers:
        logger.removeHandler(handler)


def test_logging_handler_forwards_records(ready_client, bridged_logger):
    app = log_server()
    client = ready_client(app)
    log = bridged_logger(app)
    log.debug("hidden at info")
    log.info("started %s", "job")
    log.error("failed")
    assert messages(client) == [("info", "started job", "mcpfast.tests.bridge"),
                                ("error", "failed", "mcpfast.tests.bridge")]


def test_logging_handler_does_not_loop_on_its_own_logging(ready_client, bridged_logger):
    app = log_server()
    client = ready_client(app)
    log = bridged_logger(app)
    # A handler on the session's own logger would re-enter the bridge while it forwards.
    session_logger = logging.getLogger("mcpfast.server")
    handler = app.logging_handler()
    session_logger.addHandler(handler)
    try:
        app.router.add_notification_handler("test/log", lambda params, ctx: log.warning("from handler"))
        client.notify("test/log")
        session_logger.warning("direct")
    finally:
        session_logger.removeHandler(handler)
    assert messages(client) == [("warning", "from handler", "mcpfast.tests.bridge"),
                                ("warning", "direct", "mcpfast.server")]


def test_logging_handler_from_another_thread_goes_through_the_loop(ready_client, bridged_logger):
    app = log_server()

    async def main():
        client = ready_client(app)  # connected inside the loop: the server records it
        assert app.loop is asyncio.get_running_loop()
        log = bridged_logger(app)
        worker = threading.Thread(target=log.warning, args=("from a worker",))
        worker.start()
        worker.join()
        # Nothing was written from the worker thread itself...
        assert client.notifications() == []
        for _ in range(10):
            await asyncio.sleep(0)
        # ...the loop delivered it.
        assert messages(client) == [("warning", "from a worker", "mcpfast.tests.bridge")]

    asyncio.run(main())


def _failing_tool_server():
    app = log_server()
    tool_log = logging.getLogger("mcpfast.tests.bridge.tool")

    @app.tool()
    def explode(label: str) -> str:
        try:
            raise RuntimeError(f"boom in {label}")
        except RuntimeError:
            tool_log.exception("tool %s failed", label)
        return "handled"

    return app


def test_records_about_a_request_go_to_its_client_only(ready_client, bridged_logger):
    app = _failing_tool_server()
    caller = ready_client(app)
    bystander = ready_client(app)
    for client in (caller, bystander):
        client.result("logging/setLevel", {"level": "debug"})
    bridged_logger(app)
    assert caller.call_tool("explode", {"label": "mine"})["content"][0]["text"] == "handled"
    assert messages(bystander) == []
    [(level, data, logger)] = messages(caller)
    assert (level, logger) == ("error", "mcpfast.tests.bridge.tool")
    # No traceback, no file path on the wire.
    assert data == "tool mine failed"
    # Outside a request a record still reaches every connection.
    logging.getLogger("mcpfast.tests.bridge").warning("to everyone")
    assert messages(caller) == messages(bystander) == [
        ("warning", "to everyone", "mcpfast.tests.bridge")]


def test_tracebacks_are_sent_only_when_the_server_opts_in(ready_client):
    app = _failing_tool_server()
    client = ready_client(app)
    client.result("logging/setLevel", {"level": "debug"})
    logger = logging.getLogger("mcpfast.tests.bridge")
    logger.setLevel(logging.DEBUG)
    handler = app.logging_handler(include_tracebacks=True)
    logger.addHandler(handler)
    try:
        client.call_tool("explode", {"label": "x"})
    finally:
        logger.removeHandler(handler)
    [(_, data, _)] = messages(client)
    assert data.startswith("tool x failed\nTraceback (most recent call last):")
    assert "RuntimeError: boom in x" in data
