"""serve_tcp / open_tcp on loopback: framing, many clients, port 0, EOF, NODELAY, failures."""

import asyncio
import json
import logging
import random
import socket

import pytest

from mcpfast.transports import TransportClosed, open_tcp, serve_tcp
from transport_doubles import Server


async def raw_client(address, chunks, *, expect_lines):
    reader, writer = await asyncio.open_connection(*address, limit=1 << 22)
    for chunk in chunks:
        writer.write(chunk)
        await writer.drain()
        await asyncio.sleep(0)
    lines = [await reader.readline() for _ in range(expect_lines)]
    writer.write_eof()
    rest = await reader.read()
    writer.close()
    return lines, rest


FRAMES = [b'{"a":1}', b'"' + b"y" * 70000 + b'"', b"[]", b'{"\xe2\x82\xac":2}']


@pytest.mark.parametrize("how", ["whole", "bytewise", "random"])
def test_frames_in_any_chunking(run, recorder, how):
    stream = b"".join(f + b"\n" for f in FRAMES)
    if how == "whole":
        chunks = [stream]
    elif how == "bytewise":
        head = stream[:200]
        chunks = [head[i:i + 1] for i in range(len(head))] + [stream[200:]]
    else:
        rng = random.Random(11)
        cuts = sorted(rng.sample(range(1, len(stream)), 30))
        chunks = [stream[a:b] for a, b in zip([0] + cuts, cuts + [len(stream)])]

    async def go():
        async with Server(recorder) as server:
            lines, rest = await raw_client(server.address, chunks, expect_lines=len(FRAMES))
            await asyncio.wait_for(recorder.conns[0].closed_event.wait(), 10)
        return lines, rest

    lines, rest = run(go())
    assert lines == [f + b"\n" for f in FRAMES]
    assert rest == b""
    conn = recorder.conns[0]
    assert conn.frames == FRAMES
    # The client's EOF: a clean end for the serving side.
    assert conn.closes == [None]


def test_oversize_frame_is_reported_and_the_connection_continues(run, recorder):
    async def go():
        async with Server(recorder, max_frame_size=64) as server:
            lines, _ = await raw_client(
                server.address,
                [b'{"ok":1}\n', b'"' + b"q" * 100, b"q" * 100 + b'"\n{"ok":2}\n'],
                expect_lines=3,
            )
        return lines

    lines = run(go())
    assert lines[0] == b'{"ok":1}\n'
    report = json.loads(lines[1])
    assert report["too_large"] == 64 and report["size"] > 64
    assert lines[2] == b'{"ok":2}\n'
    (error,) = recorder.conns[0].errors
    assert error.limit == 64


def test_a_raising_feed_does_not_end_the_connection(run, caplog, make_recorder):
    recorder = make_recorder(fail_on={b'"bad"'})

    async def go():
        async with Server(recorder) as server:
            lines, _ = await raw_client(
                server.address, [b'"one"\n"bad"\n"two"\n'], expect_lines=2
            )
        return lines

    with caplog.at_level(logging.ERROR, logger="mcpfast.transports"):
        lines = run(go())
    assert lines == [b'"one"\n', b'"two"\n']
    assert recorder.conns[0].frames == [b'"one"', b'"bad"', b'"two"']
    assert any("conn.feed raised" in r.getMessage() for r in caplog.records)


def test_many_clients_each_get_their_own_conn(run, recorder):
    clients = 12

    async def one(address, k):
        frames = [b'{"client":%d,"n":%d}' % (k, n) for n in range(50)]
        lines, _ = await raw_client(address, [b"".join(f + b"\n" for f in frames)],
                                    expect_lines=len(frames))
        return lines == [f + b"\n" for f in frames]

    async def go():
        async with Server(recorder) as server:
            oks = await asyncio.gather(*(one(server.address, k) for k in range(clients)))
        return oks, server.address

    oks, (host, port) = run(go())
    assert all(oks)
    assert host == "127.0.0.1" and port > 0
    assert len(recorder.conns) == clients
    owners = {json.loads(c.frames[0])["client"] for c in recorder.conns}
    assert owners == set(range(clients))
    for conn in recorder.conns:
        assert len({json.loads(f)["client"] for f in conn.frames}) == 1
        assert conn.closes == [None]


