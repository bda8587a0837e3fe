"""The mcpfast client driving a server written with the official Python SDK (``mcp`` 2.3.0).

The server below uses the SDK's MCPServer API (FastMCP style) and runs as a child process
over stdio: tools, resources, templates, prompts, completion, logging, progress,
cancellation, sampling, elicitation, roots and resource subscriptions. Every message the
mcpfast client sends is recorded and validated against the MCP schema of the negotiated
version; the SDK on the other side validates them with its own models too (it answers
invalid params with an error, which would fail the test).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import textwrap

import pytest

from everything_http import free_port, wait_for_port
from mcpfast.client import connect
from mcpfast.jsonrpc import JSONRPCError
from recording_client import RecordingClient

SERVER_SOURCE = textwrap.dedent('''
    import asyncio
    import warnings

    from pydantic import BaseModel

    from mcp import types
    from mcp.server.mcpserver import Context, MCPServer

    warnings.simplefilter("ignore")  # the SDK marks logging, sampling and roots deprecated

    mcp = MCPServer("official-python", version="2.3.0-test")
    STATE = {"cancelled": [], "level": None, "subscribed": [], "roots_changed": 0}


    @mcp.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b


    @mcp.tool()
    def fail() -> str:
        """Always fails."""
        raise ValueError("this tool always fails")


    @mcp.tool()
    async def chatty(ctx: Context) -> str:
        """Logs three messages."""
        await ctx.log("info", "first")
        await ctx.log("warning", {"second": 2})
        await ctx.log("error", "third", logger_name="chatty")
        return "logged"


    @mcp.tool()
    async def steps(ctx: Context) -> str:
        """Reports progress three times."""
        await ctx.report_progress(1, 3, "one")
        await ctx.report_progress(2, 3, "two")
        await ctx.report_progress(3, 3, "three")
        return "stepped"


    @mcp.tool()
    async def slow(ctx: Context) -> str:
        """Sleeps until cancelled."""
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            STATE["cancelled"].append(ctx.request_id)
            raise
        return "finished"


    @mcp.tool()
    def state() -> dict:
        """What the server saw so far."""
        return dict(STATE)


    @mcp.tool()
    async def ask_llm(question: str, ctx: Context) -> str:
        """Samples the client's LLM."""
        result = await ctx.session.create_message(
            messages=[types.SamplingMessage(
                role="user", content=types.TextContent(type="text", text=question))],
            max_tokens=50,
        )
        return f"{result.model}: {result.content.text}"


    class Person(BaseModel):
        name: str
        age: int


    @mcp.tool()
    async def ask_user(ctx: Context) -> str:
        """Elicits a person from the user."""
        result = await ctx.elicit("Who are you?", schema=Person)
        if result.action != "accept":
            return result.action
        return f"{result.data.name} is {result.data.age}"


    from typing import Annotated

    from mcp.server.mcpserver import Elicit, Resolve


    def ask_person() -> Elicit[Person]:
        return Elicit("Who are you?", Person)


    @mcp.tool()
    def greet_person(person: Annotated[Person, Resolve(ask_person)]) -> str:
        """Elicits a person through a resolver: an InputRequiredResult round under 2026-07-28."""
        return f"{person.name} is {person.age}"


    @mcp.tool()
    async def list_client_roots(ctx: Context) -> list[str]:
        """The client's roots."""
        result = await ctx.session.list_roots()
        return [f"{root.name}={root.uri}" for root in result.roots]


    @mcp.tool()
    async def touch(uri: str, ctx: Context) -> str:
        """Tells subscribers that uri changed."""
        await ctx.session.send_resource_updated(uri)
        return "touched"


    @mcp.resource("memo://greeting", mime_type="text/plain")
    def greeting() -> str:
        """A greeting."""
        return "Hello from the official SDK"


    @mcp.resource("memo://users/{user_id}")
    def user(user_id: str) -> str:
        """One user."""
        return f"user {user_id}"


    @mcp.prompt()
    def review(code: str, language: str = "python") -> str:
        """Review some code."""
        return f"Please review this {language} code: {code}"


    @mcp.completion()
    async def complete(ref, argument, context):
        options = ["python", "perl", "rust"]
        return types.Completion(values=[o for o in options if o.startswith(argument.value)])


    async def set_level(ctx, params):
        STATE["level"] = params.level
        return types.EmptyResult()


    async def subscribe(ctx, params):
        STATE["subscribed"].append(str(params.uri))
        return types.EmptyResult()


    async def unsubscribe(ctx, params):
        STATE["subscribed"].remove(str(params.uri))
        return types.EmptyResult()


    async def roots_changed(ctx, params):
        STATE["roots_changed"] += 1


    lowlevel = mcp._lowlevel_server
    lowlevel.add_request_handler("logging/setLevel", types.SetLevelRequestParams, set_level)
    lowlevel.add_request_handler("resources/subscribe", types.SubscribeRequestParams, subscribe)
    lowlevel.add_request_handler(
        "resources/unsubscribe", types.UnsubscribeRequestParams, unsubscribe)
    lowlevel.add_notification_handler(
        "notifications/roots/list_changed", types.NotificationParams, roots_changed)

    if __name__ == "__main__":
        import sys

        if len(sys.argv) > 1:  # a port: Streamable HTTP
            mcp.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
        else:
            mcp.run()
