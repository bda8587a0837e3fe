"""Mounting in-process Servers: namespacing, filters, renames, one shared session, list
changes forwarded, progress, logs, cancellation, completion, subscriptions."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

import mcpfast
from mcpfast import Server
from mcpfast.jsonrpc.errors import JSONRPCError

sys.path.insert(0, str(Path(__file__).parent))
from gateway_apps import files_app, math_app  # noqa: E402

from loop import eventually  # noqa: E402


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 30))


def gateway_app(**files_options) -> Server:
    app = Server("gateway")

    @app.tool()
    def own_tool() -> str:
        """The gateway's own tool."""
        return "own"

    app.mount(files_app(), namespace="fs", **files_options)
    app.mount(math_app(), namespace="math")
    return app


def test_tools_prompts_resources_appear_under_their_namespace():
    async def main():
        async with mcpfast.connect(gateway_app()) as client:
            tools = {tool["name"] for tool in await client.list_tools()}
            assert tools == {"own_tool", "fs_read_file", "fs_delete_file", "fs_slow_count",
                             "fs_wait_forever", "fs_ask_everything", "fs_meta_seen", "math_add"}
            assert [p["name"] for p in await client.list_prompts()] == ["fs_summarize"]
            resources = await client.list_resources()
            assert [(r["uri"], r["name"]) for r in resources] == [("file:///etc/motd", "fs_motd")]
            templates = await client.list_resource_templates()
            assert [t["uriTemplate"] for t in templates] == ["file:///logs/{day}"]

            result = await client.call_tool("fs_read_file", {"path": "/a"})
            assert result["content"][0]["text"] == "contents of /a"
            assert (await client.call_tool("math_add", {"a": 2, "b": 3}))["structuredContent"] == {"result": 5}
            assert (await client.call_tool("own_tool"))["content"][0]["text"] == "own"
            prompt = await client.get_prompt("fs_summarize", {"text": "abc"})
            assert prompt["messages"][0]["content"]["text"] == "Summarize: abc"
            read = await client.read_resource("file:///etc/motd")
            assert read["contents"][0]["text"] == "hello from files"
            read = await client.read_resource("file:///logs/monday")
            assert read["contents"][0]["text"] == "log of monday"

    run(main())


def test_unknown_names_and_upstream_errors_reach_the_client():
    async def main():
        async with mcpfast.connect(gateway_app()) as client:
            with pytest.raises(JSONRPCError) as caught:
                await client.call_tool("fs_no_such_tool", {})
            assert caught.value.code == -32602
            # Bad arguments are judged by the upstream and its answer passed on.
            result = await client.call_tool("math_add", {"a": "x", "b": 1})
            assert result["isError"] is True
            with pytest.raises(JSONRPCError) as caught:
                await client.read_resource("file:///nowhere")
            assert caught.value.code == -32002

    run(main())


def test_allow_deny_by_name_and_tag_and_renames():
    async def main():
        app = Server("gateway")
        app.mount(files_app("a"), namespace="a", allow_tags=["read"])
        app.mount(files_app("b"), namespace="b", deny=["delete_file", "wait_forever"],
                  rename={"read_file": {"name": "cat", "description": "Print a file.",
                                        "arguments": {"path": "file"}}})
        app.mount(files_app("c"), namespace="", separator=".", allow=["delete_file"])
        async with mcpfast.connect(app) as client:
            tools = {tool["name"]: tool for tool in await client.list_tools()}
            assert set(tools) == {"a_read_file", "cat", "b_slow_count", "b_ask_everything", "b_meta_seen",
                                  "delete_file"}
            cat = tools["cat"]
            assert cat["description"] == "Print a file."
            assert list(cat["inputSchema"]["properties"]) == ["file"]
            assert cat["inputSchema"]["required"] == ["file"]
            result = await client.call_tool("cat", {"file": "/x"})
            assert result["content"][0]["text"] == "contents of /x"
            with pytest.raises(JSONRPCError):
                await client.call_tool("b_delete_file", {"path": "/x"})
            assert (await client.call_tool("delete_file", {"path": "/y"}))["content"][0]["text"] == "deleted /y"

    run(main())


def test_every_downstream_client_shares_one_upstream_session():
    upstream = files_app()
    app = Server("gateway")
    app.mount(upstream, namespace="fs")

    async def main():
        async with app.running():
            clients = [await mcpfast.connect(app) for _ in range(3)]
            try:
                for client in clients:
                    await client.call_tool("fs_read_file", {"path": "/"})
                # One connection on the upstream: the gateway's, made once.
                assert len(upstream.connections) == 1
            finally:
                for client in clients:
                    await client.aclose()

    run(main())


