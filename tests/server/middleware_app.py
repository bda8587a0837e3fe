"""The server of the middleware tests (tests/server/test_middleware.py), served in-process,
on every socket transport and, run as a script, over stdio: one middleware exercising each
hook, a lifespan holding what the middleware saw."""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any

from mcpfast import Context, Server
from mcpfast.jsonrpc.errors import JSONRPCError
from mcpfast.server.middleware import Middleware

CONFIRM = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}
REFUSED = -32003


class Exercise(Middleware):
    """Each hook does something a client can see; every message is recorded in the
    lifespan's ``seen``."""

    async def on_message(self, ctx: Any, call_next: Any) -> Any:
        target = ctx.params.get("name") if type(ctx.params) is dict else None
        ctx.lifespan["seen"].append(f"{ctx.method} {target}" if target else ctx.method)
        return await call_next(ctx)

    async def on_notification(self, ctx: Any, call_next: Any) -> Any:
        ctx.lifespan["notifications"].append(ctx.method)
        return await call_next(ctx)

    async def on_call_tool(self, ctx: Any, call_next: Any) -> Any:
        name = ctx.params.get("name")
        if name == "refused":
            raise JSONRPCError(REFUSED, "Refused by policy", {"tool": name})
        if name == "answered":
            return {"content": [{"type": "text", "text": "answered by the middleware"}]}
        if name == "broken":
            raise RuntimeError("a secret detail of the middleware")
        if name == "echo":
            arguments = ctx.params["arguments"]
            ctx.params = {**ctx.params, "arguments": {"text": arguments["text"].upper()}}
        result = await call_next(ctx)
        if name == "echo":
            result = {**result, "content": [*result["content"], {"type": "text", "text": "after"}]}
        return result

    async def on_list_tools(self, ctx: Any, call_next: Any) -> Any:
        result = await call_next(ctx)
        return {**result, "tools": [tool for tool in result["tools"] if tool["name"] != "hidden"]}

    async def on_read_resource(self, ctx: Any, call_next: Any) -> Any:
        result = await call_next(ctx)
        return {**result, "contents": [{**item, "text": "mw:" + item["text"]} for item in result["contents"]]}

    async def on_get_prompt(self, ctx: Any, call_next: Any) -> Any:
        return {**await call_next(ctx), "description": "through the middleware"}

    async def on_initialize(self, ctx: Any, call_next: Any) -> Any:
        return {**await call_next(ctx), "instructions": "from on_initialize"}

    async def on_discover(self, ctx: Any, call_next: Any) -> Any:
        return {**await call_next(ctx), "instructions": "from on_discover"}


@contextlib.asynccontextmanager
async def lifespan(app: Server) -> Any:
    state: dict[str, Any] = {"seen": [], "notifications": [], "stopped": False}
    app.lifespans.append(state)  # type: ignore[attr-defined]
    yield state
    state["stopped"] = True


class EagerExercise(Exercise):
    """The same, run inline until it suspends."""

    eager = True


def make_app(eager: bool = False) -> Server:
    exercise = EagerExercise() if eager else Exercise()
    app = Server("middleware", middleware=[exercise], lifespan=lifespan, task_poll_interval_ms=20)
    app.lifespans = []  # type: ignore[attr-defined]

    @app.tool()
    def echo(text: str) -> str:
        return text

    @app.tool()
    def hidden() -> str:
        return "hidden"

    @app.tool()
    def refused() -> str:
        return "never"

    @app.tool()
    def answered() -> str:
        return "never"

    @app.tool()
    def broken() -> str:
        return "never"

    @app.tool()
    async def asks(ctx: Context) -> str:
        answer = await ctx.elicit("Sure?", CONFIRM)
        return f"confirmed {answer.content['confirm']}"

    @app.tool(task_support="optional")
    async def slow() -> str:
        return "done as a task"

    @app.tool()
    def seen(ctx: Context) -> dict:
        return {"seen": list(ctx.lifespan["seen"]), "notifications": list(ctx.lifespan["notifications"])}

    @app.resource("memo://note")
    def note() -> str:
        return "note"

    @app.prompt()
    def greet(who: str) -> str:
        return f"Hello {who}"

    return app


app = make_app(eager=os.environ.get("MIDDLEWARE_EAGER") == "1")

if __name__ == "__main__":
    app.run(sys.argv[1] if len(sys.argv) > 1 else "stdio")