''')




def _text(result):
    return result["content"][0]["text"]


async def _state(client):
    """The server's STATE (the tool's dict comes back as JSON text)."""
    result = await client.call_tool("state")
    if "structuredContent" in result:
        return result["structuredContent"]
    return json.loads(_text(result))


def _run(coroutine):
    """Run a test coroutine on a fresh loop, failing instead of hanging after 120 s."""

    async def bounded():
        return await asyncio.wait_for(coroutine, 120)

    return asyncio.run(bounded())


async def _sample(params):
    question = params["messages"][0]["content"]["text"]
    assert params["maxTokens"] == 50
    return {"role": "assistant", "content": {"type": "text", "text": f"answer to {question}"},
            "model": "test-llm", "stopReason": "endTurn"}


def _elicit(params):
    assert params["message"] == "Who are you?"
    assert set(params["requestedSchema"]["properties"]) == {"name", "age"}
    return {"action": "accept", "content": {"name": "Ada", "age": 36}}


@contextlib.asynccontextmanager
async def _served(script, transport):
    """The official server over stdio (a command target) or Streamable HTTP (a URL)."""
    if transport == "stdio":
        yield [sys.executable, str(script)]
        return
    port = free_port()
    process = subprocess.Popen([sys.executable, str(script), str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        await wait_for_port(port)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_mcpfast_client_drives_an_official_python_server(tmp_path, mcp_schema, transport):
    script = tmp_path / "official_server.py"
    script.write_text(SERVER_SOURCE)
    logs = []
    client = RecordingClient(
        name="mcpfast-interop",
        sampling=_sample,
        elicitation=_elicit,
        roots=[{"uri": "file:///srv/one", "name": "one"}],
        on_log=logs.append,
        timeout=30,
    )

    async def main():
        async with _served(script, transport) as target, connect(target, client=client):
            # Handshake.
            assert client.protocol_version == "2025-11-25"
            assert client.server_info["name"] == "official-python"
            caps = client.server_capabilities
            assert "tools" in caps and "resources" in caps and "prompts" in caps
            assert caps["resources"].get("subscribe") is True
            assert "logging" in caps and "completions" in caps

            # Tools.
            tools = {tool["name"]: tool for tool in await client.list_tools()}
            assert {"add", "fail", "chatty", "steps", "slow", "ask_llm"} <= set(tools)
            assert tools["add"]["inputSchema"]["required"] == ["a", "b"]
            result = await client.call_tool("add", {"a": 2, "b": 40})
            assert _text(result) == "42"
            failed = await client.call_tool("fail")
            assert failed["isError"] is True and "fail" in _text(failed)

            # Resources and templates.
            resources = await client.list_resources()
            assert [r["uri"] for r in resources] == ["memo://greeting"]
            read = await client.read_resource("memo://greeting")
            assert read["contents"][0]["text"] == "Hello from the official SDK"
            templates = await client.list_resource_templates()
            assert [t["uriTemplate"] for t in templates] == ["memo://users/{user_id}"]
            assert (await client.read_resource("memo://users/7"))["contents"][0]["text"] == "user 7"
            with pytest.raises(JSONRPCError):
                await client.read_resource("memo://nothing-here")

            # Prompts and completion.
            prompts = await client.list_prompts()
            assert prompts[0]["name"] == "review"
            prompt = await client.get_prompt("review", {"code": "x = 1"})
            assert "python code: x = 1" in prompt["messages"][0]["content"]["text"]
            completion = await client.complete("language", "p", prompt="review")
            assert completion["completion"]["values"] == ["python", "perl"]
            completion = await client.complete("user_id", "r", resource="memo://users/{user_id}",
                                               context={"other": "x"})
            assert completion["completion"]["values"] == ["rust"]

            # Logging.
            await client.set_logging_level("debug")
            assert _text(await client.call_tool("chatty")) == "logged"
            await client.ping()
            assert [(e["level"], e["data"]) for e in logs] == [
                ("info", "first"), ("warning", {"second": 2}), ("error", "third")]
            assert logs[2]["logger"] == "chatty"

            # Progress: a token only with a callback.
            progress = []
            await client.call_tool("steps", progress=lambda *args: progress.append(args))
            assert progress == [(1, 3, "one"), (2, 3, "two"), (3, 3, "three")]
            await client.call_tool("steps")

            # Cancellation.
            task = asyncio.ensure_future(client.call_tool("slow"))
            await asyncio.sleep(0)
            await client.ping()
            await asyncio.sleep(0.3)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            for _ in range(50):
                state = await _state(client)
                if state["cancelled"]:
                    break
                await asyncio.sleep(0.05)
            assert len(state["cancelled"]) == 1
            assert state["level"] == "debug"

            # Sampling, elicitation, roots.
            assert _text(await client.call_tool("ask_llm", {"question": "2+2?"})) == (
                "test-llm: answer to 2+2?")
            assert _text(await client.call_tool("ask_user")) == "Ada is 36"
            roots = await client.call_tool("list_client_roots")
            assert "one=file:///srv/one" in json.dumps(roots)
            client.set_roots(["file:///srv/two"])
            roots = await client.call_tool("list_client_roots")
            assert "None=file:///srv/two" in json.dumps(roots)
            state = await _state(client)
            assert state["roots_changed"] == 1

            # Subscriptions.
            subscription = await client.subscribe("memo://greeting")
            await client.call_tool("touch", {"uri": "memo://greeting"})
            update = await asyncio.wait_for(subscription.__anext__(), 10)
            assert update["uri"] == "memo://greeting"
            await subscription.unsubscribe()
            state = await _state(client)
            assert state["subscribed"] == []
            await client.ping()

        assert client.closed
        schema = mcp_schema(client.protocol_version)
        for frame in client.sent_frames:
            message = json.loads(frame)
            answers = None
            if "method" not in message and "result" in message:
                answers = client.server_requests[message["id"]]
            schema.check_message(message, answers=answers)
        methods = {json.loads(f).get("method") for f in client.sent_frames}
        assert {"initialize", "notifications/initialized", "tools/call",
                "notifications/cancelled", "notifications/roots/list_changed",
                "resources/subscribe", "completion/complete"} <= methods

    _run(main())


def test_an_official_server_at_an_older_version(tmp_path, mcp_schema):
    """The client asks for 2025-03-26; the SDK speaks it and the client follows."""
    script = tmp_path / "official_server.py"
    script.write_text(SERVER_SOURCE)

    async def main():
        client = RecordingClient(protocol_version="2025-03-26")
        async with connect([sys.executable, str(script)], client=client):
            assert client.protocol_version == "2025-03-26"
            assert _text(await client.call_tool("add", {"a": 1, "b": 1})) == "2"
            assert client.session.batches_allowed
        schema = mcp_schema("2025-03-26")
        for frame in client.sent_frames:
            schema.check_message(json.loads(frame))

    _run(main())


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_mcpfast_client_speaks_2026_07_28_to_an_official_python_server(tmp_path, transport):
    """Discovery, self-contained requests and the SDK server's question (a resolver's
    elicitation) as an InputRequiredResult round answered by the client's handler."""
    script = tmp_path / "official_server.py"
    script.write_text(SERVER_SOURCE)

    async def main():
        async with _served(script, transport) as target, connect(
                target, protocol_version="2026-07-28", name="mcpfast-interop", sampling=_sample,
                elicitation=_elicit, roots=[{"uri": "file:///srv/one", "name": "one"}],
                timeout=30) as client:
            assert client.protocol_version == "2026-07-28"
            assert client.discover_result is not None and client.initialize_result is None
            assert client.server_info["name"] == "official-python"
            assert _text(await client.call_tool("add", {"a": 2, "b": 40})) == "42"
            # The SDK server asks through a resolver: an InputRequiredResult, answered by
            # the client's elicitation handler and retried.
            assert _text(await client.call_tool("greet_person")) == "Ada is 36"
            read = await client.read_resource("memo://greeting")
            assert read["contents"][0]["text"] == "Hello from the official SDK"
            prompt = await client.get_prompt("review", {"code": "x = 1"})
            assert "python code: x = 1" in prompt["messages"][0]["content"]["text"]

    _run(main())
