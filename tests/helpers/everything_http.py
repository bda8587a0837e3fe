"""The everything server over Streamable HTTP in a child process, for interop tests."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import AsyncIterator

import anyio

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "examples" / "everything_server.py"


@asynccontextmanager
async def http_server(*options: str) -> AsyncIterator[str]:
    """The everything server over Streamable HTTP in a child process; yields its URL."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    process = await anyio.open_process([sys.executable, str(SERVER), "http", str(port), *options],
                                       env=env, cwd=str(ROOT), stderr=subprocess.DEVNULL)
    try:
        with anyio.fail_after(20):
            while True:
                try:
                    stream = await anyio.connect_tcp("127.0.0.1", port)
                except OSError:
                    await anyio.sleep(0.05)
                    continue
                await stream.aclose()
                break
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        with anyio.move_on_after(10):
            await process.wait()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]




async def wait_for_port(port: int, attempts: int = 400) -> None:
    """Return once something accepts connections on 127.0.0.1:port (asyncio)."""
    import asyncio

    for _ in range(attempts):
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.05)
            continue
        writer.close()
        return
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port}")
