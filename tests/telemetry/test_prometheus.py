"""The metrics endpoint: ``mcpfast run ... --transport http --metrics`` serves Prometheus
text on the MCP port, a real Prometheus (Debian's package) scrapes it and a PromQL query
over its HTTP API counts exactly the tools/call requests made; ``metrics_path=`` in code,
and what the extra GET route answers to other methods and hosts."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

import mcpfast
from mcpfast.telemetry import PrometheusMetrics, metrics_route

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "helpers"))
from traced_app import make_app  # noqa: E402

from loop import eventually  # noqa: E402
from prometheus_server import prometheus_scraping, wait_for  # noqa: E402
from redis_server import free_port  # noqa: E402

APP = Path(__file__).parent / "traced_app.py"
ROOT = Path(__file__).resolve().parents[2]


def get(url: str, method: str = "GET", headers: dict | None = None) -> tuple[int, dict, bytes]:
    request = urllib.request.Request(url, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()


def test_prometheus_counts_the_tool_calls_made():
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    server = subprocess.Popen([sys.executable, "-m", "mcpfast", "run", str(APP), "--transport", "http",
                               "--port", str(port), "--metrics"],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        assert b"serving" in server.stderr.readline()
        calls = 7

        async def make_calls() -> None:
            async with mcpfast.connect(f"http://127.0.0.1:{port}/mcp") as client:
                for n in range(calls):
                    await client.call_tool("add", {"a": n, "b": 1})
                await client.list_tools()

        asyncio.run(make_calls())
        status, headers, body = get(f"http://127.0.0.1:{port}/metrics")
        assert status == 200 and headers["content-type"].startswith("text/plain; version=0.0.4")
        text = body.decode()
        assert re.search(r'^mcp_server_operation_duration_seconds_count\{.*gen_ai_tool_name="add".*\} 7$',
                         text, re.M), text
        with prometheus_scraping(port) as prometheus:
            wait_for(prometheus.targets_up)
            query = 'sum(mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call"})'
            result = wait_for(lambda: prometheus.query(query))
            assert float(result[0]["value"][1]) == calls
            # Per tool, with the convention's attributes as labels.
            by_tool = prometheus.query('mcp_server_operation_duration_seconds_count{gen_ai_tool_name="add"}')
            assert len(by_tool) == 1
            labels = by_tool[0]["metric"]
            assert labels["mcp_method_name"] == "tools/call"
            # Only the convention's low-cardinality attributes (each one costs on every record).
            assert set(labels) - {"__name__", "instance", "job"} == {
                "mcp_method_name", "gen_ai_tool_name", "mcp_protocol_version", "network_transport"}, labels
            assert labels["network_transport"] == "tcp"
            # The session is still open on the server (its client is gone without DELETE):
            # the gauge and the buckets are there too.
            buckets = prometheus.query('mcp_server_operation_duration_seconds_bucket{gen_ai_tool_name="add",le="+Inf"}')
            assert float(buckets[0]["value"][1]) == calls
    finally:
        server.terminate()
        server.wait(timeout=20)


def test_metrics_path_in_code_and_what_the_route_refuses():
    app = make_app()

    async def main() -> None:
        ready: asyncio.Future = asyncio.get_running_loop().create_future()
        task = asyncio.ensure_future(app.serve_http("127.0.0.1", 0, metrics_path="/custom-metrics",
                                                    ready=lambda host, port: ready.set_result(port)))
        port = await ready
        base = f"http://127.0.0.1:{port}"
        try:
            async with mcpfast.connect(f"{base}/mcp") as client:
                assert (await client.call_tool("fails"))["isError"] is True
                status, _, body = await asyncio.to_thread(get, f"{base}/custom-metrics")
                assert status == 200
                text = body.decode()
                assert re.search(r'^mcp_server_operation_duration_seconds_count\{.*error_type="tool_error".*'
                                 r'gen_ai_tool_name="fails".*\} 1$', text, re.M), text
                # Open while the client is connected: one session, one connection.
                assert re.search(r"^mcpfast_server_active_sessions 1$", text, re.M), text
                assert re.search(r"^mcpfast_server_active_connections 1$", text, re.M), text
                status, headers, body = await asyncio.to_thread(get, f"{base}/custom-metrics", "POST")
                assert status == 405 and headers["allow"] == "GET, HEAD"
                status, _, body = await asyncio.to_thread(get, f"{base}/custom-metrics", "HEAD")
                assert status == 200 and body == b""
                status, _, _ = await asyncio.to_thread(get, f"{base}/metrics")
                assert status == 404
                # The loopback server's Host rule holds for the route too (DNS rebinding).
                status, _, _ = await asyncio.to_thread(get, f"{base}/custom-metrics", "GET",
                                                       {"Host": "evil.example"})
                assert status == 421
            # The session ended with its client (DELETE): its duration recorded.
            status, _, body = await asyncio.to_thread(get, f"{base}/custom-metrics")
            text = body.decode()
            assert re.search(r"^mcpfast_server_active_sessions 0$", text, re.M), text
            assert re.search(r"^mcp_server_session_duration_seconds_count\{.*\} 1$", text, re.M), text
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    asyncio.run(main())


def test_extra_routes_are_checked():
    from mcpfast.transports.http import StreamableHTTPEndpoint

    def factory(send):  # never called: construction only
        raise AssertionError

    with pytest.raises(ValueError, match="start with '/'"):
        StreamableHTTPEndpoint(factory, extra_routes={"metrics": lambda request: (200, [], b"")})
    with pytest.raises(ValueError, match="MCP endpoint's path"):
        StreamableHTTPEndpoint(factory, extra_routes={"/mcp": lambda request: (200, [], b"")})
    with pytest.raises(TypeError, match="callable"):
        StreamableHTTPEndpoint(factory, extra_routes={"/metrics": "not a route"})


def test_label_sets_are_bounded_and_escaped():
    metrics = PrometheusMetrics(max_series=2)
    for tool in ("a", 'quote"d\nname', "c"):
        metrics.server_operation(0.015, {"mcp.method.name": "tools/call", "gen_ai.tool.name": tool})
    status, headers, body = metrics_route(metrics)(None)
    text = body.decode()
    assert status == 200
    assert 'gen_ai_tool_name="quote\\"d\\nname"' in text
    assert 'gen_ai_tool_name="c"' not in text
    assert re.search(r"^mcpfast_metrics_dropped_series_total 1$", text, re.M)
    # 0.015 s lands in the 0.02 bucket, not the 0.01 one (cumulative buckets).
    assert re.search(r'gen_ai_tool_name="a",mcp_method_name="tools/call",le="0.01"\} 0$', text, re.M)
    assert re.search(r'gen_ai_tool_name="a",mcp_method_name="tools/call",le="0.02"\} 1$', text, re.M)
    with pytest.raises(ValueError):
        PrometheusMetrics(max_series=0)


def test_the_asgi_app_serves_metrics_path():
    uvicorn = pytest.importorskip("uvicorn")
    app = make_app()

    async def main() -> None:
        config = uvicorn.Config(app.asgi_app(metrics_path="/metrics"), host="127.0.0.1", port=0,
                                log_level="error", lifespan="on")
        server = uvicorn.Server(config)
        task = asyncio.ensure_future(server.serve())
        try:
            await eventually(lambda: server.started or task.done())
            assert not task.done()
            port = server.servers[0].sockets[0].getsockname()[1]
            async with mcpfast.connect(f"http://127.0.0.1:{port}/mcp") as client:
                await client.call_tool("add", {"a": 1, "b": 1})
            status, headers, body = await asyncio.to_thread(get, f"http://127.0.0.1:{port}/metrics")
            assert status == 200 and headers["content-type"].startswith("text/plain; version=0.0.4")
            assert re.search(r'^mcp_server_operation_duration_seconds_count\{.*gen_ai_tool_name="add".*\} 1$',
                             body.decode(), re.M)
        finally:
            server.should_exit = True
            await asyncio.gather(task, return_exceptions=True)

    asyncio.run(main())


@pytest.mark.parametrize("flags, message", [
    (["--transport", "stdio", "--metrics"], "applies to the http transport"),
    (["--transport", "http", "--metrics", "metrics"], "--metrics must start with '/'"),
    (["--transport", "http", "--metrics", "/mcp"], "--metrics must differ"),
])
def test_metrics_flag_usage_errors(flags, message, capsys):
    from mcpfast import cli

    assert cli.main(["run", str(APP), *flags]) == 2
    assert message in capsys.readouterr().err


def test_metrics_path_feeds_a_telemetry_middleware_given_by_the_user():
    from mcpfast.telemetry import ServerTelemetry

    app = make_app()
    app.add_middleware(ServerTelemetry())

    async def main() -> str:
        ready: asyncio.Future = asyncio.get_running_loop().create_future()
        task = asyncio.ensure_future(app.serve_http("127.0.0.1", 0, metrics_path="/metrics",
                                                    ready=lambda host, port: ready.set_result(port)))
        port = await ready
        try:
            async with mcpfast.connect(f"http://127.0.0.1:{port}/mcp") as client:
                await client.call_tool("add", {"a": 1, "b": 1})
            return (await asyncio.to_thread(get, f"http://127.0.0.1:{port}/metrics"))[2].decode()
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    text = asyncio.run(main())
    assert re.search(r'^mcp_server_operation_duration_seconds_count\{.*gen_ai_tool_name="add".*\} 1$', text, re.M)
    assert [type(mw).__name__ for mw in app.middleware] == ["ServerTelemetry"]
