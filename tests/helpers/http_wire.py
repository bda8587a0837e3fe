"""Raw HTTP/1.1 on loopback sockets against mcpfast's own HTTP server (the server tests):
requests written by hand, responses read by hand, a server started and stopped."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from mcpfast import Server

PING = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "ping"})


def raw_post(body: str, session: str = "", extra: str = "", keep_alive: bool = True) -> bytes:
    data = body.encode()
    head = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Accept: application/json, text/event-stream\r\nContent-Length: {len(data)}\r\n")
    if session:
        head += f"Mcp-Session-Id: {session}\r\n"
    if not keep_alive:
        head += "Connection: close\r\n"
    return (head + extra + "\r\n").encode() + data


async def read_response(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bytes]:
    status_line = await reader.readline()
    status = int(status_line.split()[1])
    headers: dict[str, str] = {}
    while True:
        line = (await reader.readline()).decode().strip()
        if not line:
            break
        name, _, value = line.partition(":")
        headers[name.lower()] = value.strip()
    if "content-length" in headers:
        body = await reader.readexactly(int(headers["content-length"]))
    else:
        body = b""
        while True:
            size = int((await reader.readline()).strip(), 16)
            chunk = await reader.readexactly(size + 2)
            if size == 0:
                break
            body += chunk[:-2]
    return status, headers, body


async def start(app: Server, **options: Any) -> tuple[asyncio.Task, int]:
    bound = asyncio.get_running_loop().create_future()
    task = asyncio.ensure_future(app.serve_http("127.0.0.1", 0, ready=lambda h, p: bound.set_result(p),
                                                **options))
    return task, await bound


async def stop(task: asyncio.Task) -> None:
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
