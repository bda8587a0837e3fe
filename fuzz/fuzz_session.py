"""Fuzz the MCP session: random frames after a valid initialize, on a real Server.

Sans-I/O: a ServerConnection of an mcpfast Server whose send() is a list, driven on one
event loop (so async tools run too). Input: byte 0 picks the protocol version (2025-03-26
allows batches), the rest is split on newlines into frames fed one by one after
initialize and notifications/initialized.
Property: feed() never raises; every frame the server sends is one compact JSON-RPC 2.0
message (or a batch of them): a response with an id and exactly one of result/error
(error: int code, str message), or a request/notification with a str method; a response
never answers an id that was not asked (null only for -32700/-32600; every "id" member
found in the frames counts as asked: the server may read one from a frame it cannot parse
whole, or the first of duplicate ids), and an id that appears once is answered at most
once -- exactly once when it was a request alone in its frame and nothing cancelled.
"""

from __future__ import annotations

import asyncio
import json
import re

from common import Choices, instrumented, main

with instrumented():
    from mcpfast._core.codec import DecodeError, Request, decode
    from mcpfast.server import Context, Server

VERSIONS = ("2025-03-26", "2025-11-25", "2025-06-18", "2024-11-05")

app = Server("fuzz")


@app.tool()
def add(a: int, b: int = 2) -> int:
    """Adds."""
    return a + b


@app.tool()
async def slow_echo(text: str, ctx: Context) -> str:
    """Echoes after a loop turn, reporting progress."""
    await ctx.report_progress(1, 2)
    await asyncio.sleep(0)
    return text


@app.tool()
def fails() -> str:
    """Raises."""
    raise RuntimeError("tool failure")


@app.resource("mem://note", mime_type="text/plain")
def note() -> str:
    return "note"


@app.prompt()
def greet(name: str) -> str:
    return f"Hello {name}"


LOOP = asyncio.new_event_loop()


def check_message(message, asked: dict, answered: set) -> None:
    assert isinstance(message, dict), message
    assert message.get("jsonrpc") == "2.0", message
    if "method" in message:
        assert isinstance(message["method"], str), message
        assert "result" not in message and "error" not in message, message
        return
    assert "id" in message, message
    assert ("result" in message) != ("error" in message), message
    ident = message["id"]
    if "error" in message:
        error = message["error"]
        assert type(error.get("code")) is int and isinstance(error.get("message"), str), error
        if ident is None:
            assert error["code"] in (-32700, -32600), error
            return
    assert type(ident) in (int, str), message
    key = (type(ident), ident)
    assert key in asked, f"answer to an id never asked: {message}"
    if asked[key] == 1:  # an id used once is answered at most once
        assert key not in answered, f"answered twice: {message}"
    answered.add(key)


# An "id" member as it may appear in a frame, well-formed or not: the server may read the
# id of a request it cannot parse whole (from the prefix), or the first of duplicate ids.
ID_MEMBER = re.compile(rb'"id"\s*:\s*(-?[0-9][0-9.eE+-]*|"(?:[^"\\]|\\.)*")')


def request_ids(frame: bytes) -> list:
    """Every id a frame could be answered with: each "id" member in it, as JSON values."""
    ids = []
    for match in ID_MEMBER.finditer(frame):
        try:
            value = json.loads(match.group(1))
        except ValueError:
            continue
        if type(value) is float and value.is_integer():
            continue  # 1.0 is not an integer id
        if type(value) in (int, str):
            ids.append((type(value), value))
    return ids


def request_id(frame: bytes):
    """The id of the one request a frame holds, as mcpfast's decoder reads it, else None."""
    try:
        message = decode(frame)
    except DecodeError:
        return None
    if type(message) is not Request:
        return None
    return (type(message.id), message.id)


async def drive(version: str, frames: list) -> None:
    sent: list = []
    conn = app.connect(sent.append)
    init = {"jsonrpc": "2.0", "id": "init", "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": {},
                       "clientInfo": {"name": "fuzz", "version": "1"}}}
    conn.feed(json.dumps(init).encode())
    conn.feed(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    asked = {(str, "init"): 1}
    single_requests = []
    for frame in frames:
        for key in request_ids(frame):
            asked[key] = asked.get(key, 0) + 1
        key = request_id(frame)
        if key is not None:
            single_requests.append(key)
        conn.feed(frame)
        await asyncio.sleep(0)
    me = asyncio.current_task()
    for _ in range(100):  # let the async tools finish
        if not [t for t in asyncio.all_tasks() if t is not me]:
            break
        await asyncio.sleep(0)
    conn.close()
    answered: set = set()
    for out in sent:
        assert type(out) is bytes and b"\n" not in out, out
        message = json.loads(out)
        if isinstance(message, list):
            assert message, "empty batch reply"
            for item in message:
                check_message(item, asked, answered)
        else:
            check_message(message, asked, answered)
    # A request alone in its frame, with an id used nowhere else, is answered exactly once
    # (at most once is checked above) unless something may have cancelled it.
    if not any(b"cancelled" in frame for frame in frames):
        for key in single_requests:
            if asked.get(key) == 1:
                assert key in answered, f"request {key[1]!r} never answered"


def check(data: bytes) -> None:
    choices = Choices(data)
    version = choices.pick(VERSIONS)
    frames = [f for f in choices.rest().split(b"\n") if f.strip()]
    LOOP.run_until_complete(drive(version, frames))


if __name__ == "__main__":
    main(check)