def test_upstream_catalogue_changes_are_forwarded_namespaced():
    upstream = files_app()
    app = Server("gateway")
    app.mount(upstream, namespace="fs")

    async def main():
        changed = []
        async with mcpfast.connect(app, on_list_changed=changed.append) as client:
            @upstream.tool()
            def new_tool() -> str:
                return "new"

            await eventually(lambda: "tools" in changed)
            names = {tool["name"] for tool in await client.list_tools()}
            assert "fs_new_tool" in names
            assert (await client.call_tool("fs_new_tool"))["content"][0]["text"] == "new"
            upstream.remove_tool("new_tool")
            await eventually(lambda: changed.count("tools") >= 2)
            assert "fs_new_tool" not in {tool["name"] for tool in await client.list_tools()}

    run(main())


def test_progress_and_logs_are_passed_downstream():
    async def main():
        progress, logs = [], []
        async with mcpfast.connect(gateway_app(), on_log=logs.append) as client:
            result = await client.call_tool("fs_slow_count", {"n": 3},
                                            progress=lambda p, t, m: progress.append((p, t, m)))
            assert result["structuredContent"] == {"result": 3}
            assert progress == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
            await eventually(lambda: len(logs) == 3)
            assert [log["data"] for log in logs] == ["counted 1", "counted 2", "counted 3"]
            assert all(log["logger"].startswith("fs") for log in logs)

    run(main())


def test_cancelling_downstream_cancels_upstream():
    events = []
    app = Server("gateway")
    app.mount(files_app(events=events), namespace="fs")

    async def main():
        async with mcpfast.connect(app) as client:
            call = asyncio.ensure_future(client.call_tool("fs_wait_forever"))
            await eventually(lambda: events == ["started"])
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            await eventually(lambda: events == ["started", "cancelled"])
            # The shared session goes on serving.
            assert (await client.call_tool("fs_read_file", {"path": "/"}))["content"][0]["text"] == "contents of /"

    run(main())


def test_completion_is_routed_by_prompt_and_template():
    async def main():
        async with mcpfast.connect(gateway_app()) as client:
            done = await client.complete("text", "s", prompt="fs_summarize")
            assert done["completion"]["values"] == ["short", "long"]
            done = await client.complete("day", "2", resource="file:///logs/{day}")
            assert done["completion"]["values"] == ["2026-12-01", "2026-12-02"]

    run(main())


def test_resource_subscriptions_reach_the_subscribed_client():
    upstream = files_app()
    app = Server("gateway")
    app.mount(upstream, namespace="fs")

    async def main():
        updates = []
        async with mcpfast.connect(app, on_resource_updated=updates.append) as client:
            await client.request("resources/subscribe", {"uri": "file:///etc/motd"})
            await eventually(lambda: any("file:///etc/motd" in c.subscriptions for c in upstream.connections))
            upstream.notify_resource_updated("file:///etc/motd")
            await eventually(lambda: updates)
            assert updates[0]["uri"] == "file:///etc/motd"
            await client.request("resources/unsubscribe", {"uri": "file:///etc/motd"})
            await eventually(lambda: not any(c.subscriptions for c in upstream.connections))

    run(main())


def test_sampling_elicitation_and_roots_asked_upstream_are_answered_downstream():
    async def main():
        asked = []

        def sampling(params):
            asked.append(("sampling", params["messages"][0]["content"]["text"]))
            return {"role": "assistant", "content": {"type": "text", "text": "hi there"}, "model": "test"}

        def elicitation(params):
            asked.append(("elicitation", params["message"]))
            return {"action": "accept", "content": {"name": "Ada"}}

        async with mcpfast.connect(gateway_app(), sampling=sampling, elicitation=elicitation,
                                   roots=["file:///work"]) as client:
            result = await client.call_tool("fs_ask_everything")
            assert result["structuredContent"] == {"sampled": "hi there", "elicited": {"name": "Ada"},
                                                   "roots": ["file:///work"]}
            assert asked == [("sampling", "Say hi"), ("elicitation", "Your name?")]

    run(main())


def test_sampling_without_a_capable_downstream_client_is_a_clear_tool_error():
    async def main():
        async with mcpfast.connect(gateway_app()) as client:
            result = await client.call_tool("fs_ask_everything")
            assert result["isError"] is True
            assert "sampling" in result["content"][0]["text"]

    run(main())


