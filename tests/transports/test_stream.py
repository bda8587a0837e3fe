"""FrameProtocol: framing, write gathering, failures and flow control.

Property tests drive it through a fake transport (every chunking of a stream); the flow
control tests use real loopback sockets and real pipes with a peer that does not read.
"""

import asyncio
import logging
import os
import socket

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpfast._core.framing import FrameTooLarge
from mcpfast.transports import FrameProtocol, TransportClosed, stream
from mcpfast.transports.stdio import _connect_fds
from transport_doubles import connected, wait_until

frame_bytes = st.binary(min_size=1, max_size=300).map(
    lambda b: b.replace(b"\n", b"n").replace(b"\r", b"r")
).filter(lambda b: b.strip(b" \t") != b"")


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(
    frames=st.lists(frame_bytes, max_size=25),
    cuts=st.lists(st.integers(min_value=0, max_value=8000), max_size=30),
    crlf=st.booleans(),
)
def test_any_chunking_delivers_the_same_frames(frames, cuts, crlf, make_recorder):
    ending = b"\r\n" if crlf else b"\n"
    stream = b"".join(f + ending for f in frames)
    points = sorted({c for c in cuts if 0 < c < len(stream)})
    chunks = [stream[a:b] for a, b in zip([0] + points, points + [len(stream)])]
    recorder = make_recorder()

    async def go():
        protocol, transport = await connected(recorder)
        for chunk in chunks:
            protocol.data_received(chunk)
        protocol.eof_received()
        return transport

    transport = asyncio.run(go())
    conn = recorder.conns[0]
    assert conn.frames == frames
    assert conn.closes == [None]
    # Echoes come back newline-framed, in order, one write per received chunk at most.
    assert b"".join(transport.writes) == b"".join(f + b"\n" for f in frames)
    assert len(transport.writes) <= len(chunks)


def test_frames_sent_during_one_chunk_are_written_together(run, make_recorder, monkeypatch):
    monkeypatch.setattr(stream, "BURST_GAP_NS", 0)  # no send outside a chunk is a burst
    recorder = make_recorder()

    async def go():
        protocol, transport = await connected(recorder)
        protocol.data_received(b'"a"\n"b"\n"c"\n')
        assert transport.writes == [b'"a"\n"b"\n"c"\n']
        protocol.data_received(b'"d"\n')
        assert transport.writes[1:] == [b'"d"\n']
        protocol.send(b'"e"')
        protocol.send(b'"f"')
        assert transport.writes[2:] == [b'"e"\n', b'"f"\n']

    run(go())


def test_a_burst_of_sends_is_gathered_until_the_loop_iteration_ends(run, make_recorder,
                                                                     monkeypatch):
    monkeypatch.setattr(stream, "BURST_GAP_NS", 10**12)  # every quick second send is a burst
    recorder = make_recorder()

    async def go():
        protocol, transport = await connected(recorder)
        # The first send is written at once; the ones after it in the same loop iteration
        # are gathered into one write when the iteration ends.
        protocol.send(b'"e"')
        assert transport.writes == [b'"e"\n']
        protocol.send(b'"f"')
        protocol.send(b'"g"')
        assert transport.writes == [b'"e"\n']
        await asyncio.sleep(0)
        assert transport.writes == [b'"e"\n', b'"f"\n"g"\n']
        # A chunk received while gathering joins the same write.
        protocol.send(b'"h"')
        protocol.data_received(b'"j"\n"k"\n')
        assert len(transport.writes) == 2
        await asyncio.sleep(0)
        assert transport.writes[2:] == [b'"h"\n"j"\n"k"\n']
        await asyncio.sleep(0)
        assert len(transport.writes) == 3

    run(go())


def test_a_send_after_something_was_received_is_written_at_once(run, make_recorder,
                                                                monkeypatch):
    """One call at a time can be quicker than BURST_GAP_NS a round trip (uvloop), but each
    request follows the response to the one before: it is not part of a burst."""
    monkeypatch.setattr(stream, "BURST_GAP_NS", 10**12)
    recorder = make_recorder(echo=False)

    async def go():
        protocol, transport = await connected(recorder)
        protocol.send(b'"1"')
        protocol.data_received(b'"answer 1"\n')
        protocol.send(b'"2"')
        assert transport.writes == [b'"1"\n', b'"2"\n']
        protocol.send(b'"3"')  # right after "2", nothing received: a burst begins
        assert transport.writes == [b'"1"\n', b'"2"\n']
        await asyncio.sleep(0)
        assert transport.writes == [b'"1"\n', b'"2"\n', b'"3"\n']

    run(go())


