"""Limits of the stream transports (issue 11): connections, idle timeout, incomplete-line
budget, write-buffer cap -- over real loopback sockets and pipes, with short limits.

No assertion depends on timing: each test waits (bounded by the test timeout) for the
behaviour the limit must produce, or drives the idle check directly.
"""

import asyncio
import json
import logging
import os
import socket
import sys

import pytest

from mcpfast.transports import (
    ConnectionIdle,
    FrameProtocol,
    InputBudget,
    InputBudgetExceeded,
    PeerNotReading,
    StreamState,
    TransportClosed,
    WriteBufferFull,
    open_stdio,
    open_tcp,
    serve_tcp,
    stream,
)
from mcpfast.transports.stdio import _connect_fds
from transport_doubles import FakeTransport, Server, connected, wait_until


async def served_line(address, line=b'"ping"'):
    """Open a raw connection, check the server echoes one line; (reader, writer)."""
    reader, writer = await asyncio.open_connection(*address)
    writer.write(line + b"\n")
    assert await reader.readline() == line + b"\n"
    return reader, writer


async def closed_by_server(reader):
    """Read until EOF (or a reset): the server closed the connection."""
    try:
        while await reader.read(65536):
            pass
    except ConnectionResetError:
        pass
    return True


# -- max_connections -------------------------------------------------------------------------


def test_connections_beyond_the_limit_are_closed_at_once(run, recorder, caplog):
    async def go():
        async with Server(recorder, max_connections=2) as server:
            first = await served_line(server.address)
            second = await served_line(server.address)
            reader, writer = await asyncio.open_connection(*server.address)
            writer.write(b'"refused"\n')
            assert await reader.read() == b""  # closed without an answer
            writer.close()
            # A slot frees when a connection ends; then a new one is served again.
            first[1].close()
            await wait_until(lambda: recorder.conns[0].closes)
            third = await served_line(server.address, b'"third"')
            for _, w in (second, third):
                w.close()

    with caplog.at_level(logging.WARNING, logger="mcpfast.transports"):
        run(go())
    assert len(recorder.conns) == 3  # the refused connection never got a conn
    assert all(b'"refused"' not in conn.frames for conn in recorder.conns)
    assert any("refused 1 connection(s): 2 open, max_connections=2" in r.getMessage()
               for r in caplog.records)


# -- idle_timeout -----------------------------------------------------------------------------


def test_a_silent_connection_is_closed_after_the_idle_timeout(run, recorder):
    async def go():
        async with Server(recorder, idle_timeout=0.2) as server:
            reader, writer = await asyncio.open_connection(*server.address)
            await asyncio.wait_for(closed_by_server(reader), 10)
            writer.close()

    run(go())
    (exc,) = recorder.conns[0].closes
    assert isinstance(exc, ConnectionIdle)
    assert "nothing received or sent" in str(exc)


def test_a_half_line_connection_is_closed_even_while_the_server_sends(run, recorder):
    """A peer holding an incomplete line is closed although the server keeps talking."""

    async def go():
        async with Server(recorder, idle_timeout=0.5) as server:
            reader, writer = await asyncio.open_connection(*server.address)
            writer.write(b'{"never": "finished')
            await wait_until(lambda: recorder.conns)
            conn = recorder.conns[0]

            async def chatter():
                while not conn.closes:
                    conn.send(b'"notification"')
                    await asyncio.sleep(0.01)

            talking = asyncio.ensure_future(chatter())
            await asyncio.wait_for(closed_by_server(reader), 10)
            await talking
            writer.close()

    run(go())
    (exc,) = recorder.conns[0].closes
    assert isinstance(exc, ConnectionIdle)
    assert "incomplete" in str(exc)


