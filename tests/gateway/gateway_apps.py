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

    @app.tool()
    def meta_seen(ctx: Context) -> dict:
        """The _meta of this call, as the upstream received it."""
        return dict(ctx.meta)

    @app.tool()
    async def ask_everything(ctx: Context) -> dict:
        """Ask the client to sample, to elicit and for its roots."""
        sampled = await ctx.sample("Say hi", max_tokens=10)
        elicited = await ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}})
        roots = await ctx.list_roots()
        uris = [r["uri"] if isinstance(r, dict) else r.uri for r in roots]
        return {"sampled": sampled.text, "elicited": elicited.data, "roots": uris}

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


def faulty_app() -> Server:
    """An upstream for the fault tests: its process id, a call that never ends, a flood
    of log messages and of list changes."""
    import os

    app = Server("faulty")

    @app.tool()
    def pid() -> int:
        """This process's id."""
        return os.getpid()

    @app.tool()
    async def hang() -> str:
        """Never answers."""
        await asyncio.Event().wait()
        return "never"

    @app.tool()
    def flood_logs(n: int, ctx: Context) -> int:
        """Send n log messages at once."""
        for i in range(n):
            ctx.info(f"message {i}")
        return n

    @app.tool()
    def flood_list_changed(n: int) -> int:
        """Add and remove a tool n times (2n list changes)."""
        for _ in range(n):
            app.add_tool(lambda: "x", name="flicker")
            app.remove_tool("flicker")
        return n

    return app


if __name__ == "__main__":
    # python gateway_apps.py files|math|faulty [stdio | http PORT]
    import sys

    made = {"files": files_app, "math": math_app, "faulty": faulty_app}[sys.argv[1]]()
    if len(sys.argv) > 2 and sys.argv[2] == "http":
        made.run("http", port=int(sys.argv[3]))
    else:
        made.run()