def test_a_burst_is_written_in_pieces_while_it_is_made(run, make_recorder, monkeypatch):
    """On the side that opened the connection, the peer gets the first requests of a
    burst while the rest are being made: a piece is written as soon as it holds more than
    its size, pieces doubling from BURST_PIECE up to BURST_PIECE_MAX bytes, the remainder
    when the loop iteration ends; order and bytes are those of the sends. A serving side
    writes a burst of replies in one write."""
    monkeypatch.setattr(stream, "BURST_GAP_NS", 10**12)
    monkeypatch.setattr(stream, "BURST_PIECE", 512)
    monkeypatch.setattr(stream, "BURST_PIECE_MAX", 2048)
    recorder = make_recorder(echo=False)
    frames = [b'"%03d%s"' % (n, b"p" * 90) for n in range(60)]  # 96 bytes each

    async def go(client_side):
        protocol, transport = await connected(recorder, client_side=client_side)
        for frame in frames:
            protocol.send(frame)
        during = list(transport.writes)
        await asyncio.sleep(0)
        return during, list(transport.writes)

    during, writes = run(go(True))
    assert b"".join(writes) == b"".join(f + b"\n" for f in frames)
    assert during[0] == frames[0] + b"\n"  # the first send goes at once
    # Pieces of just over 512, 1024 and 2048 bytes (6, 11 and 22 frames) while the burst
    # is made; then 2048-byte pieces: 22 more would be needed, the last 20 go at the end.
    assert [w.count(b"\n") for w in during[1:]] == [6, 11, 22]
    assert [w.count(b"\n") for w in writes[len(during):]] == [20]

    during, writes = run(go(False))
    assert during == [frames[0] + b"\n"]
    assert writes[1:] == [b"".join(f + b"\n" for f in frames[1:])]


def test_gathered_frames_are_flushed_before_the_transport_closes(run, make_recorder,
                                                                 monkeypatch):
    monkeypatch.setattr(stream, "BURST_GAP_NS", 10**12)
    recorder = make_recorder(echo=False)

    async def go():
        protocol, transport = await connected(recorder)
        protocol.send(b'"first"')
        protocol.send(b'"pending"')
        protocol.eof_received()
        assert transport.writes == [b'"first"\n', b'"pending"\n']
        await asyncio.sleep(0)
        assert transport.writes == [b'"first"\n', b'"pending"\n']

    run(go())


def test_gathered_frames_are_dropped_after_abort(run, make_recorder, monkeypatch):
    monkeypatch.setattr(stream, "BURST_GAP_NS", 10**12)
    recorder = make_recorder(echo=False)

    async def go():
        protocol, transport = await connected(recorder)
        protocol.send(b'"first"')
        protocol.send(b'"lost"')
        protocol.abort()
        await asyncio.sleep(0)
        assert transport.writes == [b'"first"\n']
        assert transport.aborted

    run(go())


def test_a_failing_feed_still_flushes_earlier_replies(run, make_recorder, caplog):
    recorder = make_recorder(fail_on={b'"boom"'})

    async def go():
        protocol, transport = await connected(recorder)
        protocol.data_received(b'"a"\n"boom"\n"b"\n')
        return transport

    with caplog.at_level(logging.ERROR, logger="mcpfast.transports"):
        transport = run(go())
    assert b"".join(transport.writes) == b'"a"\n"b"\n'
    (record,) = [r for r in caplog.records if "conn.feed raised" in r.getMessage()]
    assert record.exc_info[0] is RuntimeError