def test_idle_check_rules_without_a_clock(run, make_recorder, monkeypatch):
    """The idle check, driven by hand: what counts as activity and what does not."""
    monkeypatch.setattr(stream, "BURST_GAP_NS", 0)  # every send is written at once
    recorder = make_recorder(echo=False)

    async def go():
        protocol, transport = await connected(recorder, idle_timeout=1000)
        protocol._idle_timer.cancel()
        protocol.data_received(b'"a"\n')
        protocol._idle_check()  # a frame came in: active
        assert protocol.state is StreamState.OPEN
        protocol._idle_timer.cancel()
        protocol.send(b'"out"')
        protocol._idle_check()  # a frame went out: active
        assert protocol.state is StreamState.OPEN
        protocol._idle_timer.cancel()
        protocol.send(b'"out"')
        protocol.data_received(b'"partial')
        protocol._idle_check()  # a frame went out; the line is not a whole period old
        assert protocol.state is StreamState.OPEN
        protocol._idle_timer.cancel()
        protocol.send(b'"out again"')
        protocol.data_received(b" more")
        protocol._idle_check()  # the same line held a whole period: closed
        assert protocol.state is StreamState.CLOSING
        assert transport.closing
        return recorder.conns[0].closes

    (exc,) = run(go())
    assert isinstance(exc, ConnectionIdle) and "incomplete" in str(exc)


def test_bytes_without_a_frame_are_not_activity(run, make_recorder):
    recorder = make_recorder(echo=False)

    async def go():
        protocol, _ = await connected(recorder, idle_timeout=1000)
        protocol._idle_timer.cancel()
        protocol.data_received(b'{"slowly": ')
        protocol._idle_check()  # no line completed and nothing sent for a whole period
        assert protocol.state is StreamState.CLOSING
        return recorder.conns[0].closes

    (exc,) = run(go())
    assert isinstance(exc, ConnectionIdle) and "nothing received or sent" in str(exc)


# -- the incomplete-line budget --------------------------------------------------------------


def test_the_largest_incomplete_line_is_dropped_when_over_budget(run, recorder, caplog):
    async def go():
        async with Server(recorder, max_frame_size=1000, max_buffered=1500) as server:
            a = await served_line(server.address, b'"a"')
            b = await served_line(server.address, b'"b"')
            c = await served_line(server.address, b'"c"')
            a[1].write(b'"' + b"x" * 599)
            b[1].write(b'"' + b"y" * 799)
            # 1400 bytes held: under budget. 300 more from c: over it, whatever order the
            # bytes arrive in, and b holds the most: b goes.
            c[1].write(b'"' + b"z" * 299)
            await asyncio.wait_for(closed_by_server(b[0]), 10)
            # The others finish their lines and go on.
            a[1].write(b'"\n')
            assert await a[0].readline() == b'"' + b"x" * 599 + b'"\n'
            c[1].write(b'"\n')
            assert await c[0].readline() == b'"' + b"z" * 299 + b'"\n'
            for _, w in (a, b, c):
                w.close()

    with caplog.at_level(logging.WARNING, logger="mcpfast.transports"):
        run(go())
    by_first = {conn.frames[0]: conn for conn in recorder.conns}
    (exc,) = by_first[b'"b"'].closes
    assert isinstance(exc, InputBudgetExceeded)
    assert "limit 1500" in str(exc)
    assert not any(isinstance(e, InputBudgetExceeded)
                   for k in (b'"a"', b'"c"') for e in by_first[k].closes)
    assert any("holds the largest (800 bytes)" in r.getMessage() for r in caplog.records)


def test_budget_accounting(run, make_recorder):
    recorder = make_recorder(echo=False)

    async def go():
        budget = InputBudget(100)
        one, _ = await connected(recorder, budget=budget)
        two, _ = await connected(recorder, budget=budget)
        one.data_received(b"x" * 40)
        two.data_received(b"y" * 50)
        assert budget.total == 90
        one.data_received(b"\n")  # the line completed: nothing held
        assert budget.total == 50
        two.eof_received()  # closed: its bytes no longer count
        assert budget.total == 0
        one.data_received(b"z" * 101)  # alone over budget: dropped
        assert budget.total == 0 and one.state is StreamState.CLOSING

    run(go())
    assert isinstance(recorder.conns[0].closes[0], InputBudgetExceeded)
    with pytest.raises(ValueError):
        InputBudget(0)


# -- a peer that stops reading: bounded on both sides ----------------------------------------


class NotReading(asyncio.Protocol):
    """A TCP peer that never reads: its receive buffer fills, then ours."""

    def connection_made(self, transport):
        transport.pause_reading()
        sock = transport.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 * 1024)
        self.transport = transport