def test_cancelling_the_server_drops_open_connections(run, recorder):
    async def go():
        async with Server(recorder) as server:
            reader, writer = await asyncio.open_connection(*server.address)
            writer.write(b'"hi"\n')
            assert await reader.readline() == b'"hi"\n'
        # The server is gone: its connections too.
        rest = await reader.read()
        writer.close()
        with pytest.raises(OSError):
            await asyncio.open_connection(*server.address)
        return rest

    assert run(go()) == b""
    assert recorder.conns[0].closes == [None]


def test_a_failing_factory_drops_only_that_connection(run, caplog, recorder):
    made = []

    def factory(send):
        made.append(send)
        if len(made) == 1:
            raise RuntimeError("factory bug")
        return recorder(send)

    async def go():
        async with Server(factory) as server:
            reader, writer = await asyncio.open_connection(*server.address)
            assert await reader.read() == b""  # dropped
            writer.close()
            lines, _ = await raw_client(server.address, [b'"second"\n'], expect_lines=1)
        return lines

    with caplog.at_level(logging.ERROR, logger="mcpfast.transports"):
        assert run(go()) == [b'"second"\n']
    assert any("factory failed" in r.getMessage() for r in caplog.records)


def test_server_reports_bind_errors(run, recorder):
    async def go():
        holder = socket.socket()
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        try:
            with pytest.raises(OSError):
                await serve_tcp(recorder, "127.0.0.1", holder.getsockname()[1])
        finally:
            holder.close()

    run(go())


def test_open_tcp_roundtrip_and_peer_close(run, recorder, make_recorder):
    served = make_recorder()

    async def go():
        async with Server(served) as server:
            handle = await open_tcp(*server.address, recorder)
            conn = handle.conn
            conn.echo = False
            for i in range(10):
                conn.send(b'{"i":%d}' % i)
            await conn.wait_frames(10)
            # The server side goes away: our conn is closed with a ConnectionError.
        await asyncio.wait_for(handle.closed, 10)
        with pytest.raises(TransportClosed):
            conn.send(b"{}")
        await handle.close()
        return handle

    handle = run(go())
    conn = recorder.conns[0]
    assert conn.frames == [b'{"i":%d}' % i for i in range(10)]
    (exc,) = conn.closes
    assert isinstance(exc, ConnectionError)
    assert handle.closed.result() is exc


def test_open_tcp_close_flushes_and_ends_cleanly(run, recorder, make_recorder):
    served = make_recorder(echo=False)

    async def go():
        async with Server(served) as server:
            handle = await open_tcp(*server.address, recorder)
            big = b'"' + b"b" * 3_000_000 + b'"'
            handle.conn.send(big)
            handle.conn.send(b'"last"')
            await handle.close()
            await asyncio.wait_for(served.conns[0].closed_event.wait(), 10)
        return big

    big = run(go())
    assert served.conns[0].frames == [big, b'"last"']
    assert served.conns[0].closes == [None]
    assert recorder.conns[0].closes == [None]


def test_open_tcp_errors(run, make_recorder):
    async def go():
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        sock.close()  # nobody listens there now
        with pytest.raises(OSError):
            await open_tcp("127.0.0.1", port, lambda send: None)

        def broken(send):
            raise KeyError("factory")

        served = make_recorder()
        async with Server(served) as server:
            with pytest.raises(KeyError):
                await open_tcp(*server.address, broken)
            await asyncio.wait_for(served.conns[0].closed_event.wait(), 10)

    run(go())


def test_nodelay_is_set_on_both_ends(run, recorder):
    nodelay = []

    def factory(send):
        transport = send.__self__._writer  # the FrameProtocol's transport
        sock = transport.get_extra_info("socket")
        nodelay.append(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        return recorder(send)

    async def go():
        async with Server(factory) as server:
            handle = await open_tcp(*server.address, factory)
            while len(nodelay) < 2:
                await asyncio.sleep(0.01)
            await handle.close()

    run(go())
    assert len(nodelay) == 2 and all(nodelay)
