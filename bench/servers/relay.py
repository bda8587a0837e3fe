"""The floor of a hop: a byte relay, the cheapest extra process a call can pass through, for
the gateway benchmark (bench/bench_gateway.py), as bench/servers/http_floor.py is the floor of
a server.

    python bench/servers/relay.py stdio -- COMMAND ARGS...
    python bench/servers/relay.py tcp LISTEN_PORT UPSTREAM_HOST UPSTREAM_PORT

``stdio`` starts COMMAND as a child with pipes and forwards bytes verbatim: its own stdin to
the child's stdin, the child's stdout to its own stdout (the child's stderr is the relay's).
EOF on its stdin closes the child's stdin; the relay ends when the child's output has ended
and been written out (or when its own stdout's reader is gone), after waiting for the child,
with the child's exit status.

``tcp`` listens on 127.0.0.1:LISTEN_PORT; each connection accepted opens one to
UPSTREAM_HOST:UPSTREAM_PORT and the bytes are forwarded both ways verbatim (TCP_NODELAY on
both sockets); either side closing closes the other. It runs until it is killed.

No parsing, no framing, no buffering of its own (but for what a new connection sends before
its upstream connection is made): each chunk read is written to the other side in the
callback that read it (asyncio protocols, on uvloop when it is importable, else on
asyncio's own loop). Flow control: when a side's transport cannot take more (pause_writing),
the side feeding it stops reading until it drains (resume_writing). What an extra process on
the path costs on this machine -- two more wake-ups and four more reads and writes per
round trip -- is what the relay adds; what a gateway adds beyond that is its own work.
"""

from __future__ import annotations

import asyncio
import os
import socket
import stat
import subprocess
import sys
from typing import Any, Callable, Optional


class Forward(asyncio.Protocol):
    """One transport of the relay. What it reads is written to ``peer``'s transport; when
    its own transport's write buffer is full, ``peer`` stops reading until it drains; when
    it is lost, ``peer``'s transport is closed (after writing out what it holds).

    A socket is both directions at once (its peer is the other socket); a pipe is one (the
    peer of a pipe that is read is the pipe written to, and that one's peer is the reader:
    ``peer`` given to the reader, which introduces itself to it in connection_made)."""

    def __init__(self, peer: Optional[Forward] = None, on_lost: Optional[Callable[[], None]] = None) -> None:
        self.transport: Any = None
        self.peer = peer
        self.on_lost = on_lost

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        if self.peer is not None:
            self.peer.peer = self

    def data_received(self, data: bytes) -> None:
        self.peer.transport.write(data)

    def eof_received(self) -> bool:
        return False  # the transport closes itself: connection_lost follows

    def pause_writing(self) -> None:
        source = self.peer.transport if self.peer is not None else None
        if source is not None and not source.is_closing():
            source.pause_reading()

    def resume_writing(self) -> None:
        source = self.peer.transport if self.peer is not None else None
        if source is not None and not source.is_closing():
            source.resume_reading()

    def connection_lost(self, exc: Optional[BaseException]) -> None:
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.close()
        if self.on_lost is not None:
            self.on_lost()


async def relay_stdio(command: list[str]) -> int:
    for stream in (sys.stdin, sys.stdout):
        mode = os.fstat(stream.fileno()).st_mode
        if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):  # a file or a terminal: no pipe transport
            sys.exit("relay.py stdio: its stdin and stdout must be pipes or sockets")
    loop = asyncio.get_running_loop()
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    finished = loop.create_future()

    def written_out() -> None:
        if not finished.done():
            finished.set_result(None)

    # The writers first: a reader's first chunk has somewhere to go.
    _, to_child = await loop.connect_write_pipe(Forward, child.stdin)
    _, to_stdout = await loop.connect_write_pipe(lambda: Forward(on_lost=written_out), sys.stdout)
    from_stdin, _ = await loop.connect_read_pipe(lambda: Forward(to_child), sys.stdin)
    from_child, _ = await loop.connect_read_pipe(lambda: Forward(to_stdout), child.stdout)
    # The child's stdout ended and is written out (its reader closed our stdout), or the
    # reader of our stdout is gone (which closed the child's stdout).
    await finished
    for transport in (from_stdin, to_child.transport, from_child):
        transport.close()  # the child sees EOF
    code = await loop.run_in_executor(None, child.wait)
    return code if code >= 0 else 128 - code


class Socket(Forward):
    """A TCP connection of the relay: no Nagle delay on what it writes."""

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        transport.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class Accepted(Socket):
    """A connection accepted: its own connection to the upstream is made at once; what it
    reads before that is there is held (and its reading paused) until it is."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        super().__init__()
        self.upstream = upstream
        self.early: Optional[list[bytes]] = []  # None once the upstream has had them

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        transport.pause_reading()  # uvloop may still hand over a read already made
        self.connecting = asyncio.get_running_loop().create_task(self.connect())

    def data_received(self, data: bytes) -> None:
        if self.early is not None:
            self.early.append(data)
        else:
            self.peer.transport.write(data)

    async def connect(self) -> None:
        try:
            await asyncio.get_running_loop().create_connection(lambda: Socket(self), *self.upstream)
        except OSError:
            self.transport.close()
            return
        if self.transport.is_closing():  # closed meanwhile: nothing more to relay
            self.peer.transport.close()
            return
        if self.early:
            self.peer.transport.write(b"".join(self.early))
        self.early = None
        self.transport.resume_reading()


async def relay_tcp(listen_port: int, upstream_host: str, upstream_port: int) -> None:
    server = await asyncio.get_running_loop().create_server(
        lambda: Accepted((upstream_host, upstream_port)), "127.0.0.1", listen_port, backlog=1024)
    async with server:
        await server.serve_forever()


def run(coroutine: Any) -> Any:
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coroutine)
    return uvloop.run(coroutine)


def main(argv: list[str]) -> int:
    if len(argv) >= 3 and argv[:2] == ["stdio", "--"]:
        return run(relay_stdio(argv[2:]))
    if len(argv) == 4 and argv[0] == "tcp":
        run(relay_tcp(int(argv[1]), argv[2], int(argv[3])))
        return 0
    sys.exit("usage: relay.py stdio -- COMMAND ARGS... | tcp LISTEN_PORT UPSTREAM_HOST UPSTREAM_PORT")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