def test_opening_side_refuses_frames_a_server_does_not_read(run, recorder):
    limit = 256 * 1024
    frame = b'"' + b"r" * 4000 + b'"'

    async def go():
        loop = asyncio.get_running_loop()
        peers = []

        def make():
            peers.append(NotReading())
            return peers[-1]

        server = await loop.create_server(make, "127.0.0.1", 0)
        handle = await open_tcp(*server.sockets[0].getsockname()[:2], recorder,
                                write_high_water=16 * 1024, max_write_buffer=limit)
        sent = 0
        with pytest.raises(WriteBufferFull):
            for _ in range(100_000):
                handle.conn.send(frame)
                sent += 1
        assert handle.write_buffer_size <= limit
        assert not handle.closed.done()  # the connection stays
        # The server reads again: the queue drains and sending works again.
        peers[0].transport.resume_reading()
        await wait_until(lambda: handle.write_buffer_size == 0)
        handle.conn.send(frame)
        await handle.close()
        server.close()
        return sent

    sent = run(go(), timeout=60)
    assert sent * len(frame) < 100_000 * len(frame)
    assert recorder.conns[0].closes == [None]


def test_serving_side_drops_a_client_that_stopped_reading_after_write_timeout(run, make_recorder, caplog):
    recorder = make_recorder(echo=False)
    frame = b'"' + b"n" * 4000 + b'"'

    async def go():
        async with Server(recorder, write_high_water=16 * 1024, max_write_buffer=256 * 1024,
                          write_timeout=0.2) as server:
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 * 1024)
            sock.setblocking(False)
            await asyncio.get_running_loop().sock_connect(sock, server.address)
            await wait_until(lambda: recorder.conns)
            conn = recorder.conns[0]
            for _ in range(5000):  # 20 MB of server-initiated traffic nobody reads: queued
                conn.send(frame)  # (more than the kernel's socket buffers take)
            assert conn.closes == []  # not dropped after a burst...
            await wait_until(lambda: conn.closes)  # ... but once it read nothing for a period
            sock.close()

    with caplog.at_level(logging.WARNING, logger="mcpfast.transports"):
        run(go(), timeout=60)
    (exc,) = recorder.conns[0].closes
    assert isinstance(exc, PeerNotReading) and isinstance(exc, WriteBufferFull)
    assert any("the peer read nothing for 0.2 s of" in r.getMessage()
               and "dropping the connection" in r.getMessage() for r in caplog.records)


async def piped_server(factory, **options):
    """A serving FrameProtocol on two fresh pipes (serve_stdio's wiring), its write
    high-water mark 16 KiB; (protocol, the peer's write fd, the peer's read fd)."""
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    protocol = FrameProtocol(factory, write_high_water=16 * 1024, **options)
    await _connect_fds(asyncio.get_running_loop(), protocol, in_r, out_w)
    return protocol, in_w, out_r


def test_stdio_serving_side_drops_a_reader_that_stopped(run, make_recorder):
    """serve_stdio's wiring (pipes): stdout nobody reads is dropped after write_timeout."""
    recorder = make_recorder(echo=False)
    frame = b'"' + b"s" * 4000 + b'"'

    async def go():
        protocol, in_w, out_r = await piped_server(recorder, max_write_buffer=256 * 1024,
                                                   write_timeout=0.2)
        for _ in range(200):
            recorder.conns[0].send(frame)
        assert not protocol.closed.done()
        await protocol.closed
        os.close(in_w)
        os.close(out_r)

    run(go(), timeout=60)
    assert isinstance(recorder.conns[0].closes[0], PeerNotReading)


def test_a_peer_reading_again_before_write_timeout_is_kept(run, make_recorder):
    """More than max_write_buffer unread, then read: the watch re-arms, nothing is lost."""
    recorder = make_recorder(echo=False)
    frame = b'"' + b"k" * 4000 + b'"'

    async def reading():
        protocol, in_w, out_r = await piped_server(recorder, max_write_buffer=64 * 1024,
                                                   write_timeout=30)
        os.set_blocking(out_r, False)
        for _ in range(100):
            recorder.conns[0].send(frame)
        assert protocol.write_buffer_size > 64 * 1024
        before = protocol.write_buffer_size
        got = os.read(out_r, 4096)  # the peer reads a little during the period
        await wait_until(lambda: protocol.write_buffer_size < before)
        protocol._stall_check()  # a whole period in which it read something: kept
        assert not protocol.closed.done()
        received = len(got)
        while received < 100 * 4003:
            await asyncio.sleep(0)
            try:
                received += len(os.read(out_r, 1 << 20))
            except BlockingIOError:
                pass
        assert received == 100 * 4003
        os.close(in_w)
        await protocol.closed
        os.close(out_r)

    run(reading(), timeout=60)
    assert recorder.conns[0].closes == [None]