def test_feed_error_failures_are_logged_too(run, caplog):
    class Conn:
        def __init__(self, send):
            self.fed = []

        def feed(self, frame):
            self.fed.append(bytes(frame))

        def feed_error(self, exc):
            raise ValueError("feed_error bug")

        def close(self, exc=None):
            raise OSError("close bug")

    conns = []

    async def go():
        protocol, _ = await connected(lambda send: conns.append(Conn(send)) or conns[-1],
                                      max_frame_size=4)
        protocol.data_received(b"123456789\n1\n")
        protocol.eof_received()

    with caplog.at_level(logging.ERROR, logger="mcpfast.transports"):
        run(go())
    assert conns[0].fed == [b"1"]
    messages = [r.getMessage() for r in caplog.records]
    assert any("conn.feed_error" in m for m in messages)
    assert any("conn.close() raised" in m for m in messages)


def test_oversize_lines_reach_feed_error_in_stream_order(run, make_recorder):
    recorder = make_recorder(echo=False)

    async def go():
        protocol, _ = await connected(recorder, max_frame_size=8)
        protocol.data_received(b"short\n" + b"x" * 20)
        protocol.data_received(b"x" * 20 + b"\nok\n")

    run(go())
    conn = recorder.conns[0]
    assert conn.frames == [b"short", b"ok"]
    (error,) = conn.errors
    assert isinstance(error, FrameTooLarge) and error.limit == 8


def test_send_after_eof_raises_and_closed_completes(run, make_recorder):
    recorder = make_recorder()

    async def go():
        protocol, transport = await connected(recorder)
        protocol.data_received(b'"x"\n"tail"')
        assert protocol.eof_received() is False  # the transport closes itself
        with pytest.raises(TransportClosed):
            protocol.send(b"{}")
        assert not protocol.closed.done()
        transport.complete_close()
        assert transport.writes == [b'"x"\n', b'"tail"\n']
        return await protocol.closed

    assert run(go()) is None
    assert recorder.conns[0].frames == [b'"x"', b'"tail"']


def test_client_side_eof_is_a_connection_error(run, make_recorder):
    recorder = make_recorder()

    async def go():
        protocol, transport = await connected(recorder, client_side=True)
        protocol.eof_received()
        transport.complete_close()
        return await protocol.closed

    exc = run(go())
    assert isinstance(exc, ConnectionError)
    assert recorder.conns[0].closes == [exc]


def test_reset_reaches_the_conn(run, make_recorder):
    recorder = make_recorder()

    async def go():
        protocol, _ = await connected(recorder)
        error = ConnectionResetError("reset by peer")
        protocol.connection_lost(error)
        assert await protocol.closed is error
        return error

    error = run(go())
    assert recorder.conns[0].closes == [error]


def test_factory_failure_drops_the_connection(run, caplog):
    def factory(send):
        raise KeyError("no")

    async def go():
        protocol, transport = await connected(factory)
        assert transport.aborted
        protocol.data_received(b'"ignored"\n')  # nothing to feed: dropped quietly
        await protocol.closed
        return protocol

    with caplog.at_level(logging.ERROR, logger="mcpfast.transports"):
        protocol = run(go())
    assert isinstance(protocol.factory_error, KeyError)
    assert any("factory failed" in r.getMessage() for r in caplog.records)


def test_shutdown_aborts_when_writes_never_drain(run, make_recorder, caplog):
    recorder = make_recorder()

    async def go():
        protocol, transport = await connected(recorder)
        await protocol.shutdown(timeout=0.05)
        return transport

    with caplog.at_level(logging.WARNING, logger="mcpfast.transports"):
        transport = run(go())
    assert transport.aborted
    assert recorder.conns[0].closes == [None]
    assert any("aborting" in r.getMessage() for r in caplog.records)


def test_bad_options():
    async def go():
        with pytest.raises(TypeError):
            FrameProtocol(None)
        for bad in (0, -1, 1.5, True):
            with pytest.raises(ValueError):
                FrameProtocol(lambda send: None, write_high_water=bad)
        with pytest.raises(ValueError):
            FrameProtocol(lambda send: None, max_frame_size=0)

    asyncio.run(go())


# -- flow control over real sockets and pipes --------------------------------------------

HIGH_WATER = 16 * 1024
# One read is at most 256 KiB; echoing it can add that much above the high-water mark
# before reading stops. Anything near the megabytes sent would mean no flow control.
BUFFER_BOUND = HIGH_WATER + 512 * 1024
TOTAL = 6 * 1024 * 1024


