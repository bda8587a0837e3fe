"""The request pipeline: each middleware hook on each transport and era, lifespan on each
transport, the built-in middleware and the in-process client (connect(app))."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, AsyncIterator

import pytest

import mcpfast
from mcpfast import Server
from mcpfast.jsonrpc.errors import INTERNAL_ERROR, RATE_LIMITED, REQUEST_TIMEOUT, JSONRPCError
from mcpfast.server.middleware import ErrorHandling, Middleware, RateLimit, RequestLogging

sys.path.insert(0, str(Path(__file__).parent))
from middleware_app import REFUSED, make_app  # noqa: E402

APP = Path(__file__).parent / "middleware_app.py"
ROOT = Path(__file__).resolve().parents[2]
V2025 = "2025-11-25"
V2026 = "2026-07-28"
TRANSPORTS = ["in-process", "stdio", "tcp", "http", "asgi", "websocket", "legacy-sse"]


def confirm(params: Any) -> dict:
    return {"action": "accept", "content": {"confirm": True}}


@contextlib.asynccontextmanager
async def served(app: Server, transport: str) -> AsyncIterator[str]:
    """``app`` served on a loopback port; yields the URL; stops it on exit."""
    loop = asyncio.get_running_loop()
    ready: asyncio.Future = loop.create_future()

    def bound(host: str, port: int) -> None:
        ready.set_result(port)

    uvicorn_server = None
    if transport == "tcp":
        task = asyncio.ensure_future(app.serve_tcp("127.0.0.1", 0, ready=bound))
    elif transport == "websocket":
        task = asyncio.ensure_future(app.serve_websocket("127.0.0.1", 0, ready=bound))
    elif transport in ("http", "legacy-sse"):
        task = asyncio.ensure_future(app.serve_http("127.0.0.1", 0, ready=bound,
                                                    legacy_sse=transport == "legacy-sse"))
    else:
        uvicorn = pytest.importorskip("uvicorn")
        config = uvicorn.Config(app.asgi_app(), host="127.0.0.1", port=0, log_level="error", lifespan="on")
        uvicorn_server = uvicorn.Server(config)
        task = asyncio.ensure_future(uvicorn_server.serve())
        while not uvicorn_server.started:
            assert not task.done(), task
            await asyncio.sleep(0.01)
        ready.set_result(uvicorn_server.servers[0].sockets[0].getsockname()[1])
    port = await asyncio.wait_for(ready, 30)
    scheme = {"tcp": "tcp", "websocket": "ws"}.get(transport, "http")
    path = {"tcp": "", "legacy-sse": "/sse"}.get(transport, "/mcp")
    try:
        yield f"{scheme}://127.0.0.1:{port}{path}"
    finally:
        if uvicorn_server is not None:
            uvicorn_server.should_exit = True
            await task
        else:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


@contextlib.asynccontextmanager
async def client_of(app: Server, transport: str, version: str, eager: bool = False) -> AsyncIterator[Any]:
    options: dict[str, Any] = {"protocol_version": version, "elicitation": confirm}
    if version == V2026:
        options["tasks"] = True
    if transport == "in-process":
        async with mcpfast.connect(app, **options) as client:
            yield client
    elif transport == "stdio":
        env = {"PYTHONPATH": str(ROOT), "MIDDLEWARE_EAGER": "1" if eager else "0"}
        async with mcpfast.connect([sys.executable, str(APP)], env=env, **options) as client:
            yield client
    else:
        async with served(app, transport) as url, mcpfast.connect(url, **options) as client:
            yield client


def text_of(result: dict) -> list[str]:
    return [item["text"] for item in result["content"]]


@pytest.mark.parametrize("eager", [False, True], ids=["task", "eager"])
@pytest.mark.parametrize("version", [V2025, V2026])
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_every_hook_on_every_transport_and_era(transport, version, eager):
    if transport == "legacy-sse" and version == V2026:
        pytest.skip("the 2024-11-05 HTTP+SSE transport carries the handshake versions only")
    app = make_app(eager)

    async def main() -> dict:
        async with client_of(app, transport, version, eager) as client:
            assert client.instructions == ("from on_discover" if version == V2026 else "from on_initialize")
            # Params changed before the handler, the result after it.
            assert text_of(await client.call_tool("echo", {"text": "hi"})) == ["HI", "after"]
            with pytest.raises(JSONRPCError) as refused:
                await client.call_tool("refused")
            assert (refused.value.code, refused.value.message, refused.value.data) == (
                REFUSED, "Refused by policy", {"tool": "refused"})
            assert text_of(await client.call_tool("answered")) == ["answered by the middleware"]
            with pytest.raises(JSONRPCError) as broken:
                await client.call_tool("broken")
            assert (broken.value.code, broken.value.message) == (INTERNAL_ERROR, "Internal error")
            assert "secret" not in repr((broken.value.message, broken.value.data))
            # The connection goes on after a middleware failed.
            names = [tool["name"] for tool in await client.list_tools()]
            assert "echo" in names and "hidden" not in names
            read = await client.read_resource("memo://note")
            contents = read["contents"] if isinstance(read, dict) else read
            assert contents[0]["text"] == "mw:note"
            assert (await client.get_prompt("greet", {"who": "ada"}))["description"] == "through the middleware"
            # A request asking the client: under 2026-07-28 the retry passes the chain again.
            assert text_of(await client.call_tool("asks")) == ["confirmed True"]
            # A task-augmented call, and the request that fetches the task's result.
            if version == V2026:
                assert text_of(await client.call_tool("slow")) == ["done as a task"]
            else:
                created = await client.request("tools/call", {"name": "slow", "arguments": {},
                                                              "task": {"ttl": 60000}})
                task_id = created["task"]["taskId"]
                assert text_of(await client.request("tasks/result", {"taskId": task_id})) == ["done as a task"]
            result = await client.call_tool("seen")
            return result.get("structuredContent") or json.loads(result["content"][0]["text"])

    seen = asyncio.run(asyncio.wait_for(main(), 90))
    calls = seen["seen"]
    assert calls.count("tools/call asks") == (2 if version == V2026 else 1)
    assert "tools/call slow" in calls
    assert any(method.startswith("tasks/") for method in calls)
    assert calls[0] == ("server/discover" if version == V2026 else "initialize")
    if version == V2025:
        assert seen["notifications"][0] == "notifications/initialized"
    if transport != "stdio":
        # The lifespan ended with the serving (or the in-process connection).
        assert [state["stopped"] for state in app.lifespans] == [True]  # type: ignore[attr-defined]


def test_without_middleware_connections_dispatch_through_the_router_itself():
    app = Server("plain")
    assert app.dispatch_router is app.router
    connection = app.connect(lambda frame: None)
    assert connection.session.router is app.router
    connection.close()
    with_mw = make_app()
    connection = with_mw.connect(lambda frame: None)
    assert connection.session.router is with_mw.dispatch_router is not with_mw.router
    connection.close()


def test_middleware_is_checked_and_fixed_once_the_server_serves():
    app = Server("checked")
    with pytest.raises(TypeError, match="async callable"):
        app.add_middleware(lambda ctx, call_next: call_next(ctx))
    with pytest.raises(TypeError, match="callable"):
        Server("checked", middleware=[42])

    async def passing(ctx: Any, call_next: Any) -> Any:
        return await call_next(ctx)

    app.add_middleware(passing)
    app.connect(lambda frame: None).close()
    with pytest.raises(RuntimeError, match="before the server serves"):
        app.add_middleware(passing)
    assert app.middleware == (passing,)


def test_plain_callables_run_outermost_first_and_see_unknown_methods():
    order: list[str] = []

    def tagged(tag: str) -> Any:
        async def middleware(ctx: Any, call_next: Any) -> Any:
            order.append(f"{tag}>{ctx.method}")
            try:
                return await call_next(ctx)
            finally:
                order.append(f"<{tag}")

        return middleware

    app = Server("order", middleware=[tagged("a")])
    app.add_middleware(tagged("b"))

    @app.tool()
    def one() -> int:
        return 1

    async def main() -> None:
        async with mcpfast.connect(app) as client:
            await client.ping()  # notifications/initialized, sent before, is handled by then
            order.clear()
            await client.call_tool("one")
            assert order == ["a>tools/call", "b>tools/call", "<b", "<a"]
            order.clear()
            with pytest.raises(JSONRPCError) as unknown:
                await client.request("no/such", {})
            assert unknown.value.code == -32601 and unknown.value.data == {"method": "no/such"}
            assert order == ["a>no/such", "b>no/such", "<b", "<a"]

    asyncio.run(main())


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_rate_limit_refuses_with_retry_after_per_tool_and_refills_on_the_clock():
    clock = FakeClock()
    app = Server("limited", middleware=[RateLimit(rate=1, burst=2, clock=clock)])
    calls: list[str] = []

    @app.tool()
    def work() -> str:
        calls.append("work")
        return "ok"

    @app.tool()
    def other() -> str:
        return "ok"

    async def main() -> None:
        async with mcpfast.connect(app) as client:
            await client.call_tool("work")
            await client.call_tool("work")
            with pytest.raises(JSONRPCError) as limited:
                await client.call_tool("work")
            assert limited.value.code == RATE_LIMITED
            assert limited.value.data == {"retryAfter": 1.0, "limit": {"rate": 1.0, "burst": 2.0}}
            assert "Rate limit exceeded" in limited.value.message
            assert calls == ["work", "work"]  # the refused call never ran
            # Another tool has its own bucket; listing is not limited.
            await client.call_tool("other")
            await client.list_tools()
            clock.now += 0.5
            with pytest.raises(JSONRPCError) as again:
                await client.call_tool("work")
            assert again.value.data["retryAfter"] == 0.5
            clock.now += 0.5
            assert text_of(await client.call_tool("work")) == ["ok"]

    asyncio.run(main())


def test_rate_limit_keys_are_bounded_and_unknown_tools_share_one_bucket():
    clock = FakeClock()
    limit = RateLimit(rate=1, burst=1, max_keys=2, clock=clock)
    assert limit.retry_after("a") == 0.0 and limit.retry_after("a") == 1.0
    limit.retry_after("b")
    limit.retry_after("c")  # "a", used least recently, is dropped
    assert limit.retry_after("a") == 0.0
    app = Server("limited", middleware=[limit])

    async def main() -> None:
        async with mcpfast.connect(app) as client:
            for name in ("x1", "x2"):
                with pytest.raises(JSONRPCError) as failed:
                    await client.request("tools/call", {"name": name})
                # Both names land in the "?" bucket: the second is refused by the limiter.
                assert failed.value.code == (-32602 if name == "x1" else RATE_LIMITED)

    asyncio.run(main())
    for bad in ({"rate": 0}, {"rate": 1, "burst": 0.5}, {"rate": float("inf")}, {"rate": 1, "max_keys": 0}):
        with pytest.raises(ValueError):
            RateLimit(**bad)


def test_request_logging_records_method_target_outcome_and_duration(caplog):
    clock = FakeClock()

    def ticking() -> float:
        clock.now += 0.25
        return clock.now

    app = Server("logged", middleware=[RequestLogging(clock=ticking)])

    @app.tool()
    def fails() -> str:
        raise ValueError("no")

    async def main() -> None:
        async with mcpfast.connect(app, name="logger-test") as client:
            await client.call_tool("fails")
            with pytest.raises(JSONRPCError):
                await client.call_tool("missing")

    with caplog.at_level(logging.INFO, logger="mcpfast.requests"):
        asyncio.run(main())
    records = [r for r in caplog.records if r.name == "mcpfast.requests" and r.mcp_method == "tools/call"]
    assert [(r.mcp_target, r.mcp_outcome, r.mcp_duration_ms) for r in records] == [
        ("fails", "tool error", 250.0), ("missing", "error -32602", 250.0)]
    assert records[0].mcp_client == "logger-test" and records[0].mcp_subject is None
    assert records[0].getMessage() == "tools/call fails tool error 250.000ms"


def test_error_handling_maps_types_and_keeps_details_on_the_server(caplog):
    class Denied(Exception):
        pass

    class Raising(Middleware):
        async def on_call_tool(self, ctx: Any, call_next: Any) -> Any:
            if ctx.params["name"] == "denied":
                raise Denied("token abc123 denied")
            raise TimeoutError("upstream db-7 at 10.0.0.7 timed out")

    app = Server("errors", middleware=[ErrorHandling({TimeoutError: REQUEST_TIMEOUT}), Raising()])

    @app.tool()
    def denied() -> str:
        return "never"

    @app.tool()
    def slow_db() -> str:
        return "never"

    async def main() -> tuple[JSONRPCError, JSONRPCError]:
        async with mcpfast.connect(app) as client:
            with pytest.raises(JSONRPCError) as mapped:
                await client.call_tool("slow_db")
            with pytest.raises(JSONRPCError) as internal:
                await client.call_tool("denied")
            return mapped.value, internal.value

    with caplog.at_level(logging.ERROR, logger="mcpfast.server"):
        mapped, internal = asyncio.run(main())
    assert (mapped.code, mapped.message, mapped.data) == (REQUEST_TIMEOUT, "Request timeout",
                                                          {"type": "TimeoutError"})
    assert (internal.code, internal.message, internal.data) == (INTERNAL_ERROR, "Internal error", None)
    # The details and tracebacks are in the server's log only.
    assert "abc123" in caplog.text and "10.0.0.7" in caplog.text and "Traceback" in caplog.text
    with pytest.raises(TypeError, match="Exception subclasses"):
        ErrorHandling({"TimeoutError": REQUEST_TIMEOUT})  # type: ignore[dict-item]


def test_lifespan_value_and_errors():
    entered: list[str] = []

    @contextlib.asynccontextmanager
    async def lifespan(app: Server) -> Any:
        entered.append("in")
        yield {"pool": "db"}
        entered.append("out")

    app = Server("life", lifespan=lifespan)

    @app.tool()
    def pool(ctx: mcpfast.Context) -> str:
        return ctx.lifespan["pool"]

    with pytest.raises(RuntimeError, match="lifespan of server 'life' is not running"):
        app.lifespan_state  # noqa: B018

    async def main() -> None:
        async with app.running():
            # An in-process client of a served server shares its lifespan.
            async with mcpfast.connect(app) as client:
                assert text_of(await client.call_tool("pool")) == ["db"]
            assert entered == ["in"]
        assert entered == ["in", "out"]

    asyncio.run(main())
    assert Server("none").lifespan_state is None

    @contextlib.asynccontextmanager
    async def failing(app: Server) -> Any:
        raise OSError("database unreachable")
        yield

    async def refused() -> None:
        with pytest.raises(OSError, match="database unreachable"):
            await mcpfast.connect(Server("down", lifespan=failing))

    asyncio.run(refused())
    with pytest.raises(TypeError, match="lifespan must be callable"):
        Server("bad", lifespan=42)  # type: ignore[arg-type]


def test_in_process_client_goes_through_the_framer_limits():
    app = Server("framed")

    @app.tool()
    def big(n: int) -> str:
        return "x" * n

    async def main() -> None:
        async with mcpfast.connect(app, max_frame_size=4096) as client:
            assert len(text_of(await client.call_tool("big", {"n": 100}))[0]) == 100
            with pytest.raises(JSONRPCError) as too_large:
                await client.call_tool("big", {"n": 10000})
            assert too_large.value.code == -32012
            assert text_of(await client.call_tool("big", {"n": 1})) == ["x"]
        with pytest.raises(TypeError, match="args apply"):
            mcpfast.connect(app, ["x"])

    asyncio.run(main())


def test_run_rate_limit_flag_limits_each_caller_and_tool():
    async def main() -> None:
        command = [sys.executable, "-m", "mcpfast", "run", f"{APP}:app", "--rate-limit", "0.01:2"]
        async with mcpfast.connect(command, env={"PYTHONPATH": str(ROOT)}) as client:
            for _ in range(2):
                assert text_of(await client.call_tool("echo", {"text": "a"})) == ["A", "after"]
            with pytest.raises(JSONRPCError) as limited:
                await client.call_tool("echo", {"text": "a"})
            assert limited.value.code == RATE_LIMITED and limited.value.data["retryAfter"] > 0

    asyncio.run(asyncio.wait_for(main(), 60))
    done = subprocess.run([sys.executable, "-m", "mcpfast", "run", f"{APP}:app", "--rate-limit", "fast"],
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2 and "--rate-limit takes RATE[:BURST]" in done.stderr


WORKERS_APP = '''
import contextlib, os, pathlib
from mcpfast import Context, Server

FOLDER = pathlib.Path(os.environ["LIFESPAN_DIR"])


@contextlib.asynccontextmanager
async def lifespan(app):
    (FOLDER / f"{os.getpid()}.in").write_text("in")
    yield {"pid": os.getpid()}
    (FOLDER / f"{os.getpid()}.out").write_text("out")


app = Server("lifespans", lifespan=lifespan)


@app.tool()
def pid(ctx: Context) -> int:
    return ctx.lifespan["pid"]
'''


def test_each_worker_enters_and_exits_the_lifespan(tmp_path):
    script = tmp_path / "app.py"
    script.write_text(WORKERS_APP)
    folder = tmp_path / "lifespans"
    folder.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LIFESPAN_DIR": str(folder)}
    process = subprocess.Popen(
        [sys.executable, "-m", "mcpfast", "run", f"{script}:app", "--transport", "http", "--port", "0",
         "--workers", "2", "--stateless"], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        for line in process.stderr:
            found = re.search(r"pids ([\d, ]+)\) listening on 127\.0\.0\.1:(\d+)", line)
            if found:
                break
        else:
            raise AssertionError("the workers never listened")
        port, pids = int(found.group(2)), sorted(int(p) for p in found.group(1).split(", "))
        # Each worker entered its lifespan before it announced itself ready.
        assert sorted(int(path.stem) for path in folder.glob("*.in")) == pids

        async def ask() -> int:
            async with mcpfast.connect(f"http://127.0.0.1:{port}/mcp") as client:
                return int(text_of(await client.call_tool("pid"))[0])

        assert asyncio.run(asyncio.wait_for(ask(), 60)) in pids
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert sorted(int(path.stem) for path in folder.glob("*.out")) == pids


def test_eager_chains_answer_inline_in_a_context_of_their_own():
    import contextvars

    marker: contextvars.ContextVar[str] = contextvars.ContextVar("marker", default="unset")

    class Eager(Middleware):
        eager = True

        async def on_call_tool(self, ctx: Any, call_next: Any) -> Any:
            marker.set(ctx.params["name"])
            if ctx.params["name"] == "waits":
                await asyncio.sleep(0)
            return {**await call_next(ctx), "_meta": {"marker": marker.get()}}

    async def plain(ctx: Any, call_next: Any) -> Any:
        return await call_next(ctx)

    def app_with(*middleware: Any) -> Server:
        app = Server("eager", middleware=middleware)

        @app.tool()
        def now() -> str:
            return "now"

        @app.tool()
        async def waits() -> str:
            await asyncio.sleep(0)
            return "later"

        return app

    def call(i: int, name: str) -> bytes:
        return json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                           "params": {"name": name, "arguments": {}}}).encode()

    async def check(middleware: tuple[Any, ...], inline: bool) -> None:
        from loop import until

        out: list[bytes] = []
        connection = app_with(*middleware).connect(out.append)
        connection.feed(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": V2025, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}).encode())
        await until(lambda: len(out) == 1)
        connection.feed(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        connection.feed(call(1, "now"))
        # Every middleware eager: answered where the frame was read, no task.
        assert len(out) == (2 if inline else 1)
        await until(lambda: len(out) == 2)
        connection.feed(call(2, "waits"))
        await until(lambda: len(out) == 3)
        answers = [json.loads(frame) for frame in out[1:]]
        assert [a["result"]["_meta"]["marker"] for a in answers] == ["now", "waits"]
        assert [a["result"]["content"][0]["text"] for a in answers] == ["now", "later"]
        # What the chain set stayed in its own context.
        assert marker.get() == "unset"
        connection.close()

    async def main() -> None:
        await check((Eager(),), True)
        await check((Eager(), plain), False)

    asyncio.run(main())


def test_rate_limit_shared_through_redis_by_two_processes():
    from redis_server import redis_server

    async def main(url: str) -> None:
        command = [sys.executable, "-m", "mcpfast", "run", f"{APP}:app", "--redis", url, "--rate-limit", "0.001:3"]
        env = {"PYTHONPATH": str(ROOT)}
        async with mcpfast.connect(command, env=env) as first, mcpfast.connect(command, env=env) as second:
            # One bucket of 3 for the caller and tool, whichever process serves the call.
            await first.call_tool("echo", {"text": "a"})
            await second.call_tool("echo", {"text": "a"})
            await first.call_tool("echo", {"text": "a"})
            for client in (second, first):
                with pytest.raises(JSONRPCError) as limited:
                    await client.call_tool("echo", {"text": "a"})
                assert limited.value.code == RATE_LIMITED and limited.value.data["retryAfter"] > 900
            # Another tool has its own bucket.
            assert text_of(await second.call_tool("answered")) == ["answered by the middleware"]

    with redis_server() as redis:
        asyncio.run(asyncio.wait_for(main(redis.url), 90))


def test_redis_buckets_refill_expire_and_let_calls_through_while_redis_is_down(caplog):
    from mcpfast.scaleout.redis_rate_limit import RedisBuckets
    from redis_server import redis_server

    async def main(redis: Any) -> None:
        import redis.asyncio as redis_asyncio

        buckets = RedisBuckets(redis.url)
        assert [await buckets.take(("ada", "echo"), 0.001, 2) for _ in range(3)][:2] == [0.0, 0.0]
        assert await buckets.take(("ada", "echo"), 0.001, 2) > 900
        assert await buckets.take(("bob", "echo"), 0.001, 2) == 0.0
        # A fast bucket: refilled between two takes (1,000 tokens a second).
        assert await buckets.take("fast", 1000, 1) == 0.0
        direct = redis_asyncio.Redis.from_url(redis.url)
        key = buckets.redis_key(("ada", "echo"))
        assert key == 'mcpfast:ratelimit:["ada", "echo"]'
        # Every bucket expires once it would be full again (plus a second).
        assert 0 < await direct.pttl(key) <= 2000 * 1000 + 1000
        await direct.aclose()
        redis.stop()
        with caplog.at_level(logging.WARNING, logger="mcpfast.server"):
            assert await buckets.take(("ada", "echo"), 0.001, 2) == 0.0
            assert await buckets.take(("ada", "echo"), 0.001, 2) == 0.0
        warnings = [r.getMessage() for r in caplog.records if "RedisBuckets" in r.getMessage()]
        assert len(warnings) == 1 and "not limited" in warnings[0]
        redis.start()
        assert await buckets.take(("carol", "echo"), 0.001, 1) == 0.0
        assert await buckets.take(("carol", "echo"), 0.001, 1) > 900
        await buckets.aclose()

    with redis_server() as redis:
        asyncio.run(asyncio.wait_for(main(redis), 60))


def test_tools_disabled_and_enabled_by_name_and_tag_with_one_list_changed_each():
    app = Server("visible")

    @app.tool(tags={"admin"})
    def drop() -> str:
        return "dropped"

    @app.tool(tags=("admin", "danger"))
    def wipe() -> str:
        return "wiped"

    @app.tool()
    def read() -> str:
        return "read"

    changes: list[str] = []

    async def main() -> None:
        from loop import until

        async with mcpfast.connect(app, on_list_changed=changes.append) as client:
            await client.ping()
            assert app.disable_tools(tags={"admin"}) == ["drop", "wipe"]
            await until(lambda: changes == ["tools"])
            assert [tool["name"] for tool in await client.list_tools()] == ["read"]
            with pytest.raises(JSONRPCError) as hidden:
                await client.call_tool("drop")
            assert hidden.value.code == -32602 and hidden.value.data == {"tool": "drop"}
            assert sorted(app.disabled_tools) == ["drop", "wipe"] and list(app.tools) == ["read"]
            # Disabling again changes nothing (and tells nobody).
            assert app.disable_tools("drop") == []
            assert app.enable_tools("wipe") == ["wipe"]
            await until(lambda: changes == ["tools", "tools"])
            assert text_of(await client.call_tool("wipe")) == ["wiped"]
            assert app.enable_tools(tags="admin") == ["drop"]
            await until(lambda: len(changes) == 3)
            assert sorted(tool["name"] for tool in await client.list_tools()) == ["drop", "read", "wipe"]
            app.disable_tools("read")
            assert app.remove_tool("read").name == "read" and "read" not in app.disabled_tools

    asyncio.run(main())
    with pytest.raises(KeyError, match="no tool named 'nope'"):
        app.disable_tools("nope")
    with pytest.raises(TypeError, match="tags must be non-empty strs"):
        app.add_tool(lambda: 1, name="bad", tags={""})


def test_a_direct_route_answers_in_the_chains_place_unless_a_middleware_outside_hooks_the_method():
    class Direct(Middleware):
        """Answers the tool "fast" itself in one call; everything else by the chain."""

        eager = True

        def __init__(self) -> None:
            self.direct: list[Any] = []

        async def on_call_tool(self, ctx: Any, call_next: Any) -> Any:
            result = await call_next(ctx)
            return {**result, "_meta": {"via": "chain"}}

        def direct_route(self, method: str, fallback: Any) -> Any:
            if method != "tools/call":
                return None

            def call_tool(params: Any, ctx: Any) -> Any:
                if params.get("name") != "fast":
                    return fallback(params, ctx)
                self.direct.append(ctx.request_id)
                return {"content": [{"type": "text", "text": "direct"}]}

            return call_tool

    class Seeing(Middleware):
        eager = True

        def __init__(self) -> None:
            self.seen: list[str] = []

    class OnCallTool(Seeing):
        async def on_call_tool(self, ctx: Any, call_next: Any) -> Any:
            self.seen.append(ctx.method)
            return await call_next(ctx)

    class OnListTools(Seeing):
        async def on_list_tools(self, ctx: Any, call_next: Any) -> Any:
            self.seen.append(ctx.method)
            return await call_next(ctx)

    async def plain(ctx: Any, call_next: Any) -> Any:
        return await call_next(ctx)

    async def texts(*middleware: Any) -> list[Any]:
        app = Server("direct", middleware=middleware)

        @app.tool()
        def fast() -> str:
            return "by the tool"

        @app.tool()
        def other() -> str:
            return "other"

        async with mcpfast.connect(app) as client:
            out = []
            for name in ("fast", "other"):
                result = await client.call_tool(name)
                out.append((result["content"][0]["text"], (result.get("_meta") or {}).get("via")))
            return out

    async def main() -> None:
        direct = Direct()
        # Outermost hooking tools/call: "fast" in one call, "other" by the whole chain.
        assert await texts(direct) == [("direct", None), ("other", "chain")]
        assert len(direct.direct) == 1
        # One outside that hooks another method only, or one inside (skipped with the
        # rest of the chain by the direct answer): the direct route still.
        lists, inner = OnListTools(), OnCallTool()
        assert await texts(lists, direct, inner) == [("direct", None), ("other", "chain")]
        assert inner.seen == ["tools/call"] and len(direct.direct) == 2
        # One outside that hooks tools/call, or a plain callable: the chain for every call.
        outer = OnCallTool()
        for outside in (outer, plain):
            assert await texts(outside, direct) == [("by the tool", "chain"), ("other", "chain")]
        assert outer.seen == ["tools/call", "tools/call"] and len(direct.direct) == 2

    asyncio.run(main())


def test_around_routes_wrap_the_rest_in_plain_calls_and_compose_with_direct_routes():
    from mcpfast.jsonrpc.driven import DrivenCall, driven_future

    class Around(Middleware):
        """Records each call it wraps and what came back (result, awaitable, exception)."""

        eager = True

        def __init__(self, name: str) -> None:
            self.name = name
            self.seen: list[tuple[str, Any, str]] = []
            self.chained: list[str] = []

        async def on_request(self, ctx: Any, call_next: Any) -> Any:
            self.chained.append(ctx.method)
            return await call_next(ctx)

        def around_route(self, method: str, request: bool, inner: Any) -> Any:
            if not request:
                return None

            def observed(params: Any, ctx: Any) -> Any:
                try:
                    result = inner(params, ctx)
                except JSONRPCError as exc:
                    self.seen.append((method, ctx.request_id, f"error {exc.code}"))
                    raise
                if type(result) is DrivenCall:
                    result.observe(lambda who, value, exc: self.seen.append((method, who, "driven")), ctx.request_id)
                    return result
                if asyncio.iscoroutine(result):
                    async def later() -> Any:
                        value = await result
                        self.seen.append((method, ctx.request_id, "awaited"))
                        return value

                    return later()
                self.seen.append((method, ctx.request_id, "plain"))
                return result

            return observed

    class Forwarding(Middleware):
        """A direct route answering "fwd" through a future (as the gateway's does)."""

        eager = True

        async def on_call_tool(self, ctx: Any, call_next: Any) -> Any:
            return await call_next(ctx)

        def direct_route(self, method: str, fallback: Any) -> Any:
            def call_tool(params: Any, ctx: Any) -> Any:
                if params.get("name") != "fwd":
                    return fallback(params, ctx)
                future = asyncio.get_running_loop().create_future()
                asyncio.get_running_loop().call_soon(future.set_result, {"content": [{"type": "text",
                                                                                        "text": "forwarded"}]})
                return driven_future(future, lambda done, _: done.result())

            return call_tool if method == "tools/call" else None

    async def outer_hook(ctx: Any, call_next: Any) -> Any:
        return await call_next(ctx)

    async def run(*middleware: Any) -> list[str]:
        app = Server("around", middleware=middleware)

        @app.tool()
        def now() -> str:
            return "now"

        @app.tool()
        async def waits() -> str:
            await asyncio.sleep(0)
            return "later"

        @app.tool()
        def fwd() -> str:
            return "not forwarded"

        async with mcpfast.connect(app) as client:
            texts = [(await client.call_tool(name))["content"][0]["text"] for name in ("now", "waits", "fwd")]
            with pytest.raises(JSONRPCError) as refused:
                await client.call_tool("missing")
            assert refused.value.code == -32602
            return texts

    async def main() -> None:
        # Outermost: every request through the around route, the chain's hook never linked.
        first, second = Around("a"), Around("b")
        assert await run(first, second, Forwarding()) == ["now", "later", "forwarded"]
        calls = [entry for entry in first.seen if entry[0] == "tools/call"]
        assert [outcome for _, _, outcome in calls] == ["plain", "awaited", "driven", "error -32602"]
        # The inner around route saw the same calls (the direct one included: a DrivenCall).
        assert [e[2] for e in second.seen if e[0] == "tools/call"] == ["plain", "awaited", "driven", "error -32602"]
        assert first.chained == [] and second.chained == []
        # Behind a plain callable (it sees every message): the chain, hooks and all.
        third = Around("c")
        assert await run(outer_hook, third) == ["now", "later", "not forwarded"]
        assert third.seen == [] and third.chained.count("tools/call") == 4

    asyncio.run(main())