def _catalogue_server():
    """A real MCP server whose tools/list answer is large (about 9 KB) and its request small."""
    from mcpfast.server import Server as MCPServer

    app = MCPServer("backpressure")
    for number in range(30):
        def tool(text: str, count: int = 1) -> str:
            return text * count

        tool.__name__ = f"tool_{number}"
        tool.__doc__ = f"Tool {number}: repeats a text a number of times, for the backpressure tests."
        app.tool()(tool)
    return app


PIPELINED = 3000
HANDSHAKE = (
    b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
    b'"capabilities":{},"clientInfo":{"name":"pipeliner","version":"1"}}}\n'
    b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
)


async def _pipeline_and_read_slowly(send_all, recv) -> list:
    """Send the handshake and PIPELINED tools/list at once; read the answers 4 KB at a time;
    the ids answered, in order (the stream ends early if the server drops the connection)."""
    requests = b"".join(b'{"jsonrpc":"2.0","id":%d,"method":"tools/list"}\n' % i
                        for i in range(1, PIPELINED + 1))
    sender = asyncio.ensure_future(send_all(HANDSHAKE + requests))
    ids, buffered = [], b""
    while len(ids) < PIPELINED + 1:
        data = await recv(4096)
        if not data:
            break
        buffered += data
        *lines, buffered = buffered.split(b"\n")
        ids.extend(json.loads(line)["id"] for line in lines)
        await asyncio.sleep(0)
    sender.cancel()
    return ids


@pytest.mark.parametrize("wiring", ["tcp", "pipes"])
def test_pipelined_requests_of_a_slow_reader_are_all_answered(run, wiring):
    """Issue 34.3: backpressure pauses reading and dispatch; nothing asked is dropped,
    even when the replies of what was read at once exceed max_write_buffer."""
    app = _catalogue_server()

    async def over_tcp():
        loop = asyncio.get_running_loop()
        bound = loop.create_future()
        serving = asyncio.ensure_future(app.serve_tcp(port=0, ready=lambda h, p: bound.set_result(p),
                                                      write_high_water=16 * 1024,
                                                      max_write_buffer=256 * 1024))
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 * 1024)
        sock.setblocking(False)
        await loop.sock_connect(sock, ("127.0.0.1", await bound))
        try:
            return await _pipeline_and_read_slowly(lambda data: loop.sock_sendall(sock, data),
                                                   lambda n: loop.sock_recv(sock, n))
        finally:
            sock.close()
            serving.cancel()
            with pytest.raises(asyncio.CancelledError):
                await serving

    async def over_pipes():
        loop = asyncio.get_running_loop()
        protocol, in_w, out_r = await piped_server(app.connect, max_write_buffer=256 * 1024)
        reader = asyncio.StreamReader(limit=1 << 20)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader),
                                     os.fdopen(out_r, "rb", buffering=0))
        writer_transport, _ = await loop.connect_write_pipe(asyncio.Protocol,
                                                            os.fdopen(in_w, "wb", buffering=0))

        async def send_all(data):
            writer_transport.write(data)

        try:
            return await _pipeline_and_read_slowly(send_all, reader.read)
        finally:
            writer_transport.close()
            await protocol.closed

    ids = run(over_tcp() if wiring == "tcp" else over_pipes(), timeout=120)
    assert ids == list(range(PIPELINED + 1))


