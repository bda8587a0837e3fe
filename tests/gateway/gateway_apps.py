"""Upstream servers the gateway tests mount: small mcpfast Servers with tools, prompts,
resources, templates, completion, progress and logs."""

from __future__ import annotations

import asyncio

from mcpfast import Context, Server


def files_app(name: str = "files", events: list | None = None) -> Server:
    """An upstream with tools (one tagged), a prompt, a resource and a template;
    ``events`` gets "started" and "cancelled" from wait_forever."""
    events = [] if events is None else events
    app = Server(name)

    @app.tool(meta={"tags": ["read"]})  # tags on the wire, where the gateway reads them
    def read_file(path: str) -> str:
        """Read a file."""
        return f"contents of {path}"

    @app.tool()
    def delete_file(path: str) -> str:
        """Delete a file."""
        return f"deleted {path}"

    @app.tool()
    async def slow_count(n: int, ctx: Context) -> int:
        """Count to n, reporting progress and logging each step."""
        for i in range(1, n + 1):
            ctx.report_progress(i, n, f"step {i}")
            ctx.info(f"counted {i}")
            await asyncio.sleep(0)
        return n

    @app.tool()
    async def wait_forever() -> str:
        """Never answers (until cancelled)."""
        events.append("started")
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            events.append("cancelled")
            raise
        return "never"

    @app.prompt()
    def summarize(text: str) -> str:
        """Summarize a text."""
        return f"Summarize: {text}"

    @app.resource("file:///etc/motd", mime_type="text/plain")
    def motd() -> str:
        return f"hello from {name}"

    @app.resource("file:///logs/{day}", mime_type="text/plain")
    def log_of(day: str) -> str:
        return f"log of {day}"

    @app.completion()
    def complete(ref, argument, context):
        return ["2026-12-01", "2026-12-02"] if argument.name == "day" else ["short", "long"]

    return app


def math_app() -> Server:
    """A second upstream whose tool names differ."""
    app = Server("math")

    @app.tool()
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    return app