class ObservedProtocol(FrameProtocol):
    """Records the largest write buffer seen and whether reading was ever paused."""

    max_buffer = 0
    was_paused = False
    small_sndbuf = False

    def connection_made(self, transport):
        if self.small_sndbuf:
            sock = transport.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 16 * 1024)
        super().connection_made(transport)

    def data_received(self, data):
        super().data_received(data)
        self.max_buffer = max(self.max_buffer, self.write_buffer_size)

    def pause_writing(self):
        super().pause_writing()
        self.was_paused = self.was_paused or self.reading_paused


def request_stream():
    frame = b'{"jsonrpc":"2.0","method":"x","params":"' + b"p" * 200 + b'"}\n'
    count = TOTAL // len(frame)
    return frame, count


def test_slow_tcp_reader_pauses_reading_and_bounds_memory(run, make_recorder):
    recorder = make_recorder()
    frame, count = request_stream()

    async def go():
        loop = asyncio.get_running_loop()
        protocols = []

        def make():
            protocol = ObservedProtocol(recorder, write_high_water=HIGH_WATER)
            protocol.small_sndbuf = True
            protocols.append(protocol)
            return protocol

        server = await loop.create_server(make, "127.0.0.1", 0)
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 * 1024)
        sock.setblocking(False)
        await loop.sock_connect(sock, server.sockets[0].getsockname())
        reader, writer = await asyncio.open_connection(sock=sock, limit=1 << 20)

        async def flood():
            for _ in range(count):
                writer.write(frame)
                await writer.drain()
            writer.write_eof()

        flooding = asyncio.ensure_future(flood())
        await wait_until(lambda: protocols and protocols[0].reading_paused)
        protocol = protocols[0]
        assert protocol.write_buffer_size > HIGH_WATER
        assert protocol._reader.is_reading() is False
        fed_while_paused = len(recorder.conns[0].frames)
        assert fed_while_paused < count
        # Now read: everything comes back, in order, and reading resumed.
        received = 0
        while received < count:
            line = await reader.readline()
            assert line == frame
            received += 1
        await flooding
        assert await reader.read() == b""
        await protocol.closed
        writer.close()
        server.close()
        return protocol

    protocol = run(go(), timeout=60)
    assert protocol.was_paused
    assert not protocol.reading_paused
    assert protocol.max_buffer <= BUFFER_BOUND
    assert len(recorder.conns[0].frames) == count
    assert recorder.conns[0].closes == [None]