def test_stdio_opening_side_refuses_frames_a_child_does_not_read(run, recorder, child_env):
    frame = b'"' + b"c" * 4000 + b'"'
    sleeper = "import time\nwhile True: time.sleep(1)\n"

    async def go():
        handle = await open_stdio(sys.executable, ["-c", sleeper], recorder, env=child_env,
                                  write_high_water=16 * 1024, max_write_buffer=256 * 1024,
                                  close_grace=0.1, terminate_grace=1)
        sent = 0
        with pytest.raises(WriteBufferFull):
            for _ in range(100_000):
                handle.conn.send(frame)
                sent += 1
        assert handle.write_buffer_size <= 256 * 1024
        assert not handle.closed.done()
        await handle.close()
        return sent

    assert run(go(), timeout=60) < 100_000


# -- state and options -----------------------------------------------------------------------


def test_state_transitions(run, make_recorder):
    recorder = make_recorder(echo=False)

    async def go():
        protocol = FrameProtocol(recorder)
        assert protocol.state is StreamState.NEW
        transport = FakeTransport(protocol)
        protocol.connection_made(transport)
        assert protocol.state is StreamState.OPEN
        protocol.pause_writing()
        assert protocol.state is StreamState.BACKED_UP and not transport.reading
        assert protocol.reading_paused
        protocol.send(b'"still sent: nothing is queued"')
        protocol.resume_writing()
        assert protocol.state is StreamState.OPEN and transport.reading
        protocol.eof_received()
        assert protocol.state is StreamState.CLOSING and protocol.conn_closed
        protocol.pause_writing()  # ignored while closing
        assert protocol.state is StreamState.CLOSING
        transport.complete_close()
        assert protocol.state is StreamState.CLOSED
        await protocol.closed

        # The opening side notes backed-up writes but keeps reading.
        client, client_transport = await connected(make_recorder(), client_side=True)
        client.pause_writing()
        assert client.state is StreamState.BACKED_UP and not client.reading_paused
        assert client_transport.reading

    run(go())


def test_limit_options_are_checked():
    async def go():
        for bad in (0, -1, True, "5", float("nan"), float("inf")):
            with pytest.raises(ValueError, match="idle_timeout"):
                FrameProtocol(lambda send: None, idle_timeout=bad)
        for bad in (0, -5, 2.0, False):
            with pytest.raises(ValueError, match="max_write_buffer"):
                FrameProtocol(lambda send: None, max_write_buffer=bad)
        for options, match in (({"max_connections": 0}, "max_connections"),
                               ({"max_buffered": -1}, "max_buffered"),
                               ({"idle_timeout": 0}, "idle_timeout"),
                               ({"max_frame_size": 0}, "max_frame_size")):
            with pytest.raises(ValueError, match=match):
                await serve_tcp(lambda send: None, "127.0.0.1", 0, **options)

    asyncio.run(go())


def test_a_long_burst_reaches_the_transport_before_the_iteration_ends(run, make_recorder,
                                                                      monkeypatch):
    """Gathering is bounded: a burst bigger than GATHER_LIMIT is written as it grows."""
    monkeypatch.setattr(stream, "BURST_GAP_NS", 10**12)
    recorder = make_recorder(echo=False)
    frame = b'"' + b"g" * 1000 + b'"'

    async def go():
        protocol, transport = await connected(recorder)
        count = 3 * stream.GATHER_LIMIT // len(frame)
        for _ in range(count):
            protocol.send(frame)
        written_in_the_burst = sum(len(w) for w in transport.writes)
        await asyncio.sleep(0)
        return count, written_in_the_burst, b"".join(transport.writes)

    count, during, everything = run(go())
    assert during >= 2 * stream.GATHER_LIMIT
    assert everything == (frame + b"\n") * count


def test_backed_up_sends_keep_their_order(run, make_recorder, monkeypatch):
    monkeypatch.setattr(stream, "BURST_GAP_NS", 10**12)
    recorder = make_recorder(echo=False)

    async def go():
        protocol, transport = await connected(recorder, client_side=True)
        protocol.send(b'"1"')
        protocol.send(b'"2"')  # gathered
        protocol.pause_writing()
        protocol.send(b'"3"')  # written at once, after what was gathered
        assert b"".join(transport.writes) == b'"1"\n"2"\n"3"\n'
        await asyncio.sleep(0)
        assert b"".join(transport.writes) == b'"1"\n"2"\n"3"\n'

    run(go())