def test_a_2026_downstream_gets_upstream_questions_as_input_required_rounds():
    events = []
    app = Server("gateway")
    app.mount(files_app(events=events), namespace="fs")

    async def main():
        asked = []

        def sampling(params):
            asked.append("sampling")
            return {"role": "assistant", "content": {"type": "text", "text": "hi there"}, "model": "test"}

        def elicitation(params):
            asked.append("elicitation")
            return {"action": "accept", "content": {"name": "Ada"}}

        async with mcpfast.connect(app, protocol_version="2026-07-28", sampling=sampling,
                                   elicitation=elicitation, roots=["file:///work"]) as client:
            assert client.protocol_version == "2026-07-28"
            result = await client.call_tool("fs_ask_everything")
            assert result["structuredContent"] == {"sampled": "hi there", "elicited": {"name": "Ada"},
                                                   "roots": ["file:///work"]}
            # One round per question, each answered once.
            assert asked == ["sampling", "elicitation"]

    run(main())


def test_a_2026_downstream_without_the_capability_gets_minus_32021():
    async def main():
        async with mcpfast.connect(gateway_app(), protocol_version="2026-07-28") as client:
            with pytest.raises(JSONRPCError) as caught:
                await client.call_tool("fs_ask_everything")
            assert caught.value.code == -32021

    run(main())


def rich_app() -> Server:
    """An upstream whose items use members of the latest versions."""
    from mcpfast.server.features.tools import ToolAnnotations

    app = Server("rich")

    @app.tool(title="Weather", annotations=ToolAnnotations(read_only=True), icons=[{"src": "https://x/i.png"}],
              meta={"tags": ["read"]}, task_support="optional")
    def weather(city: str) -> dict:
        """Weather of a city."""
        return {"city": city}

    @app.tool()
    def linked() -> list:
        """Audio and a resource link, which older versions do not have."""
        from mcpfast.server.content import Audio, ResourceLink

        return [Audio(b"RIFF\x00\x00\x00\x00WAVEfmt ", mime_type="audio/wav"),
                ResourceLink(uri="file:///r", name="r")]

    @app.prompt(title="Review", argument_titles={"code": "Code"})
    def review(code: str) -> str:
        return code

    @app.resource("file:///r", title="R", mime_type="text/plain", meta={"k": 1})
    def r() -> str:
        return "r"

    return app


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
def test_listed_items_fit_the_downstream_version(version, mcp_schema):
    schema = mcp_schema(version)
    app = Server("gateway")
    app.mount(rich_app(), namespace="rich")

    async def main():
        async with mcpfast.connect(app, protocol_version=version) as client:
            assert client.protocol_version == version
            tools = await client.list_tools()
            for tool in tools:
                schema.validate("Tool", tool)
            tools = [tool for tool in tools if tool["name"] == "rich_weather"]
            for prompt in await client.list_prompts():
                schema.validate("Prompt", prompt)
            for resource in await client.list_resources():
                schema.validate("Resource", resource)
            schema.validate("CallToolResult", await client.call_tool("rich_weather", {"city": "Oslo"}))
            schema.validate("GetPromptResult", await client.get_prompt("rich_review", {"code": "x"}))
            schema.validate("ReadResourceResult", await client.read_resource("file:///r"))
            linked = await client.call_tool("rich_linked")
            schema.validate("CallToolResult", linked)
            weather = tools[0]
            if version >= "2025-06-18":
                assert weather["title"] == "Weather" and "outputSchema" in weather
            elif version == "2025-03-26":
                assert weather["annotations"]["title"] == "Weather"

    run(main())


def test_lists_are_paginated_across_upstreams_with_the_servers_page_size():
    app = Server("gateway", page_size=2)

    @app.tool()
    def own_a() -> str:
        return "a"

    @app.tool()
    def own_b() -> str:
        return "b"

    @app.tool()
    def own_c() -> str:
        return "c"

    app.mount(files_app(), namespace="fs")
    app.mount(math_app(), namespace="math")

    async def main():
        async with mcpfast.connect(app) as client:
            pages, cursor = [], None
            while True:
                page = await client.list_tools_page(cursor)
                pages.append([tool["name"] for tool in page["tools"]])
                cursor = page.get("nextCursor")
                if cursor is None:
                    break
            names = [name for page in pages for name in page]
            assert names[:3] == ["own_a", "own_b", "own_c"]
            assert set(names[3:]) == {"fs_read_file", "fs_delete_file", "fs_slow_count", "fs_wait_forever",
                                      "fs_ask_everything", "fs_meta_seen", "math_add"}
            assert len(names) == len(set(names)) == 10
            assert all(len(page) <= 3 for page in pages)  # the server's last page joins the first mounted one
            # Every page through list_tools (which follows the cursors) agrees.
            assert [tool["name"] for tool in await client.list_tools()] == names
            with pytest.raises(JSONRPCError) as caught:
                await client.list_tools_page("gw.forged")
            assert caught.value.code == -32602

    run(main())


