"""Reading HTTP/1.1 requests off a socket, for the raw servers that play an MCP endpoint
in the client tests (a server whose answers a test scripts)."""

from __future__ import annotations

import asyncio
from typing import Awaitable, Callable, Optional


async def read_request(reader: asyncio.StreamReader) -> Optional[tuple[str, str, dict[str, str], bytes]]:
    """(method, target, headers by lower-case name, body) of the next request; None when
    the client closed the connection between requests."""
    request_line = (await reader.readline()).decode()
    if not request_line:
        return None
    method, target = request_line.split()[:2]
    headers = {}
    while (line := (await reader.readline()).decode().strip()):
        name, _, value = line.partition(":")
        headers[name.lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return method, target, headers, body


Answer = Callable[[str, str, dict[str, str], bytes, asyncio.StreamWriter], Awaitable[None]]


async def serve_requests(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                         answer: Answer, keep_alive: bool) -> None:
    """Hand each request of a connection to ``answer(method, target, headers, body,
    writer)`` (only the first unless ``keep_alive``), then close it; a client that goes
    away ends it quietly."""
    try:
        while (request := await read_request(reader)) is not None:
            await answer(*request, writer)
            if not keep_alive:
                break
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        writer.close()


def write_whole(writer: asyncio.StreamWriter, status: str, body: bytes, session: str,
                close: bool) -> None:
    """A whole JSON answer (``status`` such as "200 OK") naming MCP session ``session``."""
    connection = "Connection: close\r\n" if close else ""
    writer.write(f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nMcp-Session-Id: {session}\r\n"
                 f"Content-Length: {len(body)}\r\n{connection}\r\n".encode() + body)