def test_a_call_fails_at_once_when_the_server_stops_reading(run):
    """Through a jsonrpc Session: the request that would overflow fails, none is left
    pending, and the session goes on once the server reads again."""
    from mcpfast.jsonrpc import Session

    params = {"text": "p" * 4000}

    async def go():
        loop = asyncio.get_running_loop()
        peers = []

        def make():
            peers.append(NotReading())
            return peers[-1]

        server = await loop.create_server(make, "127.0.0.1", 0)
        handle = await open_tcp(*server.sockets[0].getsockname()[:2], Session,
                                write_high_water=16 * 1024, max_write_buffer=128 * 1024)
        session = handle.conn
        started = []
        with pytest.raises(WriteBufferFull, match="max_write_buffer=131072"):
            for _ in range(100_000):
                started.append(session.send_request("slow", params))
        assert session.pending == len(started)  # the refused one was not registered
        peers[0].transport.resume_reading()
        await wait_until(lambda: handle.write_buffer_size == 0)
        session.send_request("after", params)  # sending works again
        assert session.pending == len(started) + 1
        await handle.close()
        server.close()
        return started

    started = run(go(), timeout=60)
    assert 0 < len(started) < 100_000


# asyncio's loop only: uvloop's child holds a second descriptor of its stdin socket, so
# closing fd 0 in the child does not end the stream there and there is no RECEIVING state to see.
@pytest.mark.parametrize("loop_kind", ["asyncio"], indirect=True)
def test_a_child_that_closes_its_stdin_is_still_read(run, recorder, child_env):
    """RECEIVING: the write side alone is gone; frames from the child still arrive."""
    child = ("import os, time\nos.close(0)\n"
             "for i in range(400):\n    os.write(1, b'\"tick\"\\n')\n    time.sleep(0.05)\n")

    async def go():
        handle = await open_stdio(sys.executable, ["-c", child], recorder, env=child_env,
                                  close_grace=0.1, terminate_grace=1)
        conn = recorder.conns[0]
        await conn.wait_frames(1)
        # Our writes fail once the closed pipe is noticed; sending is then refused.
        with pytest.raises(TransportClosed):
            while True:
                conn.send(b'"hello"')
                await asyncio.sleep(0.01)
        assert handle.state is StreamState.RECEIVING
        seen = len(conn.frames)
        await conn.wait_frames(seen + 2)  # still reading
        assert handle.state is StreamState.RECEIVING and not conn.closes
        await handle.close()
        return handle

    handle = run(go())
    assert handle.state is StreamState.CLOSED
    assert recorder.conns[0].closes == [None]


class RefusingTransport(FakeTransport):
    """Like uvloop's pipe transport after EPIPE: closed, and write() raises."""

    def write(self, data):
        if self.closing:
            raise RuntimeError("unable to perform operation: the handler is closed")
        super().write(data)


@pytest.mark.parametrize("client_side", [True, False])
def test_a_write_refused_by_a_closed_transport_is_transport_closed(run, make_recorder,
                                                                   client_side, monkeypatch):
    monkeypatch.setattr(stream, "BURST_GAP_NS", 0)  # every send is written at once
    recorder = make_recorder(echo=False)

    async def go():
        protocol = FrameProtocol(recorder, client_side=client_side)
        transport = RefusingTransport(protocol)
        protocol.connection_made(transport)
        protocol.send(b'"before"')
        transport.closing = True  # the handle closed; its loss not reported yet
        with pytest.raises(TransportClosed):
            protocol.send(b'"after"')
        assert protocol.state is StreamState.CLOSING
        with pytest.raises(TransportClosed):
            protocol.send(b'"again"')
        return transport

    transport = run(go())
    assert transport.writes == [b'"before"\n']
    (exc,) = recorder.conns[0].closes
    assert isinstance(exc, ConnectionError)


def test_other_runtime_errors_of_a_write_propagate(run, make_recorder):
    class Broken(FakeTransport):
        def write(self, data):
            raise RuntimeError("a bug")

    async def go():
        protocol = FrameProtocol(make_recorder(echo=False))
        protocol.connection_made(Broken(protocol))
        with pytest.raises(RuntimeError, match="a bug"):
            protocol.send(b'"x"')

    run(go())
