"""A server for the --workers tests: tools that say which process answered."""

import os

from mcpfast import Context, Server

app = Server("workers", page_size=2)
NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@app.tool()
def pid() -> int:
    """The pid of the worker answering."""
    return os.getpid()


@app.tool()
async def greet(ctx: Context) -> str:
    """Asks for a name (a 2026-07-28 InputRequiredResult), then greets from this worker."""
    answer = await ctx.elicit("Name?", NAME, input_key="name")
    return f"Hello, {answer.content['name']}, from {os.getpid()}"


@app.resource("test://watched")
def watched() -> str:
    """A resource whose updates the tests follow."""
    return "watched"


@app.tool()
def touch(uri: str = "test://watched") -> int:
    """Publishes an update of ``uri``; returns the pid of the worker that did."""
    app.notify_resource_updated(uri)
    return os.getpid()


@app.tool(task_support="optional")
async def slow(seconds: float = 0.3) -> str:
    """Runs as a task when the client allows: sleeps, then names the worker that ran it."""
    import asyncio

    await asyncio.sleep(seconds)
    return f"slept in {os.getpid()}"


for index in range(5):
    app.tool(name=f"filler_{index}")(lambda: "x")


@app.tool()
async def count(ctx: Context, steps: int = 5, delay: float = 0.2) -> str:
    """Reports progress ``steps`` times, ``delay`` seconds apart; names the worker that counted."""
    import asyncio

    for step in range(steps):
        await ctx.report_progress(step + 1, steps)
        await asyncio.sleep(delay)
    return f"counted in {os.getpid()}"
