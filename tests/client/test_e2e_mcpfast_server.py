"""The client against mcpfast's own server, over real transports (stdio and TCP).

examples/everything_server.py runs as a child process (stdio) or in this process (TCP).
Every message the client sends is recorded and validated against the schema of the
negotiated version.
"""

import asyncio
import importlib.util
import json
import sys
import textwrap
from pathlib import Path

import pytest

from mcpfast.client import connect, connect_sync
from mcpfast.jsonrpc import ConnectionClosed, InvalidParams, JSONRPCError
from recording_client import RecordingClient

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = ROOT / "examples" / "everything_server.py"
ECHO = ROOT / "examples" / "echo_server.py"
CHILD_ENV = {"PYTHONPATH": str(ROOT)}




def _text(result):
    return result["content"][0]["text"]


async def _exercise_everything(client):
    """Drive every feature of the everything server through the client."""
    assert client.protocol_version == "2025-11-25"
    assert client.server_info["name"] == "mcpfast-everything"
    assert client.instructions.startswith("A test server")

    tools = {tool["name"]: tool for tool in await client.list_tools()}
    assert "test_simple_text" in tools and "test_sampling" in tools
    assert _text(await client.call_tool("test_simple_text")) == (
        "This is a simple text response for testing.")
    structured = await client.call_tool("test_structured_output", {"city": "Lima"})
    assert structured["structuredContent"]["city"] == "Lima"
    assert (await client.call_tool("test_error_handling"))["isError"] is True
    with pytest.raises(InvalidParams):
        await client.call_tool("no_such_tool")

    resources = {r["uri"] for r in await client.list_resources()}
    assert "test://static-text" in resources
    templates = await client.list_resource_templates()
    assert [t["uriTemplate"] for t in templates] == ["test://template/{id}/data"]
    read = await client.read_resource("test://template/7/data")
    assert json.loads(read["contents"][0]["text"])["id"] == "7"
    with pytest.raises(JSONRPCError) as info:
        await client.read_resource("test://missing")
    assert info.value.code == -32002

    prompts = {p["name"] for p in await client.list_prompts()}
    assert "test_prompt_with_arguments" in prompts
    prompt = await client.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
    assert "arg1='a'" in prompt["messages"][0]["content"]["text"]
    completion = await client.complete("arg1", "pa", prompt="test_prompt_with_arguments")
    assert completion["completion"]["values"] == ["paris", "park", "party", "pasta", "patio"]
    completion = await client.complete("id", "1", resource="test://template/{id}/data")
    assert completion["completion"]["values"] == ["1", "123"]

    # Progress, only with a callback.
    seen = []
    result = await client.call_tool("test_tool_with_progress", progress=lambda *a: seen.append(a))
    assert seen == [(0, 100, None), (50, 100, "halfway"), (100, 100, "done")]
    assert "token None" not in _text(result)
    assert "token None" in _text(await client.call_tool("test_tool_with_progress"))

    # Cancellation reaches the server's handler.
    task = asyncio.ensure_future(client.call_tool("test_slow_operation", {"seconds": 30}))
    # Once the ping sent after the call is answered, the server has started the call's
    # handler (it reads frames in order and starts a handler before the next read).
    await asyncio.sleep(0)
    await client.ping()
    task.cancel("changed my mind")
    with pytest.raises(asyncio.CancelledError):
        await task
    await client.ping()
    cancellations = await client.call_tool("test_cancellations")
    assert "changed my mind" in json.dumps(cancellations)

    # Sampling, elicitation, roots, ping from the server.
    sampled = await client.call_tool("test_sampling", {"prompt": "2+2?"})
    assert _text(sampled) == "LLM response: 4"
    elicited = await client.call_tool("test_elicitation", {"message": "Who are you?"})
    assert "ada" in _text(elicited).lower()
    roots = await client.call_tool("test_list_roots")
    assert "file:///srv/project" in json.dumps(roots)
    assert _text(await client.call_tool("test_ping_client")) == "client answered ping"

    # Subscriptions.
    subscription = await client.subscribe("test://watched-resource")
    await client.call_tool("test_notify_resource_updated")
    update = await asyncio.wait_for(subscription.__anext__(), 5)
    assert update["uri"] == "test://watched-resource"
    await subscription.unsubscribe()
    await client.call_tool("test_notify_resource_updated")
    await client.ping()
    assert subscription.pending() == 0


async def _sample(params):
    return {"role": "assistant", "content": {"type": "text", "text": "4"}, "model": "fake-llm"}


def _elicit(params):
    return {"action": "accept", "content": {"username": "ada", "email": "ada@example.com"}}


def _client(**extra):
    return RecordingClient(
        sampling=_sample,
        elicitation=_elicit,
        roots=[{"uri": "file:///srv/project", "name": "project"}],
        **extra,
    )


