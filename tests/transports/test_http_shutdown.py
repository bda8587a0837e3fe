"""Graceful shutdown of mcpfast's HTTP server: requests in progress finish and are
answered, nothing new is taken, sessions end; SIGTERM does the same for `mcpfast run`."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mcpfast import Server, connect
from mcpfast.jsonrpc import JSONRPCError


def make_app(release: asyncio.Event, started: asyncio.Event, cancelled: list) -> Server:
    app = Server("shutdown")

    @app.tool()
    async def wait_for_release() -> str:
        started.set()
        try:
            await release.wait()
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return "finished"

    @app.tool()
    def echo(text: str) -> str:
        return text

    return app


async def start(app: Server, **options) -> tuple[asyncio.Task, str]:
    ready: asyncio.Future = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(app.serve_http("127.0.0.1", 0, ready=lambda h, p: ready.set_result(p),
                                              **options))
    port = await ready
    return task, f"http://127.0.0.1:{port}/mcp"


def test_a_request_in_progress_is_answered_before_the_server_stops():
    async def main():
        release, started, cancelled = asyncio.Event(), asyncio.Event(), []
        app = make_app(release, started, cancelled)
        server, url = await start(app)
        async with connect(url) as client:
            call = asyncio.create_task(client.call_tool("wait_for_release", {}))
            await started.wait()
            server.cancel()  # shutdown begins while the tool runs
            await asyncio.sleep(0.05)
            assert not server.done()
            # The listening socket is closed: no new connections.
            port = int(url.rsplit(":", 1)[1].split("/")[0])
            with pytest.raises(OSError):
                await asyncio.open_connection("127.0.0.1", port)
            release.set()
            result = await call
            assert result["content"][0]["text"] == "finished"
            await asyncio.wait_for(asyncio.gather(server, return_exceptions=True), 10)
            assert cancelled == []
            # The session has ended with the server: later calls fail, they do not hang.
            with pytest.raises((JSONRPCError, ConnectionError)):
                await client.call_tool("echo", {"text": "x"})

    asyncio.run(main())


def test_past_the_shutdown_timeout_requests_are_cancelled():
    async def main():
        release, started, cancelled = asyncio.Event(), asyncio.Event(), []
        app = make_app(release, started, cancelled)
        server, url = await start(app, shutdown_timeout=0.1)
        async with connect(url) as client:
            call = asyncio.create_task(client.call_tool("wait_for_release", {}))
            await started.wait()
            server.cancel()
            await asyncio.wait_for(asyncio.gather(server, return_exceptions=True), 10)
            assert cancelled == [True]
            with pytest.raises((JSONRPCError, ConnectionError)):
                await asyncio.wait_for(call, 10)

    asyncio.run(main())


def test_a_second_cancel_skips_the_wait():
    async def main():
        release, started, cancelled = asyncio.Event(), asyncio.Event(), []
        app = make_app(release, started, cancelled)
        server, url = await start(app, shutdown_timeout=None)
        async with connect(url) as client:
            call = asyncio.create_task(client.call_tool("wait_for_release", {}))
            await started.wait()
            server.cancel()
            await asyncio.sleep(0.05)
            assert not server.done()
            server.cancel()
            await asyncio.wait_for(asyncio.gather(server, return_exceptions=True), 10)
            assert cancelled == [True]
            call.cancel()
            await asyncio.gather(call, return_exceptions=True)

    asyncio.run(main())


def test_bad_shutdown_timeout_is_refused():
    async def main():
        app = make_app(asyncio.Event(), asyncio.Event(), [])
        with pytest.raises(ValueError, match="shutdown_timeout"):
            await app.serve_http("127.0.0.1", 0, shutdown_timeout=-1)

    asyncio.run(main())


SERVER = textwrap.dedent('''
    import asyncio, sys
    from mcpfast import Server

    app = Server("sigterm")

    @app.tool()
    async def slow() -> str:
        print("started", file=sys.stderr, flush=True)
        await asyncio.sleep(0.5)
        return "done"
''')


def test_sigterm_stops_mcpfast_run_gracefully(tmp_path: Path):
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    process = subprocess.Popen(
        [sys.executable, "-m", "mcpfast", "run", str(script), "--transport", "http", "--port", "0"],
        stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        assert "serving" in line, line
        url = line.strip().rsplit(" ", 1)[1]

        async def main():
            async with connect(url) as client:
                call = asyncio.create_task(client.call_tool("slow", {}))
                while "started" not in await asyncio.to_thread(process.stderr.readline):
                    pass
                process.send_signal(signal.SIGTERM)
                result = await call
                assert result["content"][0]["text"] == "done"

        asyncio.run(main())
        assert process.wait(timeout=20) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_listen_streams_end_gracefully_when_the_server_shuts_down():
    async def main():
        release, started, cancelled = asyncio.Event(), asyncio.Event(), []
        app = make_app(release, started, cancelled)
        server, url = await start(app, shutdown_timeout=None)
        async with connect(url, protocol_version="2026-07-28") as client:
            async with client.listen(tools=True) as stream:
                server.cancel()
                # The stream ends (the listen request is answered) and the server stops,
                # instead of waiting for a stream that would never end by itself.
                notes = await asyncio.wait_for(_drain(stream), 10)
                assert notes == []
                await asyncio.wait_for(asyncio.gather(server, return_exceptions=True), 10)
                assert app.listen_streams == set()

    asyncio.run(main())


async def _drain(stream) -> list:
    return [note async for note in stream]


def test_a_connection_accepted_just_before_shutdown_gets_its_first_request_answered():
    async def main():
        app = make_app(asyncio.Event(), asyncio.Event(), [])
        server, url = await start(app, stateless=True, json_response=True)
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        fresh_reader, fresh = await asyncio.open_connection("127.0.0.1", port)
        idle_reader, idle = await asyncio.open_connection("127.0.0.1", port)
        body = (b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",'
                b'"arguments":{"text":"late"}}}')
        head = (b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                b"accept: application/json, text/event-stream\r\nmcp-protocol-version: 2025-11-25\r\n"
                b"content-length: %d\r\n\r\n" % len(body))
        # The idle one has served a request already: at shutdown it is closed at once.
        idle.write(head + body)
        await idle_reader.readuntil(b"late")
        await asyncio.sleep(0.05)
        server.cancel()
        await asyncio.sleep(0.05)
        assert b"HTTP/1.1" not in await idle_reader.read()  # the rest of its answer, then EOF
        # The fresh one's first request, sent during the grace, is answered; then it closes.
        fresh.write(head + body)
        answer = await asyncio.wait_for(fresh_reader.read(), 5)
        assert answer.startswith(b"HTTP/1.1 200") and b"connection: close" in answer and b"late" in answer
        await asyncio.gather(server, return_exceptions=True)
        for writer in (fresh, idle):
            writer.close()

    asyncio.run(main())