def test_slow_pipe_reader_pauses_reading_and_bounds_memory(run, make_recorder):
    """The stdio wiring (read pipe + write pipe) with a peer that does not read."""
    recorder = make_recorder()
    frame, count = request_stream()

    async def go():
        loop = asyncio.get_running_loop()
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        protocol = ObservedProtocol(recorder, write_high_water=HIGH_WATER)
        await _connect_fds(loop, protocol, in_r, out_w)

        def write_all():
            payload = frame * count
            view = memoryview(payload)
            while view:
                view = view[os.write(in_w, view):]
            os.close(in_w)

        def read_all():
            chunks = []
            while True:
                chunk = os.read(out_r, 1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
            os.close(out_r)
            return b"".join(chunks)

        writing = loop.run_in_executor(None, write_all)
        await wait_until(lambda: protocol.reading_paused)
        assert protocol.write_buffer_size > HIGH_WATER
        assert len(recorder.conns[0].frames) < count
        echoed = await loop.run_in_executor(None, read_all)
        await writing
        await protocol.closed
        return protocol, echoed

    protocol, echoed = run(go(), timeout=60)
    assert protocol.was_paused and not protocol.reading_paused
    assert protocol.max_buffer <= BUFFER_BOUND
    assert echoed == frame * count
    assert recorder.conns[0].closes == [None]


def test_pipe_reader_going_away_closes_the_conn_with_an_error(run, make_recorder):
    recorder = make_recorder()

    async def go():
        loop = asyncio.get_running_loop()
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        protocol = FrameProtocol(recorder)
        await _connect_fds(loop, protocol, in_r, out_w)
        os.close(out_r)  # nobody will read what we write
        os.write(in_w, b'"hello"\n')
        exc = await protocol.closed
        os.close(in_w)
        return exc

    exc = run(go())
    assert isinstance(exc, ConnectionError)
    assert recorder.conns[0].closes == [exc]


def test_abort_on_a_pipe_pair(run, make_recorder):
    recorder = make_recorder()

    async def go():
        loop = asyncio.get_running_loop()
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        protocol = FrameProtocol(recorder)
        await _connect_fds(loop, protocol, in_r, out_w)
        os.write(in_w, b'"one"\n')
        await recorder.conns[0].wait_frames(1)
        protocol.abort()
        result = await protocol.closed
        with pytest.raises(TransportClosed):
            protocol.send(b'"late"')
        os.close(in_w)
        echoed = os.read(out_r, 100)
        assert os.read(out_r, 100) == b""  # our end of the pipe is closed
        os.close(out_r)
        return result, echoed

    result, echoed = run(go())
    assert result is None
    assert echoed == b'"one"\n'
    assert recorder.conns[0].closes == [None]


def test_the_state_takes_only_stream_states(run, make_recorder):
    """The compiled half keeps the state as its value; the enum's members go in and out."""
    recorder = make_recorder()

    async def go():
        protocol, _ = await connected(recorder)
        assert protocol.state is stream.OPEN
        protocol._state = stream.BACKED_UP
        assert protocol.state is stream.BACKED_UP and protocol.reading_paused
        protocol._state = stream.OPEN
        with pytest.raises(ValueError, match="not a StreamState"):
            protocol._state = 7
        assert protocol.state is stream.OPEN

    run(go())


def test_the_compiled_half_refuses_a_namespace_it_was_not_built_for():
    from mcpfast.transports import stream_core

    shifted = dict(vars(stream), OPEN=stream.BACKED_UP)
    with pytest.raises(ValueError, match="StreamState"):
        stream_core.use_namespace(shifted)
    with pytest.raises(TypeError, match="BURST_GAP_NS must be an int"):
        stream_core.use_namespace(dict(vars(stream), BURST_GAP_NS=5e4))
    stream_core.use_namespace(vars(stream))  # as stream.py left it


class Forwarding:
    """A conn that sends every frame it is fed on another stream (as a gateway does)."""

    def __init__(self, target):
        self.target = target

    def feed(self, frame):
        self.target.send(bytes(frame))

    def feed_error(self, error):
        pass

    def close(self, exc=None):
        pass


def test_sends_on_another_stream_during_a_chunk_are_written_when_it_ends(run, make_recorder,
                                                                       monkeypatch):
    monkeypatch.setattr(stream, "BURST_GAP_NS", 0)  # nothing is a burst: only the chunk gathers
    monkeypatch.setattr(stream, "BURST_PIECE", 8)  # a burst's pieces, which a chunk does not use

    async def go():
        server, server_transport = await connected(make_recorder())
        opener, opener_transport = await connected(make_recorder(), client_side=True)
        forwarding = Forwarding(server)
        reading, _ = await connected(lambda send: forwarding)
        # Frames read on one stream and sent on a serving one: one write, as the chunk ends.
        reading.data_received(b'"a"\n"b"\n"c"\n')
        assert server_transport.writes == [b'"a"\n"b"\n"c"\n']
        # Outside a chunk a send is written at once, as before.
        server.send(b'"d"')
        assert server_transport.writes[1:] == [b'"d"\n']
        # Sent on an opening side: one write too (not a burst's pieces: the chunk's frames
        # are all at hand), up to GATHER_LIMIT.
        forwarding.target = opener
        frames = [b'"%d"' % n for n in range(10, 20)]
        reading.data_received(b"".join(frame + b"\n" for frame in frames))
        assert opener_transport.writes == [b"".join(frame + b"\n" for frame in frames)]
        monkeypatch.setattr(stream, "GATHER_LIMIT", 16)
        reading.data_received(b"".join(frame + b"\n" for frame in frames))
        assert b"".join(opener_transport.writes[1:]) == b"".join(frame + b"\n" for frame in frames)
        assert 1 < len(opener_transport.writes[1:]) < len(frames)

    run(go())