def test_one_upstream_subscription_for_many_clients_dropped_when_they_are_gone():
    upstream = files_app()
    app = Server("gateway")
    app.mount(upstream, namespace="fs")
    uri = "file:///etc/motd"

    def upstream_subscribed() -> bool:
        return any(uri in c.subscriptions for c in upstream.connections)

    async def main():
        async with app.running():
            first, second = await mcpfast.connect(app), await mcpfast.connect(app)
            updates = []
            second.on_resource_updated(updates.append)
            await first.request("resources/subscribe", {"uri": uri})
            await second.request("resources/subscribe", {"uri": uri})
            assert upstream_subscribed()
            await first.request("resources/unsubscribe", {"uri": uri})
            assert upstream_subscribed()  # the second client still wants it
            upstream.notify_resource_updated(uri)
            await eventually(lambda: updates)
            await first.aclose()
            await second.aclose()  # gone without unsubscribing
            upstream.notify_resource_updated(uri)
            await eventually(lambda: not upstream_subscribed())

    run(main())


def test_mount_refuses_what_can_never_work():
    app = Server("gateway")
    with pytest.raises(ValueError):
        app.mount("", namespace="empty")
    with pytest.raises(TypeError):
        app.mount(42, namespace="number")
    with pytest.raises(ValueError, match="separator"):
        app.mount(math_app(), namespace="m", separator="")
    app.mount(math_app(), namespace="m")
    with pytest.raises(ValueError, match="mounted already"):
        app.mount(math_app(), namespace="m")
    with pytest.raises(TypeError, match="rename of tool 'add'"):
        app.mount(math_app(), namespace="n", rename={"add": 3})


def test_the_clients_own_meta_goes_upstream_and_the_protocols_does_not():
    async def main():
        async with mcpfast.connect(gateway_app()) as client:
            seen = (await client.call_tool("fs_meta_seen", meta={"trace": "abc"}))["structuredContent"]
            assert seen == {"trace": "abc"}
            # A downstream progressToken is not passed on: the upstream gets the gateway's own.
            seen = (await client.call_tool("fs_meta_seen", meta={"trace": "x"},
                                           progress=lambda *args: None))["structuredContent"]
            assert seen["trace"] == "x" and "progressToken" in seen
            assert set(seen) == {"trace", "progressToken"}

    run(main())


def test_the_servers_own_tool_wins_over_a_mounted_one_of_the_same_name():
    app = Server("gateway")

    @app.tool()
    def add(a: int, b: int) -> int:
        """The gateway's own add: it multiplies."""
        return a * b

    app.mount(math_app(), namespace="")

    async def main():
        async with mcpfast.connect(app) as client:
            tools = [tool["name"] for tool in await client.list_tools()]
            assert tools == ["add"]
            assert (await client.call_tool("add", {"a": 3, "b": 4}))["structuredContent"] == {"result": 12}

    run(main())


@pytest.mark.parametrize("upstream_version", ["2024-11-05", "2025-06-18", "2026-07-28", "auto"])
def test_upstreams_of_every_era(upstream_version):
    upstream = files_app()
    app = Server("gateway")
    mounted = app.mount(upstream, namespace="fs", protocol_version=upstream_version)

    async def main():
        changed, logs, progress = [], [], []

        def sampling(params):
            return {"role": "assistant", "content": {"type": "text", "text": "hi there"}, "model": "test"}

        def elicitation(params):
            return {"action": "accept", "content": {"name": "Ada"}}

        async with mcpfast.connect(app, on_list_changed=changed.append, on_log=logs.append,
                                   sampling=sampling, elicitation=elicitation, roots=["file:///w"]) as client:
            expected = "2026-07-28" if upstream_version == "auto" else upstream_version
            assert mounted.client.protocol_version == expected
            result = await client.call_tool("fs_slow_count", {"n": 2},
                                            progress=lambda p, t, m: progress.append(p))
            assert result["content"][0]["text"] == "2" and progress == [1, 2]
            await eventually(lambda: len(logs) == 2)
            if expected >= "2025-06-18":
                asked = await client.call_tool("fs_ask_everything")
                assert asked["structuredContent"] == {"sampled": "hi there", "elicited": {"name": "Ada"},
                                                      "roots": ["file:///w"]}
            upstream.add_tool(lambda: "new", name="new_tool")
            await eventually(lambda: "tools" in changed)
            assert (await client.call_tool("fs_new_tool"))["content"][0]["text"] == "new"

    run(main())