def test_everything_over_stdio(arun, mcp_schema):
    async def main():
        logs, changes = [], []
        client = _client(on_log=logs.append, on_list_changed=changes.append)
        async with connect([sys.executable, str(EVERYTHING)], client=client) as connected:
            assert connected is client
            await client.set_logging_level("debug")
            await _exercise_everything(client)
            await client.call_tool("test_tool_with_logging")
            await client.call_tool("test_add_dynamic_tool")
            await client.ping()
            assert "dynamic_tool" in {t["name"] for t in await client.list_tools()}
            await client.call_tool("test_remove_dynamic_tool")
            await client.ping()
            assert [entry["data"] for entry in logs[-3:]] == [
                "Tool execution started", "Tool processing data", "Tool execution completed"]
            assert changes.count("tools") == 2
        assert client.closed
        assert client.check_schema(mcp_schema) > 30

    arun(main())


def _load_everything_module():
    spec = importlib.util.spec_from_file_location("_everything_for_tcp_test", EVERYTHING)
    module = importlib.util.module_from_spec(spec)
    # Dataclasses with string annotations look their module up in sys.modules.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_everything_over_tcp_with_many_calls_in_flight(arun, mcp_schema):
    app = _load_everything_module().app

    async def main():
        ready = asyncio.get_running_loop().create_future()
        server = asyncio.ensure_future(
            app.serve_tcp("127.0.0.1", 0, ready=lambda host, port: ready.set_result(port)))
        port = await asyncio.wait_for(ready, 10)
        try:
            client = _client()
            async with connect(f"tcp://127.0.0.1:{port}", client=client):
                await _exercise_everything(client)
                results = await asyncio.gather(*(
                    client.call_tool("test_structured_output", {"city": f"c{i}"})
                    for i in range(300)))
                assert [r["structuredContent"]["city"] for r in results] == [
                    f"c{i}" for i in range(300)]
            client.check_schema(mcp_schema)
        finally:
            server.cancel()
            with pytest.raises(asyncio.CancelledError):
                await server

    arun(main())


CRASHING_SERVER = textwrap.dedent("""
    import asyncio, os
    from mcpfast.server import Server

    app = Server("crashing")

    @app.tool()
    async def wait() -> str:
        await asyncio.sleep(60)
        return "done"

    @app.tool()
    def crash() -> str:
        os._exit(3)

    app.run("stdio")
""")


def test_a_server_exit_fails_every_waiter_at_once(arun, tmp_path):
    script = tmp_path / "crashing.py"
    script.write_text(CRASHING_SERVER)

    async def main():
        async with connect([sys.executable, str(script)], env=CHILD_ENV) as client:
            waiting = [asyncio.ensure_future(client.call_tool("wait")) for _ in range(20)]
            await client.ping()
            crash = asyncio.ensure_future(client.call_tool("crash"))
            results = await asyncio.wait_for(
                asyncio.gather(*waiting, crash, return_exceptions=True), 10)
            assert all(isinstance(r, ConnectionClosed) for r in results)
            assert "exited with code 3" in str(results[0])
            await asyncio.wait_for(client.wait_closed(), 5)
            assert isinstance(client.close_error, ConnectionError)
            with pytest.raises(ConnectionClosed):
                await client.ping()

    arun(main())


def test_a_command_that_is_not_a_server_fails_the_handshake(arun):
    async def main():
        with pytest.raises(ConnectionClosed, match="exited with code 0"):
            await connect([sys.executable, "-c", "pass"])

    arun(main())


def test_cwd_and_env_reach_the_server_process(arun, tmp_path):
    script = tmp_path / "where.py"
    script.write_text(textwrap.dedent("""
        import os
        from mcpfast.server import Server

        app = Server("where")

        @app.tool()
        def where() -> dict:
            return {"cwd": os.getcwd(), "token": os.environ.get("DEMO_TOKEN")}

        app.run("stdio")
    """))
    workdir = tmp_path / "work"
    workdir.mkdir()

    async def main():
        env = {**CHILD_ENV, "DEMO_TOKEN": "t0k"}
        async with connect([sys.executable, str(script)], env=env, cwd=workdir) as client:
            result = await client.call_tool("where")
        assert result["structuredContent"] == {"cwd": str(workdir), "token": "t0k"}

    arun(main())


def test_connect_sync_over_stdio():
    with connect_sync([sys.executable, str(ECHO)]) as client:
        assert client.protocol_version == "2025-11-25"
        assert _text(client.call_tool("echo", {"text": "sync"})) == "sync"
        assert [t["name"] for t in client.list_tools()] == ["echo"]
    assert client.closed


def test_connector_can_be_awaited(arun):
    async def main():
        client = await connect(f"{sys.executable} {ECHO}")
        try:
            assert _text(await client.call_tool("echo", {"text": "x"})) == "x"
        finally:
            await client.aclose()
        assert client.closed

    arun(main())
