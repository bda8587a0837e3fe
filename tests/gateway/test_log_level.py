"""logging/setLevel through the gateway: the upstreams' shared sessions are asked for the
most verbose level any downstream client asked for (and again after a restart), while
each client gets only the messages of its own level."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import mcpfast
from mcpfast import Context, Server

sys.path.insert(0, str(Path(__file__).parent))
from loop import eventually  # noqa: E402


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 30))


def chatty_app() -> Server:
    app = Server("chatty")

    @app.tool()
    def chat(ctx: Context) -> str:
        """Log once at debug and once at warning."""
        ctx.debug("a debug line")
        ctx.warning("a warning line")
        return "ok"

    return app


def test_a_clients_debug_level_reaches_the_upstream_and_only_that_client_gets_debug():
    upstream = chatty_app()
    app = Server("gateway")
    app.mount(upstream, namespace="c")

    async def main():
        verbose: list = []
        quiet: list = []
        async with mcpfast.connect(app, on_log=verbose.append) as first, \
                mcpfast.connect(app, on_log=quiet.append) as second:
            await first.call_tool("c_chat")
            await eventually(lambda: any(m["level"] == "warning" for m in verbose))
            # The upstream's default (info) drops its debug line before anyone asks.
            assert not any(m["level"] == "debug" for m in verbose)
            await first.set_logging_level("debug")
            await second.set_logging_level("warning")
            verbose.clear()
            await second.call_tool("c_chat")
            await eventually(lambda: any(m["level"] == "debug" for m in verbose))
            await eventually(lambda: any(m["level"] == "warning" for m in quiet))
            assert [m["level"] for m in quiet if m["level"] == "debug"] == []
            # The upstream's shared session is at the most verbose level asked, not the last.
            assert app_level(app) == "debug"

    run(main())


def app_level(app: Server) -> str:
    from mcpfast.gateway import gateway_of

    return gateway_of(app).upstream_log_level
