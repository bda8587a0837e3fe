"""Mounting over real transports: a command over stdio and a Streamable HTTP URL, beside
an in-process Server, used through one gateway."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import mcpfast
from mcpfast import Server

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from gateway_apps import files_app, math_app  # noqa: E402


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 60))


async def serve_http(app: Server) -> tuple[str, asyncio.Task]:
    bound: asyncio.Future = asyncio.get_running_loop().create_future()
    task = asyncio.ensure_future(app.serve_http("127.0.0.1", 0, ready=lambda h, p: bound.set_result(p)))
    port = await bound
    return f"http://127.0.0.1:{port}/mcp", task


def test_stdio_http_and_in_process_upstreams_side_by_side():
    async def main():
        http_upstream = math_app()
        url, served = await serve_http(http_upstream)
        try:
            app = Server("gateway")
            app.mount([sys.executable, str(HERE / "gateway_apps.py"), "files"], namespace="fs",
                      env={"GATEWAY_TEST": "1"}, cwd=str(HERE))
            app.mount(url, namespace="web")
            app.mount(files_app("local"), namespace="local", allow=["read_file"])
            async with mcpfast.connect(app) as client:
                names = {tool["name"] for tool in await client.list_tools()}
                assert {"fs_read_file", "web_add", "local_read_file"} <= names
                assert "local_delete_file" not in names
                assert (await client.call_tool("web_add", {"a": 20, "b": 22}))["structuredContent"] == {"result": 42}
                result = await client.call_tool("fs_read_file", {"path": "/etc"})
                assert result["content"][0]["text"] == "contents of /etc"
                motd = await client.read_resource("file:///etc/motd")
                assert motd["contents"][0]["text"] == "hello from files"
                # 64 calls in flight over the shared sessions, answers matched to callers.
                results = await asyncio.gather(*(client.call_tool("web_add", {"a": i, "b": 1})
                                                 for i in range(64)))
                assert [r["structuredContent"]["result"] for r in results] == [i + 1 for i in range(64)]
                # The HTTP upstream saw one session, not one per call.
                assert len(http_upstream.connections) == 1
        finally:
            served.cancel()
            await asyncio.gather(served, return_exceptions=True)

    run(main())


async def serve(app: Server, kind: str) -> tuple[str, asyncio.Task]:
    bound: asyncio.Future = asyncio.get_running_loop().create_future()

    def ready(host, port):
        bound.set_result(port)

    if kind == "tcp":
        task = asyncio.ensure_future(app.serve_tcp("127.0.0.1", 0, ready=ready))
        return f"tcp://127.0.0.1:{await bound}", task
    if kind == "websocket":
        task = asyncio.ensure_future(app.serve_websocket("127.0.0.1", 0, ready=ready))
        return f"ws://127.0.0.1:{await bound}/mcp", task
    task = asyncio.ensure_future(app.serve_http("127.0.0.1", 0, ready=ready, legacy_sse=True))
    return f"http://127.0.0.1:{await bound}/sse", task


def test_tcp_websocket_and_legacy_sse_upstreams():
    async def main():
        upstreams = {kind: math_app() for kind in ("tcp", "websocket", "sse")}
        served = {kind: await serve(app, kind) for kind, app in upstreams.items()}
        try:
            app = Server("gateway")
            for kind, (url, _) in served.items():
                app.mount(url, namespace=kind)
            async with mcpfast.connect(app) as client:
                names = {tool["name"] for tool in await client.list_tools()}
                assert names == {"tcp_add", "websocket_add", "sse_add"}
                for n, kind in enumerate(served):
                    result = await client.call_tool(f"{kind}_add", {"a": n, "b": 10})
                    assert result["structuredContent"] == {"result": n + 10}
                for kind, upstream in upstreams.items():
                    assert len(upstream.connections) == 1, kind
        finally:
            for _, task in served.values():
                task.cancel()
            await asyncio.gather(*(task for _, task in served.values()), return_exceptions=True)

    run(main())


def test_a_stateless_http_upstream():
    async def main():
        upstream = math_app()
        bound: asyncio.Future = asyncio.get_running_loop().create_future()
        served = asyncio.ensure_future(upstream.serve_http("127.0.0.1", 0, stateless=True, json_response=True,
                                                           ready=lambda h, p: bound.set_result(p)))
        try:
            app = Server("gateway")
            app.mount(f"http://127.0.0.1:{await bound}/mcp", namespace="calc")
            async with mcpfast.connect(app) as client:
                results = await asyncio.gather(*(client.call_tool("calc_add", {"a": i, "b": i}) for i in range(32)))
                assert [r["structuredContent"]["result"] for r in results] == [2 * i for i in range(32)]
        finally:
            served.cancel()
            await asyncio.gather(served, return_exceptions=True)

    run(main())
